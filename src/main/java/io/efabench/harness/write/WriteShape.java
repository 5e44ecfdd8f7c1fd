package io.efabench.harness.write;

import io.efabench.harness.TestHooks;

/**
 * What Write's leader and targets both read of the workload ({@link WriteRounds} makes it): the
 * shape it shares with Read, the credits and acks of the protocol, and the test hooks, read once
 * at setup.
 */
final class WriteShape {
    /** The shape Write shares with Read: trial, layout, size, targets, slots, window, rank 0's plan. */
    final OneToManyRounds base;
    final boolean remote;
    /** Rounds the leader may be ahead of a target's ack. */
    final int credits;
    /** Served rounds between two cumulative acks. */
    final int ackEvery;

    // Test hooks (docs/DESIGN.md), read once at setup.
    final long corruptOffset = TestHooks.integer("EFABENCH_CORRUPT_OFFSET");
    /** Checked pass: target k's data goes to target k % (N-1) + 1. */
    final boolean swapTargets = TestHooks.integer("EFABENCH_TEST_SWAP_TARGETS") == 1;
    /** Checked pass: the last write of every round to this target is never posted, or -1. */
    final long dropWriteTo = TestHooks.integer("EFABENCH_TEST_DROP_WRITE");
    /** Targets skip the clear, checked writes carry only 64 bytes of payload: the rest is stale. */
    final boolean skipClear = TestHooks.integer("EFABENCH_TEST_SKIP_CLEAR") == 1;

    WriteShape(OneToManyRounds base, boolean remote, int credits, int ackEvery) {
        this.base = base;
        this.remote = remote;
        this.credits = credits;
        this.ackEvery = ackEvery;
    }

    /**
     * Most writes of one round on one channel to one target, times the rounds a target may hold
     * unserved (credits + 1): what its CQ and FI_RX_CQ_DATA receives must take, per channel.
     */
    long[] unservedPerChannel() {
        long[] n = new long[base.t.channelCount()];
        java.util.Arrays.fill(n, (credits + 1L) * base.plan.maxPerPeerChannel(base.t.size(), base.t.channelCount()));
        return n;
    }
}

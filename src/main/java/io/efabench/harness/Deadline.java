package io.efabench.harness;

import java.time.Duration;

import io.efabench.rank.RankGroup;

/**
 * A spin-wait budget for busy-poll loops: checks the rank group's liveness on every call
 * (a volatile read) and the clock every 4096 calls, so the hot loop stays cheap and a dead
 * peer or a lost message fails the wait with a message naming rank, peer and operation.
 * Reused in place: {@link #start} rearms it without allocating.
 */
public final class Deadline {
    private final RankGroup group;
    private final long budgetNanos;
    private long expiresAt;
    private int spins;

    public Deadline(RankGroup group, Duration budget) {
        this.group = group;
        this.budgetNanos = budget.toNanos();
    }

    public Deadline start() {
        expiresAt = System.nanoTime() + budgetNanos;
        spins = 0;
        return this;
    }

    /** True while the wait may go on; throws once the group failed or the budget is spent. */
    public boolean check(String operation, int peer) {
        group.checkAlive();
        if ((++spins & 4095) == 0 && System.nanoTime() - expiresAt > 0) {
            throw new BenchmarkSetupException("rank " + group.rank() + ": " + operation + " with rank " + peer
                    + " did not complete within " + budgetNanos / 1_000_000_000L + " s (EFABENCH_TIMEOUT_S)");
        }
        return true;
    }
}

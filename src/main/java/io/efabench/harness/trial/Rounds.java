package io.efabench.harness.trial;

import io.efabench.harness.SeedRound;

/**
 * One fabric benchmark's side of the round protocol of docs/DESIGN.md: what the leader and the
 * followers do per invocation and at the end of an iteration, and what an invocation moves.
 * {@link FabricTrial#round} and {@link FabricTrial#endIteration} pick the side for this rank.
 */
public interface Rounds {
    /** Payload bytes one leader invocation delivers, over all targets. */
    long bytesPerInvocation();

    /** One-way transfers one invocation is made of, in sequence ({@code lat_us} divides by this). */
    int transfersPerInvocation();

    /**
     * Payload bytes this rank's NICs carry per invocation, sent plus received (the denominator of
     * {@code nic_bytes_ratio}). Rank 0 of SendRecv sends the pings and receives the pongs, of
     * Write sends every write: both are {@link #bytesPerInvocation}; all-to-all overrides it.
     */
    default long nicBytesPerInvocation() {
        return bytesPerInvocation();
    }

    /** A collective's size x ranks (nccl-tests' algbw numerator, {@code algbw_gbps}); 0 for the others. */
    default long algbwBytesPerInvocation() {
        return 0;
    }

    /** The seed's unit of time of this benchmark ({@link SeedRound}); null where there is none. */
    default SeedRound seedRound() {
        return null;
    }

    /**
     * Bytes of the seed's Gbps per invocation: SendRecv one size per round trip, all-to-all one
     * peer's size per round; the others all bytes (their seed Gbps is ours).
     */
    default long seedBytesPerInvocation() {
        return bytesPerInvocation();
    }

    /** The seed's BusBW(%) denominator ({@link FabricTrial#seedLinkGbps}); the link used where the seed's is the same. */
    default double seedLinkGbps() {
        return linkGbps();
    }

    /** Summed link speed of the channels one invocation uses, 0 when unknown. */
    double linkGbps();

    /**
     * True when one invocation's time is one latency (an unpipelined round), so per-sample
     * percentiles mean something; false when rounds overlap.
     */
    default boolean invocationIsLatency() {
        return true;
    }

    /** Distinct regions the rounds in flight write ({@code -p slots}, docs/DESIGN.md), 1 where rounds reuse one. */
    default int slots() {
        return 1;
    }

    /** Rounds in flight: the {@code window} asked for, capped at the slots; 1 for unpipelined rounds. */
    default int roundsInFlight() {
        return 1;
    }

    /** The peer rank the current wait is for, or -1 when it is several or none (failure messages). */
    default int peerInFlight() {
        return -1;
    }

    void leaderRound();

    /**
     * Leader, right after the iteration's start barrier, untimed: one whole round that returns
     * only when every target has served it, so no timed round pays for a follower that is still
     * waking up from the barrier. It counts as a round (END includes it).
     */
    void leaderWarmRound();

    /** Follower side of {@link #leaderWarmRound}: serve exactly that one round. */
    void followerWarmRound();

    void followerRound();

    void leaderEndIteration();

    void followerEndIteration();
}

package io.efabench.harness.trial;

import io.efabench.harness.SeedRound;

/**
 * One fabric benchmark's rounds (the round protocol of docs/DESIGN.md): what an invocation moves,
 * for the metrics, and this rank's {@link Side} in them, which {@link RoundDriver} drives through
 * JMH's callbacks.
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

    /** What this workload adds to the trial's footprint in the provenance (set-up time, its own sizes); none by default. */
    default java.util.Map<String, Object> provenance() {
        return java.util.Map.of();
    }

    /** This rank's side of the rounds: the leader's on rank 0, a follower's elsewhere; asked once. */
    Side side();
}

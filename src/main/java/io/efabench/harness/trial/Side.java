package io.efabench.harness.trial;

/**
 * One rank's part in a benchmark's rounds (the round protocol of docs/DESIGN.md): the leader's
 * on rank 0, a follower's on every other rank. {@link Rounds#side} hands it to the
 * {@link RoundDriver} once; the driver calls it from JMH's callbacks.
 */
public interface Side {
    /**
     * Right after the iteration's start barrier, untimed: the leader runs one whole round that
     * returns only when every target has served it, so no timed round pays for a follower still
     * waking up from the barrier; a follower serves exactly that round. It counts as a round (END
     * includes it).
     */
    void warmRound();

    /** One {@code @Benchmark} invocation: the leader's round, or a follower's serving of it. */
    void round();

    /** Iteration teardown: drain, END and the checked round, on this side. */
    void endIteration();

    /** The peer rank the current wait is for, or -1 when it is several or none (failure lines). */
    default int peerInFlight() {
        return -1;
    }
}

package io.efabench.harness;

/**
 * What the code that posts and reaps a trial's operations knows when a wait fails or stalls: which
 * channels have work outstanding with a peer (posted and not completed, planned and not arrived).
 * Asked off the hot path only, so it may allocate.
 */
public interface StallWitness {
    /**
     * "; channel 1 (...): 8 writes to rank 1 posted and not completed" per channel with work
     * outstanding with {@code peer} (every peer when -1), naming each through {@code paths}; empty
     * when it sees none.
     */
    String stalled(int peer, TrialPaths paths);
}

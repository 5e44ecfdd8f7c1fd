package io.efabench.harness.engine;

/**
 * What the code that posts and reaps a trial's operations knows when a wait fails or stalls: which
 * channels have work outstanding with a peer (posted and not completed, planned and not arrived).
 * Asked off the hot path only, so it may allocate.
 */
public interface StallWitness {
    /** How a failure line names channel c towards a peer: both its ends. */
    interface ChannelNames {
        /** "channel 1 (rail 1: NIC rail1 on efb-n1 <-> NIC rail1 on efb-n2)". */
        String channel(int c, int peer);
    }

    /**
     * "; channel 1 (...): 8 writes to rank 1 posted and not completed" per channel with work
     * outstanding with {@code peer} (every peer when -1), naming each through {@code names}; empty
     * when it sees none.
     */
    String stalled(int peer, ChannelNames names);
}

package io.efabench.harness.engine;

/**
 * This rank's writes not yet completed locally, per round in flight and per peer: a ring over
 * the rounds a pipeline can hold. A write's tag (what {@link WriteEngine} hands back at its
 * completion) is its round's ring index and its peer. Allocation-free.
 */
public final class LocalCompletions {
    private final int mask;
    private final int bits;
    private final int[] pending;
    private final int[][] pendingTo;
    private int inFlight;

    /** For {@code ranks} peers and up to {@code rounds} rounds in flight at once. */
    public LocalCompletions(int ranks, int rounds) {
        int ring = Integer.highestOneBit(Math.max(1, rounds)) * 2;
        this.mask = ring - 1;
        this.bits = Integer.numberOfTrailingZeros(ring);
        this.pending = new int[ring];
        this.pendingTo = new int[ranks][ring];
    }

    /** Round {@code round} starts posting: the ring entry it takes over was complete. */
    public void begin(long round) {
        int ri = index(round);
        pending[ri] = 0;
        for (int[] p : pendingTo) {
            p[ri] = 0;
        }
    }

    /** A write of {@code round} to {@code peer} is posted; returns its tag. */
    public int posted(long round, int peer) {
        int ri = index(round);
        pending[ri]++;
        pendingTo[peer][ri]++;
        inFlight++;
        return (peer << bits) | ri;
    }

    /** The write of {@code tag} completed; returns its peer if it was its round's last write to that peer, else -1. */
    public int done(int tag) {
        int ri = tag & mask;
        int peer = tag >>> bits;
        pending[ri]--;
        inFlight--;
        return --pendingTo[peer][ri] == 0 ? peer : -1;
    }

    /** True once every write posted for {@code round} completed (rounds in the ring only). */
    public boolean complete(long round) {
        return pending[index(round)] == 0;
    }

    /** Ring entries: rounds of this many consecutive numbers have distinct indexes. */
    public int ring() {
        return mask + 1;
    }

    /** Writes posted and not completed, over all rounds. */
    public int inFlight() {
        return inFlight;
    }

    /** The ring index of {@code round}; {@link #roundIndex(int)} of a tag. */
    public int index(long round) {
        return (int) (round & mask);
    }

    public int roundIndex(int tag) {
        return tag & mask;
    }
}

package io.efabench.harness.engine;

import io.efabench.harness.BenchmarkSetupException;


/**
 * A receiver's count of the writes with immediate data that arrived, per sender and round,
 * against each sender's plan: a round is <i>served</i> once every sender's writes of it arrived,
 * rounds in order. A write from a rank that sends this one nothing, beyond its sender's plan, or
 * for a round outside the ring fails with one line naming rank, sender and round (EFA is
 * unordered: one immediate on a round's last chunk proves nothing, every op is counted).
 * Allocation-free on arrival; the ring holds the rounds a scheduler lets be unserved at once.
 */
public final class ArrivalCounter {
    private final int me;
    private final int[] expected;
    private final int senders;
    private final int ring;
    private final int[][] arrivals;
    private final int[] sendersDone;
    private long served;
    /** Whether the last {@link #arrived} completed its sender's writes of its round. */
    private boolean senderComplete;

    /**
     * @param me       this rank
     * @param expected writes each rank's plan sends this rank per round (0: not a sender)
     * @param unserved most rounds that may be unserved at once; the ring is the power of two above
     */
    public ArrivalCounter(int me, int[] expected, int unserved) {
        this.me = me;
        this.expected = expected.clone();
        int n = 0;
        for (int e : expected) {
            n += e > 0 ? 1 : 0;
        }
        this.senders = n;
        this.ring = Integer.highestOneBit(Math.max(1, unserved)) * 2;
        this.arrivals = new int[expected.length][ring];
        this.sendersDone = new int[ring];
    }

    /** True when the last {@link #arrived} was its sender's last planned write of that round. */
    public boolean senderComplete() {
        return senderComplete;
    }

    /** Every round up to this one has all its writes. */
    public long served() {
        return served;
    }

    /** Counts one write carrying immediate {@code data}; returns its round. */
    public long arrived(long data) {
        int sender = Immediate.sender(data);
        if (sender >= expected.length || expected[sender] == 0) {
            throw new BenchmarkSetupException("rank " + me + ": a write with immediate data names sender rank " + sender
                    + ", which sends this rank nothing");
        }
        long ahead = Immediate.roundsAhead(data, served + 1);
        if (ahead >= ring) {
            throw new BenchmarkSetupException("rank " + me + ": a write of round " + Immediate.roundBits(data)
                    + " (mod 2^20) from rank " + sender + " arrived after this rank served round " + served
                    + ": more writes than rank " + sender + "'s plan of " + expected[sender] + " per round");
        }
        long r = served + 1 + ahead;
        int ri = (int) (r & (ring - 1));
        int n = ++arrivals[sender][ri];
        if (n > expected[sender]) {
            throw new BenchmarkSetupException("rank " + me + ": round " + r + " from rank " + sender + " brought " + n
                    + " writes with immediate data, but rank " + sender + "'s plan has " + expected[sender]
                    + " for this rank");
        }
        senderComplete = n == expected[sender];
        if (senderComplete && ++sendersDone[ri] == senders) {
            advance();
        }
        return r;
    }

    private void advance() {
        while (true) {
            int ri = (int) ((served + 1) & (ring - 1));
            if (sendersDone[ri] != senders) {
                return;
            }
            sendersDone[ri] = 0;
            for (int[] a : arrivals) {
                a[ri] = 0;
            }
            served++;
        }
    }

    /** The first sender (counting down from this rank) whose writes of round served + 1 are incomplete, or -1. */
    public int firstMissing() {
        int ri = (int) ((served + 1) & (ring - 1));
        for (int k = 1; k < expected.length; k++) {
            int s = (me + expected.length - k) % expected.length;
            if (arrivals[s][ri] < expected[s]) {
                return s;
            }
        }
        return -1;
    }

    /** For failure messages: "n of the m planned writes arrived" of round served + 1, per sender missing some. */
    public String missing() {
        int ri = (int) ((served + 1) & (ring - 1));
        StringBuilder b = new StringBuilder();
        for (int s = 0; s < expected.length; s++) {
            if (arrivals[s][ri] < expected[s]) {
                b.append(b.isEmpty() ? "" : ", ").append(arrivals[s][ri]).append(" of the ").append(expected[s])
                        .append(" planned writes arrived").append(senders > 1 ? " from rank " + s : "");
            }
        }
        return b.toString();
    }
}

package io.efabench.harness.moe;

import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.engine.Immediate;

/**
 * A receiver's count of one phase's writes (dispatch or combine) per sender and round, against
 * what the routing of that round says each sender posts ({@link MoeOps#writes}): the counts
 * differ by round, so unlike the all-to-all's {@code ArrivalCounter} the expected number is looked
 * up per round. A round is served once every other rank's writes of it arrived, rounds in order.
 * One round at a time is in flight at window 1, so a phase's writes run at most two rounds
 * ahead of what is served; the ring holds four. Allocation-free on arrival.
 */
final class PhaseArrivals {
    private static final int RING = 4;
    private final String phase;
    private final int me;
    private final int ranks;
    /** [routing][sender]: writes sender posts this rank in the phase. */
    private final int[][] expected;
    private final int[][] arrivals;
    private final int[] sendersDone = new int[RING];
    private long served;

    PhaseArrivals(String phase, int me, int[][] expected) {
        this.phase = phase;
        this.me = me;
        this.ranks = expected[0].length;
        this.expected = expected;
        this.arrivals = new int[ranks][RING];
    }

    long served() {
        return served;
    }

    /** Counts one write with immediate {@code data}; returns its round. */
    long arrived(long data) {
        int sender = Immediate.sender(data);
        if (sender >= ranks || sender == me) {
            throw new BenchmarkSetupException("rank " + me + ": a " + phase + " write names sender rank " + sender + " of "
                    + ranks);
        }
        long ahead = Immediate.roundsAhead(data, served + 1);
        if (ahead >= RING) {
            throw new BenchmarkSetupException("rank " + me + ": a " + phase + " write of round " + Immediate.roundBits(data)
                    + " (mod 2^20) from rank " + sender + " arrived after this rank served round " + served
                    + ": more writes than the routing plans");
        }
        long r = served + 1 + ahead;
        int ri = (int) (r & (RING - 1));
        int want = expected[MoePlan.routingOf(r)][sender];
        int n = ++arrivals[sender][ri];
        if (n > want) {
            throw new BenchmarkSetupException("rank " + me + ": " + phase + " round " + r + " from rank " + sender + " brought "
                    + n + " writes; its routing plans " + want + " for this rank");
        }
        if (n == want && ++sendersDone[ri] == ranks - 1) {
            advance();
        }
        return r;
    }

    private void advance() {
        while (sendersDone[(int) ((served + 1) & (RING - 1))] == ranks - 1) {
            int ri = (int) ((served + 1) & (RING - 1));
            sendersDone[ri] = 0;
            for (int[] a : arrivals) {
                a[ri] = 0;
            }
            served++;
        }
    }

    /** The first sender (counting down from this rank) whose writes of round served + 1 are incomplete, or -1. */
    int firstMissing() {
        long r = served + 1;
        int ri = (int) (r & (RING - 1));
        for (int k = 1; k < ranks; k++) {
            int s = (me + ranks - k) % ranks;
            if (arrivals[s][ri] < expected[MoePlan.routingOf(r)][s]) {
                return s;
            }
        }
        return -1;
    }
}

package io.efabench.harness.alltoall;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import io.efabench.harness.IterationFigure;
import io.efabench.harness.Metrics;
import io.efabench.harness.trial.RoundsSite;

/**
 * All-to-all's spread over pairs and ranks in one iteration, seen from the receiving side. Per
 * pair (sender s, receiver q): the time from q's start of a timed round (its post) to the arrival
 * at q of s's last write of that round, on q's own clock (data that came before q started the
 * round counts as 0 and leaves that round out of the pair's mean). Per rank: each timed
 * invocation's duration. At the end of the iteration every rank's figures are allgathered and
 * rank 0 publishes {@code min_peer_gbps}, {@code p50_peer_gbps}, {@code max_peer_gbps} over all
 * pairs (size x 8 / the pair's mean time) and {@code slowest_rank_gbps}: the bytes of an
 * invocation over the mean, across invocations, of the slowest rank's time of each (a collective
 * is as slow as its slowest rank, invocation by invocation). Allocation-free while timed: the
 * invocation times go into a preallocated array (the first {@link #MAX_INVOCATIONS} of an iteration).
 */
final class PeerSpread {
    static final int MAX_INVOCATIONS = 1 << 16;

    private final long[] pairNanos;
    private final long[] pairRounds;
    /** Per ring index of this rank's rounds in flight: which round, when posted, whether timed. */
    private final long[] postedRound;
    private final long[] postedAt;
    private final boolean[] timed;
    private final long[] invocationNanos = new long[MAX_INVOCATIONS];
    private int invocations;
    private long invocationStart;

    PeerSpread(int ranks, int ring) {
        pairNanos = new long[ranks];
        pairRounds = new long[ranks];
        postedRound = new long[ring];
        postedAt = new long[ring];
        timed = new boolean[ring];
        Arrays.fill(postedRound, -1);
    }

    /** This rank posts round {@code round} (ring index {@code ri}) now; {@code counted}: a timed one. */
    void roundPosted(int ri, long round, boolean counted) {
        postedAt[ri] = System.nanoTime();
        postedRound[ri] = round;
        timed[ri] = counted;
    }

    /** The timed span starts: every figure of the last iteration forgotten. */
    void start() {
        Arrays.fill(pairNanos, 0);
        Arrays.fill(pairRounds, 0);
        invocations = 0;
    }

    /** A timed invocation of this rank begins. */
    void invocationStarted() {
        invocationStart = System.nanoTime();
    }

    /** A timed invocation of this rank ended. */
    void invocationDone() {
        if (invocations < MAX_INVOCATIONS) {
            invocationNanos[invocations++] = System.nanoTime() - invocationStart;
        }
    }

    /** The last planned write of {@code sender}'s round {@code round} (ring index {@code ri} here) arrived. */
    void arrivedFrom(int sender, long round, int ri) {
        if (postedRound[ri] == round && timed[ri]) {
            long ns = System.nanoTime() - postedAt[ri];
            if (ns > 0) {
                pairNanos[sender] += ns;
                pairRounds[sender]++;
            }
        }
    }

    /**
     * {@code rounds} timed rounds of {@code sender} arrived here {@code nanos} after this rank's
     * start of each, summed (the NVLink path's kernels measure them on the GPU's clock).
     */
    void addArrivals(int sender, long nanos, long rounds) {
        pairNanos[sender] += nanos;
        pairRounds[sender] += rounds;
    }

    /** Allgathers every rank's figures; rank 0 publishes them ({@code size} to each peer, {@code bytesPerInvocation} per rank). */
    void publish(RoundsSite t, long size, long bytesPerInvocation) {
        int ranks = pairNanos.length;
        ByteBuffer mine = ByteBuffer.allocate(8 * (1 + ranks + invocations));
        mine.putLong(invocations);
        for (int s = 0; s < ranks; s++) {
            mine.putDouble(pairRounds[s] > 0 ? (double) pairNanos[s] / pairRounds[s] : Double.NaN);
        }
        for (int k = 0; k < invocations; k++) {
            mine.putLong(invocationNanos[k]);
        }
        List<byte[]> all = t.allgather("all-to-all pair and round times", mine.array());
        if (t.rank() != 0) {
            return;
        }
        List<Double> pairs = new ArrayList<>();
        long[][] times = new long[ranks][];
        int common = Integer.MAX_VALUE;
        for (int q = 0; q < ranks; q++) {
            ByteBuffer b = ByteBuffer.wrap(all.get(q));
            int n = (int) b.getLong();
            for (int s = 0; s < ranks; s++) {
                double ns = b.getDouble();
                if (s != q && ns > 0) {
                    pairs.add(Metrics.gbps(size, ns / 1e9));
                }
            }
            times[q] = new long[n];
            for (int k = 0; k < n; k++) {
                times[q][k] = b.getLong();
            }
            common = Math.min(common, n);
        }
        double[] s = spread(pairs);
        double[] values = {s[0], s[1], s[2], slowestRankGbps(times, common, bytesPerInvocation)};
        String[] names = {"min_peer_gbps", "p50_peer_gbps", "max_peer_gbps", "slowest_rank_gbps"};
        List<IterationFigure> figures = new ArrayList<>();
        for (int i = 0; i < names.length; i++) {
            if (values[i] > 0 && !Double.isInfinite(values[i])) { // none where no pair or rank was timed
                figures.add(new IterationFigure(names[i], values[i], "Gbps"));
            }
        }
        t.metrics().iterationFigures(figures);
    }

    /** {min, p50, max} of the pairs' Gbps; NaN where there are none. */
    static double[] spread(List<Double> pairGbps) {
        if (pairGbps.isEmpty()) {
            return new double[] {Double.NaN, Double.NaN, Double.NaN};
        }
        double[] g = pairGbps.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return new double[] {g[0], g[(g.length - 1) / 2], g[g.length - 1]};
    }

    /** Bytes of an invocation over the mean of each invocation's slowest rank time (the first {@code n} of every rank). */
    static double slowestRankGbps(long[][] times, int n, long bytesPerInvocation) {
        if (n <= 0 || n == Integer.MAX_VALUE) {
            return Double.NaN;
        }
        double sum = 0;
        for (int k = 0; k < n; k++) {
            long max = 0;
            for (long[] rank : times) {
                max = Math.max(max, rank[k]);
            }
            sum += max;
        }
        return Metrics.gbps(bytesPerInvocation, sum / n / 1e9);
    }
}

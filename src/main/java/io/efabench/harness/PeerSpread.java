package io.efabench.harness;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

/**
 * All-to-all's spread over ranks and peers in one iteration: each rank times its own timed
 * rounds (one clock read per invocation) and, per peer, the time from a round's post to the
 * local completion of its last write to that peer. At the end of the iteration every rank's
 * figures are allgathered and rank 0 publishes {@code slowest_rank_gbps} and
 * {@code min_peer_gbps} / {@code max_peer_gbps} ({@link Metrics}).
 */
final class PeerSpread {
    private final long[] peerNanos;
    private final long[] peerRounds;
    /** Per ring index of this rank's rounds in flight: when posted, and whether timed. */
    private final long[] postedAt;
    private final boolean[] timed;
    private long iterationStart;
    private long lastRoundEnd;
    private long timedRounds;

    PeerSpread(int ranks, int ring) {
        peerNanos = new long[ranks];
        peerRounds = new long[ranks];
        postedAt = new long[ring];
        timed = new boolean[ring];
    }

    /** This rank posts the round of ring index {@code ri} now; {@code counted}: a timed one. */
    void roundPosted(int ri, boolean counted) {
        postedAt[ri] = System.nanoTime();
        timed[ri] = counted;
    }

    /** The timed span starts: every figure of the last iteration forgotten. */
    void start() {
        Arrays.fill(peerNanos, 0);
        Arrays.fill(peerRounds, 0);
        timedRounds = 0;
        iterationStart = System.nanoTime();
        lastRoundEnd = iterationStart;
    }

    /** A timed invocation of this rank ended, {@code rounds} rounds long. */
    void roundsDone(int rounds) {
        lastRoundEnd = System.nanoTime();
        timedRounds += rounds;
    }

    /** This rank's last write to {@code peer} of the round of ring index {@code ri} completed. */
    void peerDone(int peer, int ri) {
        if (timed[ri]) {
            peerNanos[peer] += System.nanoTime() - postedAt[ri];
            peerRounds[peer]++;
        }
    }

    /** Allgathers every rank's figures; rank 0 publishes them for the iteration ({@code size} bytes to each peer per round). */
    void publish(FabricTrial t, long size, long bytesPerRound) {
        int ranks = peerNanos.length;
        ByteBuffer mine = ByteBuffer.allocate(8 * (1 + ranks));
        mine.putDouble(timedRounds > 0 ? (double) (lastRoundEnd - iterationStart) / timedRounds : Double.NaN);
        for (int p = 0; p < ranks; p++) {
            mine.putDouble(peerRounds[p] > 0 ? (double) peerNanos[p] / peerRounds[p] : Double.NaN);
        }
        List<byte[]> all = t.group.allgather("all-to-all round times", mine.array(), t.timeout);
        if (t.rank != 0) {
            return;
        }
        double slowest = 0;
        double[] sum = new double[ranks];
        int[] count = new int[ranks];
        for (int s = 0; s < ranks; s++) {
            ByteBuffer b = ByteBuffer.wrap(all.get(s));
            double roundNs = b.getDouble();
            if (!Double.isNaN(roundNs)) {
                slowest = Math.max(slowest, roundNs);
            }
            for (int q = 0; q < ranks; q++) {
                double ns = b.getDouble();
                if (q != s && !Double.isNaN(ns)) {
                    sum[q] += ns;
                    count[q]++;
                }
            }
        }
        double min = Double.POSITIVE_INFINITY;
        double max = 0;
        for (int q = 0; q < ranks; q++) {
            if (count[q] > 0 && sum[q] > 0) {
                double g = Metrics.gbps(size, sum[q] / count[q] / 1e9);
                min = Math.min(min, g);
                max = Math.max(max, g);
            }
        }
        Traffic.publishIterationSpread(min, max, slowest > 0 ? Metrics.gbps(bytesPerRound, slowest / 1e9) : 0);
    }
}

package io.efabench.harness.moe;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import io.efabench.harness.IterationFigure;
import io.efabench.harness.Metrics;
import io.efabench.harness.trial.RoundsSite;

/**
 * Each rank's timed MoE rounds of one iteration (consecutive: the first one's number, then per
 * round its dispatch time and its whole time; preallocated, the first {@link #MAX_ROUNDS}). At
 * the end of the iteration every rank's times and token counts are allgathered and rank 0
 * publishes the MoE figures ({@link Metrics}, "MoE dispatch and combine") over the rounds every
 * rank timed: a round's slowest rank is the max over ranks of that same round.
 */
final class MoeTimes {
    static final int MAX_ROUNDS = 1 << 16;

    private final long[] dispatchNanos = new long[MAX_ROUNDS];
    private final long[] roundNanos = new long[MAX_ROUNDS];
    /** The first timed round; a rank's timed rounds are consecutive (each invocation posts the next). */
    private long first = -1;
    private int n;

    /** The timed span starts: the last iteration's rounds forgotten. */
    void start() {
        n = 0;
        first = -1;
    }

    /** A timed round: started at {@code start}, dispatch all here at {@code dispatchDone}, ended at {@code end}. */
    void add(long r, long start, long dispatchDone, long end) {
        if (n == 0) {
            first = r;
        }
        if (n < MAX_ROUNDS && r == first + n) {
            dispatchNanos[n] = dispatchDone - start;
            roundNanos[n] = end - start;
            n++;
        }
    }

    /** One rank's part: its tokens per routing (taken, from others, to others), then its rounds (16 bytes each). */
    private byte[] encode(MoePlan plan) {
        ByteBuffer b = ByteBuffer.allocate(4 * 3 * MoePlan.ROUNDS + 12 + 16 * n);
        for (int p = 0; p < MoePlan.ROUNDS; p++) {
            b.putInt(plan.received(p)).putInt(plan.receivedFromOthers(p)).putInt(plan.sentToOthers(p));
        }
        b.putLong(first).putInt(n);
        for (int k = 0; k < n; k++) {
            b.putLong(dispatchNanos[k]).putLong(roundNanos[k]);
        }
        return b.array();
    }

    /**
     * Allgathers every rank's rounds; rank 0 publishes the iteration's figures. {@code busiest}:
     * per routing the busiest NIC's bytes ({@link MoeLinks}); {@code nicGbps} its link speed, 0
     * when unknown.
     */
    void publish(RoundsSite t, MoePlan plan, long[] busiest, double nicGbps) {
        List<byte[]> all = t.allgather("MoE round times", encode(plan));
        if (t.rank() == 0) {
            t.metrics().iterationFigures(figures(all, plan, busiest, nicGbps));
        }
    }

    /** Rank 0: the figures over the rounds every rank timed (their runs of consecutive rounds overlap there). */
    static List<IterationFigure> figures(List<byte[]> all, MoePlan plan, long[] busiest, double nicGbps) {
        int ranks = all.size();
        int[][][] tokens = new int[ranks][MoePlan.ROUNDS][3];
        ByteBuffer[] times = new ByteBuffer[ranks];
        long[] firstOf = new long[ranks];
        long from = Long.MIN_VALUE;
        long to = Long.MAX_VALUE; // exclusive
        for (int q = 0; q < ranks; q++) {
            ByteBuffer b = ByteBuffer.wrap(all.get(q));
            for (int p = 0; p < MoePlan.ROUNDS; p++) {
                tokens[q][p] = new int[] {b.getInt(), b.getInt(), b.getInt()};
            }
            firstOf[q] = b.getLong();
            int count = b.getInt();
            times[q] = b.slice();
            from = Math.max(from, firstOf[q]);
            to = Math.min(to, count == 0 ? Long.MIN_VALUE : firstOf[q] + count);
        }
        List<IterationFigure> out = new ArrayList<>();
        if (to <= from) {
            return out;
        }
        long dB = plan.shape.dispatchTokenBytes();
        long cB = plan.shape.combineTokenBytes();
        double[] logical = new double[ranks];
        double[] dispatchBytes = new double[ranks];
        double[] combineBytes = new double[ranks];
        double[] wire = new double[ranks];
        double[] egress = new double[ranks];
        double[] roundS = new double[ranks];
        double[] dispatchS = new double[ranks];
        double[] combineS = new double[ranks];
        int rs = (int) (to - from);
        long[] slowest = new long[rs];
        double slowestDispatch = 0;
        double slowestCombine = 0;
        double imbalance = 0;
        double busiestBytes = 0;
        for (int i = 0; i < rs; i++) {
            long r = from + i;
            int p = MoePlan.routingOf(r);
            long maxRound = 0;
            long maxDispatch = 0;
            long maxCombine = 0;
            for (int q = 0; q < ranks; q++) {
                int[] tq = tokens[q][p];
                int k = (int) (r - firstOf[q]);
                long dispatchNs = times[q].getLong(16 * k);
                long roundNs = times[q].getLong(16 * k + 8);
                long combineNs = roundNs - dispatchNs;
                dispatchBytes[q] += (double) tq[0] * dB;
                combineBytes[q] += (double) tq[0] * cB;
                logical[q] += (double) tq[0] * (dB + cB);
                wire[q] += (double) tq[1] * dB + (double) tq[2] * cB;
                egress[q] += (double) tq[2] * dB + (double) tq[1] * cB;
                dispatchS[q] += dispatchNs / 1e9;
                combineS[q] += combineNs / 1e9;
                roundS[q] += roundNs / 1e9;
                maxDispatch = Math.max(maxDispatch, dispatchNs);
                maxCombine = Math.max(maxCombine, combineNs);
                maxRound = Math.max(maxRound, roundNs);
            }
            slowest[i] = maxRound;
            slowestDispatch += maxDispatch;
            slowestCombine += maxCombine;
            imbalance += plan.imbalance(p);
            busiestBytes += busiest[p];
        }
        double slowestSum = 0;
        for (long s : slowest) {
            slowestSum += s;
        }
        out.add(new IterationFigure("moe_gbs", Metrics.meanRankGBs(logical, roundS), "GB/s"));
        out.add(new IterationFigure("moe_dispatch_gbs", Metrics.meanRankGBs(dispatchBytes, dispatchS), "GB/s"));
        out.add(new IterationFigure("moe_combine_gbs", Metrics.meanRankGBs(combineBytes, combineS), "GB/s"));
        out.add(new IterationFigure("moe_wire_gbs", Metrics.meanRankGBs(wire, roundS), "GB/s"));
        out.add(new IterationFigure("nccl_busbw_gbs", Metrics.meanRankGBs(egress, roundS), "GB/s"));
        out.add(new IterationFigure("imbalance", imbalance / rs, "max/mean"));
        out.add(new IterationFigure("slowest_rank_us", slowestSum / rs / 1e3, "us"));
        out.add(new IterationFigure("moe_dispatch_us", slowestDispatch / rs / 1e3, "us"));
        out.add(new IterationFigure("moe_combine_us", slowestCombine / rs / 1e3, "us"));
        out.add(new IterationFigure("slowest_rank_p50_us", Metrics.percentileUs(slowest.clone(), rs, 0.50), "us"));
        out.add(new IterationFigure("slowest_rank_p99_us", Metrics.percentileUs(slowest.clone(), rs, 0.99), "us"));
        // The ranks run in lockstep (a round needs every rank's dispatch): each one's summed round time is
        // the span of these rounds, less how far its starts lag; their mean is the period the links saw.
        // The sum of per-round maxima (slowest_rank_us) counts one rank's wait for a late peer as a round.
        double span = 0;
        for (double s : roundS) {
            span += s / ranks;
        }
        // no pair crosses a NIC (one host, the NVLink paths): no NIC figure rather than a 0 that reads as a dead link
        if (busiestBytes > 0) {
            out.add(new IterationFigure("busiest_nic_gbps", Metrics.gbps(busiestBytes, span), "Gbps"));
            if (nicGbps > 0) {
                out.add(new IterationFigure("moe_link_bound_us", Metrics.latUs(busiestBytes * 8 / (nicGbps * 1e9) / rs), "us"));
            }
        }
        out.add(new IterationFigure("moe_rounds", rs, "rounds"));
        return out;
    }
}

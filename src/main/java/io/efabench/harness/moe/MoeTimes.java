package io.efabench.harness.moe;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.efabench.harness.IterationFigure;
import io.efabench.harness.Metrics;
import io.efabench.harness.trial.RoundsSite;

/**
 * Each rank's timed MoE rounds of one iteration: which round, when it started, when its dispatch
 * was all here, when it ended (System.nanoTime, preallocated, the first {@link #MAX_ROUNDS}). At
 * the end of the iteration every rank's times and token counts are allgathered and rank 0
 * publishes the MoE figures ({@link Metrics}, "MoE dispatch and combine") over the rounds every
 * rank timed: a round's slowest rank is the max over ranks of that same round.
 */
final class MoeTimes {
    static final int MAX_ROUNDS = 1 << 16;

    private final long[] round = new long[MAX_ROUNDS];
    private final long[] dispatchNanos = new long[MAX_ROUNDS];
    private final long[] combineNanos = new long[MAX_ROUNDS];
    private final long[] roundNanos = new long[MAX_ROUNDS];
    private int n;

    /** The timed span starts: the last iteration's rounds forgotten. */
    void start() {
        n = 0;
    }

    /** A timed round: started at {@code start}, dispatch all here at {@code dispatchDone}, ended at {@code end}. */
    void add(long r, long start, long dispatchDone, long end) {
        if (n < MAX_ROUNDS) {
            round[n] = r;
            dispatchNanos[n] = dispatchDone - start;
            combineNanos[n] = end - dispatchDone;
            roundNanos[n] = end - start;
            n++;
        }
    }

    /** One rank's part: its tokens per routing (taken, from others, to others), then its rounds. */
    private byte[] encode(MoePlan plan) {
        ByteBuffer b = ByteBuffer.allocate(4 * 3 * MoePlan.ROUNDS + 4 + 32 * n);
        for (int p = 0; p < MoePlan.ROUNDS; p++) {
            b.putInt(plan.received(p)).putInt(plan.receivedFromOthers(p)).putInt(plan.sentToOthers(p));
        }
        b.putInt(n);
        for (int k = 0; k < n; k++) {
            b.putLong(round[k]).putLong(dispatchNanos[k]).putLong(combineNanos[k]).putLong(roundNanos[k]);
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

    /** Rank 0: the figures over the rounds every rank timed. */
    static List<IterationFigure> figures(List<byte[]> all, MoePlan plan, long[] busiest, double nicGbps) {
        int ranks = all.size();
        int[][][] tokens = new int[ranks][MoePlan.ROUNDS][3];
        List<Map<Long, long[]>> rounds = new ArrayList<>();
        for (int q = 0; q < ranks; q++) {
            ByteBuffer b = ByteBuffer.wrap(all.get(q));
            for (int p = 0; p < MoePlan.ROUNDS; p++) {
                tokens[q][p] = new int[] {b.getInt(), b.getInt(), b.getInt()};
            }
            int n = b.getInt();
            Map<Long, long[]> mine = new HashMap<>();
            for (int k = 0; k < n; k++) {
                long r = b.getLong();
                mine.put(r, new long[] {b.getLong(), b.getLong(), b.getLong()});
            }
            rounds.add(mine);
        }
        List<Long> common = new ArrayList<>();
        for (long r : rounds.get(0).keySet()) {
            if (rounds.stream().allMatch(m -> m.containsKey(r))) {
                common.add(r);
            }
        }
        List<IterationFigure> out = new ArrayList<>();
        if (common.isEmpty()) {
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
        long[] slowest = new long[common.size()];
        double slowestDispatch = 0;
        double slowestCombine = 0;
        double imbalance = 0;
        double busiestBytes = 0;
        for (int i = 0; i < common.size(); i++) {
            long r = common.get(i);
            int p = MoePlan.routingOf(r);
            long maxRound = 0;
            long maxDispatch = 0;
            long maxCombine = 0;
            for (int q = 0; q < ranks; q++) {
                int[] tq = tokens[q][p];
                long[] times = rounds.get(q).get(r);
                dispatchBytes[q] += (double) tq[0] * dB;
                combineBytes[q] += (double) tq[0] * cB;
                logical[q] += (double) tq[0] * (dB + cB);
                wire[q] += (double) tq[1] * dB + (double) tq[2] * cB;
                egress[q] += (double) tq[2] * dB + (double) tq[1] * cB;
                dispatchS[q] += times[0] / 1e9;
                combineS[q] += times[1] / 1e9;
                roundS[q] += times[2] / 1e9;
                maxDispatch = Math.max(maxDispatch, times[0]);
                maxCombine = Math.max(maxCombine, times[1]);
                maxRound = Math.max(maxRound, times[2]);
            }
            slowest[i] = maxRound;
            slowestDispatch += maxDispatch;
            slowestCombine += maxCombine;
            imbalance += plan.imbalance(p);
            busiestBytes += busiest[p];
        }
        int rs = common.size();
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
        out.add(new IterationFigure("busiest_nic_gbps", Metrics.gbps(busiestBytes, span), "Gbps"));
        if (nicGbps > 0) {
            out.add(new IterationFigure("moe_link_bound_us", Metrics.latUs(busiestBytes * 8 / (nicGbps * 1e9) / rs), "us"));
        }
        out.add(new IterationFigure("moe_rounds", rs, "rounds"));
        return out;
    }
}

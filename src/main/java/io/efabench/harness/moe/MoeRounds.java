package io.efabench.harness.moe;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.Layout;
import io.efabench.harness.trial.Rounds;
import io.efabench.harness.trial.RoundsSite;
import io.efabench.harness.trial.Side;

/**
 * MoE dispatch and combine, one layer a round: every rank dispatches its tokens to the ranks
 * holding their experts (an all-to-all-v whose sizes the round's routing sets, {@link MoePlan}),
 * and once its experts have every token it returns them to their owners (combine); the round ends
 * at a rank when its tokens are all back and its writes of the round before completed (the acks
 * of a round may lag into the next: {@link MoePort}). One round at a time (window 1:
 * a layer's combine ends before the next layer dispatches), one slot: a rank posts round r + 1
 * only once every rank's round-r writes to it arrived, and a peer's round-r + 1 write lands only
 * where this rank's round-r write to that peer, already arrived there, read from: no write of
 * r + 1 meets a buffer round r still reads (DESIGN, MoE item 5). The protocol of {@code AllToAllRounds} otherwise:
 * rank 0's score is the result, END from rank 0's FINAL dispatch, then the checked round (every
 * token of both phases verified) through the same pipeline, and the iteration's figures from
 * every rank ({@link MoeTimes}).
 */
public final class MoeRounds implements Rounds {
    private final RoundsSite t;
    private final Layout layout;
    private final MoePlan plan;
    private final MoeBlocks blocks;
    private final MoePort port;
    private final MoeTimes times = new MoeTimes();
    private final long[] busiest;
    private final double setupSeconds;

    public MoeRounds(RoundsSite t, Layout layout, MoeShape shape, Routing routing, long seed) {
        long t0 = System.nanoTime();
        this.t = t;
        this.layout = layout;
        t.requireImmediates();
        plan = new MoePlan(shape, routing, seed, t.size(), t.rank());
        int[][][] matrices = plan.takeMatrices();
        busiest = MoeLinks.busiest(matrices, t.hosts(), layout, t.channelCount(), shape.dispatchTokenBytes(),
                shape.combineTokenBytes());
        if (plan.clamped() != null && t.rank() == 0) {
            System.out.println("# efabench: " + plan.clamped());
        }
        blocks = new MoeBlocks(t, plan);
        port = new MoePort(t, plan, blocks, layout);
        setupSeconds = (System.nanoTime() - t0) / 1e9;
    }

    /** What the provenance records of this trial: the routing reached, the buffers and the set-up time. */
    @Override
    public Map<String, Object> provenance() {
        return provenance(plan, blocks, setupSeconds);
    }

    /** The provenance of MoE rounds over {@code plan} in {@code blocks}, set up in {@code setupSeconds}. */
    static Map<String, Object> provenance(MoePlan plan, MoeBlocks blocks, double setupSeconds) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("routing", plan.routing().toString());
        m.put("routing_calibrated", plan.calibrated());
        if (plan.clamped() != null) {
            m.put("routing_clamped", plan.clamped());
        }
        m.put("hot_rank", plan.hotRank());
        m.put("routings_cycled", MoePlan.ROUNDS);
        double[] imbalance = new double[MoePlan.ROUNDS];
        for (int p = 0; p < imbalance.length; p++) {
            imbalance[p] = Math.round(plan.imbalance(p) * 1000) / 1000.0;
        }
        m.put("imbalance_per_routing", Arrays.toString(imbalance));
        m.put("dispatch_token_bytes", plan.shape().dispatchTokenBytes());
        m.put("combine_token_bytes", plan.shape().combineTokenBytes());
        m.put("buffer_bytes", blocks.bytes());
        m.put("setup_s", setupSeconds);
        return m;
    }

    /** No one figure of bytes a round: they differ by round; the MoE rates are iteration figures ({@link MoeTimes}). */
    @Override
    public long bytesPerInvocation() {
        return 0;
    }

    @Override
    public int transfersPerInvocation() {
        return 1;
    }

    @Override
    public double linkGbps() {
        return layout == Layout.SINGLE ? t.linkGbps(0) : t.linkGbps(java.util.stream.IntStream.range(0, t.channelCount()).toArray());
    }

    /** One NIC's link speed (channel 0's), 0 when unknown: what {@code moe_link_bound_us} divides by. */
    private double nicGbps() {
        return t.linkGbps(0);
    }

    // ---- rounds --------------------------------------------------------------------------

    private void warmUp() {
        port.end.forget();
        port.pipeline.warm();
        times.start();
    }

    private void timedRound() {
        long start = System.nanoTime();
        long r = port.pipeline.timed();
        times.add(r, start, port.dispatchDoneAt, System.nanoTime());
    }

    private void finish(long end) {
        port.pipeline.drain();
        port.drainLocal();
        if (port.pipeline.posted() != end || port.combine.served() != end) {
            throw new BenchmarkSetupException("rank " + t.rank() + ": MoE round " + port.pipeline.posted() + " (combine served "
                    + port.combine.served() + ") past END " + end);
        }
        times.publish(t, plan, busiest, nicGbps());
        long checked = end + 1;
        blocks.prepareCheck(checked);
        t.barrier("MoE buffers filled and cleared for the checked round");
        port.pipeline.post();
        port.pipeline.drain();
        port.drainLocal();
        t.verdicts("MoE checked round " + checked + " (routing " + MoePlan.routingOf(checked) + ")", blocks.verify(checked));
    }

    @Override
    public Side side() {
        return t.rank() == 0 ? new LeaderSide() : new FollowerSide();
    }

    /** What both sides name in a failure line: the rank the current phase waits for. */
    private abstract class Sides implements Side {
        @Override
        public int peerInFlight() {
            return port.peerAwaited(port.pipeline.posted());
        }
    }

    private final class LeaderSide extends Sides {
        @Override
        public void warmRound() {
            warmUp();
        }

        @Override
        public void round() {
            timedRound();
        }

        @Override
        public void endIteration() {
            finish(port.end.lead(port.pipeline));
        }
    }

    private final class FollowerSide extends Sides {
        @Override
        public void warmRound() {
            warmUp();
        }

        @Override
        public void round() {
            if (!port.end.pastEnd(port.pipeline)) {
                timedRound();
            }
        }

        @Override
        public void endIteration() {
            while (!port.end.pastEnd(port.pipeline)) {
                port.pipeline.post();
            }
            finish(port.pipeline.posted());
        }
    }
}

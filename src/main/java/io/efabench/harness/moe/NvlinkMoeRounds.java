package io.efabench.harness.moe;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.Layout;
import io.efabench.harness.engine.Deadline;
import io.efabench.harness.nvlink.NvlinkPush;
import io.efabench.harness.nvlink.NvlinkSides;
import io.efabench.harness.trial.FabricTrial;
import io.efabench.harness.trial.Rounds;
import io.efabench.harness.trial.Side;

/**
 * MoE dispatch and combine between the GPUs of one node over NVLink ({@code path=nvlink} /
 * {@code nvlink-ce}): the plan, buffers, checked round and figures of {@link MoeRounds}, with
 * each phase one launch of {@link NvlinkPush} (an all-to-all-v: to each peer its tokens, from
 * where they sit here to where they land there) instead of fabric writes. A round is the dispatch
 * launch, a wait (the host's dispatch time, as DeepEP's dispatch returns before its combine), the
 * combine launch and a wait; launches are numbered 2r - 1 and 2r, so the flags of round r say
 * which phase came. END as on the NVLink all-to-all at window 1 ({@link NvlinkSides}): rank 0's
 * rounds after its timed ones carry it in their flags, so a follower knows it before it could
 * start a round past it.
 */
public final class NvlinkMoeRounds implements Rounds {
    private final FabricTrial t;
    private final MoePlan plan;
    private final MoeBlocks blocks;
    private final NvlinkPush push;
    private final MoeTimes times = new MoeTimes();
    private final long[] noNic = new long[MoePlan.ROUNDS];
    private final Deadline deadline;
    private final NvlinkSides sides;
    private final double setupSeconds;
    private final Map<String, Object> provenance = new LinkedHashMap<>();
    private long posted;

    /** MoE rounds of {@code shape} and {@code routing} moved by NVLink path {@code mover} on trial {@code t}. */
    public NvlinkMoeRounds(FabricTrial t, NvlinkPush.Mover mover, int ctas, Layout layout, MoeShape shape, Routing routing,
            long seed) {
        long t0 = System.nanoTime();
        this.t = t;
        String path = "path=" + mover.label;
        NvlinkSides.requireOneNodeOfGpus(t, mover, layout, ctas, "path=nic");
        if (shape.dispatchTokenBytes() % 16 != 0 || shape.combineTokenBytes() % 16 != 0) {
            throw new BenchmarkSetupException(path + ": tokens of " + shape.dispatchTokenBytes() + " B (dispatch) and "
                    + shape.combineTokenBytes() + " B (combine) must be multiples of 16 (the kernels store 16 B): another hidden");
        }
        plan = new MoePlan(shape, routing, seed, t.size(), t.rank());
        plan.takeMatrices();
        if (plan.clamped() != null && t.rank() == 0) {
            System.out.println("# efabench: " + plan.clamped());
        }
        blocks = new MoeBlocks(t, plan);
        Duration budget = t.waitBudget();
        push = new NvlinkPush(t.gpu(), mover, t.rank(), t.size(), ctas,
                List.of(blocks.dispatchSrc.deviceBuffer(), blocks.combineSrc.deviceBuffer()),
                List.of(blocks.dispatchDst.deviceBuffer(), blocks.combineDst.deviceBuffer()), phases(plan, t.rank()),
                budget.toNanos(), t::allgather, "MoE over NVLink", NvlinkMoeRounds::launchName);
        t.ownPeerMapping(() -> {
            push.stop();
            push.mesh().close();
        });
        t.own(push);
        deadline = t.deadline(budget.plusSeconds(10)); // the kernels name a missing flag first
        sides = new NvlinkSides(t, push, 1, 2, new Work());
        setupSeconds = (System.nanoTime() - t0) / 1e9;
        provenance.putAll(MoeRounds.provenance(plan, blocks, setupSeconds));
        provenance.put("moe_path", mover.label + ": " + push.describe());
        provenance.put("nvlink", push.mesh().describeLinks(t.gpu().device));
        if (t.rank() == 0) {
            System.out.println("# efabench: MoE over NVLink (" + mover.label + "): " + push.describe());
        }
    }

    /**
     * Launch i of {@link NvlinkPush}: routing p's dispatch is 2p (this rank's tokens for each rank,
     * from its segment here to where they land there), its combine 2p + 1 (the expert outputs
     * back to their owners), as {@link MoeOps} cuts them into writes over the fabric.
     */
    static List<NvlinkPush.Phase> phases(MoePlan plan, int me) {
        long dB = plan.shape.dispatchTokenBytes();
        long cB = plan.shape.combineTokenBytes();
        List<NvlinkPush.Phase> out = new ArrayList<>();
        for (int p = 0; p < MoePlan.ROUNDS; p++) {
            out.add(phase(0, plan.sendCount[p], plan.sendStart[p], plan.landAt[p], dB));
            out.add(phase(1, plan.recvCount[p], plan.recvStart[p], plan.returnAt[p], cB));
        }
        return out;
    }

    private static NvlinkPush.Phase phase(int buffers, int[] count, int[] from, int[] to, long tokenBytes) {
        int n = count.length;
        long[] src = new long[n];
        long[] dst = new long[n];
        long[] len = new long[n];
        for (int q = 0; q < n; q++) {
            src[q] = from[q] * tokenBytes;
            dst[q] = to[q] * tokenBytes;
            len[q] = count[q] * tokenBytes;
        }
        return new NvlinkPush.Phase(buffers, buffers, src, dst, len);
    }

    /** Launch 2r - 1 is round r's dispatch, 2r its combine. */
    static String launchName(long launch) {
        return "round " + (launch + 1) / 2 + (launch % 2 == 1 ? " dispatch" : " combine");
    }

    @Override
    public Map<String, Object> provenance() {
        return provenance;
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

    /** This GPU's NVLink egress (0 when unknown or when ranks share a GPU). */
    @Override
    public double linkGbps() {
        return push.mesh().linkGbps(t.gpu().device);
    }

    // ---- rounds --------------------------------------------------------------------------

    @Override
    public Side side() {
        return sides.side();
    }

    /** The rounds as {@link NvlinkSides} drives them, one at a time (window 1). */
    private final class Work implements NvlinkSides.Workload {
        @Override
        public long posted() {
            return posted;
        }

        /** Rounds one after another: each the dispatch launch, a wait, the combine launch, a wait. */
        @Override
        public void run(int count, boolean timed, long finalFlag) {
            for (int k = 0; k < count; k++) {
                long r = ++posted;
                int p = MoePlan.routingOf(r);
                long start = System.nanoTime();
                push.enqueue(2 * r - 1, 2 * p, false, finalFlag);
                push.await(deadline, 2 * r - 1);
                long dispatched = System.nanoTime();
                push.enqueue(2 * r, 2 * p + 1, false, 0);
                push.await(deadline, 2 * r);
                if (timed) {
                    times.add(r, start, dispatched, System.nanoTime());
                }
            }
        }

        @Override
        public void warmUp() {
            run(1, false, 0);
            times.start();
        }

        @Override
        public void finish(long end) {
            if (posted != end) {
                throw new BenchmarkSetupException("rank " + t.rank() + ": MoE over NVLink at round " + posted + ", past END " + end);
            }
            times.publish(t, plan, noNic, 0);
            long checked = end + 1;
            blocks.prepareCheck(checked);
            t.barrier("MoE (NVLink) buffers filled and cleared for the checked round");
            run(1, false, 0);
            t.verdicts("MoE (NVLink) checked round " + checked + " (routing " + MoePlan.routingOf(checked) + ")",
                    blocks.verify(checked));
        }
    }
}

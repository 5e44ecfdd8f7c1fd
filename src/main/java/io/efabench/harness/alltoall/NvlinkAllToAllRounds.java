package io.efabench.harness.alltoall;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.Layout;
import io.efabench.harness.engine.Deadline;
import io.efabench.harness.engine.Footprint;
import io.efabench.harness.memory.TrialGpu;
import io.efabench.harness.nvlink.NvlinkPush;
import io.efabench.harness.nvlink.NvlinkSides;
import io.efabench.harness.trial.FabricTrial;
import io.efabench.harness.trial.Side;

/**
 * All-to-all between the GPUs of one node over NVLink ({@code path=nvlink} / {@code nvlink-ce}):
 * the rounds, blocks, END, checked pass and figures of {@link AllToAllRounds}, with the bytes
 * moved by {@link NvlinkPush} (a kernel storing into peers' IPC-mapped blocks, or the copy
 * engines) instead of the fabric. Rounds are enqueued on the trial's stream in order: a
 * {@code window} of W rounds is W launches and one wait, and no rank gets more than W rounds
 * ahead of any other (each round waits for every peer's flag of it). Round numbers are the flags'
 * values, so every rank runs every round: END as in {@link AllToAllRounds} (rank 0's last round
 * + W, the furthest a follower can have enqueued; {@link NvlinkSides}), uncounted rounds up to
 * it, then the checked pass through the same launches, every byte verified on the GPU.
 */
public final class NvlinkAllToAllRounds extends AllToAllShape {
    private final FabricTrial t;
    private final AllToAllBlocks blocks;
    private final NvlinkPush push;
    private final PeerSpread spread;
    private final Deadline deadline;
    private final NvlinkSides sides;
    private final Map<String, Object> provenance = new LinkedHashMap<>();
    private long posted;

    /** Whether {@code path} is an NVLink path ("nvlink": SM stores, "nvlink-ce": copy engines) rather than the fabric's. */
    public static boolean isNvlinkPath(String path) {
        return NvlinkPush.Mover.of(path) != null;
    }

    /** The rounds of NVLink path {@code path} ({@link #isNvlinkPath}) on trial {@code t}. */
    public static NvlinkAllToAllRounds open(FabricTrial t, String path, Layout layout, long size, int window, String slots,
            int ctas) {
        return new NvlinkAllToAllRounds(t, layout, size, window, slots, NvlinkPush.Mover.of(path), ctas);
    }

    private NvlinkAllToAllRounds(FabricTrial t, Layout layout, long size, int windowParam, String slotsParam,
            NvlinkPush.Mover mover, int ctas) {
        super(size, t.size(), windowParam, slotsParam);
        this.t = t;
        String path = "path=" + mover.label;
        NvlinkSides.requireOneNodeOfGpus(t, mover, layout, ctas, "path=nic or auto");
        if (size % 16 != 0) {
            throw new BenchmarkSetupException(path + ": size " + size + " B is not a multiple of 16 (the kernels store 16 B)");
        }
        TrialGpu gpu = t.gpu();
        long started = System.nanoTime();
        blocks = new AllToAllBlocks(t, size, slots);
        Duration budget = t.waitBudget();
        push = new NvlinkPush(gpu, mover, t.rank(), ranks, ctas, List.of(blocks.source().deviceBuffer()),
                List.of(blocks.destination().deviceBuffer()), slotPhases(t.rank(), ranks, size, slots), budget.toNanos(),
                t::allgather, "all-to-all over NVLink", r -> "round " + r);
        t.ownPeerMapping(() -> {
            push.stop();
            push.mesh().close();
        });
        t.own(push);
        // the host's wait outlasts the kernels' own deadline, so a missing flag is named by the GPU
        deadline = t.deadline(budget.plusSeconds(10));
        spread = new PeerSpread(ranks, 1);
        sides = new NvlinkSides(t, push, window, 1, new Work());
        provenance.put("alltoall_path", mover.label + ": " + push.describe());
        provenance.put("nvlink", push.mesh().describeLinks(gpu.device));
        provenance.put("nvlink_setup_ms", (System.nanoTime() - started) / 1_000_000);
        if (t.rank() == 0) {
            System.out.println("# efabench: all-to-all over NVLink (" + mover.label + "): " + push.describe());
            if (push.mesh().anySharedGpu()) {
                System.out.println("# efabench: all-to-all over NVLink: ranks share GPU " + gpu.device.pciBusId()
                        + " (fewer GPUs visible than local ranks): IPC within one device, not NVLink; busbw_pct is left out");
            }
        }
    }

    /** One launch per slot: in slot s this rank's block (s, p) goes to block (s, me) of rank p. */
    static List<NvlinkPush.Phase> slotPhases(int me, int ranks, long size, int slots) {
        List<NvlinkPush.Phase> phases = new java.util.ArrayList<>();
        for (int s = 0; s < slots; s++) {
            long[] from = new long[ranks];
            long[] to = new long[ranks];
            long[] length = new long[ranks];
            for (int p = 0; p < ranks; p++) {
                from[p] = (s * (long) ranks + p) * size;
                to[p] = (s * (long) ranks + me) * size;
                length[p] = size;
            }
            phases.add(new NvlinkPush.Phase(0, 0, from, to, length));
        }
        return phases;
    }

    /** Nothing crosses a NIC. */
    @Override
    public long nicBytesPerInvocation() {
        return 0;
    }

    /** This GPU's NVLink egress (0 when unknown or when ranks share a GPU). */
    @Override
    public double linkGbps() {
        return push.mesh().linkGbps(t.gpu().device);
    }

    @Override
    public Map<String, Object> provenance() {
        return provenance;
    }

    // ---- rounds --------------------------------------------------------------------------

    @Override
    public Side side() {
        return sides.side();
    }

    /** The rounds as {@link NvlinkSides} drives them. */
    private final class Work implements NvlinkSides.Workload {
        @Override
        public long posted() {
            return posted;
        }

        /** Enqueues {@code count} rounds and waits until they ended here. */
        @Override
        public void run(int count, boolean timed, long finalFlag) {
            for (int k = 0; k < count; k++) {
                long round = ++posted;
                push.enqueue(round, Footprint.slotOf(round, slots), timed, finalFlag);
            }
            push.await(deadline, posted);
        }

        @Override
        public void timed(int count) {
            spread.invocationStarted();
            run(count, true, 0);
            spread.invocationDone();
        }

        @Override
        public void warmUp() {
            run(1, false, 0);
            push.takeArrivals(); // the warm round's and the last iteration's uncounted ones
            spread.start();
        }

        @Override
        public void finish(long end) {
            if (posted != end) {
                throw new BenchmarkSetupException("rank " + t.rank() + ": all-to-all over NVLink at round " + posted
                        + ", past END " + end);
            }
            long[][] arrivals = push.takeArrivals();
            for (int s = 0; s < ranks; s++) {
                spread.addArrivals(s, arrivals[s][0], arrivals[s][1]);
            }
            blocks.prepareCheck(end);
            t.barrier("all-to-all (NVLink) buffers cleared for the checked round");
            run(slots, false, 0);
            t.verdicts("all-to-all (NVLink) checked rounds " + (end + 1) + ".." + (end + slots), blocks.verify(end, Layout.SINGLE));
            spread.publish(t, size, bytesPerInvocation());
        }
    }
}

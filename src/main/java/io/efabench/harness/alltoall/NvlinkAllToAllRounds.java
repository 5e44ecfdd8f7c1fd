package io.efabench.harness.alltoall;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.Layout;
import io.efabench.harness.engine.Deadline;
import io.efabench.harness.engine.Footprint;
import io.efabench.harness.MemoryKind;
import io.efabench.harness.memory.TrialGpu;
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
 * + W, the furthest a follower can have enqueued), uncounted rounds up to it, then the checked
 * pass through the same launches, every byte verified on the GPU.
 */
public final class NvlinkAllToAllRounds extends AllToAllShape {
    private final FabricTrial t;
    private final AllToAllBlocks blocks;
    private final NvlinkPush push;
    private final PeerSpread spread;
    private final Deadline deadline;
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
        if (t.memory() != MemoryKind.DEVICE || layout != Layout.SINGLE) {
            throw new BenchmarkSetupException(path + " moves device memory between GPUs with no NIC in between: config"
                    + " SingleDMA (the layouts over NICs and host memory have no meaning there)");
        }
        if (size % 16 != 0) {
            throw new BenchmarkSetupException(path + ": size " + size + " B is not a multiple of 16 (the kernels store 16 B)");
        }
        if (ctas < 1 || ctas > 1024) {
            throw new BenchmarkSetupException("ctas=" + ctas + ": must be from 1 to 1024");
        }
        List<String> hosts = t.hosts();
        for (int r = 1; r < ranks; r++) {
            if (!hosts.get(r).equals(hosts.get(0))) {
                throw new BenchmarkSetupException(path + " runs within one node: rank " + r + " is on " + hosts.get(r)
                        + ", rank 0 on " + hosts.get(0) + " (a cross-node part over the fabric is not built yet:"
                        + " path=nic or auto)");
            }
        }
        TrialGpu gpu = t.gpu();
        long started = System.nanoTime();
        blocks = new AllToAllBlocks(t, size, slots);
        Duration budget = t.waitBudget();
        push = new NvlinkPush(gpu, mover, t.rank(), ranks, ctas, size, slots, blocks.source().deviceBuffer(),
                blocks.destination().deviceBuffer(), budget.toNanos(), t::allgather);
        t.ownPeerMapping(() -> {
            push.stop();
            push.mesh().close();
        });
        t.own(push);
        // the host's wait outlasts the kernels' own deadline, so a missing flag is named by the GPU
        deadline = t.deadline(budget.plusSeconds(10));
        spread = new PeerSpread(ranks, 1);
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

    /** Enqueues {@code count} rounds and waits until they ended here; {@code finalEnd}: END for rank 0's last rounds, else 0. */
    private void run(int count, boolean timed, long finalEnd) {
        for (int k = 0; k < count; k++) {
            long round = ++posted;
            push.enqueue(round, Footprint.slotOf(round, slots), timed, finalEnd);
        }
        push.await(deadline, posted);
    }

    private void run(int count, boolean timed) {
        run(count, timed, 0);
    }

    /** A window of rounds, capped at END where it is known ({@code end} >= 0). */
    private int windowUpTo(long end) {
        return end >= 0 ? (int) Math.min(window, end - posted) : window;
    }

    /** A timed invocation: a window of rounds (capped at END on a follower that knows it). */
    private void timedWindow(long end) {
        spread.invocationStarted();
        run(windowUpTo(end), true);
        spread.invocationDone();
    }

    /**
     * Rank 0's END, or -1 while it is not said: from its flags (which bring it with its first round
     * after the timed ones, before this rank could enqueue one past it) or the rank group's word.
     */
    private long end() {
        long fromFlags = push.endFromFlags();
        return fromFlags >= 0 ? fromFlags : t.endedRounds();
    }

    private void warmUp() {
        push.forgetEnd();
        run(1, false);
        push.takeArrivals(); // the warm round's and the last iteration's uncounted ones
        spread.start();
    }

    private void finish(long end) {
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
        run(slots, false);
        t.verdicts("all-to-all (NVLink) checked rounds " + (end + 1) + ".." + (end + slots), blocks.verify(end, Layout.SINGLE));
        spread.publish(t, size, bytesPerInvocation());
    }

    @Override
    public Side side() {
        return t.rank() == 0 ? new Leader() : new Follower();
    }

    /** Rank 0: times the rounds and says END. */
    private final class Leader implements Side {
        @Override
        public void warmRound() {
            warmUp();
        }

        @Override
        public void round() {
            timedWindow(-1);
        }

        @Override
        public void endIteration() {
            long end = posted + window; // a follower enqueues round k + W only after round k ended, which needs rank 0's
            t.signalEnd(end);
            run((int) (end - posted), false, end);
            finish(end);
        }
    }

    /** Every other rank: the same rounds until rank 0's END. */
    private final class Follower implements Side {
        @Override
        public void warmRound() {
            warmUp();
        }

        @Override
        public void round() {
            long end = end();
            if (end >= 0 && posted >= end) {
                return;
            }
            timedWindow(end);
        }

        @Override
        public void endIteration() {
            long end;
            while ((end = end()) < 0 || posted < end) {
                run(windowUpTo(end), false);
            }
            finish(end);
        }
    }
}

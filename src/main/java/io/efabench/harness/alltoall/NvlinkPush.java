package io.efabench.harness.alltoall;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.List;

import io.efabench.cuda.CudaModule;
import io.efabench.cuda.CudaStream;
import io.efabench.cuda.DeviceBuffer;
import io.efabench.cuda.DeviceMemory;
import io.efabench.cuda.Kernel;
import io.efabench.cuda.KernelArgs;
import io.efabench.cuda.KernelCompiler;
import io.efabench.cuda.PinnedHostBuffer;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.engine.Deadline;
import io.efabench.harness.memory.IpcMesh;
import io.efabench.harness.memory.TrialGpu;

/**
 * How {@link NvlinkAllToAllRounds} moves a round between the GPUs of one node: every rank's
 * destination buffer and flag words are mapped into every other rank ({@link IpcMesh}); a round
 * is one launch of alltoall.cu's {@code a2a_push} (SM stores into the peers' blocks, warps
 * round-robin over destinations, then a round-number flag into each peer) or, for the copy
 * engines, one peer copy per destination in (me + k) mod N order and {@code a2a_signal}'s flag
 * exchange. Rounds are enqueued on the trial's stream, so they run one after another; a round
 * ends on this rank when its stores are fenced and every peer's flag of that round arrived.
 * Nothing is allocated per round: arguments and copy slices are built once.
 */
final class NvlinkPush implements AutoCloseable {
    /** What moves the bytes. */
    enum Mover {
        /** SM stores from a resident kernel ({@code path=nvlink}). */
        KERNEL("nvlink"),
        /** The copy engines: cuMemcpyDtoDAsync into each peer ({@code path=nvlink-ce}). */
        COPY_ENGINE("nvlink-ce");

        final String label;

        Mover(String label) {
            this.label = label;
        }

        /** The mover {@code path} names, or null for a path over the fabric ("nic", "auto"). */
        static Mover of(String path) {
            for (Mover m : values()) {
                if (m.label.equalsIgnoreCase(path == null ? "" : path.strip())) {
                    return m;
                }
            }
            return null;
        }
    }

    static final int BLOCK_THREADS = 512;
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    /** Bytes between two ranks' flag words and between two destinations' done counters (one line each). */
    private static final long LINE = 128;

    private final TrialGpu gpu;
    private final CudaStream stream;
    private final Mover mover;
    private final int me;
    private final int ranks;
    private final int ctas;
    private final long size;
    private final long timeoutNanos;
    private final CudaModule module;
    private final DeviceBuffer flags;
    private final DeviceBuffer done;
    /** Per sender: summed arrival ns and rounds (2 x 8 bytes), then the copy path's round stamp. */
    private final DeviceBuffer pair;
    /** Every rank's destination, then every rank's flag words, as this GPU addresses them. */
    private final DeviceBuffer addresses;
    private final PinnedHostBuffer status;
    private final IpcMesh mesh;
    private final Kernel kernel;
    private final KernelArgs args;
    private final Kernel stamp;
    private final KernelArgs stampArgs;
    /** Copy engines: [slot][peer] the source block and the peer's destination block. */
    private final DeviceMemory[][] copySource;
    private final DeviceMemory[][] copyTarget;
    private final long slotBytes;
    private final MemorySegment pairsOnHost;

    NvlinkPush(TrialGpu gpu, Mover mover, int me, int ranks, int ctas, long size, int slots, DeviceMemory source,
            DeviceMemory destination, long timeoutNanos, IpcMesh.Allgather group) {
        this.gpu = gpu;
        this.stream = gpu.stream;
        this.mover = mover;
        this.me = me;
        this.ranks = ranks;
        this.ctas = ctas;
        this.size = size;
        this.timeoutNanos = timeoutNanos;
        this.slotBytes = size * ranks;
        if (mover == Mover.KERNEL && (long) ctas * (BLOCK_THREADS / 32) < ranks - 1) {
            throw new BenchmarkSetupException("ctas=" + ctas + ": " + ctas * (BLOCK_THREADS / 32) + " warps cannot serve "
                    + (ranks - 1) + " destinations (one warp each at least)");
        }
        gpu.context.makeCurrent();
        module = KernelCompiler.load(gpu.context, "alltoall.cu");
        flags = DeviceBuffer.allocate(gpu.context, ranks * LINE);
        flags.fill((byte) 0);
        done = DeviceBuffer.allocate(gpu.context, ranks * LINE);
        done.fill((byte) 0);
        pair = DeviceBuffer.allocate(gpu.context, 16L * ranks + 8);
        pair.fill((byte) 0);
        addresses = DeviceBuffer.allocate(gpu.context, 16L * ranks);
        status = PinnedHostBuffer.allocate(gpu.context, 4096);
        status.segment().fill((byte) 0);
        pairsOnHost = Arena.ofAuto().allocate(16L * ranks + 8, 8);
        mesh = IpcMesh.open(gpu.context, gpu.device, me, List.of(destination, flags), group);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment table = a.allocate(16L * ranks, 8);
            for (int r = 0; r < ranks; r++) {
                table.setAtIndex(ValueLayout.JAVA_LONG, r, r == me ? 0 : mesh.peer(0, r).deviceAddress());
                table.setAtIndex(ValueLayout.JAVA_LONG, ranks + r, r == me ? 0 : mesh.peer(1, r).deviceAddress());
            }
            addresses.copyFrom(table);
        }
        DeviceMemory statusWords = status.slice(0, 16);
        if (mover == Mover.KERNEL) {
            kernel = module.kernel("a2a_push");
            args = new KernelArgs(15).pointer(0, source).pointer(1, addresses.slice(0, 8L * ranks))
                    .pointer(2, addresses.slice(8L * ranks, 8L * ranks)).pointer(3, flags).pointer(4, done).pointer(5, pair)
                    .u64(7, size / 16).u32(8, me).u32(9, ranks).u64(13, timeoutNanos).pointer(14, statusWords);
            stamp = null;
            stampArgs = null;
            copySource = null;
            copyTarget = null;
        } else {
            kernel = module.kernel("a2a_signal");
            DeviceMemory stampWord = pair.slice(16L * ranks, 8);
            args = new KernelArgs(11).pointer(0, addresses.slice(8L * ranks, 8L * ranks)).pointer(1, flags).pointer(2, pair)
                    .pointer(3, stampWord).u32(4, me).u32(5, ranks).u64(9, timeoutNanos).pointer(10, statusWords);
            stamp = module.kernel("a2a_stamp");
            stampArgs = new KernelArgs(1).pointer(0, stampWord);
            copySource = new DeviceMemory[slots][ranks];
            copyTarget = new DeviceMemory[slots][ranks];
            for (int s = 0; s < slots; s++) {
                for (int p = 0; p < ranks; p++) {
                    if (p != me) {
                        copySource[s][p] = source.slice(s * slotBytes + p * size, size);
                        copyTarget[s][p] = mesh.peer(0, p).slice(s * slotBytes + me * size, size);
                    }
                }
            }
        }
    }

    IpcMesh mesh() {
        return mesh;
    }

    /**
     * Enqueues round {@code round} (rounds are numbered 1, 2, ... without gaps) into slot {@code
     * slot}; {@code finalEnd} (rank 0's rounds after its timed ones: END, else 0) travels with its flags.
     */
    void enqueue(long round, int slot, boolean timed, long finalEnd) {
        if (mover == Mover.KERNEL) {
            args.u64(6, slot * slotBytes / 16).u32(10, (int) round).u32(11, timed ? 1 : 0).u32(12, (int) finalEnd);
            kernel.launch(stream, ctas, BLOCK_THREADS, 0, args);
            return;
        }
        stamp.launch(stream, 1, 1, 0, stampArgs);
        for (int k = 1; k < ranks; k++) {
            int p = (me + k) % ranks;
            stream.copy(copyTarget[slot][p], copySource[slot][p], size);
        }
        args.u32(6, (int) round).u32(7, timed ? 1 : 0).u32(8, (int) finalEnd);
        kernel.launch(stream, 1, 32 * Math.max(1, (ranks + 31) / 32), 0, args);
    }

    /**
     * Waits until every round enqueued so far has ended on this rank. The kernels wait for the
     * peers' flags until {@code timeoutNanos} and then say which peer and round; {@code deadline}
     * (longer) keeps the host from waiting on a GPU that never finishes and fails the wait at once
     * when the rank group has lost a rank.
     */
    void await(Deadline deadline, long lastRound) {
        if (stream.isIdle()) {
            checkStatus();
            return;
        }
        deadline.start();
        do {
            if ((int) INT.getVolatile(status.segment(), 0L) != 0) {
                break;
            }
            deadline.check("all-to-all over NVLink", -1, lastRound);
        } while (!stream.isIdle());
        checkStatus();
    }

    /** END as rank 0's flags brought it to this rank, or -1 ({@link #forgetEnd} at each iteration's start). */
    long endFromFlags() {
        int end = (int) INT.getVolatile(status.segment(), 16L);
        return end != 0 ? Integer.toUnsignedLong(end) : -1;
    }

    /** A new iteration: the last one's END is forgotten (its rounds all ended, so no late flag brings it back). */
    void forgetEnd() {
        INT.setVolatile(status.segment(), 16L, 0);
    }

    /**
     * Ends this rank's kernels now (their waits see the host's stop word) and gives the stream a
     * moment to drain: on the way out of a failure, before the peers' memory is unmapped.
     */
    void stop() {
        INT.setVolatile(status.segment(), 12L, 1);
        try {
            gpu.context.makeCurrent();
            stream.await(5_000_000_000L, "rank " + me + ": all-to-all over NVLink stopping");
        } catch (RuntimeException ignored) {
            // on the way out: the failure that brought us here is the one reported
        }
    }

    private void checkStatus() {
        if ((int) INT.getVolatile(status.segment(), 0L) == 1) {
            int peer = (int) INT.getVolatile(status.segment(), 4L);
            int round = (int) INT.getVolatile(status.segment(), 8L);
            throw new BenchmarkSetupException("rank " + me + ": all-to-all over NVLink (" + mover.label + ") round " + round
                    + ": rank " + peer + " (GPU " + mesh.busId(peer) + ") did not raise its flag within "
                    + timeoutNanos / 1_000_000_000L + " s (it stopped, or its GPU is stuck)", peer);
        }
    }

    /** This rank's arrival sums since the last call, [sender] = {ns, rounds}; then zeroed. */
    long[][] takeArrivals() {
        gpu.context.makeCurrent();
        pair.copyTo(pairsOnHost);
        long[][] sums = new long[ranks][2];
        for (int s = 0; s < ranks; s++) {
            sums[s][0] = pairsOnHost.getAtIndex(ValueLayout.JAVA_LONG, 2L * s);
            sums[s][1] = pairsOnHost.getAtIndex(ValueLayout.JAVA_LONG, 2L * s + 1);
        }
        pair.fill((byte) 0);
        return sums;
    }

    /** How the rounds move, for provenance and the log. */
    String describe() {
        return mover == Mover.KERNEL
                ? "SM stores (alltoall.cu a2a_push, " + ctas + " CTAs x " + BLOCK_THREADS + " threads, warps round-robin"
                        + " over " + (ranks - 1) + " destinations)"
                : "copy engines (cuMemcpyDtoDAsync per destination in (me + k) mod N order on one stream, then a2a_signal)";
    }

    /**
     * Frees this rank's own memory and kernels. The peers' mappings ({@link #mesh}) close apart and
     * earlier, before the end-of-trial barrier, since a peer still maps this rank's flags until then.
     */
    @Override
    public void close() {
        gpu.context.makeCurrent();
        AutoCloseable[] steps = {module, status, addresses, pair, done, flags};
        RuntimeException first = null;
        for (AutoCloseable step : steps) {
            try {
                step.close();
            } catch (Exception e) {
                first = first == null ? new RuntimeException(e) : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }
}

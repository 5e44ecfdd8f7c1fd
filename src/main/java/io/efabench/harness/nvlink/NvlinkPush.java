package io.efabench.harness.nvlink;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.function.LongFunction;

import io.efabench.cuda.CudaModule;
import io.efabench.cuda.CudaStream;
import io.efabench.cuda.DeviceBuffer;
import io.efabench.cuda.DeviceMemory;
import io.efabench.cuda.Kernel;
import io.efabench.cuda.KernelArgs;
import io.efabench.cuda.KernelCompiler;
import io.efabench.cuda.PinnedHostBuffer;
import io.efabench.cuda.StreamMemOps;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.engine.Deadline;
import io.efabench.harness.memory.IpcMesh;
import io.efabench.harness.memory.TrialGpu;

/**
 * How the NVLink paths move a phase between the GPUs of one node (the all-to-all's round, each of
 * MoE's dispatch and combine): every rank's destination buffers and flag words are mapped into
 * every other rank ({@link IpcMesh}); a launch is one of the {@link Phase}s given at the start (to
 * each peer: bytes from a source offset to a destination offset there) moved by alltoall.cu's
 * {@code a2a_push} (SM stores into the peers' buffers, warps round-robin over destinations, then
 * a round-number flag into each peer) or, for the copy engines, one peer copy per destination in
 * (me + k) mod N order and {@code a2a_signal}'s flag exchange. Launches are enqueued on the trial's
 * stream, so they run one after another, numbered 1, 2, ... without gaps; a launch ends on this
 * rank when its stores are fenced and every peer's flag of it arrived. Nothing is allocated per
 * launch: arguments, tables and copy slices are built once.
 */
public final class NvlinkPush implements AutoCloseable {
    /**
     * One launch's copies, per peer p (this rank's entry unused): {@code length[p]} bytes from
     * {@code sourceOffset[p]} of source buffer {@code source} to {@code destinationOffset[p]} of
     * peer p's destination buffer {@code destination}; every figure a multiple of 16.
     */
    public record Phase(int source, int destination, long[] sourceOffset, long[] destinationOffset, long[] length) {}

    /** What moves the bytes. */
    public enum Mover {
        /** SM stores from a resident kernel ({@code path=nvlink}). */
        KERNEL("nvlink"),
        /** The copy engines: cuMemcpyDtoDAsync into each peer, flags by a one-block kernel ({@code path=nvlink-ce}). */
        COPY_ENGINE("nvlink-ce"),
        /**
         * The copy engines with the flags raised and awaited by stream memory operations, no kernel
         * ({@code path=nvlink-ce-memops}, NCCL 2.28's copy-engine all-to-all's way): no per-sender
         * arrival times on the GPU, and the host names a flag that did not come.
         */
        COPY_ENGINE_MEMOPS("nvlink-ce-memops");

        public final String label;

        Mover(String label) {
            this.label = label;
        }

        /** The mover {@code path} names, or null for a path over the fabric ("nic", "auto"). */
        public static Mover of(String path) {
            for (Mover m : values()) {
                if (m.label.equalsIgnoreCase(path == null ? "" : path.strip())) {
                    return m;
                }
            }
            return null;
        }
    }

    public static final int BLOCK_THREADS = 512;
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    /** Bytes between two ranks' flag words and between two destinations' done counters (one line each). */
    private static final long LINE = 128;
    /** Bytes of one peer's entry of a phase's table: source offset, destination offset, length (16-byte words). */
    private static final long ENTRY = 24;

    private final TrialGpu gpu;
    private final CudaStream stream;
    private final Mover mover;
    private final int me;
    private final int ranks;
    private final int ctas;
    private final long timeoutNanos;
    private final CudaModule module;
    private final DeviceBuffer flags;
    private final DeviceBuffer done;
    /** Per sender: summed arrival ns and rounds (2 x 8 bytes), then the copy path's round stamp. */
    private final DeviceBuffer pair;
    /** Every destination's table of ranks' addresses as this GPU maps them, then every rank's flag words. */
    private final DeviceBuffer addresses;
    /** The phases' tables, one after another. */
    private final DeviceBuffer tables;
    private final PinnedHostBuffer status;
    private final IpcMesh mesh;
    private final Kernel kernel;
    /** The SM path: per phase its arguments (source, destinations and table differ); the copy path: one. */
    private final KernelArgs[] args;
    private final Kernel stamp;
    private final KernelArgs stampArgs;
    /** Copy engines: [phase][peer] the source bytes and the peer's destination bytes (null: nothing to copy). */
    private final DeviceMemory[][] copySource;
    private final DeviceMemory[][] copyTarget;
    private final MemorySegment pairsOnHost;
    /** Memops: the batch, each peer's flag word for this rank and the word after it (END), this rank's flag words. */
    private final StreamMemOps memops;
    private final long[] peerFlag;
    private final long[] peerEnd;
    private final long[] ownFlag;
    /** Memops: rank 0's END word here, and where a follower's stream copies it after each launch (status[4]). */
    private final DeviceMemory endHere;
    private final DeviceMemory endOnHost;
    /** Memops: host copies of the flag words (to name a late peer), the words that release every wait, a zero. */
    private final MemorySegment flagsOnHost;
    private final MemorySegment releaseWords;
    private final MemorySegment zeroWord;
    /** What the launches are, for failure lines ("all-to-all over NVLink"), and how a launch is named there ("round 7"). */
    private final String what;
    private final LongFunction<String> launchName;

    /**
     * Maps {@code destinations} (this rank's, in order) into every rank and builds the launches of
     * {@code phases}, whose sources are {@code sources} here. {@code what} and {@code launchName}
     * say in a failure line what waited ("MoE over NVLink") and for which launch ("round 3 combine").
     */
    public NvlinkPush(TrialGpu gpu, Mover mover, int me, int ranks, int ctas, List<DeviceMemory> sources,
            List<DeviceMemory> destinations, List<Phase> phases, long timeoutNanos, IpcMesh.Allgather group, String what,
            LongFunction<String> launchName) {
        this.gpu = gpu;
        this.what = what;
        this.launchName = launchName;
        this.stream = gpu.stream;
        this.mover = mover;
        this.me = me;
        this.ranks = ranks;
        this.ctas = ctas;
        this.timeoutNanos = timeoutNanos;
        if (mover == Mover.KERNEL && (long) ctas * (BLOCK_THREADS / 32) < ranks - 1) {
            throw new BenchmarkSetupException("ctas=" + ctas + ": " + ctas * (BLOCK_THREADS / 32) + " warps cannot serve "
                    + (ranks - 1) + " destinations (one warp each at least)");
        }
        for (Phase ph : phases) {
            for (int p = 0; p < ranks; p++) {
                if (p != me && (ph.sourceOffset[p] % 16 != 0 || ph.destinationOffset[p] % 16 != 0 || ph.length[p] % 16 != 0)) {
                    throw new IllegalArgumentException("a phase's copy to rank " + p + " is not in 16-byte words");
                }
            }
        }
        int nd = destinations.size();
        gpu.context.makeCurrent();
        // memops run no kernel: nothing to compile
        module = mover == Mover.COPY_ENGINE_MEMOPS ? null : KernelCompiler.load(gpu.context, "alltoall.cu");
        flags = DeviceBuffer.allocate(gpu.context, ranks * LINE);
        flags.fill((byte) 0);
        done = DeviceBuffer.allocate(gpu.context, ranks * LINE);
        done.fill((byte) 0);
        pair = DeviceBuffer.allocate(gpu.context, 16L * ranks + 8);
        pair.fill((byte) 0);
        addresses = DeviceBuffer.allocate(gpu.context, 8L * ranks * (nd + 1));
        tables = DeviceBuffer.allocate(gpu.context, ENTRY * ranks * phases.size());
        status = PinnedHostBuffer.allocate(gpu.context, 4096);
        status.segment().fill((byte) 0);
        pairsOnHost = Arena.ofAuto().allocate(16L * ranks + 8, 8);
        List<DeviceMemory> mapped = new java.util.ArrayList<>(destinations);
        mapped.add(flags);
        mesh = IpcMesh.open(gpu.context, gpu.device, me, mapped, group);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment table = a.allocate(8L * ranks * (nd + 1), 8);
            for (int m = 0; m <= nd; m++) {
                for (int r = 0; r < ranks; r++) {
                    table.setAtIndex(ValueLayout.JAVA_LONG, (long) m * ranks + r, r == me ? 0 : mesh.peer(m, r).deviceAddress());
                }
            }
            addresses.copyFrom(table);
            MemorySegment entries = a.allocate(ENTRY * ranks * phases.size(), 8);
            for (int f = 0; f < phases.size(); f++) {
                Phase ph = phases.get(f);
                for (int p = 0; p < ranks; p++) {
                    long at = 3L * (f * ranks + p);
                    boolean peer = p != me;
                    entries.setAtIndex(ValueLayout.JAVA_LONG, at, peer ? ph.sourceOffset[p] / 16 : 0);
                    entries.setAtIndex(ValueLayout.JAVA_LONG, at + 1, peer ? ph.destinationOffset[p] / 16 : 0);
                    entries.setAtIndex(ValueLayout.JAVA_LONG, at + 2, peer ? ph.length[p] / 16 : 0);
                }
            }
            tables.copyFrom(entries);
        }
        DeviceMemory statusWords = status.slice(0, 16);
        DeviceMemory flagOf = addresses.slice(8L * ranks * nd, 8L * ranks);
        if (mover == Mover.KERNEL) {
            kernel = module.kernel("a2a_push");
            args = new KernelArgs[phases.size()];
            for (int f = 0; f < args.length; f++) {
                Phase ph = phases.get(f);
                args[f] = new KernelArgs(14).pointer(0, sources.get(ph.source)).pointer(1, addresses.slice(8L * ranks * ph.destination,
                        8L * ranks)).pointer(2, flagOf).pointer(3, flags).pointer(4, done).pointer(5, pair)
                        .pointer(6, tables.slice(ENTRY * ranks * f, ENTRY * ranks)).u32(7, me).u32(8, ranks).u64(12, timeoutNanos)
                        .pointer(13, statusWords);
            }
            stamp = null;
            stampArgs = null;
            copySource = null;
            copyTarget = null;
        } else {
            if (mover == Mover.COPY_ENGINE) {
                kernel = module.kernel("a2a_signal");
                DeviceMemory stampWord = pair.slice(16L * ranks, 8);
                args = new KernelArgs[] {new KernelArgs(11).pointer(0, flagOf).pointer(1, flags).pointer(2, pair)
                        .pointer(3, stampWord).u32(4, me).u32(5, ranks).u64(9, timeoutNanos).pointer(10, statusWords)};
                stamp = module.kernel("a2a_stamp");
                stampArgs = new KernelArgs(1).pointer(0, stampWord);
            } else {
                kernel = null;
                args = null;
                stamp = null;
                stampArgs = null;
            }
            copySource = new DeviceMemory[phases.size()][ranks];
            copyTarget = new DeviceMemory[phases.size()][ranks];
            for (int f = 0; f < phases.size(); f++) {
                Phase ph = phases.get(f);
                for (int p = 0; p < ranks; p++) {
                    if (p != me && ph.length[p] > 0) {
                        copySource[f][p] = sources.get(ph.source).slice(ph.sourceOffset[p], ph.length[p]);
                        copyTarget[f][p] = mesh.peer(ph.destination, p).slice(ph.destinationOffset[p], ph.length[p]);
                    }
                }
            }
        }
        if (mover == Mover.COPY_ENGINE_MEMOPS) {
            memops = new StreamMemOps(3 * ranks);
            peerFlag = new long[ranks];
            peerEnd = new long[ranks];
            ownFlag = new long[ranks];
            for (int p = 0; p < ranks; p++) {
                ownFlag[p] = flags.deviceAddress() + p * LINE;
                if (p != me) {
                    peerFlag[p] = mesh.peer(nd, p).deviceAddress() + me * LINE;
                    peerEnd[p] = peerFlag[p] + 4;
                }
            }
            endHere = flags.slice(4, 4);
            endOnHost = status.slice(16, 4);
            Arena host = Arena.ofAuto();
            flagsOnHost = host.allocate(ranks * LINE, 8);
            releaseWords = host.allocate(ranks * LINE, 8);
            for (long w = 0; w < ranks * LINE / 4; w++) {
                releaseWords.setAtIndex(ValueLayout.JAVA_INT, w, Integer.MAX_VALUE);
            }
            zeroWord = host.allocate(4, 4);
        } else {
            memops = null;
            peerFlag = null;
            peerEnd = null;
            ownFlag = null;
            endHere = null;
            endOnHost = null;
            flagsOnHost = null;
            releaseWords = null;
            zeroWord = null;
        }
    }

    public IpcMesh mesh() {
        return mesh;
    }

    /**
     * Enqueues launch {@code round} (numbered 1, 2, ... without gaps) of phase {@code phase};
     * {@code finalEnd} (rank 0's launches after its timed ones: END, else 0) travels with its
     * flags; {@code timed} launches add their arrival times ({@link #takeArrivals}).
     */
    public void enqueue(long round, int phase, boolean timed, long finalEnd) {
        if (mover == Mover.KERNEL) {
            KernelArgs a = args[phase].u32(9, (int) round).u32(10, timed ? 1 : 0).u32(11, (int) finalEnd);
            kernel.launch(stream, ctas, BLOCK_THREADS, 0, a);
            return;
        }
        if (mover == Mover.COPY_ENGINE) {
            stamp.launch(stream, 1, 1, 0, stampArgs);
        }
        DeviceMemory[] from = copySource[phase];
        DeviceMemory[] to = copyTarget[phase];
        for (int k = 1; k < ranks; k++) {
            int p = (me + k) % ranks;
            if (to[p] != null) {
                stream.copy(to[p], from[p], to[p].byteSize());
            }
        }
        if (mover == Mover.COPY_ENGINE) {
            KernelArgs a = args[0].u32(6, (int) round).u32(7, timed ? 1 : 0).u32(8, (int) finalEnd);
            kernel.launch(stream, 1, 32 * Math.max(1, (ranks + 31) / 32), 0, a);
            return;
        }
        // every write fenced after what the stream did before it: the copies, then END, then the flag
        memops.clear();
        for (int k = 1; k < ranks; k++) {
            int p = (me + k) % ranks;
            if (finalEnd != 0) {
                memops.write32(peerEnd[p], (int) finalEnd);
            }
            memops.write32(peerFlag[p], (int) round);
        }
        for (int k = 1; k < ranks; k++) {
            memops.waitAtLeast32(ownFlag[(me + k) % ranks], (int) round);
        }
        memops.enqueue(stream);
        if (me != 0) {
            stream.copy(endOnHost, endHere, 4); // rank 0's END, 0 until it says it (cleared each iteration)
        }
    }

    /**
     * Waits until every round enqueued so far has ended on this rank. The kernels wait for the
     * peers' flags until {@code timeoutNanos} and then say which peer and round; {@code deadline}
     * (longer) keeps the host from waiting on a GPU that never finishes and fails the wait at once
     * when the rank group has lost a rank.
     */
    public void await(Deadline deadline, long lastRound) {
        if (stream.isIdle()) {
            checkStatus();
            return;
        }
        deadline.start();
        long started = System.nanoTime();
        do {
            if ((int) INT.getVolatile(status.segment(), 0L) != 0) {
                break;
            }
            if (memops != null && System.nanoTime() - started > timeoutNanos) {
                nameLateFlag(lastRound); // a memop wait has no clock: the host says who is late
                break;
            }
            deadline.check(what, -1, lastRound);
        } while (!stream.isIdle());
        checkStatus();
    }

    /** Memops: the peer whose flag is furthest behind {@code lastRound} and the launch it holds, into the status words. */
    private void nameLateFlag(long lastRound) {
        flags.copyTo(flagsOnHost); // the legacy stream: not held by this rank's non-blocking stream
        int late = -1;
        int lowest = 0;
        for (int s = 0; s < ranks; s++) {
            int f = flagsOnHost.get(ValueLayout.JAVA_INT, s * LINE);
            if (s != me && (int) (f - (int) lastRound) < 0 && (late < 0 || (int) (f - lowest) < 0)) {
                late = s;
                lowest = f;
            }
        }
        if (late < 0) {
            return; // every flag came as the budget ran out: the stream ends at once
        }
        INT.setVolatile(status.segment(), 4L, late);
        INT.setVolatile(status.segment(), 8L, lowest + 1);
        INT.setVolatile(status.segment(), 0L, 1);
    }

    /** END as rank 0's flags brought it to this rank, or -1 ({@link #forgetEnd} at each iteration's start). */
    public long endFromFlags() {
        int end = (int) INT.getVolatile(status.segment(), 16L);
        return end != 0 ? Integer.toUnsignedLong(end) : -1;
    }

    /** A new iteration: the last one's END is forgotten (its rounds all ended, so no late flag brings it back). */
    public void forgetEnd() {
        INT.setVolatile(status.segment(), 16L, 0);
        if (memops != null) {
            endHere.copyFrom(zeroWord); // the stream copies this word every launch: the last iteration's END goes
        }
    }

    /**
     * Ends this rank's kernels now (their waits see the host's stop word) and gives the stream a
     * moment to drain: on the way out of a failure, before the peers' memory is unmapped.
     */
    public void stop() {
        INT.setVolatile(status.segment(), 12L, 1);
        try {
            gpu.context.makeCurrent();
            if (memops != null && !stream.isIdle()) {
                flags.copyFrom(releaseWords); // memop waits end only when their word comes: every flag raised here
            }
            stream.await(5_000_000_000L, "rank " + me + ": " + what + " stopping");
        } catch (RuntimeException ignored) {
            // on the way out: the failure that brought us here is the one reported
        }
    }

    private void checkStatus() {
        if ((int) INT.getVolatile(status.segment(), 0L) == 1) {
            int peer = (int) INT.getVolatile(status.segment(), 4L);
            int round = (int) INT.getVolatile(status.segment(), 8L);
            throw new BenchmarkSetupException("rank " + me + ": " + what + " (" + mover.label + ") " + launchName.apply(round)
                    + ": rank " + peer + " (GPU " + mesh.busId(peer) + ") did not raise its flag within "
                    + timeoutNanos / 1_000_000_000L + " s (it stopped, or its GPU is stuck)", peer);
        }
    }

    /** This rank's arrival sums since the last call, [sender] = {ns, rounds}; then zeroed. */
    public long[][] takeArrivals() {
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
    public String describe() {
        return switch (mover) {
            case KERNEL -> "SM stores (alltoall.cu a2a_push, " + ctas + " CTAs x " + BLOCK_THREADS + " threads, warps"
                    + " round-robin over " + (ranks - 1) + " destinations)";
            case COPY_ENGINE -> "copy engines (cuMemcpyDtoDAsync per destination in (me + k) mod N order on one stream,"
                    + " then a2a_signal)";
            case COPY_ENGINE_MEMOPS -> "copy engines (cuMemcpyDtoDAsync per destination in (me + k) mod N order on one"
                    + " stream, then cuStreamBatchMemOp: flags written to the peers and awaited, no kernel)";
        };
    }

    /**
     * Frees this rank's own memory and kernels. The peers' mappings ({@link #mesh}) close apart and
     * earlier, before the end-of-trial barrier, since a peer still maps this rank's flags until then.
     */
    @Override
    public void close() {
        gpu.context.makeCurrent();
        AutoCloseable[] steps = {memops, module, status, tables, addresses, pair, done, flags};
        RuntimeException first = null;
        for (AutoCloseable step : steps) {
            try {
                if (step != null) {
                    step.close();
                }
            } catch (Exception e) {
                first = first == null ? new RuntimeException(e) : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }
}

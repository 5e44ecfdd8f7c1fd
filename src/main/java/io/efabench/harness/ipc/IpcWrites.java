package io.efabench.harness.ipc;

import org.openjdk.jmh.infra.BenchmarkParams;

import io.efabench.cuda.CheckPattern;
import io.efabench.cuda.CudaModule;
import io.efabench.cuda.CudaStream;
import io.efabench.cuda.DeviceBuffer;
import io.efabench.cuda.DeviceMemory;
import io.efabench.cuda.Kernel;
import io.efabench.cuda.KernelArgs;
import io.efabench.cuda.KernelCompiler;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.Sizes;
import io.efabench.harness.Traffic;

/**
 * Rank 0's writes of {@code size} bytes into every peer's inbox in turn over CUDA IPC, one
 * invocation one write to every peer (IpcBenchmark's {@code write} and {@code copyEngine}): by a
 * kernel of ipc_write.cu ({@link WriteKernel}, launched {@link LaunchShape}), or by the copy
 * engines (cuMemcpyDtoDAsync from a local buffer to the peer's mapping). Every iteration ends with
 * a checked round through the same launch that verifies every byte on the target GPU.
 */
public final class IpcWrites implements AutoCloseable {
    private final IpcRig rig;
    private final long bytes;
    private final String what;
    private final WriteKernel variant;
    private DeviceBuffer source;
    private LaunchShape launch;
    private CudaModule module;
    private Kernel kernel;
    private KernelArgs[] args;
    private IpcRig.Transfer timed;
    private long round;

    private IpcWrites(BenchmarkParams bp, String size, WriteKernel variant, String what) {
        this.variant = variant;
        this.what = what;
        bytes = Sizes.parse(size);
        if (bytes % 16 != 0) {
            throw new BenchmarkSetupException("size " + size + " is not a multiple of 16 bytes");
        }
        rig = IpcRig.open(bp, 0, bytes);
        try {
            if (rig.leader && (variant == null || variant.copies)) {
                source = DeviceBuffer.allocate(rig.context, bytes);
                rig.pattern.fill(rig.stream, source, 0, 1, 0);
                rig.stream.await(rig.timeoutNanos, "rank 0: fill source");
            }
            int peers = rig.world - 1;
            rig.metrics.traffic(new Traffic(bytes * peers, peers, rig.leader ? rig.linkGbps(bytes) : 0, rig.rank));
            if (rig.leader) {
                System.out.println(rig.provenance());
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Kernel writes: {@code config} a {@link WriteKernel}, {@code shape} GRIDxBLOCK (GRID may be Nsm). */
    public static IpcWrites kernel(BenchmarkParams bp, String config, String shape, String size) {
        WriteKernel variant = WriteKernel.parse(config);
        IpcWrites w = new IpcWrites(bp, size, variant, "config " + config + ", shape " + shape + ", size " + size);
        try {
            w.launch = LaunchShape.parse(shape, w.rig.device.smCount(), 1024);
            if (w.rig.leader) {
                w.module = KernelCompiler.load(w.rig.context, "ipc_write.cu");
                w.kernel = w.module.kernel(variant.function);
                if (variant.sharedBytes > 48 * 1024) {
                    w.kernel.setMaxDynamicSharedMemory(variant.sharedBytes);
                }
                w.args = new KernelArgs[w.rig.world];
                for (int p = 1; p < w.rig.world; p++) {
                    w.args[p] = w.argsFor(p, CheckPattern.seed(0, p, 0));
                }
                CudaStream stream = w.rig.stream;
                w.timed = p -> w.kernel.launch(stream, w.launch.grid(), w.launch.block(), variant.sharedBytes, w.args[p]);
            }
            return w;
        } catch (RuntimeException e) {
            w.rig.group.abort(e.getMessage());
            w.close();
            throw e instanceof BenchmarkSetupException ? e : new BenchmarkSetupException(e.getMessage());
        }
    }

    /** Copy-engine writes from a local buffer into each peer's mapping. */
    public static IpcWrites copyEngine(BenchmarkParams bp, String size) {
        IpcWrites w = new IpcWrites(bp, size, null, "copy engine, size " + size);
        if (w.rig.leader) {
            CudaStream stream = w.rig.stream;
            w.timed = p -> stream.copy(w.rig.peers[p], w.source, w.bytes);
        }
        return w;
    }

    private KernelArgs argsFor(int peer, int seed) {
        DeviceMemory dst = rig.peers[peer];
        long n = bytes / variant.unit;
        return variant.copies ? new KernelArgs(3).pointer(0, dst).pointer(1, source).u64(2, n)
                : new KernelArgs(3).pointer(0, dst).u64(1, n).u32(2, seed);
    }

    /** One invocation: rank 0 writes to every peer (timed by CUDA events); a follower checks the group. */
    public void invoke() {
        if (rig.leader) {
            rig.timedRound(timed);
        } else {
            rig.group.checkAlive();
        }
    }

    /** Iteration end: the checked round, through the same launch, every byte verified on the targets. */
    public void check() {
        long r = ++round;
        if (variant == null) {
            rig.checkedRound(r, what, p -> fillSource(p, r), timed);
            return;
        }
        KernelArgs[] checked = new KernelArgs[rig.world];
        if (rig.leader) {
            for (int p = 1; p < rig.world; p++) {
                checked[p] = argsFor(p, CheckPattern.seed(0, p, r));
            }
        }
        rig.checkedRound(r, what, variant.copies ? p -> fillSource(p, r) : null,
                p -> kernel.launch(rig.stream, launch.grid(), launch.block(), variant.sharedBytes, checked[p]));
    }

    /** Enqueues the pattern of (rank 0, {@code peer}, round) into the source. */
    private void fillSource(int peer, long checkedRound) {
        rig.pattern.fill(rig.stream, source, 0, peer, checkedRound);
    }

    @Override
    public void close() {
        try {
            rig.context.makeCurrent();
            if (module != null) {
                module.close();
            }
            if (source != null) {
                source.close();
            }
        } finally {
            rig.close();
        }
    }
}

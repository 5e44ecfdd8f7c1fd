package io.efabench.bench;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

import io.efabench.cuda.CudaStream;
import io.efabench.cuda.DeviceBuffer;
import io.efabench.cuda.DeviceMemory;
import io.efabench.cuda.CheckPattern;
import io.efabench.cuda.Kernel;
import io.efabench.cuda.KernelArgs;
import io.efabench.cuda.KernelCompiler;
import io.efabench.cuda.CudaModule;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.ipc.IpcRig;
import io.efabench.harness.Sizes;
import io.efabench.harness.Traffic;

/**
 * NVLink GPU-to-GPU writes through CUDA IPC (seed 004, "NVLink GPU-to-GPU Communication
 * Performance"). Ranks on one node, one GPU each; rank 0 writes {@code size} bytes into each
 * peer's buffer in turn, and one invocation is one write to every peer. Times are CUDA-event
 * times of the GPU work ({@code gbps}, {@code busbw_pct} over the NVLink speed of the pair read
 * from NVML, {@code lat_us} per peer write); every iteration ends with a checked round that
 * verifies every byte on the target GPU.
 *
 * <ul>
 *   <li>{@link #write}: a kernel writes (params {@code config}, {@code shape} = GRIDxBLOCK,
 *       {@code size});</li>
 *   <li>{@link #copyEngine}: cuMemcpyDtoDAsync from a local buffer to the peer's mapping, i.e.
 *       the copy engines over NVLink (param {@code size}): the column kernels are compared with;</li>
 *   <li>{@link #flagLatency}: a GPU flag ping-pong with each peer; {@code lat_us} is half the
 *       round trip, the time until a flag written over NVLink is seen by the peer's kernel.</li>
 * </ul>
 * Followers' invocations return at once: IPC writes are one-sided.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 200, timeUnit = TimeUnit.MILLISECONDS)
@Measurement(iterations = 3, time = 300, timeUnit = TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class IpcBenchmark {

    /** Shared by the two bandwidth states: buffer sizes and the traffic they publish. */
    abstract static class Bandwidth {
        IpcRig rig;
        long bytes;
        long round;
        DeviceBuffer source;
        IpcRig.Transfer timed;

        void open(BenchmarkParams bp, String size, boolean needsSource) {
            bytes = Sizes.parse(size);
            if (bytes % 16 != 0) {
                throw new BenchmarkSetupException("size " + size + " is not a multiple of 16 bytes");
            }
            rig = IpcRig.open(bp, 0, bytes);
            if (rig.leader && needsSource) {
                source = DeviceBuffer.allocate(rig.context, bytes);
                rig.pattern.fill(rig.stream, source, 0, 1, 0);
                rig.stream.await(rig.timeoutNanos, "rank 0: fill source");
            }
            int peers = rig.world - 1;
            rig.metrics.traffic(new Traffic(bytes * peers, peers, rig.leader ? rig.linkGbps(bytes) : 0, rig.rank));
            if (rig.leader) {
                System.out.println(rig.provenance());
            }
        }

        void invoke() {
            if (rig.leader) {
                rig.timedRound(timed);
            } else {
                rig.group.checkAlive();
            }
        }

        /** Enqueues the pattern of (rank 0, {@code peer}, round) into the source. */
        void fillSource(int peer, long checkedRound) {
            rig.pattern.fill(rig.stream, source, 0, peer, checkedRound);
        }

        void close() {
            if (rig != null) {
                try {
                    if (source != null) {
                        rig.context.makeCurrent();
                        source.close();
                    }
                } finally {
                    rig.close();
                }
            }
        }
    }

    @State(Scope.Thread)
    public static class Write extends Bandwidth {
        /**
         * Kernel variant (ipc_write.cu): int (reference), int4, int4x4, int4warp, tma and tmabig
         * (Hopper bulk copies), copy4x4 (SM copy of a local buffer).
         */
        @Param({"int", "int4x4", "tma"})
        public String config;

        /** GRIDxBLOCK; GRID may be Nsm (N x SM count). */
        @Param({"1x256", "1x1024", "16x256", "128x256", "1smx1024", "2smx1024", "4smx512"})
        public String shape;

        @Param({"256K", "1M", "4M", "16M", "64M", "256M", "1G"})
        public String size;

        WriteKernel variant;
        LaunchShape launch;
        CudaModule module;
        Kernel kernel;
        KernelArgs[] args;

        @Setup(Level.Trial)
        public void setUp(BenchmarkParams bp) {
            variant = WriteKernel.parse(config);
            open(bp, size, variant.copies);
            try {
                launch = LaunchShape.parse(shape, rig.device.smCount(), 1024);
                if (rig.leader) {
                    module = KernelCompiler.load(rig.context, "ipc_write.cu");
                    kernel = module.kernel(variant.function);
                    if (variant.sharedBytes > 48 * 1024) {
                        kernel.setMaxDynamicSharedMemory(variant.sharedBytes);
                    }
                    args = new KernelArgs[rig.world];
                    for (int p = 1; p < rig.world; p++) {
                        args[p] = argsFor(p, CheckPattern.seed(0, p, 0));
                    }
                    CudaStream stream = rig.stream;
                    timed = p -> kernel.launch(stream, launch.grid(), launch.block(), variant.sharedBytes, args[p]);
                }
            } catch (RuntimeException e) {
                rig.group.abort(e.getMessage());
                close();
                throw e instanceof BenchmarkSetupException ? e : new BenchmarkSetupException(e.getMessage());
            }
        }

        private KernelArgs argsFor(int peer, int seed) {
            DeviceMemory dst = rig.peers[peer];
            long n = bytes / variant.unit;
            return variant.copies ? new KernelArgs(3).pointer(0, dst).pointer(1, source).u64(2, n)
                    : new KernelArgs(3).pointer(0, dst).u64(1, n).u32(2, seed);
        }

        @TearDown(Level.Iteration)
        public void check() {
            long r = ++round;
            KernelArgs[] checked = new KernelArgs[rig.world];
            if (rig.leader) {
                for (int p = 1; p < rig.world; p++) {
                    checked[p] = argsFor(p, CheckPattern.seed(0, p, r));
                }
            }
            rig.checkedRound(r, "config " + config + ", shape " + shape + ", size " + size,
                    variant.copies ? p -> fillSource(p, r) : null,
                    p -> kernel.launch(rig.stream, launch.grid(), launch.block(), variant.sharedBytes, checked[p]));
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            try {
                if (module != null) {
                    rig.context.makeCurrent();
                    module.close();
                }
            } finally {
                close();
            }
        }
    }

    @State(Scope.Thread)
    public static class CopyEngine extends Bandwidth {
        @Param({"256K", "1M", "4M", "16M", "64M", "256M", "1G"})
        public String size;

        @Setup(Level.Trial)
        public void setUp(BenchmarkParams bp) {
            open(bp, size, true);
            if (rig.leader) {
                CudaStream stream = rig.stream;
                timed = p -> stream.copy(rig.peers[p], source, bytes);
            }
        }

        @TearDown(Level.Iteration)
        public void check() {
            long r = ++round;
            rig.checkedRound(r, "copy engine, size " + size, p -> fillSource(p, r), timed);
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            close();
        }
    }

    @State(Scope.Thread)
    public static class FlagLatency {
        /** Round trips per peer in one invocation. */
        static final int ROUNDS = 1000;
        static final int STOP = -1;
        IpcRig rig;
        Kernel ping;
        Kernel pong;
        KernelArgs[] pingArgs;
        KernelArgs pongArgs;
        int invocation;
        IpcRig.Transfer timed;

        @Setup(Level.Trial)
        public void setUp(BenchmarkParams bp) {
            IpcRig r = IpcRig.open(bp, 4L * 64, 4);
            rig = r;
            if (r.world > 64) {
                r.group.abort("flagLatency supports up to 64 ranks");
                r.close();
                throw new BenchmarkSetupException("flagLatency supports up to 64 ranks");
            }
            ping = r.flags.kernel("flag_ping");
            pong = r.flags.kernel("flag_pong");
            if (r.leader) {
                pingArgs = new KernelArgs[r.world];
                for (int p = 1; p < r.world; p++) {
                    pingArgs[p] = new KernelArgs(6).pointer(0, r.peers[p]).pointer(1, r.inbox.slice(4L * p, 4))
                            .u32(2, 1).u32(3, ROUNDS).u64(4, IpcRig.KERNEL_TIMEOUT_NS)
                            .pointer(5, r.host.slice(IpcRig.STATUS_A, 4));
                }
                timed = p -> ping.launch(r.stream, 1, 1, 0, pingArgs[p].u32(2, 1 + invocation * ROUNDS));
                r.metrics.traffic(new Traffic(8L * ROUNDS * (r.world - 1), 2 * ROUNDS * (r.world - 1), 0, r.rank));
                System.out.println(r.provenance());
            } else {
                pongArgs = new KernelArgs(5).pointer(0, r.peers[0].slice(4L * r.rank, 4)).pointer(1, r.inbox)
                        .u32(2, STOP).u64(3, r.timeoutNanos).pointer(4, r.host.slice(IpcRig.STATUS_B, 4));
                r.metrics.traffic(new Traffic(8L * ROUNDS, 2 * ROUNDS, 0, r.rank));
            }
        }

        @Setup(Level.Iteration)
        public void start() {
            rig.context.makeCurrent();
            rig.inbox.fill((byte) 0);
            invocation = 0;
            if (!rig.leader) {
                rig.clearStatus(IpcRig.STATUS_B);
                pong.launch(rig.stream, 1, 1, 0, pongArgs);
            }
            rig.barrier("ipc latency: pong running");
        }

        void invoke() {
            if (rig.leader) {
                rig.timedRound(timed);
                int failed = rig.status(IpcRig.STATUS_A);
                if (failed != 0) {
                    throw new IllegalStateException("rank 0: flag ping-pong: no echo of round " + failed
                            + " within 10 s from a peer");
                }
                invocation++;
            } else {
                rig.group.checkAlive();
            }
        }

        @TearDown(Level.Iteration)
        public void stop() {
            rig.context.makeCurrent();
            if (rig.leader) {
                for (int p = 1; p < rig.world; p++) {
                    rig.peers[p].fillWords(STOP);
                }
            } else {
                rig.stream.await(rig.timeoutNanos, "rank " + rig.rank + ": flag_pong after rank 0's stop");
                if (rig.status(IpcRig.STATUS_B) != 0) {
                    throw new IllegalStateException("rank " + rig.rank + ": flag_pong saw no flag from rank 0 for "
                            + rig.timeout.toSeconds() + " s");
                }
            }
            rig.barrier("ipc latency: pong stopped");
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            if (rig != null) {
                rig.close();
            }
        }
    }

    @Benchmark
    public void write(Write s) {
        s.invoke();
    }

    @Benchmark
    public void copyEngine(CopyEngine s) {
        s.invoke();
    }

    @Benchmark
    public void flagLatency(FlagLatency s) {
        s.invoke();
    }
}

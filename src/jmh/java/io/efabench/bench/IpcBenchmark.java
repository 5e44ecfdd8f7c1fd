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

import io.efabench.harness.ipc.IpcFlagPingPong;
import io.efabench.harness.ipc.IpcWrites;


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

    @State(Scope.Thread)
    public static class Write {
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

        IpcWrites writes;

        @Setup(Level.Trial)
        public void setUp(BenchmarkParams bp) {
            writes = IpcWrites.kernel(bp, config, shape, size);
        }

        @TearDown(Level.Iteration)
        public void check() {
            writes.check();
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            if (writes != null) {
                writes.close();
            }
        }
    }

    @State(Scope.Thread)
    public static class CopyEngine {
        @Param({"256K", "1M", "4M", "16M", "64M", "256M", "1G"})
        public String size;

        IpcWrites writes;

        @Setup(Level.Trial)
        public void setUp(BenchmarkParams bp) {
            writes = IpcWrites.copyEngine(bp, size);
        }

        @TearDown(Level.Iteration)
        public void check() {
            writes.check();
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            if (writes != null) {
                writes.close();
            }
        }
    }

    @State(Scope.Thread)
    public static class FlagLatency {
        IpcFlagPingPong pingPong;

        @Setup(Level.Trial)
        public void setUp(BenchmarkParams bp) {
            pingPong = IpcFlagPingPong.open(bp);
        }

        @Setup(Level.Iteration)
        public void start() {
            pingPong.startIteration();
        }

        @TearDown(Level.Iteration)
        public void stop() {
            pingPong.endIteration();
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            if (pingPong != null) {
                pingPong.close();
            }
        }
    }

    @Benchmark
    public void write(Write s) {
        s.writes.invoke();
    }

    @Benchmark
    public void copyEngine(CopyEngine s) {
        s.writes.invoke();
    }

    @Benchmark
    public void flagLatency(FlagLatency s) {
        s.pingPong.invoke();
    }
}

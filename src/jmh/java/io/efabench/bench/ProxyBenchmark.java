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
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

import io.efabench.harness.FabricTrial;
import io.efabench.harness.Flags;
import io.efabench.harness.MemoryKind;
import io.efabench.harness.ProxyRounds;
import io.efabench.harness.Sizes;
import io.efabench.harness.WriteRounds;

/**
 * GPU-initiated RDMA writes through a CPU proxy (seed: experiments/proxy), rank 0 to ranks
 * 1..N-1 in turn: one invocation is one launch of the producer kernel, which pushes
 * {@code requests} write requests per target (one thread per block, once the block's data is
 * ready) into a ring in mapped pinned host memory; a Java proxy thread drains the ring and posts
 * the writes with immediate data. Timed from the launch until the kernel finished and every
 * target saw every immediate of the round (the kernel's exit overlaps the next launch). Metrics are Write's; {@code -p config=...,SingleDMA,MultiDMA}
 * adds the direct baseline (the host posts the same round itself) to the same table.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class ProxyBenchmark extends FabricBenchmark {

    /** The four proxy configs; add SingleDMA,MultiDMA for the direct baseline in the same table. */
    @Param({"ProxySingle", "ProxyMulti", "ProxySingleNBI", "ProxyMultiNBI"})
    public ProxyConfig config;

    /** Bytes written to each target per round (the seed's sweep, and smaller). */
    @Param({"64K", "1M", "8M", "16M", "32M", "64M", "128M", "256M", "512M", "1G"})
    public String size;

    /**
     * Requests per target and round, each size / requests bytes. 1 is the seed's request (the
     * whole buffer); more show blocking against NBI within a round.
     */
    @Param({"1"})
    public int requests;

    /** Producer blocks: block b pushes requests b, b + grid, ... (1: one pusher, the seed's). */
    @Param({"1"})
    public int grid;

    /** Threads per producer block (they fill the block's chunk with -p fill=true). */
    @Param({"256"})
    public int block;

    /** true: the kernel writes the payload before pushing, inside the timed round (as the seed did). */
    @Param({"false"})
    public String fill;

    @Param({"auto"})
    public String channels;

    /** nic or auto, as in WriteBenchmark. */
    @Param({"nic"})
    public String path;

    @Setup(Level.Trial)
    public void setup(BenchmarkParams bp) {
        boolean filled = Flags.parse("fill", fill);
        long bytes = Sizes.parse(size);
        trial = FabricTrial.open(bp, channels, 2, MemoryKind.DEVICE);
        if (config.direct) {
            rounds = trial.rounds(t -> new WriteRounds(t, config.layout, true, bytes, 1, true, "1"));
        } else {
            rounds = trial.rounds(t -> new ProxyRounds(t, config.layout, config.nbi, bytes, requests, grid, block, filled));
        }
    }

    @Benchmark
    public void put() {
        round();
    }
}

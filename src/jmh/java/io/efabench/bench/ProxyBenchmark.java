package io.efabench.bench;


import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.BenchmarkParams;
import io.efabench.harness.Flags;
import io.efabench.harness.MemoryKind;
import io.efabench.harness.Sizes;
import io.efabench.harness.proxy.ProxyRounds;
import io.efabench.harness.trial.FabricTrial;
import io.efabench.harness.trial.TrialSpec;
import io.efabench.harness.trial.RoundDriver;


/**
 * GPU-initiated RDMA writes through a CPU proxy (seed: experiments/proxy), rank 0 to ranks
 * 1..N-1: a producer kernel resident for the iteration pushes write requests into a ring in
 * mapped pinned host memory, a Java proxy thread drains the ring and posts the writes with
 * immediate data. One invocation is one launch of {@code rounds} rounds (the seed's kernel loops
 * over its iterations the same way): the host rings the kernel's doorbell, and the invocation ends
 * when every target saw every immediate of the launch. Blocking configs quiet after every push,
 * NBI configs once per launch. {@code -p config=...,DirectSingle,DirectSingleNBI} adds the same
 * launches made by the proxy thread itself (no GPU in the loop) to the same table; the difference
 * per round is the proxy's overhead ({@code ./run-jmh.sh report}'s proxy overhead table).
 */
public class ProxyBenchmark extends FabricBenchmark {

    /** The four proxy configs; add DirectSingle,DirectMulti,DirectSingleNBI,DirectMultiNBI for their twins without the GPU. */
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

    /**
     * Rounds per launch (one invocation): the seed's kernel loops over its iterations; NBI
     * overlaps them, blocking quiets between them. {@code lat_us} (blocking) is a launch's time
     * over its rounds.
     */
    @Param({"16"})
    public int rounds;

    /** Distinct source and target regions the rounds of a launch cycle through ({@code auto}: as Write's). */
    @Param({"auto"})
    public String slots;

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
        trial = FabricTrial.open(bp, TrialSpec.of(MemoryKind.DEVICE).channels(channels).config(config.name()).path(path));
        driver = RoundDriver.open(trial, t -> new ProxyRounds(t, config.layout, config.nbi, config.direct, bytes, requests, grid, block,
                filled, rounds, slots));
    }

    @Benchmark
    public void put() {
        round();
    }
}

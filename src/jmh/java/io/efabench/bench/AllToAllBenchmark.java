package io.efabench.bench;


import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.BenchmarkParams;
import io.efabench.harness.Sizes;
import io.efabench.harness.alltoall.AllToAllRounds;
import io.efabench.harness.alltoall.NvlinkAllToAllRounds;
import io.efabench.harness.trial.FabricTrial;
import io.efabench.harness.trial.TrialSpec;
import io.efabench.harness.trial.RoundDriver;


/**
 * All-to-all (seed: experiments/all2all): in every round each rank writes {@code size} bytes
 * with immediate data to every other rank at once, the pattern of MoE dispatch/combine. One
 * invocation is one round on every rank ({@link AllToAllRounds}); rank 0's score is the result,
 * and each iteration also reports the slowest rank and the spread over peers. {@code gbps} is the
 * bytes a rank sends to the N-1 others per second (nccl-tests' busbw), {@code algbw_gbps} is
 * size x N per second (nccl-tests' algbw): the seed's figure is gbps / (N-1).
 */
public class AllToAllBenchmark extends FabricBenchmark {

    @Param({"SinglePin", "MultiPin", "RoundRobinPin", "SingleDMA", "MultiDMA", "RoundRobinDMA"})
    /** The same six configs as WriteBenchmark (the seed's five plus RoundRobinPin): layout x memory. */
    public WriteConfig config;

    /** Bytes each rank writes to each peer per round. */
    @Param({"64K", "256K", "1M", "4M", "8M", "16M", "32M", "64M", "128M"})
    public String size;

    /** "auto": the NICs the provider reports for this rank; a number opens that many endpoints. */
    @Param({"auto"})
    public String channels;

    /**
     * nic: every byte crosses the NIC (efa/verbs); auto: same-node peers may go through shm;
     * nvlink: ranks of one node store device memory straight into each other's GPUs (an SM
     * kernel over CUDA IPC); nvlink-ce: the same by the copy engines, flags by a one-block kernel;
     * nvlink-ce-memops: the copy engines with the flags as stream memory operations (no kernel).
     * The NVLink paths take SingleDMA.
     */
    @Param({"nic"})
    public String path;

    /**
     * path=nvlink: CTAs of the round kernel (512 threads each; its warps are spread over the
     * destinations). 32 because 16 left the SM copy well below the copy engines inside one H200
     * (docs/perf/journal/alltoall.md); which count NVLink wants is measured on 2+ GPUs.
     */
    @Param({"32"})
    public int ctas;

    /**
     * All-to-all rounds a rank may have in flight: 1 is one collective at a time (an invocation
     * is one all-to-all's latency, like torch.distributed.all_to_all_single); larger windows
     * pipeline rounds (lat_us is then not reported).
     */
    @Param({"1"})
    public int window;

    /** Distinct regions the rounds in flight write: "auto" is one per round of the window, at most 1 GiB per buffer. */
    @Param({"auto"})
    public String slots;

    @Setup(Level.Trial)
    public void setup(BenchmarkParams bp) {
        long bytes = Sizes.parse(size);
        boolean nvlink = NvlinkAllToAllRounds.isNvlinkPath(path);
        // an NVLink path leaves the fabric to its provider's own choices: it carries none of the rounds
        trial = FabricTrial.open(bp, TrialSpec.of(config.memory).channels(channels).config(config.name())
                .path(nvlink ? "auto" : path));
        driver = RoundDriver.open(trial, t -> nvlink ? NvlinkAllToAllRounds.open(t, path, config.layout, bytes, window, slots, ctas)
                : new AllToAllRounds(t, config.layout, bytes, window, slots));
    }

    @Benchmark
    public void allToAll() {
        round();
    }
}

package io.efabench.bench;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.BenchmarkParams;
import io.efabench.harness.moe.Dtype;
import io.efabench.harness.moe.MoeRounds;
import io.efabench.harness.moe.MoeShape;
import io.efabench.harness.moe.NvlinkMoeRounds;
import io.efabench.harness.nvlink.NvlinkPush;
import io.efabench.harness.moe.Routing;
import io.efabench.harness.trial.FabricTrial;
import io.efabench.harness.trial.RoundDriver;
import io.efabench.harness.trial.TrialSpec;


/**
 * MoE dispatch and combine, the traffic the seed's all-to-all exists for: each token goes to the
 * ranks holding its top-k experts (once per rank, as DeepEP sends it), then comes back (combine).
 * Per-peer sizes follow a seeded routing that every rank computes alike ({@code routing}:
 * uniform, lognormal skew, a hot rank), different every round and the same every run. One
 * invocation is one layer's dispatch and combine on every rank ({@link MoeRounds}); the score is
 * rank 0's round time, and each iteration reports every rank's rates counted DeepEP's way and
 * over the wire, the slowest rank, the imbalance and the busiest NIC against its link (README,
 * "MoE dispatch and combine"). DeepSeek-V3's shape by default, at the low-latency 128 tokens a
 * rank; {@code -p tokens=4096} is the throughput shape.
 */
public class MoeBenchmark extends FabricBenchmark {

    /** Layout over the NICs x memory, as all-to-all's: Single, Multi (striped), RoundRobin; Pin = host, DMA = device. */
    @Param({"SinglePin", "MultiPin", "RoundRobinPin", "SingleDMA", "MultiDMA", "RoundRobinDMA"})
    public WriteConfig config;

    /** Tokens each rank dispatches a round: 128 is DeepEP's low-latency shape, 4096 its throughput shape. */
    @Param({"128"})
    public int tokens;

    /** Values a token carries (DeepSeek-V3: 7168). */
    @Param({"7168"})
    public int hidden;

    /** Experts a token picks. */
    @Param({"8"})
    public int topk;

    /** Experts in the layer, spread over the ranks in contiguous blocks. */
    @Param({"256"})
    public int experts;

    /** Dispatch type: BF16 (2 bytes a value) or FP8 (1 byte a value + a 4-byte scale per 128); combine is BF16. */
    @Param({"BF16", "FP8"})
    public Dtype dtype;

    /** uniform | lognormal:&lt;max/mean load per rank&gt; | hot:&lt;share the last rank receives&gt;. */
    @Param({"uniform", "lognormal:2.0", "hot:0.25"})
    public String routing;

    /** The routing's seed: the same seed, the same tokens to the same experts on every rank and every run. */
    @Param({"1"})
    public long seed;

    /** "auto": the NICs the provider reports for this rank; a number opens that many endpoints. */
    @Param({"auto"})
    public String channels;

    /**
     * nic: every byte crosses the NIC (efa/verbs); auto: same-node peers may go through shm;
     * nvlink: ranks on one node with device memory (SingleDMA) move both phases with a kernel
     * storing into the peers' GPUs over CUDA IPC; nvlink-ce: the same by the copy engines;
     * nvlink-ce-memops: the copy engines with flags as stream memory operations.
     */
    @Param({"nic"})
    public String path;

    /** path=nvlink: CTAs of the phase kernel (512 threads each, warps spread over the destinations). */
    @Param({"32"})
    public int ctas;

    @Setup(Level.Trial)
    public void setup(BenchmarkParams bp) {
        MoeShape shape = new MoeShape(tokens, hidden, topk, experts, dtype);
        Routing r = Routing.parse(routing);
        NvlinkPush.Mover nvlink = NvlinkPush.Mover.of(path);
        // an NVLink path leaves the fabric to its provider's own choices: it carries none of the rounds
        trial = FabricTrial.open(bp, TrialSpec.of(config.memory).channels(channels).config(config.name())
                .path(nvlink != null ? "auto" : path));
        driver = RoundDriver.open(trial, t -> nvlink != null ? new NvlinkMoeRounds(t, nvlink, ctas, config.layout, shape, r, seed)
                : new MoeRounds(t, config.layout, shape, r, seed));
    }

    @Benchmark
    public void dispatchAndCombine() {
        round();
    }
}

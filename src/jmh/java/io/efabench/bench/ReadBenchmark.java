package io.efabench.bench;


import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.BenchmarkParams;
import io.efabench.harness.Sizes;
import io.efabench.harness.trial.FabricTrial;
import io.efabench.harness.trial.TrialSpec;
import io.efabench.harness.trial.RoundDriver;
import io.efabench.harness.write.ReadRounds;


/**
 * RDMA read, rank 0 from ranks 1..N-1 (fi_readmsg; fabtests' {@code fi_rma_bw -o read},
 * perftest's {@code ib_read_bw}), with Write's configs ({@link WriteConfig}: Single, Multi,
 * RoundRobin times host or device memory). A read is complete when its bytes are in rank 0's
 * memory, its local completion, so there is no {@code completion} choice. {@code window}: rounds
 * in flight (1 = latency mode: the targets in turn, one whole round per invocation); {@code
 * slots}: distinct regions the rounds in flight read from and into (README, "Footprint").
 */
public class ReadBenchmark extends FabricBenchmark {

    @Param({"SinglePin", "MultiPin", "RoundRobinPin", "SingleDMA", "MultiDMA", "RoundRobinDMA"})
    public WriteConfig config;

    @Param({"4K", "64K", "1M", "16M", "64M"})
    public String size;

    /** "auto": the NICs the provider reports for this rank; a number opens that many endpoints. */
    @Param({"auto"})
    public String channels;

    /** nic: every byte crosses the NIC (efa/verbs); auto: same-node peers may go through shm. tcp and shm ignore it. */
    @Param({"nic"})
    public String path;

    /** Rounds in flight, at most the slots; 1 is the latency mode. */
    @Param({"64"})
    public int window;

    /** Distinct regions the rounds in flight read, as WriteBenchmark's ("auto": one per round of the window, at most 1 GiB per buffer). */
    @Param({"auto"})
    public String slots;

    @Setup(Level.Trial)
    public void setup(BenchmarkParams bp) {
        long bytes = Sizes.parse(size);
        trial = FabricTrial.open(bp, TrialSpec.of(config.memory).channels(channels).config(config.name()).path(path));
        driver = RoundDriver.open(trial, t -> new ReadRounds(t, config.layout, bytes, window, slots));
    }

    @Benchmark
    public void read() {
        round();
    }
}

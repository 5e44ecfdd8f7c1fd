package io.efabench.bench;


import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.BenchmarkParams;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.Flags;
import io.efabench.harness.Sizes;
import io.efabench.harness.trial.FabricTrial;
import io.efabench.harness.trial.TrialSpec;
import io.efabench.harness.trial.RoundDriver;
import io.efabench.harness.write.WriteRounds;


/**
 * RDMA write with immediate data, rank 0 to ranks 1..N-1 (seed: experiments/write).
 * Configs ({@link WriteConfig}): a layout times a memory kind (Pin = host, DMA = device).
 * <ul>
 *   <li>Single: the whole buffer on channel 0, targets in turn.</li>
 *   <li>Multi: the buffer split into one stripe per channel, stripes in flight together,
 *       targets in turn.</li>
 *   <li>RoundRobin: target k on channel (k + rank) % channels, all targets at once.</li>
 * </ul>
 * {@code completion=remote}: a write is done when the target saw every immediate (it acks);
 * {@code completion=local}: done at the local completion, credits keep it at most max(16, window)
 * rounds ahead of the target. {@code window}: writes outstanding per channel (1 = latency mode).
 */
public class WriteBenchmark extends FabricBenchmark {

    @Param({"SinglePin", "MultiPin", "RoundRobinPin", "SingleDMA", "MultiDMA", "RoundRobinDMA"})
    public WriteConfig config;

    @Param({"256K", "512K", "1M", "2M", "4M", "8M", "16M", "32M", "64M", "128M", "256M", "512M", "1G"})
    public String size;

    /** "auto": the NICs the provider reports for this rank; a number opens that many endpoints. */
    @Param({"auto"})
    public String channels;

    @Param({"remote", "local"})
    public String completion;

    /**
     * nic: every byte crosses the NIC (efa/verbs hints without FI_LOCAL_COMM); auto: what an
     * application gets (same-node peers may go through shm). tcp and shm ignore it.
     */
    @Param({"nic"})
    public String path;

    /**
     * Rounds in flight (with one target and Single: fi_rma_bw's -W): 1 is the latency mode (an
     * invocation is one whole round), larger windows pipeline rounds and an invocation ends when
     * the oldest round in flight completed (lat_us is then not reported).
     */
    @Param({"64"})
    public int window;

    /**
     * true: writes of host memory that fit the provider's inject size (shm: 4 KiB) go out with
     * fi_inject_writedata and are complete once posted, as fi_rma_bw posts them; false: every
     * write with a completion to reap.
     */
    @Param({"true"})
    public String inject;

    /**
     * Distinct source and target regions the rounds in flight write, like fabtests' window of
     * buffers: "auto" is one per round of the window, capped at 1 GiB per buffer (README, "Footprint").
     */
    @Param({"auto"})
    public String slots;

    @Setup(Level.Trial)
    public void setup(BenchmarkParams bp) {
        boolean remote = switch (completion) {
            case "remote" -> true;
            case "local" -> false;
            default -> throw new BenchmarkSetupException("completion=" + completion + ": use remote or local");
        };
        boolean injected = Flags.parse("inject", inject);
        long bytes = Sizes.parse(size);
        trial = FabricTrial.open(bp, TrialSpec.of(config.memory).channels(channels).config(config.name()).path(path));
        driver = RoundDriver.open(trial, t -> new WriteRounds(t, config.layout, remote, bytes, window, injected, slots));
    }

    @Benchmark
    public void write() {
        round();
    }
}

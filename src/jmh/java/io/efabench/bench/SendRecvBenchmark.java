package io.efabench.bench;


import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.BenchmarkParams;
import io.efabench.harness.Sizes;
import io.efabench.harness.pingpong.PingPongRounds;
import io.efabench.harness.trial.FabricTrial;
import io.efabench.harness.trial.TrialSpec;
import io.efabench.harness.trial.RoundDriver;


/**
 * Two-sided SEND/RECV ping-pong, rank 0 with ranks 1..N-1 in turn (seed: experiments/sendrecv).
 * Score: time of one invocation = one ping-pong with every target. Secondary metrics (with
 * {@code -prof io.efabench.harness.MetricsProfiler}): lat_us = half a round trip, gbps = size
 * over that one-way time; see README "Metrics".
 */
public class SendRecvBenchmark extends FabricBenchmark {

    /** SingleHost: page-aligned host memory (the seed's Host column); SingleDevice: CUDA device memory. */
    @Param({"SingleHost", "SingleDevice"})
    public SendRecvConfig config;

    /**
     * nic: every byte crosses the NIC (efa/verbs hints without FI_LOCAL_COMM); auto: what an
     * application gets (same-node peers may go through shm). tcp and shm ignore it.
     */
    @Param({"nic"})
    public String path;

    @Param({"128K", "256K", "512K", "1M", "2M", "4M", "8M", "16M", "32M", "64M", "128M"})
    public String size;

    @Setup(Level.Trial)
    public void setup(BenchmarkParams bp) {
        long bytes = Sizes.parse(size);
        trial = FabricTrial.open(bp, TrialSpec.of(config.memory).channels("1").config(config.name()).path(path));
        driver = RoundDriver.open(trial, t -> new PingPongRounds(t, bytes));
    }

    @Benchmark
    public void pingPong() {
        round();
    }
}

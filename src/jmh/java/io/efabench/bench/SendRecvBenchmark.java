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
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

import io.efabench.harness.FabricTrial;
import io.efabench.harness.PingPongRounds;
import io.efabench.harness.Sizes;

/**
 * Two-sided SEND/RECV ping-pong, rank 0 with ranks 1..N-1 in turn (seed: experiments/sendrecv).
 * Score: time of one invocation = one ping-pong with every target. Secondary metrics (with
 * {@code -prof io.efabench.harness.MetricsProfiler}): lat_us = half a round trip, gbps = size
 * over that one-way time; see README "Metrics".
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
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
        trial = FabricTrial.open(bp, "1", 2, config.memory);
        driver = trial.rounds(t -> new PingPongRounds(t, bytes));
    }

    @Benchmark
    public void pingPong() {
        round();
    }
}

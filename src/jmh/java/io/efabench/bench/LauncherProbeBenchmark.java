package io.efabench.bench;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Smoke benchmark for run-jmh.sh itself: it needs no fabric and no peer, only the rank
 * environment the launcher sets, so the launcher's process handling (rank start, logs,
 * progress lines, failure reports, leftover kills) can be exercised on any machine.
 * {@code failRank} makes one rank fail its trial setup the way efabench's user errors do;
 * {@code stallRank} makes one rank sit in setup for {@code stallSeconds}, like a rank that
 * misses a dead peer, so the launcher has to kill it.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 1, time = 200, timeUnit = TimeUnit.MILLISECONDS)
@Measurement(iterations = 2, time = 200, timeUnit = TimeUnit.MILLISECONDS)
public class LauncherProbeBenchmark {

    @Param("1K")
    public String size;

    @Param("-1")
    public int failRank;

    @Param("-1")
    public int stallRank;

    @Param("600")
    public int stallSeconds;

    private int rank;

    @Setup
    public void setUp() throws InterruptedException {
        rank = intEnv("RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID");
        int world = intEnv("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS");
        if (rank < 0 || rank >= world) {
            throw new ProbeFailure("RANK " + rank + " is outside 0.." + (world - 1));
        }
        if (System.getenv("EFABENCH_RUN_DIR") == null) {
            throw new ProbeFailure("EFABENCH_RUN_DIR is not set on rank " + rank);
        }
        if (rank == failRank) {
            throw new ProbeFailure("probe rank " + rank + " of " + world + " failed on purpose (failRank="
                    + failRank + ")");
        }
        if (rank == stallRank) {
            Thread.sleep(TimeUnit.SECONDS.toMillis(stallSeconds));
        }
    }

    @Benchmark
    public int work() {
        Blackhole.consumeCPU(64);
        return rank;
    }

    /** The first of the names that is set (torchrun, Open MPI, Slurm), as an integer. */
    private static int intEnv(String... names) {
        for (String name : names) {
            String v = System.getenv(name);
            if (v == null) {
                continue;
            }
            try {
                return Integer.parseInt(v.trim());
            } catch (NumberFormatException e) {
                throw new ProbeFailure(name + "=" + v + " is not an integer");
            }
        }
        throw new ProbeFailure("none of " + String.join(", ", names) + " is set");
    }

    /** One-line, stack-less, like efabench's user-facing setup errors. */
    static final class ProbeFailure extends RuntimeException {
        ProbeFailure(String message) {
            super(message, null, false, false);
        }

        @Override
        public String toString() {
            return "efabench: " + getMessage();
        }
    }
}

package io.efabench.bench;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.IterationParams;
import io.efabench.harness.trial.FabricTrial;
import io.efabench.harness.trial.RoundDriver;


/**
 * The lifecycle and the class-level JMH settings every fabric benchmark shares, written once (JMH
 * runs the fixture methods of a {@code @State} superclass and its class annotations are inherited:
 * jmh-samples' JMHSample_24_Inheritance). A subclass opens
 * {@link #trial} and builds {@link #driver} in its own {@code @Setup(Level.Trial)} and names its
 * {@code @Benchmark}, which calls {@link #round()}; iteration setup and teardown (start barrier,
 * warm round, END, checked round) and closing are here.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public abstract class FabricBenchmark {
    protected FabricTrial trial;
    protected RoundDriver driver;

    @Setup(Level.Iteration)
    public void startIteration(IterationParams ip) {
        driver.beginIteration(ip);
    }

    /** One invocation: the leader's round on rank 0, a follower's elsewhere. */
    protected final void round() {
        driver.round();
    }

    @TearDown(Level.Iteration)
    public void endIteration() {
        driver.endIteration();
    }

    @TearDown(Level.Trial)
    public void close() {
        if (trial != null) {
            trial.close();
        }
    }
}

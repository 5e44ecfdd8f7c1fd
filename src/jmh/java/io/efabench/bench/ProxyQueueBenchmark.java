package io.efabench.bench;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

import io.efabench.harness.proxy.ProxyQueue;


/**
 * The proxy's request queue alone, no network (seed: experiments/queue), one process with one GPU:
 * <ul>
 *   <li>{@code flood} (throughput, requests/s): one launch of grid x block producer threads pushes
 *       {@link #REQUESTS_PER_LAUNCH} requests (a warp takes 32 tickets with one atomic); this thread
 *       is the proxy and only acknowledges (reads each request, publishes {@code completed}).</li>
 *   <li>{@code roundTrip} (sample mode, us): a persistent one-thread kernel answers a doorbell by
 *       pushing one request and quieting on it; this thread drains the ring and acknowledges. One
 *       sample is doorbell -> push -> proxy sees it -> {@code completed} seen on the GPU -> answer
 *       seen by the host: the request's round trip plus one host-to-GPU and one GPU-to-host
 *       crossing. The GPU's own push -> completed time is printed per iteration (p50, p99).</li>
 *   <li>{@code doorbell} (sample mode, us): ProxyBenchmark's own resident producer kernel
 *       ({@code proxy_put}, blocking, one round of one request for one target per doorbell): from the
 *       host ringing the doorbell until this thread, the proxy, has the request off the ring
 *       (acknowledged at once). That is what starting a launch of proxy rounds costs before its
 *       first write is posted, beyond a launch the proxy thread makes itself: the doorbell's trip
 *       to the GPU, the ticket atomic, the cell's tagged words over PCIe, the proxy's poll; and
 *       the previous launch's tail (its quiet and the counters' host atomics).</li>
 * </ul>
 */
@State(Scope.Benchmark)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class ProxyQueueBenchmark {
    public static final int REQUESTS_PER_LAUNCH = ProxyQueue.REQUESTS_PER_LAUNCH;

    /** Ring cells (a power of two). */
    @Param({"4096"})
    public int capacity;

    /**
     * Producer blocks. More producers than about a quarter of the ring's cells spend their time on
     * full cells, and their reads of host memory slow the proxy down (H200: 29 M requests/s with
     * grid 2-4 x 256, 13 M with 16, 1.9 M with 64).
     */
    @Param({"4"})
    public int grid;

    /** Threads per block, a multiple of 32; grid x block must divide {@link #REQUESTS_PER_LAUNCH}. */
    @Param({"256"})
    public int block;

    private ProxyQueue queue;

    @Setup(Level.Trial)
    public void setup() {
        queue = ProxyQueue.open(capacity, grid, block);
    }

    @Setup(Level.Iteration)
    public void startIteration(BenchmarkParams bp) {
        String b = bp.getBenchmark();
        queue.startIteration(b.endsWith(".roundTrip") ? ProxyQueue.Exchange.ROUND_TRIP
                : b.endsWith(".doorbell") ? ProxyQueue.Exchange.DOORBELL : ProxyQueue.Exchange.FLOOD);
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    @OperationsPerInvocation(REQUESTS_PER_LAUNCH)
    public long flood() {
        return queue.flood();
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public long roundTrip() {
        return queue.roundTrip();
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public long doorbell() {
        return queue.doorbell();
    }

    @TearDown(Level.Iteration)
    public void endIteration() {
        queue.endIteration();
    }

    @TearDown(Level.Trial)
    public void close() {
        if (queue != null) {
            queue.close();
        }
    }
}

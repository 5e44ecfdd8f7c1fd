package io.efabench.bench;

import java.time.Duration;
import java.util.Arrays;
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

import io.efabench.cuda.CudaException;
import io.efabench.cuda.PinnedHostBuffer;
import io.efabench.proxy.Mailbox;
import io.efabench.proxy.ProxyKernels;
import io.efabench.proxy.RequestRing;
import io.efabench.rank.RankEnv;
import io.efabench.rank.RankGroup;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.memory.TrialGpu;

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
    public static final int REQUESTS_PER_LAUNCH = 1 << 20;

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

    private TrialGpu gpu;
    private ProxyKernels kernels;
    private Mailbox mailbox;
    private PinnedHostBuffer ringMemory;
    private RequestRing ring;
    private final RequestRing.Request request = new RequestRing.Request();
    private int perThread;
    private long timeoutNanos;
    private boolean pinging;
    private long doorbell;
    private long firstDoorbell;
    private ProxyKernels.PutShape oneRequest;
    private boolean producing;

    @Setup(Level.Trial)
    public void setup() {
        Duration timeout = RankGroup.defaultTimeout();
        timeoutNanos = timeout.toNanos();
        long threads = (long) grid * block;
        if (grid < 1 || block < 32 || block > 1024 || block % 32 != 0 || REQUESTS_PER_LAUNCH % threads != 0) {
            throw new BenchmarkSetupException("grid=" + grid + " block=" + block + ": block must be a multiple of 32"
                    + " up to 1024, and grid x block must divide " + REQUESTS_PER_LAUNCH);
        }
        perThread = (int) (REQUESTS_PER_LAUNCH / threads);
        try {
            gpu = TrialGpu.open(RankEnv.fromEnvironment(), TrialGpu.Sharing.ALLOWED, timeout);
            gpu.context.makeCurrent();
            kernels = new ProxyKernels(gpu.context);
            mailbox = new Mailbox(gpu.context);
            ringMemory = PinnedHostBuffer.allocate(gpu.context, RequestRing.bytesFor(capacity));
            ring = RequestRing.mapped(ringMemory, capacity);
            // One round of one 4-byte request from "rank 0" to "rank 1" per doorbell: nothing is
            // read or written but the ring.
            oneRequest = new ProxyKernels.PutShape(0, 4, 4, 4, 4, 1, 2, 0, 0, 0, 1, 1, 1, 32);
        } catch (CudaException | IllegalArgumentException e) {
            close();
            throw new BenchmarkSetupException(e.getMessage());
        }
    }

    @Setup(Level.Iteration)
    public void startIteration(BenchmarkParams bp) {
        gpu.context.makeCurrent();
        pinging = bp.getBenchmark().endsWith(".roundTrip");
        producing = bp.getBenchmark().endsWith(".doorbell");
        if (producing) {
            doorbell = 0;
            kernels.put(gpu.stream, ring, mailbox, oneRequest, 0, 0, timeoutNanos, timeoutNanos); // blocking: no NBI backoff between launches
        }
        if (pinging) {
            mailbox.resetPing();
            doorbell = 0;
            kernels.ping(gpu.stream, ring, mailbox, timeoutNanos);
            firstDoorbell = 1;
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    @OperationsPerInvocation(REQUESTS_PER_LAUNCH)
    public long flood() {
        long until = ring.consumed() + REQUESTS_PER_LAUNCH;
        kernels.flood(gpu.stream, ring, mailbox, grid, block, perThread, timeoutNanos);
        long startedAt = System.nanoTime();
        int misses = 0;
        long published = ring.consumed();
        while (ring.consumed() < until) {
            if (ring.poll(request)) {
                if ((ring.consumed() & 63) == 0) {
                    published = ring.consumed();
                    ring.complete(published);
                }
            } else {
                if (published != ring.consumed()) {
                    published = ring.consumed();
                    ring.complete(published); // acknowledge in batches: every store here is a line the GPU reads
                }
                if ((++misses & 4095) == 0) {
                    check(startedAt, "draining the flood kernel's requests");
                }
            }
        }
        ring.complete(ring.consumed());
        while (!gpu.stream.isIdle()) {
            check(startedAt, "waiting for the flood kernel to finish");
        }
        return request.imm;
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public long roundTrip() {
        long d = ++doorbell;
        mailbox.ring(d);
        long startedAt = 0;
        int spins = 0;
        while (mailbox.answer() != d) {
            if (ring.poll(request)) {
                ring.complete(ring.consumed());
            } else if ((++spins & 4095) == 0) {
                startedAt = startedAt == 0 ? System.nanoTime() : startedAt;
                check(startedAt, "waiting for the ping kernel's answer to doorbell " + d);
            }
        }
        return request.imm;
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public long doorbell() {
        long d = ++doorbell;
        mailbox.ring(d);
        long startedAt = 0;
        int spins = 0;
        while (!ring.poll(request)) {
            if ((++spins & 4095) == 0) {
                startedAt = startedAt == 0 ? System.nanoTime() : startedAt;
                check(startedAt, "waiting for the request of doorbell " + d);
            }
        }
        ring.complete(ring.consumed());
        return request.imm;
    }

    private void check(long startedAt, String what) {
        String why = mailbox.failure();
        if (why != null) {
            throw new BenchmarkSetupException(why);
        }
        if (System.nanoTime() - startedAt > timeoutNanos) {
            mailbox.abort();
            throw new BenchmarkSetupException(what + ": nothing within " + timeoutNanos / 1_000_000_000L
                    + " s (EFABENCH_TIMEOUT_S)");
        }
    }

    @TearDown(Level.Iteration)
    public void endIteration() {
        if (producing) {
            mailbox.stopPing();
            gpu.await("the resident producer kernel's stop");
        }
        if (!pinging) {
            return;
        }
        mailbox.stopPing();
        gpu.await("the ping kernel's stop");
        long n = Math.min(doorbell - firstDoorbell + 1, Mailbox.RTT_SLOTS);
        if (n > 0) {
            long[] rtt = new long[(int) n];
            for (int i = 0; i < n; i++) {
                rtt[i] = mailbox.rttNanos(doorbell - i);
            }
            Arrays.sort(rtt);
            System.out.printf("# efabench: GPU-side push -> completed round trip over the last %d requests:"
                    + " p50 %.2f us, p99 %.2f us%n", n, rtt[(int) (n / 2)] / 1e3, rtt[(int) Math.min(n - 1, n * 99 / 100)] / 1e3);
        }
    }

    @TearDown(Level.Trial)
    public void close() {
        if (mailbox != null) {
            mailbox.abort();
        }
        if (gpu != null) {
            try {
                gpu.await("the proxy kernels");
            } catch (RuntimeException ignored) {
                // closing anyway
            }
        }
        for (AutoCloseable c : new AutoCloseable[] {ringMemory, mailbox, kernels, gpu}) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception ignored) {
                    // the first failure was reported
                }
            }
        }
    }
}

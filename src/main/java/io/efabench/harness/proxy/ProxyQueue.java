package io.efabench.harness.proxy;

import java.time.Duration;
import java.util.Arrays;

import io.efabench.cuda.CudaException;
import io.efabench.cuda.PinnedHostBuffer;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.memory.TrialGpu;
import io.efabench.proxy.Mailbox;
import io.efabench.proxy.ProxyKernels;
import io.efabench.proxy.RequestRing;
import io.efabench.rank.RankEnv;
import io.efabench.rank.RankGroup;

/**
 * The proxy's request queue alone, no network, one process with one GPU ({@code
 * ProxyQueueBenchmark}): the ring and mailbox in pinned host memory, the producer kernels, and
 * this thread as the proxy. Three exchanges, each one call of the benchmark:
 * <ul>
 *   <li>{@link #flood}: one launch of grid x block producer threads pushes {@link
 *       #REQUESTS_PER_LAUNCH} requests (a warp takes 32 tickets with one atomic); this thread only
 *       acknowledges (reads each request, publishes {@code completed} in batches).</li>
 *   <li>{@link #roundTrip}: a persistent one-thread kernel answers a doorbell by pushing one request
 *       and quieting on it; this thread drains the ring and acknowledges. The GPU's own push ->
 *       completed time is printed per iteration (p50, p99).</li>
 *   <li>{@link #doorbell}: ProxyBenchmark's resident producer ({@code proxy_put}, blocking, one
 *       round of one request per doorbell): from the host's doorbell until this thread has the
 *       request off the ring.</li>
 * </ul>
 * Every wait ends at the trial timeout or on the kernel's failure, with one line.
 */
public final class ProxyQueue implements AutoCloseable {
    public static final int REQUESTS_PER_LAUNCH = 1 << 20;

    /** Which exchange an iteration runs: its kernel starts with the iteration and stops with it. */
    public enum Exchange { FLOOD, ROUND_TRIP, DOORBELL }

    private final int grid;
    private final int block;
    private final int perThread;
    private final long timeoutNanos;
    private TrialGpu gpu;
    private ProxyKernels kernels;
    private Mailbox mailbox;
    private PinnedHostBuffer ringMemory;
    private RequestRing ring;
    private final RequestRing.Request request = new RequestRing.Request();
    private ProxyKernels.PutShape oneRequest;
    private Exchange exchange;
    private long doorbell;
    private long firstDoorbell;

    private ProxyQueue(int grid, int block) {
        this.grid = grid;
        this.block = block;
        this.perThread = (int) (REQUESTS_PER_LAUNCH / ((long) grid * block));
        this.timeoutNanos = RankGroup.defaultTimeout().toNanos();
    }

    /** A ring of {@code capacity} cells (a power of two), flooded by grid x block producer threads. */
    public static ProxyQueue open(int capacity, int grid, int block) {
        long threads = (long) grid * block;
        if (grid < 1 || block < 32 || block > 1024 || block % 32 != 0 || REQUESTS_PER_LAUNCH % threads != 0) {
            throw new BenchmarkSetupException("grid=" + grid + " block=" + block + ": block must be a multiple of 32"
                    + " up to 1024, and grid x block must divide " + REQUESTS_PER_LAUNCH);
        }
        ProxyQueue q = new ProxyQueue(grid, block);
        try {
            q.gpu = TrialGpu.open(RankEnv.fromEnvironment(), TrialGpu.Sharing.ALLOWED, Duration.ofNanos(q.timeoutNanos));
            q.gpu.context.makeCurrent();
            q.kernels = new ProxyKernels(q.gpu.context);
            q.mailbox = new Mailbox(q.gpu.context);
            q.ringMemory = PinnedHostBuffer.allocate(q.gpu.context, RequestRing.bytesFor(capacity));
            q.ring = RequestRing.mapped(q.ringMemory, capacity);
            // One round of one 4-byte request from "rank 0" to "rank 1" per doorbell: nothing is
            // read or written but the ring.
            q.oneRequest = new ProxyKernels.PutShape(0, 4, 4, 4, 4, 1, 2, 0, 0, 0, 1, 1, 1, 32);
            return q;
        } catch (CudaException | IllegalArgumentException e) {
            q.close();
            throw new BenchmarkSetupException(e.getMessage());
        }
    }

    /** Starts an iteration of {@code e}: the resident kernel it needs, if any. */
    public void startIteration(Exchange e) {
        exchange = e;
        gpu.context.makeCurrent();
        if (e == Exchange.DOORBELL) {
            doorbell = 0;
            kernels.put(gpu.stream, ring, mailbox, oneRequest, 0, 0, timeoutNanos, timeoutNanos); // blocking: no NBI backoff between launches
        } else if (e == Exchange.ROUND_TRIP) {
            mailbox.resetPing();
            doorbell = 0;
            kernels.ping(gpu.stream, ring, mailbox, timeoutNanos);
            firstDoorbell = 1;
        }
    }

    /** One flood of {@link #REQUESTS_PER_LAUNCH} requests, all taken and acknowledged; returns the last immediate. */
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

    /** One doorbell answered by the ping kernel's pushed and quieted request. */
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

    /** One doorbell of the resident producer, until its request is off the ring. */
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

    /** Ends the iteration: stops its resident kernel; after round trips, prints the GPU's own p50 and p99. */
    public void endIteration() {
        if (exchange == Exchange.DOORBELL) {
            mailbox.stopPing();
            gpu.await("the resident producer kernel's stop");
        }
        if (exchange != Exchange.ROUND_TRIP) {
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

    @Override
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

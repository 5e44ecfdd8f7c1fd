package io.efabench.harness.proxy;

import io.efabench.cuda.CudaStream;
import io.efabench.cuda.PinnedHostBuffer;
import io.efabench.fabric.RemoteRegion;
import io.efabench.proxy.Mailbox;
import io.efabench.proxy.ProxyKernels;
import io.efabench.proxy.RequestRing;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.engine.Deadline;
import io.efabench.harness.engine.Footprint;
import io.efabench.harness.engine.Immediate;
import io.efabench.harness.engine.PaddedLongArray;
import io.efabench.harness.engine.PaddedReference;
import io.efabench.harness.memory.TrialBuffer;
import io.efabench.harness.trial.FabricTrial;
import io.efabench.harness.trial.Side;

/**
 * Rank 0 of the proxy ({@code ProxyRounds}): the producer (the resident kernel, or the Direct configs' host
 * producer), the request ring and mailbox it pushes through, the proxy thread that posts, and
 * the launches: rung, awaited on every target's ack, and the checked one after every iteration.
 */
final class ProxyLeader implements Side {
    static final int RING_CELLS = 1024;

    private final ProxyShape p;
    private final FabricTrial t;
    private final Deadline deadline;
    private final TrialBuffer src;
    /** The GPU's producer (Proxy configs), or null. */
    private final ProxyKernels kernels;
    /** The proxy thread's own producer (Direct configs), or null. */
    private final HostProducer host;
    private final CudaStream stream;
    private final RequestRing ring;
    private final Mailbox mailbox;
    private final ProxyLoop proxy;
    /** The proxy's acks and failure line, spun on here: cells of their own, off the proxy's own fields. */
    private final PaddedLongArray acked;
    private final PaddedReference<String> proxyFailure = new PaddedReference<>(null);
    private final ProxyKernels.PutShape shape;
    private final int flags;
    private final long kernelTimeoutNanos;
    /** Test hook EFABENCH_TEST_PROXY_FIELD=target|bytes|op: the checked launch's first request carries a wrong field. */
    private final int corruptField;
    private boolean resident;
    private long round;
    private long reportedPushes;
    private long reportedQuiets;
    private long reportedPushNanos;
    private long reportedQuietNanos;

    /**
     * {@code chunk} bytes per request, {@code nreq} requests per target and round, posted on
     * {@code channelHint} ({@link ProxyLoop#ALL_CHANNELS} for Multi); {@code direct}: no kernel.
     */
    ProxyLeader(ProxyShape p, TrialBuffer src, RemoteRegion[][] dstOf, boolean direct, long chunk, int nreq,
            int channelHint, int grid, int block) {
        this.p = p;
        this.t = p.t;
        this.src = src;
        this.deadline = t.deadline();
        kernelTimeoutNanos = t.timeout.toNanos();
        flags = (p.nbi ? ProxyKernels.FLAG_NBI : 0) | (p.fill ? ProxyKernels.FLAG_FILL : 0);
        corruptField = switch (String.valueOf(System.getenv("EFABENCH_TEST_PROXY_FIELD"))) {
            case "target" -> ProxyKernels.CORRUPT_TARGET;
            case "bytes" -> ProxyKernels.CORRUPT_BYTES;
            case "op" -> ProxyKernels.CORRUPT_OP;
            default -> 0;
        };
        t.gpu().context.makeCurrent();
        int targets = t.size - 1;
        shape = new ProxyKernels.PutShape(src.deviceAddress(), p.size, p.stride, p.stride * targets, chunk, nreq, t.size,
                t.rank, channelHint, Immediate.encode(Immediate.DATA, t.rank, 0), p.rounds, p.slots, grid, block);
        mailbox = new Mailbox(t.gpu().context);
        t.own(mailbox);
        PinnedHostBuffer ringMemory = PinnedHostBuffer.allocate(t.gpu().context, RequestRing.bytesFor(RING_CELLS));
        t.own(ringMemory);
        ring = RequestRing.mapped(ringMemory, RING_CELLS);
        if (direct) {
            kernels = null;
            stream = null;
            host = new HostProducer(shape, p.nbi);
        } else {
            host = null;
            kernels = new ProxyKernels(t.gpu().context);
            t.own(kernels);
            stream = t.gpu().stream;
            // Closed first among the owned (newest first): no resident kernel outlives the ring and mailbox.
            t.own(this::stopKernel);
        }
        fillSources(1);
        acked = new PaddedLongArray(t.size);
        proxy = new ProxyLoop(t, ring, host, mailbox, src.regions(), dstOf, src.byteSize(), acked, proxyFailure);
        t.ownWorker(proxy);
        proxy.start();
    }

    /** Rings one launch of {@code rounds} rounds and waits until every target acked its last round. */
    @Override
    public void round() {
        long first = round + 1;
        round += p.rounds;
        ring(first);
        awaitAcks(round);
    }

    /** The iteration's first launch, untimed: starts the resident kernel (JMH may use another thread). */
    @Override
    public void warmRound() {
        t.gpu().context.makeCurrent();
        startKernel(0);
        round();
    }

    /** Writes the pattern of (0, target, the launch's last round using the slot) into every source block the launch reads. */
    private void fillSources(long first) {
        int written = Math.min(p.rounds, p.slots);
        for (int q = 0; q < written; q++) {
            long r = p.lastRoundOfSlot(first, first + q);
            int slot = Footprint.slotOf(r, p.slots);
            for (int k = 1; k < t.size; k++) {
                src.fill(slot * shape.slotStride() + p.stride * (k - 1), p.size, 0, k, r);
            }
        }
    }

    private void startKernel(int corrupt) {
        if (kernels != null && !resident) {
            kernels.put(stream, ring, mailbox, shape, flags, corrupt, kernelTimeoutNanos, kernelTimeoutNanos);
            resident = true;
        }
    }

    private void ring(long first) {
        String why = proxyFailure.get();
        if (why != null) {
            throw new BenchmarkSetupException(why);
        }
        if (host != null) {
            host.ring(first);
        } else {
            mailbox.ring(first);
        }
    }

    /** Waits for every target's ack of round {@code r}. */
    private void awaitAcks(long r) {
        // One budget for every target's ack (not one each), naming the target still awaited: a loop,
        // not Deadline.await, whose wait names one peer.
        deadline.start();
        for (int k = 1; k < t.size; k++) {
            while (acked.get(k) < r) {
                checkProxy(r);
                deadline.check("waiting for the ack of a proxy write round", k, r);
            }
        }
    }

    /** Stops the resident kernel and waits until it finished. */
    private void awaitKernelStop(long r) {
        if (!resident) {
            return;
        }
        mailbox.stopPing();
        deadline.await(stream::isIdle, () -> checkProxy(r), "waiting for the producer kernel to finish", t.size == 2 ? 1 : -1,
                r);
        resident = false;
        checkProxy(r);
    }

    /** Trial close: no resident kernel may outlive the ring and the mailbox it reads. */
    private void stopKernel() {
        mailbox.abort();
        if (resident) {
            stream.await(kernelTimeoutNanos, "the resident producer kernel");
        }
    }

    private void checkProxy(long r) {
        String why = proxyFailure.get();
        if (why == null) {
            why = mailbox.failure();
        }
        if (why != null) {
            mailbox.abort();
            throw new BenchmarkSetupException(why + " (round " + r + ")");
        }
    }

    /**
     * One line per iteration from the kernel's own counters (untimed): quiets per push (1 when
     * blocking, about 1 / (rounds x requests) with NBI) and the GPU-side time inside a push and
     * inside a blocking quiet (push published -> completion seen: the write plus both crossings).
     */
    private void reportProducer() {
        if (kernels == null) {
            return;
        }
        long pushes = mailbox.pushes() - reportedPushes;
        long quiets = mailbox.quiets() - reportedQuiets;
        long pushNs = mailbox.pushNanos() - reportedPushNanos;
        long quietNs = mailbox.quietNanos() - reportedQuietNanos;
        reportedPushes += pushes;
        reportedQuiets += quiets;
        reportedPushNanos += pushNs;
        reportedQuietNanos += quietNs;
        if (pushes > 0) {
            System.out.printf(java.util.Locale.ROOT, "# efabench: producer kernel: %d pushes, %.3f quiets per push; GPU-side %.2f us"
                    + " per push%s%n", pushes, (double) quiets / pushes, pushNs / 1e3 / pushes,
                    p.nbi ? "" : String.format(java.util.Locale.ROOT, ", %.2f us per blocking quiet", quietNs / 1e3 / Math.max(1, quiets)));
        }
    }

    /**
     * Iteration teardown, untimed: the kernel stops, END, then the checked launch: every slot
     * the launch writes gets the pattern of (0, target, the last round writing it) (by the kernel
     * itself with {@code fill}), and the launch is started, rung and awaited as a timed one.
     */
    /** One target waits for this rank's proxy; with several, no single peer. */
    @Override
    public int peerInFlight() {
        return t.size == 2 ? 1 : -1;
    }

    @Override
    public void endIteration() {
        t.gpu().context.makeCurrent();
        awaitKernelStop(round);
        reportProducer();
        t.iterations.signalEnd(round);
        t.barrier("targets cleared for the checked proxy round");
        long first = round + 1;
        if (!p.fill) {
            fillSources(first);
        }
        proxy.checking(true);
        try {
            startKernel(corruptField);
            round();
            awaitKernelStop(round);
        } finally {
            proxy.checking(false);
        }
        t.verdicts("proxy checked launch of rounds " + first + ".." + round, null);
    }

}

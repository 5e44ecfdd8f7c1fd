package io.efabench.harness.proxy;

import io.efabench.fabric.MemoryRegion;
import io.efabench.fabric.RemoteRegion;
import io.efabench.proxy.Mailbox;
import io.efabench.proxy.RequestRing;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.TestHooks;
import io.efabench.harness.engine.PaddedLongArray;
import io.efabench.harness.engine.PaddedReference;
import io.efabench.harness.engine.Stripes;
import io.efabench.harness.engine.WriteEngine;
import io.efabench.harness.trial.FabricTrial;

/**
 * The CPU proxy of the proxy experiment: one thread on the leader that spins on the request
 * ring (or, for the direct baseline, makes the requests itself: {@link HostProducer}), turns
 * every request into writes with the request's immediate data (on the request's channel, or
 * striped over every channel for {@link ProxyRequests#ALL_CHANNELS}) through the shared
 * {@link WriteEngine} (its contexts, {@link #WINDOW} per channel, its post and its CQ loop), and
 * publishes {@code completed} (the count of leading tickets whose writes all completed: the GPU's
 * quiet). The engine also hands it the targets' acks ({@link #acked}): from setup on this thread
 * is the only one that touches the leader's endpoints (FI_THREAD_DOMAIN: one thread per domain).
 *
 * <p>Every field of a request is honoured and checked: an unknown op, a target that is no peer,
 * a channel that does not exist, or bytes that overrun either buffer stop the proxy with one line
 * naming the request and the field, raise the mailbox's abort word (so the kernel stops instead
 * of waiting for a completion that never comes) and fail the round. The loop allocates nothing.
 *
 * <p>What the benchmark thread and this one share lives in padded cells, never in this object's
 * own fields, which this thread writes at every post and completion: the stop and checking flags
 * (the benchmark thread writes them), the failure line and the acks (it spins on them; {@link
 * ProxyLeader} holds the same cells). {@code LayoutTest} holds that with JOL.
 */
final class ProxyLoop implements Runnable, AutoCloseable, WriteEngine.Sink {
    /** Ring polls between two CQ reads while no write is in flight. */
    static final int IDLE_RING_POLLS = 16;
    /** Writes in flight per channel. */
    static final int WINDOW = 128;

    private final FabricTrial t;
    private final RequestRing ring;
    private final HostProducer host;
    private final Mailbox mailbox;
    private final MemoryRegion[] srcMr;
    private final RemoteRegion[][] dstOf;
    private final long srcBytes;
    /** Rank k's destination buffer in bytes (its channel 0 registration), what a request is checked against. */
    private final long[] dstBytesOf;
    private final WriteEngine engine;
    private final RequestRing.Request req = new RequestRing.Request();
    private final int mask;
    private final long[] maxWrite;

    /** Highest round every peer acked, written by this thread only. */
    private final PaddedLongArray acked;
    private final Thread thread;
    /** Written by the benchmark thread (stop, checked round), read here. */
    private final PaddedReference<Boolean> running = new PaddedReference<>(Boolean.TRUE);
    private final PaddedReference<Boolean> checking = new PaddedReference<>(Boolean.FALSE);
    /** Why this thread stopped (null while it runs), spun on by the benchmark thread. */
    private final PaddedReference<String> failure;
    private final boolean yielding;
    /** Test hook EFABENCH_TEST_PIPELINE_FAULT: fires in a checked round only, with two or more writes in flight. */
    private final TestHooks.PipelineFault fault = TestHooks.PipelineFault.fromEnvironment();
    private int inFlight;

    /** Writes of ticket t not completed yet, at t & mask (valid for tickets frontier..consumed-1). */
    private final int[] remaining;
    private long frontier;
    private boolean fencing;

    // The request being posted: its writes go out one by one as contexts free up.
    private boolean pending;
    private long pTicket;
    private int pChannel;
    private int pLastChannel;
    /** Offset in the request of its next byte to post, and where the current stripe ends. */
    private long pOff;
    private long pStripeEnd;
    /** The pending request's first channel and how many it is striped over. */
    private int pFirstChannel;
    private int pParts;

    /**
     * @param host the direct baseline's producer (requests made on this thread instead of taken
     *             off the ring), or null for requests the GPU pushes
     * @param acked where this thread publishes each peer's highest acked round
     * @param failure where this thread says why it stopped
     */
    ProxyLoop(FabricTrial t, RequestRing ring, HostProducer host, Mailbox mailbox, MemoryRegion[] srcMr,
            RemoteRegion[][] dstOf, long srcBytes, PaddedLongArray acked, PaddedReference<String> failure) {
        this.t = t;
        this.ring = ring;
        this.host = host;
        this.mailbox = mailbox;
        this.srcMr = srcMr;
        this.dstOf = dstOf;
        this.srcBytes = srcBytes;
        this.yielding = t.yieldsWhenIdle();
        this.dstBytesOf = new long[t.size];
        for (int k = 0; k < t.size; k++) {
            dstBytesOf[k] = dstOf[k][0].length();
        }
        this.mask = ring.capacity() - 1;
        int nch = t.channelCount();
        maxWrite = new long[nch];
        int[] contexts = new int[nch];
        for (int c = 0; c < nch; c++) {
            maxWrite[c] = t.maxWrite(c);
            contexts[c] = WINDOW;
        }
        engine = new WriteEngine(t, contexts, true, new long[nch], 1, this);
        this.acked = acked;
        this.failure = failure;
        remaining = new int[ring.capacity()];
        thread = new Thread(this, "efabench-proxy-rank" + t.rank);
        thread.setDaemon(true);
    }

    /**
     * The leader's checked round is next (true) or over (false): the pipeline-fault hook may fire
     * only inside it. Set while no round is in flight.
     */
    void checking(boolean on) {
        if (on) {
            fault.arm();
        }
        checking.set(on);
    }

    void start() {
        thread.start();
    }

    @Override
    public void run() {
        int idle = 0;
        try {
            // libfabric's CUDA paths (shm's device copies, IPC handles) run on this thread.
            if (t.gpu() != null) {
                t.gpu().context.makeCurrent();
            }
            while (running.get()) {
                boolean busy = false;
                if (pending || fetch()) {
                    busy = postPending();
                } else if (inFlight == 0) {
                    // Nothing in flight: the producer's next request is what the round waits for
                    // (a blocking kernel pushes once it saw the last one complete); look at the ring
                    // more often than at the CQs, whose reads cost more than a ring poll.
                    for (int i = 0; i < IDLE_RING_POLLS && !pending; i++) {
                        if (fetch()) {
                            busy = postPending();
                        }
                    }
                }
                busy |= engine.progress();
                advance();
                if (busy) {
                    idle = 0;
                } else if (yielding && (++idle & 63) == 0) {
                    Thread.yield(); // local ranks outnumber the CPUs: let the targets run
                } else {
                    Thread.onSpinWait();
                }
            }
        } catch (RuntimeException e) {
            stop("rank " + t.rank + "'s proxy: " + (e.getMessage() != null ? e.getMessage() : e.toString()));
        }
    }

    private void stop(String why) {
        failure.set(why);
        mailbox.abort();
        running.set(false);
    }

    /** Takes the next request off the ring and checks it; false when there is none (or it must wait). */
    private boolean fetch() {
        long consumed = consumed();
        if (consumed - frontier >= remaining.length || fencing && frontier < consumed) {
            return false; // as many requests in flight as the ring holds, or a fence waits for the earlier ones
        }
        if (host != null ? !host.next(req, frontier) : !ring.poll(req)) {
            return false;
        }
        fencing = false;
        int slot = (int) (req.ticket & mask);
        String bad = ProxyRequests.invalid(req, t.rank, t.channelCount(), srcBytes, dstBytesOf);
        if (bad != null) {
            stop("rank " + t.rank + "'s proxy: request " + req.ticket + " " + bad);
            return false;
        }
        if (req.op == ProxyRequests.OP_FENCE) {
            remaining[slot] = 0;
            fencing = true;
            return false;
        }
        remaining[slot] = ProxyRequests.writesFor(req.bytes, req.channel, maxWrite);
        pending = true;
        pTicket = req.ticket;
        pOff = 0;
        if (req.channel == ProxyRequests.ALL_CHANNELS) {
            pChannel = 0;
            pParts = t.channelCount();
        } else {
            pChannel = req.channel;
            pParts = 1;
        }
        pFirstChannel = pChannel;
        pLastChannel = pChannel + pParts - 1;
        pStripeEnd = Stripes.length(req.bytes, pParts, 0);
        return true;
    }

    /** Posts the pending request's next writes while contexts are free; true when any went out. */
    private boolean postPending() {
        boolean any = false;
        while (pending) {
            int c = pChannel;
            long left = pStripeEnd - pOff;
            if (left <= 0) {
                pending = nextStripe();
                continue;
            }
            long len = Math.min(left, maxWrite[c]);
            long dstOff = req.dst + pOff;
            long sent = len;
            if (checking.get() && fault.fires(inFlight)) {
                if (fault.kind == TestHooks.PipelineFault.Kind.MISDIRECT) {
                    dstOff = (dstOff + len) % (dstOf[req.target][c].length() - len + 1);
                } else {
                    sent = Math.min(64, len);
                }
            }
            if (!engine.offer(c, srcMr[c], req.src + pOff, sent, req.target, dstOf[req.target][c], dstOff, req.imm,
                    (int) (pTicket & mask))) {
                return any; // no free context, or -FI_EAGAIN: completions first
            }
            inFlight++;
            pOff += len;
            any = true;
        }
        return any;
    }

    /** Moves the pending request to its next stripe; false when it has none. */
    private boolean nextStripe() {
        if (pChannel == pLastChannel) {
            return false;
        }
        pChannel++;
        int stripe = pChannel - pFirstChannel;
        pOff = Stripes.offset(req.bytes, pParts, stripe);
        pStripeEnd = pOff + Stripes.length(req.bytes, pParts, stripe);
        return true;
    }

    @Override
    public void rmaDone(int tag) {
        inFlight--;
        remaining[tag]--;
    }

    @Override
    public void arrived(long data) {
        throw new BenchmarkSetupException("rank 0: a write with immediate data 0x" + Long.toHexString(data)
                + " arrived at the proxy's rank, which proxy rounds never target");
    }

    @Override
    public void acked(int from, long round) {
        if (round > acked.get(from)) {
            acked.setRelease(from, round);
        }
    }

    /** Requests taken so far: off the ring, or made by the host producer. */
    private long consumed() {
        return host != null ? host.produced() : ring.consumed();
    }

    /** Publishes completed = the leading tickets whose writes all completed. */
    private void advance() {
        long consumed = consumed();
        long f = frontier;
        while (f < consumed && remaining[(int) (f & mask)] == 0) {
            f++;
        }
        if (f != frontier) {
            frontier = f;
            if (host == null) {
                ring.complete(f);
            }
        }
    }

    /** Stops the thread (waits up to 5 s) before the channels close. */
    @Override
    public void close() {
        running.set(false);
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

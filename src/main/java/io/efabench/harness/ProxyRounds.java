package io.efabench.harness;

import java.nio.ByteBuffer;

import io.efabench.cuda.CudaStream;
import io.efabench.cuda.PinnedHostBuffer;
import io.efabench.fabric.Channel;
import io.efabench.fabric.Completion;
import io.efabench.fabric.MemoryRegion;
import io.efabench.fabric.RemoteRegion;
import io.efabench.harness.engine.ControlSlots;
import io.efabench.harness.engine.OpPlan;
import io.efabench.proxy.Mailbox;
import io.efabench.proxy.ProxyKernels;
import io.efabench.proxy.RequestRing;

/**
 * GPU-initiated writes through a CPU proxy (seed: experiments/proxy), in the leader-driven round
 * protocol of docs/DESIGN.md. One leader invocation is one launch of the producer kernel
 * (proxy.cu's {@code proxy_put}): for every target in turn, {@code requests} requests of
 * {@code size / requests} bytes, pushed into the request ring by one thread per block once the
 * block's data is ready; the proxy thread ({@link ProxyLoop}) posts the writes. Blocking configs
 * quiet after every push, NBI configs once at the end of the round. The invocation ends when the
 * target acked the round (it counted every write's immediate data against the leader's plan): one
 * unpipelined round, so {@code lat_us} is a latency.
 *
 * <p>Checked round: the kernel fills each chunk with the pattern of (rank 0, target, round)
 * before pushing it ({@code FLAG_FILL}), and every target checks every byte on its GPU.
 */
public final class ProxyRounds implements Rounds {
    /** Most requests per target and round: a target keeps that many receives posted per channel. */
    public static final int MAX_REQUESTS = 256;
    static final int RING_CELLS = 1024;
    private static final int DATA = 1;
    private static final int CHECK = 2;
    private static final long ROUND_BITS = 0x0FFF_FFFFL;
    private static final int SLOT_BASE = 512;
    private static final int SLOTS = 256;
    private static final int ACK_CTX = 0;

    private final FabricTrial t;
    /** OpPlan's SINGLE (one channel) or MULTI (each request striped over every channel). */
    private final OpPlan.Layout layout;
    private final boolean nbi;
    private final boolean fill;
    private final long size;
    private final TrialBuffer src;
    private final TrialBuffer dst;
    private final ControlSlots[] slots;
    private final Completion comp;
    private final Deadline deadline;
    /** Writes one target gets per round, as the leader plans them (adopted by every rank). */
    private final int writesPerTarget;

    // Leader.
    private final ProxyKernels kernels;
    /**
     * Rounds launch on these two streams in turn. A round ends at the targets' acks, while its
     * kernel still waits in its last quiet for the proxy's completions (NBI) and then exits: on one
     * stream the next launch would queue behind that tail (~5 us on an H200) inside the next timed
     * round. The acks mean every write of the round landed, so the next kernel may start at once.
     */
    private final CudaStream[] streams;
    private final RequestRing ring;
    private final Mailbox mailbox;
    private final ProxyLoop proxy;
    private final ProxyKernels.PutShape shape;
    private final long kernelTimeoutNanos;
    /** Test hook EFABENCH_TEST_PROXY_FIELD=target|bytes|op: the checked round's first request carries a wrong field. */
    private final int corruptField;

    // Target.
    private int arrivals;
    private int checkArrivals;
    private long served;
    private int txPending;

    private long round;

    public ProxyRounds(FabricTrial t, OpPlan.Layout layout, boolean nbi, long size, int requests, int grid, int block,
            boolean fill) {
        this.t = t;
        this.layout = layout;
        this.nbi = nbi;
        this.fill = fill;
        this.size = size;
        this.comp = t.completion;
        this.deadline = new Deadline(t.group, t.timeout);
        if (t.gpu == null) {
            throw new BenchmarkSetupException("the proxy experiment needs a GPU on every rank");
        }
        if (layout == OpPlan.Layout.ROUND_ROBIN) {
            throw new BenchmarkSetupException("the proxy experiment has Single and Multi layouts, not RoundRobin");
        }
        if (requests < 1 || requests > MAX_REQUESTS) {
            throw new BenchmarkSetupException("requests=" + requests + ": must be from 1 to " + MAX_REQUESTS);
        }
        if (grid < 1 || block < 1 || block > 1024) {
            throw new BenchmarkSetupException("grid=" + grid + " block=" + block + ": need grid >= 1 and 1 <= block <= 1024");
        }
        long chunk = (size + requests - 1) / requests;
        chunk = (chunk + 3) & ~3L; // whole 4-byte words: the kernel fills the pattern word by word
        int nreq = (int) ((size + chunk - 1) / chunk);
        src = t.buffer(size);
        dst = t.buffer(size);
        src.fill(t.rank, (t.rank + 1) % t.size, 0);
        MemoryRegion[] srcMr = src.regions();
        RemoteRegion[][] dstOf = t.exchange("proxy target regions", dst.regions());

        int channelHint = layout == OpPlan.Layout.MULTI ? ProxyLoop.ALL_CHANNELS : 0;
        long[] maxWrite = new long[t.channels.length];
        for (int c = 0; c < maxWrite.length; c++) {
            maxWrite[c] = ProxyLoop.writeLimit(t.maxMessageSize(c));
        }
        int planned = 0;
        for (int j = 0; j < nreq; j++) {
            planned += ProxyLoop.writesFor(Math.min(chunk, size - (long) j * chunk), channelHint, maxWrite);
        }
        byte[] mine = t.rank == 0 ? ByteBuffer.allocate(4).putInt(planned).array() : new byte[0];
        writesPerTarget = ByteBuffer.wrap(t.group.allgather("proxy write plan", mine, t.timeout).get(0)).getInt();
        if (writesPerTarget > SLOTS) {
            throw new BenchmarkSetupException(writesPerTarget + " writes per target and round: at most " + SLOTS
                    + " (fewer requests, or larger writes)");
        }

        slots = new ControlSlots[t.channels.length];
        for (int c = 0; c < t.channels.length; c++) {
            if (c == 0 || t.channels[c].rxCqDataConsumesRecv()) {
                slots[c] = new ControlSlots(t, c, SLOT_BASE, SLOTS);
            }
        }
        kernelTimeoutNanos = t.timeout.toNanos();
        if (t.rank != 0) {
            kernels = null;
            streams = null;
            ring = null;
            mailbox = null;
            proxy = null;
            shape = null;
            corruptField = 0;
            return;
        }
        corruptField = switch (String.valueOf(System.getenv("EFABENCH_TEST_PROXY_FIELD"))) {
            case "target" -> ProxyKernels.CORRUPT_TARGET;
            case "bytes" -> ProxyKernels.CORRUPT_BYTES;
            case "op" -> ProxyKernels.CORRUPT_OP;
            default -> 0;
        };
        t.gpu.context.makeCurrent();
        kernels = new ProxyKernels(t.gpu.context);
        t.own(kernels);
        CudaStream second = CudaStream.create(t.gpu.context);
        t.own(second);
        streams = new CudaStream[] {t.gpu.stream, second};
        mailbox = new Mailbox(t.gpu.context);
        t.own(mailbox);
        PinnedHostBuffer ringMemory = PinnedHostBuffer.allocate(t.gpu.context, RequestRing.bytesFor(RING_CELLS));
        t.own(ringMemory);
        ring = RequestRing.mapped(ringMemory, RING_CELLS);
        shape = new ProxyKernels.PutShape(src.deviceAddress(), size, chunk, nreq, t.size, t.rank, channelHint, grid, block);
        proxy = new ProxyLoop(t, ring, mailbox, srcMr, dstOf, size, slots[0], ControlSlots.ACK);
        t.ownWorker(proxy);
        proxy.start();
    }

    @Override
    public long bytesPerInvocation() {
        return size * (t.size - 1);
    }

    /** The targets are written in turn: one transfer each. */
    @Override
    public int transfersPerInvocation() {
        return t.size - 1;
    }

    @Override
    public double linkGbps() {
        if (layout == OpPlan.Layout.SINGLE) {
            return t.linkGbps(0);
        }
        int[] all = new int[t.channels.length];
        for (int c = 0; c < all.length; c++) {
            all[c] = c;
        }
        return t.linkGbps(all);
    }

    @Override
    public int peerInFlight() {
        return t.rank == 0 ? (t.size == 2 ? 1 : -1) : 0;
    }

    // ---- leader -------------------------------------------------------------------------

    /**
     * Launch, then wait until every target acked the round. The kernel's own exit (its last
     * quiet returning, the stream going idle: ~5 us more on an H200) is not waited for: the next
     * round launches on the other stream ({@link #streams}), and the iteration's end waits for both.
     */
    @Override
    public void leaderRound() {
        long r = ++round;
        launch(DATA, r, nbi ? ProxyKernels.FLAG_NBI : 0, 0);
        awaitAcks(r);
    }

    @Override
    public void leaderWarmRound() {
        t.gpu.context.makeCurrent(); // JMH may run an iteration on another thread than the last one
        leaderRound();
        awaitKernel(round);
    }

    private void launch(int kind, long r, int flags, int corrupt) {
        String why = proxy.failure();
        if (why != null) {
            throw new BenchmarkSetupException(why);
        }
        kernels.put(streams[(int) (r & 1)], ring, mailbox, shape, ((long) kind << 28) | (r & ROUND_BITS), r,
                flags | (fill ? ProxyKernels.FLAG_FILL : 0), corrupt, kernelTimeoutNanos);
    }

    /** Waits for every target's ack of round {@code r}. */
    private void awaitAcks(long r) {
        deadline.start();
        for (int k = 1; k < t.size; k++) {
            while (proxy.acked.get(k) < r) {
                checkProxy(r);
                deadline.check("waiting for the ack of a proxy write round", k, r);
            }
        }
    }

    /** Waits for the producer kernels launched so far to finish. */
    private void awaitKernel(long r) {
        deadline.start();
        while (!(streams[0].isIdle() && streams[1].isIdle())) {
            checkProxy(r);
            deadline.check("waiting for the producer kernel to finish", t.size == 2 ? 1 : -1, r);
        }
        checkProxy(r);
    }

    private void checkProxy(long r) {
        String why = proxy.failure();
        if (why == null) {
            why = mailbox.failure();
        }
        if (why != null) {
            mailbox.abort();
            throw new BenchmarkSetupException(why + " (round " + r + ")");
        }
    }

    @Override
    public void leaderEndIteration() {
        t.gpu.context.makeCurrent();
        awaitKernel(round);
        t.signalEnd(round);
        t.barrier("targets cleared for the checked proxy round");
        launch(CHECK, round, (nbi ? ProxyKernels.FLAG_NBI : 0) | ProxyKernels.FLAG_FILL, corruptField);
        awaitKernel(round);
        t.verdicts("proxy checked round " + round, null);
    }

    // ---- target -------------------------------------------------------------------------

    /** Serves the next round (every planned write arrived, then ack), or returns after END. */
    @Override
    public void followerRound() {
        long next = served + 1;
        if (arrivals < writesPerTarget) {
            deadline.start();
            try {
                while (arrivals < writesPerTarget) {
                    long ended = t.endedRounds();
                    if (ended >= 0 && served >= ended) {
                        return;
                    }
                    progress();
                    deadline.check("waiting for the proxy's writes of a round", 0, next);
                }
            } catch (BenchmarkSetupException e) {
                throw new BenchmarkSetupException(e.getMessage() + "; " + arrivals + " of the " + writesPerTarget
                        + " planned writes arrived");
            }
        }
        arrivals = 0;
        served = next;
        ack(next);
    }

    @Override
    public void followerWarmRound() {
        followerRound();
    }

    private void ack(long r) {
        ControlSlots s = slots[0];
        long off = s.sendOffset(ControlSlots.ACK, t.rank, r);
        Channel ch = t.channels[0];
        deadline.start();
        while (ch.trySend(s.mr(), off, 16, t.peer[0][0], 0, false, ACK_CTX) != 0) {
            progress();
            deadline.check("posting an ack", 0, r);
        }
        txPending++;
        while (txPending > 0) {
            progress();
            deadline.check("sending the ack", 0, r);
        }
    }

    @Override
    public void followerEndIteration() {
        long ended;
        while ((ended = t.endedRounds()) < 0 || served < ended) {
            followerRound();
        }
        dst.clear();
        checkArrivals = 0;
        t.barrier("targets cleared for the checked proxy round");
        deadline.start();
        try {
            while (checkArrivals < writesPerTarget) {
                progress();
                deadline.check("waiting for the proxy's writes of the checked round", 0, ended);
            }
        } catch (BenchmarkSetupException e) {
            throw new BenchmarkSetupException(e.getMessage() + "; " + checkArrivals + " of the " + writesPerTarget
                    + " planned writes arrived");
        }
        String verdict = null;
        try {
            dst.verify(0, t.rank, ended);
        } catch (Payload.CorruptionException e) {
            verdict = e.getMessage() + " (" + layout + (nbi ? " NBI" : "") + ", " + t.benchmark() + ")";
        }
        t.verdicts("proxy checked round " + ended, verdict);
    }

    private void progress() {
        for (int c = 0; c < t.channels.length; c++) {
            int n = t.channels[c].pollBatch(comp);
            for (int i = 0; i < n; i++) {
                comp.select(i);
                handle(c);
            }
        }
    }

    private void handle(int c) {
        if (comp.isRemoteWrite()) {
            long data = comp.data();
            int kind = (int) (data >>> 28) & 0xF;
            long r = data & ROUND_BITS;
            if (kind == CHECK) {
                if (++checkArrivals > writesPerTarget) {
                    throw tooMany(r, checkArrivals);
                }
            } else if (r != ((served + 1) & ROUND_BITS)) {
                throw new BenchmarkSetupException("rank " + t.rank + ": a proxy write for round " + r
                        + " arrived while rank " + t.rank + " waits for round " + (served + 1));
            } else if (++arrivals > writesPerTarget) {
                throw tooMany(r, arrivals);
            }
            if (slots[c] != null && t.channels[c].rxCqDataConsumesRecv() && slots[c].owns(comp.context())) {
                slots[c].repost(comp.context());
            }
        } else if (comp.isSend()) {
            txPending--;
        }
    }

    private BenchmarkSetupException tooMany(long r, int arrived) {
        return new BenchmarkSetupException("rank " + t.rank + ": round " + r + " brought " + arrived
                + " proxy writes, but the leader's plan has " + writesPerTarget + " for this rank");
    }
}

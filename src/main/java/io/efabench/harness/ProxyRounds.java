package io.efabench.harness;

import java.nio.ByteBuffer;

import io.efabench.cuda.CudaStream;
import io.efabench.cuda.PinnedHostBuffer;
import io.efabench.fabric.RemoteRegion;
import io.efabench.harness.engine.Follower;
import io.efabench.harness.engine.Immediate;
import io.efabench.harness.engine.OpPlan;
import io.efabench.harness.engine.WriteEngine;
import io.efabench.proxy.Mailbox;
import io.efabench.proxy.ProxyKernels;
import io.efabench.proxy.RequestRing;

/**
 * GPU-initiated writes through a CPU proxy (seed: experiments/proxy), in the leader-driven round
 * protocol of docs/DESIGN.md, on the shared engine: the proxy thread ({@link ProxyLoop}) posts
 * through a {@code WriteEngine}, the targets serve and ack with the {@link Follower} that Write's
 * targets use. One leader invocation is one launch of the producer kernel (proxy.cu's {@code
 * proxy_put}): for every target in turn, {@code requests} requests of {@code size / requests} bytes
 * from that target's own source block, pushed into the request ring by one thread per block once
 * the block's data is ready. Blocking configs quiet after every push, NBI configs once at the end
 * of the round. The invocation ends when every target acked the round (it counted every write's
 * immediate data against the leader's plan): one unpipelined round, so {@code lat_us} is a latency.
 *
 * <p>Checked round: after every iteration, one more round launched exactly as the timed ones
 * (same kernel, flags and proxy path); each target's source block holds the pattern of (rank 0,
 * target, that round), written by the host before the launch, or by the kernel itself with
 * {@code fill}. Every target checks every byte on its GPU.
 */
public final class ProxyRounds implements Rounds {
    /** Most requests per target and round. */
    public static final int MAX_REQUESTS = 256;
    static final int RING_CELLS = 1024;

    private final FabricTrial t;
    /** OpPlan's SINGLE (one channel) or MULTI (each request striped over every channel). */
    private final OpPlan.Layout layout;
    private final boolean nbi;
    private final boolean fill;
    private final long size;
    /** Bytes between two targets' source blocks: size rounded up to whole 4-byte words. */
    private final long stride;
    private final Deadline deadline;

    // Leader.
    private final TrialBuffer src;
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
    private long round;

    // Target.
    private final TrialBuffer dst;
    private final Follower follower;

    public ProxyRounds(FabricTrial t, OpPlan.Layout layout, boolean nbi, long size, int requests, int grid, int block,
            boolean fill) {
        this.t = t;
        this.layout = layout;
        this.nbi = nbi;
        this.fill = fill;
        this.size = size;
        this.stride = (size + 3) & ~3L;
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
        Immediate.requireCarried(t.channels, t.size);
        long chunk = (size + requests - 1) / requests;
        chunk = (chunk + 3) & ~3L; // whole 4-byte words: the kernel fills the pattern word by word
        int nreq = (int) ((size + chunk - 1) / chunk);
        int targets = t.size - 1;
        // The leader reads one source block per target; a target receives one block; the leader's
        // own target region is never written (one page, for the exchange).
        src = t.rank == 0 ? t.buffer(stride * targets) : null;
        dst = t.buffer(t.rank == 0 ? 4096 : size);
        RemoteRegion[][] dstOf = t.exchange("proxy target regions", dst.regions());

        int channelHint = layout == OpPlan.Layout.MULTI ? ProxyLoop.ALL_CHANNELS : 0;
        long[] maxWrite = new long[t.channels.length];
        for (int c = 0; c < maxWrite.length; c++) {
            maxWrite[c] = t.maxWrite(c);
        }
        int planned = 0;
        for (int j = 0; j < nreq; j++) {
            planned += ProxyLoop.writesFor(Math.min(chunk, size - (long) j * chunk), channelHint, maxWrite);
        }
        byte[] mine = t.rank == 0 ? ByteBuffer.allocate(4).putInt(planned).array() : new byte[0];
        int writesPerTarget = ByteBuffer.wrap(t.group.allgather("proxy write plan", mine, t.timeout).get(0)).getInt();
        if (writesPerTarget > WriteEngine.SLOTS) {
            throw new BenchmarkSetupException(writesPerTarget + " writes per target and round: at most " + WriteEngine.SLOTS
                    + " (fewer requests, or larger writes)");
        }
        kernelTimeoutNanos = t.timeout.toNanos();
        if (t.rank != 0) {
            long[] unserved = new long[t.channels.length];
            java.util.Arrays.fill(unserved, writesPerTarget);
            // The leader launches round r + 1 only once every target acked round r: one round in flight.
            follower = new Follower(t, writesPerTarget, 1, 1, unserved);
            kernels = null;
            streams = null;
            ring = null;
            mailbox = null;
            proxy = null;
            shape = null;
            corruptField = 0;
            return;
        }
        follower = null;
        fillSources(0);
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
        shape = new ProxyKernels.PutShape(src.deviceAddress(), size, stride, chunk, nreq, t.size, t.rank, channelHint,
                grid, block);
        proxy = new ProxyLoop(t, ring, mailbox, src.regions(), dstOf, src.byteSize());
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
        launch(r, 0);
        awaitAcks(r);
    }

    @Override
    public void leaderWarmRound() {
        t.gpu.context.makeCurrent(); // JMH may run an iteration on another thread than the last one
        leaderRound();
        awaitKernel(round);
    }

    /** Writes the pattern of (0, target, {@code r}) into every target's source block. */
    private void fillSources(long r) {
        for (int k = 1; k < t.size; k++) {
            src.fill(stride * (k - 1), size, 0, k, r);
        }
    }

    /** Launches round {@code r}: timed and checked rounds alike, but for the corrupt-field test hook. */
    private void launch(long r, int corrupt) {
        String why = proxy.failure();
        if (why != null) {
            throw new BenchmarkSetupException(why);
        }
        int flags = (nbi ? ProxyKernels.FLAG_NBI : 0) | (fill ? ProxyKernels.FLAG_FILL : 0);
        kernels.put(streams[(int) (r & 1)], ring, mailbox, shape, Immediate.encode(Immediate.DATA, 0, r), r, flags, corrupt,
                kernelTimeoutNanos);
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

    /**
     * Iteration teardown, untimed: the kernels finish, END, then the checked round: each target's
     * source block gets the pattern of (0, target, round) (by the kernel itself with {@code fill}),
     * and the round is launched and awaited as a timed one.
     */
    @Override
    public void leaderEndIteration() {
        t.gpu.context.makeCurrent();
        awaitKernel(round);
        t.signalEnd(round);
        t.barrier("targets cleared for the checked proxy round");
        long r = ++round;
        if (!fill) {
            fillSources(r);
        }
        proxy.checking(true);
        try {
            launch(r, corruptField);
            awaitAcks(r);
            awaitKernel(r);
        } finally {
            proxy.checking(false);
        }
        t.verdicts("proxy checked round " + r, null);
    }

    // ---- target -------------------------------------------------------------------------

    @Override
    public void followerRound() {
        follower.serve("waiting for the proxy's writes of a round", true);
    }

    @Override
    public void followerWarmRound() {
        follower.warmRound();
    }

    /** Serve up to END, clear, serve the checked round as a timed one, check every byte. */
    @Override
    public void followerEndIteration() {
        long ended = follower.serveToEnd();
        dst.clear();
        t.barrier("targets cleared for the checked proxy round");
        follower.serveChecked(1);
        String verdict = null;
        try {
            dst.verify(0, size, 0, t.rank, ended + 1);
        } catch (Payload.CorruptionException e) {
            verdict = e.getMessage() + " (slot 0 of 1, " + layout + (nbi ? " NBI" : "") + ", " + t.benchmark() + ")";
        }
        t.verdicts("proxy checked round " + (ended + 1), verdict);
    }
}

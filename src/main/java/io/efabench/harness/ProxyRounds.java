package io.efabench.harness;

import java.nio.ByteBuffer;

import io.efabench.cuda.CudaStream;
import io.efabench.cuda.PinnedHostBuffer;
import io.efabench.fabric.RemoteRegion;
import io.efabench.harness.engine.Follower;
import io.efabench.harness.engine.Footprint;
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
 * targets use.
 *
 * <p>As the seed's kernel, one producer loops over many rounds: a resident kernel (proxy.cu's
 * {@code proxy_put}, started at the iteration's warm round, stopped at its end) waits on a
 * doorbell, and one leader invocation rings it once: a launch of {@code rounds} rounds, each
 * writing {@code size} bytes to every target in turn as {@code requests} requests, pushed into the
 * request ring by one thread per block once the block's data is ready. Blocking configs quiet
 * after every push; NBI configs once at the end of the launch (and before a round reuses a slot
 * still in flight), so their rounds overlap as the seed's NBI iterations do. Round r writes slot
 * r mod {@code slots} on both sides ({@link Footprint}). The invocation ends when every target
 * acked the launch's last round (it counted every write's immediate data of every round against
 * the leader's plan): counted = completed, and nothing is in flight between invocations.
 *
 * <p>The Direct configs are the same launch made on the proxy thread itself ({@link
 * HostProducer}): same requests, same waits, same proxy; only the GPU is not in the loop.
 *
 * <p>Checked launch: after every iteration, one more launch through the same kernel (or host
 * producer), flags and proxy path; each slot's source block holds the pattern of (rank 0, target,
 * the last round of the launch that writes the slot), written by the host before the launch, or
 * by the kernel itself in every round with {@code fill}. Every target checks every byte of every
 * slot written on its GPU.
 */
public final class ProxyRounds implements Rounds {
    /** Most requests per target and round. */
    public static final int MAX_REQUESTS = 256;
    /** Most rounds per launch. */
    public static final int MAX_ROUNDS = 4096;
    static final int RING_CELLS = 1024;

    private final FabricTrial t;
    /** OpPlan's SINGLE (one channel) or MULTI (each request striped over every channel). */
    private final OpPlan.Layout layout;
    private final boolean nbi;
    private final boolean fill;
    private final long size;
    /** Bytes between two targets' source blocks, and a target's slots: size rounded up to whole 4-byte words. */
    private final long stride;
    private final int rounds;
    private final int slots;
    private final Deadline deadline;

    // Leader.
    private final TrialBuffer src;
    /** The GPU's producer (Proxy configs), or null. */
    private final ProxyKernels kernels;
    /** The proxy thread's own producer (Direct configs), or null. */
    private final HostProducer host;
    private final CudaStream stream;
    private final RequestRing ring;
    private final Mailbox mailbox;
    private final ProxyLoop proxy;
    private final ProxyKernels.PutShape shape;
    private final int flags;
    private final long kernelTimeoutNanos;
    /** Test hook EFABENCH_TEST_PROXY_FIELD=target|bytes|op: the checked launch's first request carries a wrong field. */
    private final int corruptField;
    private boolean resident;
    private long round;

    // Target.
    private final TrialBuffer dst;
    private final Follower follower;

    /**
     * @param direct     the Direct baseline: the proxy thread makes the requests (no kernel)
     * @param rounds     rounds per launch (one invocation)
     * @param slotsParam "auto" or a count ({@link Footprint})
     */
    public ProxyRounds(FabricTrial t, OpPlan.Layout layout, boolean nbi, boolean direct, long size, int requests, int grid,
            int block, boolean fill, int rounds, String slotsParam) {
        this.t = t;
        this.layout = layout;
        this.nbi = nbi;
        this.fill = fill;
        this.size = size;
        this.stride = (size + 3) & ~3L;
        this.rounds = rounds;
        this.deadline = new Deadline(t.group, t.timeout);
        if (t.gpu() == null) {
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
        if (rounds < 1 || rounds > MAX_ROUNDS) {
            throw new BenchmarkSetupException("rounds=" + rounds + ": must be from 1 to " + MAX_ROUNDS + " per launch");
        }
        if (direct && fill) {
            throw new BenchmarkSetupException("fill=true is the kernel writing the payload: the Direct configs have no kernel");
        }
        Immediate.requireCarried(t.channels(), t.size);
        int targets = t.size - 1;
        this.slots = Math.min(ProxyKernels.MAX_SLOTS, Footprint.slots(slotsParam, rounds, stride * targets));
        long chunk = (size + requests - 1) / requests;
        chunk = (chunk + 3) & ~3L; // whole 4-byte words: the kernel fills the pattern word by word
        int nreq = (int) ((size + chunk - 1) / chunk);
        // The leader reads slots x targets source blocks; a target receives slots blocks; the
        // leader's own target region is never written (one page, for the exchange).
        src = t.rank == 0 ? t.buffer(Footprint.bufferBytes(slots, stride * targets)) : null;
        dst = t.buffer(t.rank == 0 ? 4096 : Footprint.bufferBytes(slots, stride));
        RemoteRegion[][] dstOf = t.exchange("proxy target regions", dst.regions());

        int channelHint = layout == OpPlan.Layout.MULTI ? ProxyLoop.ALL_CHANNELS : 0;
        long[] maxWrite = new long[t.channelCount()];
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
            // Nothing bounds a launch's rounds at a target but the launch's end: all of them may
            // be in flight (unserved) at once; one cumulative ack per launch, for its last round.
            long[] unserved = new long[t.channelCount()];
            java.util.Arrays.fill(unserved, (long) writesPerTarget * rounds);
            follower = new Follower(t, writesPerTarget, rounds, rounds, unserved);
            kernels = null;
            host = null;
            stream = null;
            ring = null;
            mailbox = null;
            proxy = null;
            shape = null;
            flags = 0;
            corruptField = 0;
            return;
        }
        follower = null;
        flags = (nbi ? ProxyKernels.FLAG_NBI : 0) | (fill ? ProxyKernels.FLAG_FILL : 0);
        corruptField = switch (String.valueOf(System.getenv("EFABENCH_TEST_PROXY_FIELD"))) {
            case "target" -> ProxyKernels.CORRUPT_TARGET;
            case "bytes" -> ProxyKernels.CORRUPT_BYTES;
            case "op" -> ProxyKernels.CORRUPT_OP;
            default -> 0;
        };
        t.gpu().context.makeCurrent();
        shape = new ProxyKernels.PutShape(src.deviceAddress(), size, stride, stride * targets, chunk, nreq, t.size, t.rank,
                channelHint, Immediate.encode(Immediate.DATA, t.rank, 0), rounds, slots, grid, block);
        mailbox = new Mailbox(t.gpu().context);
        t.own(mailbox);
        PinnedHostBuffer ringMemory = PinnedHostBuffer.allocate(t.gpu().context, RequestRing.bytesFor(RING_CELLS));
        t.own(ringMemory);
        ring = RequestRing.mapped(ringMemory, RING_CELLS);
        if (direct) {
            kernels = null;
            stream = null;
            host = new HostProducer(shape, nbi);
        } else {
            host = null;
            kernels = new ProxyKernels(t.gpu().context);
            t.own(kernels);
            stream = t.gpu().stream;
            // Closed first among the owned (newest first): no resident kernel outlives the ring and mailbox.
            t.own(this::stopKernel);
        }
        fillSources(1);
        proxy = new ProxyLoop(t, ring, host, mailbox, src.regions(), dstOf, src.byteSize());
        t.ownWorker(proxy);
        proxy.start();
    }

    @Override
    public long bytesPerInvocation() {
        return size * (t.size - 1) * rounds;
    }

    /** An invocation is a launch of {@code rounds} rounds: {@code lat_us} is the time per round. */
    @Override
    public int transfersPerInvocation() {
        return rounds;
    }

    /**
     * Blocking rounds run one after another: a launch's time over its rounds is a round's
     * latency. NBI rounds overlap, so they report rates only (as Write with window > 1).
     */
    @Override
    public boolean invocationIsLatency() {
        return !nbi;
    }

    /** The seed's Gbps counts one buffer per round (its size x iters x 8 / time). */
    @Override
    public long seedBytesPerInvocation() {
        return size * rounds;
    }

    /** The seed's unit: a launch's time over its rounds ({@code round_us}), blocking or NBI. */
    @Override
    public SeedRound seedRound() {
        return new SeedRound("round_us", rounds);
    }

    @Override
    public int slots() {
        return slots;
    }

    @Override
    public int roundsInFlight() {
        return nbi ? Math.min(rounds, slots) : 1;
    }

    @Override
    public double linkGbps() {
        if (layout == OpPlan.Layout.SINGLE) {
            return t.linkGbps(0);
        }
        int[] all = new int[t.channelCount()];
        for (int c = 0; c < all.length; c++) {
            all[c] = c;
        }
        return t.linkGbps(all);
    }

    @Override
    public double seedLinkGbps() {
        return t.seedLinkGbps(layout);
    }

    @Override
    public int peerInFlight() {
        return t.rank == 0 ? (t.size == 2 ? 1 : -1) : 0;
    }

    // ---- leader -------------------------------------------------------------------------

    /** Rings one launch of {@code rounds} rounds and waits until every target acked its last round. */
    @Override
    public void leaderRound() {
        long first = round + 1;
        round += rounds;
        ring(first);
        awaitAcks(round);
    }

    /** The iteration's first launch, untimed: starts the resident kernel (JMH may use another thread). */
    @Override
    public void leaderWarmRound() {
        t.gpu().context.makeCurrent();
        startKernel(0);
        leaderRound();
    }

    /** Writes the pattern of (0, target, the launch's last round using the slot) into every source block the launch reads. */
    private void fillSources(long first) {
        int written = Math.min(rounds, slots);
        for (int q = 0; q < written; q++) {
            long r = lastRoundOfSlot(first, first + q);
            int slot = Footprint.slotOf(r, slots);
            for (int k = 1; k < t.size; k++) {
                src.fill(slot * shape.slotStride() + stride * (k - 1), size, 0, k, r);
            }
        }
    }

    /** The last round of the launch from {@code first} that writes the slot of round {@code r}. */
    private long lastRoundOfSlot(long first, long r) {
        long last = first + rounds - 1;
        return r + (last - r) / slots * slots;
    }

    private void startKernel(int corrupt) {
        if (kernels != null && !resident) {
            kernels.put(stream, ring, mailbox, shape, flags, corrupt, kernelTimeoutNanos, kernelTimeoutNanos);
            resident = true;
        }
    }

    private void ring(long first) {
        String why = proxy.failure();
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
        deadline.start();
        for (int k = 1; k < t.size; k++) {
            while (proxy.acked.get(k) < r) {
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
        deadline.start();
        while (!stream.isIdle()) {
            checkProxy(r);
            deadline.check("waiting for the producer kernel to finish", t.size == 2 ? 1 : -1, r);
        }
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
        String why = proxy.failure();
        if (why == null) {
            why = mailbox.failure();
        }
        if (why != null) {
            mailbox.abort();
            throw new BenchmarkSetupException(why + " (round " + r + ")");
        }
    }

    private long reportedPushes;
    private long reportedQuiets;
    private long reportedPushNanos;
    private long reportedQuietNanos;

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
                    nbi ? "" : String.format(java.util.Locale.ROOT, ", %.2f us per blocking quiet", quietNs / 1e3 / Math.max(1, quiets)));
        }
    }

    /**
     * Iteration teardown, untimed: the kernel stops, END, then the checked launch: every slot
     * the launch writes gets the pattern of (0, target, the last round writing it) (by the kernel
     * itself with {@code fill}), and the launch is started, rung and awaited as a timed one.
     */
    @Override
    public void leaderEndIteration() {
        t.gpu().context.makeCurrent();
        awaitKernelStop(round);
        reportProducer();
        t.signalEnd(round);
        t.barrier("targets cleared for the checked proxy round");
        long first = round + 1;
        if (!fill) {
            fillSources(first);
        }
        proxy.checking(true);
        try {
            startKernel(corruptField);
            leaderRound();
            awaitKernelStop(round);
        } finally {
            proxy.checking(false);
        }
        t.verdicts("proxy checked launch of rounds " + first + ".." + round, null);
    }

    // ---- target -------------------------------------------------------------------------

    /** Serves one launch: its {@code rounds} rounds. */
    @Override
    public void followerRound() {
        for (int q = 0; q < rounds; q++) {
            follower.serve("waiting for the proxy's writes of a round", true);
        }
    }

    @Override
    public void followerWarmRound() {
        for (int q = 0; q < rounds; q++) {
            follower.serve("waiting for the proxy's writes of the warm launch", false);
        }
    }

    /** Serve up to END, clear, serve the checked launch as a timed one, check every byte of every slot written. */
    @Override
    public void followerEndIteration() {
        long ended = follower.serveToEnd();
        dst.clear();
        t.barrier("targets cleared for the checked proxy round");
        follower.serveChecked(rounds);
        long first = ended + 1;
        String verdict = null;
        try {
            for (int q = 0; q < Math.min(rounds, slots); q++) {
                long r = lastRoundOfSlot(first, first + q);
                int slot = Footprint.slotOf(r, slots);
                try {
                    dst.verify(slot * stride, size, 0, t.rank, r);
                } catch (Payload.CorruptionException e) {
                    verdict = e.getMessage() + " (slot " + slot + " of " + slots + ", " + layout + (nbi ? " NBI" : "") + ", "
                            + t.benchmark() + ")";
                    break;
                }
            }
        } finally {
            t.verdicts("proxy checked launch of rounds " + first + ".." + (first + rounds - 1), verdict);
        }
    }
}

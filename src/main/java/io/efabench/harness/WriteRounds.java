package io.efabench.harness;

import io.efabench.fabric.MemoryRegion;
import io.efabench.fabric.RemoteRegion;
import io.efabench.harness.engine.Footprint;
import io.efabench.harness.engine.Immediate;
import io.efabench.harness.engine.OpPlan;
import io.efabench.harness.engine.OpPlan.Layout;
import io.efabench.harness.engine.RoundPipeline;
import io.efabench.harness.engine.WriteEngine;

/**
 * RDMA writes with immediate data, rank 0 to ranks 1..N-1, in the leader-driven round protocol
 * of docs/DESIGN.md, on the shared {@link WriteEngine} and {@link RoundPipeline}.
 *
 * <p>A round writes {@code size} bytes to every target: SINGLE on channel 0, MULTI one stripe
 * per channel, ROUND_ROBIN target k on channel (k + rank) % channels. {@code window} W rounds
 * may be in flight; with one target and SINGLE that is fi_rma_bw's -W. W = 1 runs the targets
 * in turn (the seed's order) and an invocation is one round trip of the data. A timed
 * invocation ends when the oldest round in flight completed: locally (LOCAL), or acked by every
 * target (REMOTE): counted = completed ({@link RoundPipeline}). Round r writes slot r mod
 * {@code slots} on both sides ({@link Footprint}): source block (slot, target), target block slot.
 *
 * <p>Targets count every op's arrival against the leader's plan (EFA is unordered: one
 * immediate on the last chunk proves nothing) and ack cumulatively every {@link #ackEvery}
 * rounds. Credits keep every target bounded: the leader posts round r to a target only once it
 * acked round r - credits (LOCAL: max(16, W); REMOTE: W).
 *
 * <p>The checked pass, after every iteration, is {@code slots} more rounds through the same
 * pipeline (window full, targets and stripes concurrent), each slot with the pattern of
 * (0, target, its round); every target verifies every slot.
 */
public final class WriteRounds implements Rounds, RoundPipeline.Port, WriteEngine.Sink {
    /** Rounds a target may lag behind in LOCAL mode with a window under 16. */
    static final int LOCAL_CREDITS = 16;
    public static final int MAX_WINDOW = 256;

    private final FabricTrial t;
    private final Layout layout;
    private final boolean remote;
    private final long size;
    private final int window;
    private final int slots;
    private final int credits;
    private final int ackEvery;
    private final int targets;
    private final TrialBuffer src;
    private final TrialBuffer dst;
    private final MemoryRegion[] srcMr;
    private final RemoteRegion[][] dstOf;
    private final OpPlan plan;
    /** Op i goes out with fi_inject_writedata (host memory, at most the inject size: fi_rma_bw's rule). */
    private final boolean[] injectOp;
    private final WriteEngine engine;
    private final RoundPipeline pipeline;
    private final Deadline deadline;

    private final long corruptOffset = TestHooks.integer("EFABENCH_CORRUPT_OFFSET");
    /** Checked pass: target k's data goes to target k % (N-1) + 1. */
    private final boolean swapTargets = TestHooks.integer("EFABENCH_TEST_SWAP_TARGETS") == 1;
    /** Checked pass: the last write of every round to this target is never posted, or -1. */
    private final long dropWriteTo = TestHooks.integer("EFABENCH_TEST_DROP_WRITE");
    /** Targets skip the clear, checked writes carry only 64 bytes of payload: the rest is stale. */
    private final boolean skipClear = TestHooks.integer("EFABENCH_TEST_SKIP_CLEAR") == 1;
    private final TestHooks.PipelineFault fault = TestHooks.PipelineFault.fromEnvironment();

    // Leader: local completions outstanding per round in flight (a ring), acks, what is being posted.
    private final int roundMask;
    private final int[] pendingInRound;
    private final long[] acked;
    private final int[] lastOpTo;
    private int writesInFlight;
    private boolean checking;
    private int peerInFlight = -1;

    // Target: arrivals per round not yet served.
    private final int opsForMe;
    private final int ring;
    private final int[] arrivals;
    private long served;
    private long lastAcked;

    /**
     * {@code inject}: post writes that fit the inject size with fi_inject_writedata (as fi_rma_bw
     * does); {@code slotsParam}: "auto" or a count ({@link Footprint}).
     */
    public WriteRounds(FabricTrial t, Layout layout, boolean remote, long size, int windowParam, boolean inject,
            String slotsParam) {
        this.t = t;
        this.layout = layout;
        this.remote = remote;
        this.size = size;
        this.deadline = new Deadline(t.group, t.timeout);
        if (windowParam < 1 || windowParam > MAX_WINDOW) {
            throw new BenchmarkSetupException("window=" + windowParam + ": must be from 1 to " + MAX_WINDOW + " rounds");
        }
        if (layout == Layout.MULTI && size < t.channels.length) {
            throw new BenchmarkSetupException("size " + size + " B cannot be split across " + t.channels.length + " channels");
        }
        this.targets = t.size - 1;
        this.slots = Footprint.slots(slotsParam, windowParam, size * targets);
        this.window = Math.min(windowParam, slots);
        this.credits = remote ? window : Math.max(LOCAL_CREDITS, window);
        this.ackEvery = remote && window == 1 ? 1 : Math.max(1, credits / 4);
        this.ring = Integer.highestOneBit(credits) * 4;
        int nch = t.channels.length;
        // The leader reads slots x targets source blocks; a target receives slots blocks; the leader's
        // own target region is never written (one page, for the exchange).
        src = t.rank == 0 ? t.buffer(Footprint.bufferBytes(slots, size * targets)) : null;
        dst = t.buffer(t.rank == 0 ? 4096 : Footprint.bufferBytes(slots, size));
        srcMr = src != null ? src.regions() : null;
        dstOf = t.exchange("write target regions", dst.regions());

        byte[] mine = t.rank == 0 ? OpPlan.write(t, layout, size).encode() : new byte[0];
        plan = OpPlan.decode(t.group.allgather("write op plan", mine, t.timeout).get(0));
        int n = plan.ops();
        injectOp = new boolean[n];
        lastOpTo = new int[t.size];
        int mineCount = 0;
        for (int i = 0; i < n; i++) {
            int c = plan.channel[i];
            injectOp[i] = inject && t.memory() == MemoryKind.HOST && plan.len[i] <= t.channels[c].nic().injectSize();
            lastOpTo[plan.peer[i]] = i;
            mineCount += plan.peer[i] == t.rank ? 1 : 0;
        }
        opsForMe = t.rank == 0 ? 0 : mineCount;
        arrivals = new int[ring];
        acked = new long[t.size];
        roundMask = Integer.highestOneBit(window) * 2 - 1;
        pendingInRound = new int[roundMask + 1];

        int[] contexts = new int[nch];
        long[] unserved = new long[nch];
        int[] perChannel = plan.perChannel(nch);
        long perTargetChannel = plan.maxPerPeerChannel(t.size, nch);
        for (int c = 0; c < nch; c++) {
            contexts[c] = t.rank == 0 ? window * perChannel[c] : 0;
            // A target's CQ and (FI_RX_CQ_DATA) posted receives hold at most credits + 1 rounds of writes.
            unserved[c] = (credits + 1) * perTargetChannel;
        }
        engine = new WriteEngine(t, contexts, true, unserved, Math.max(1, window / 2), this);
        pipeline = new RoundPipeline(this, window, slots, deadline);
        if (src != null) {
            for (int s = 0; s < slots; s++) {
                for (int k = 1; k < t.size; k++) {
                    src.fill(block(s, k), size, 0, k, 0);
                }
            }
        }
    }

    /** Offset of the leader's source block for {@code slot} and {@code target}. */
    private long block(int slot, int target) {
        return ((long) slot * targets + (target - 1)) * size;
    }

    @Override
    public int peerInFlight() {
        return t.rank == 0 ? peerInFlight : 0;
    }

    @Override
    public long bytesPerInvocation() {
        return size * targets;
    }

    /** Transfers one invocation runs in sequence: one per target, or one for all in ROUND_ROBIN. */
    @Override
    public int transfersPerInvocation() {
        return layout == Layout.ROUND_ROBIN ? 1 : targets;
    }

    @Override
    public boolean invocationIsLatency() {
        return window == 1;
    }

    @Override
    public int slots() {
        return slots;
    }

    @Override
    public int roundsInFlight() {
        return window;
    }

    /** Link speed of the channels one sequential transfer uses. */
    @Override
    public double linkGbps() {
        int[] used = new int[plan.groupStart[1] - plan.groupStart[0]];
        for (int i = 0; i < used.length; i++) {
            used[i] = plan.channel[plan.groupStart[0] + i];
        }
        return t.linkGbps(used);
    }

    // ---- leader -------------------------------------------------------------------------

    @Override
    public void leaderRound() {
        pipeline.timed();
    }

    /** Untimed, after the start barrier: one round every target acked, then the window filled. */
    @Override
    public void leaderWarmRound() {
        long r = pipeline.warm();
        for (int k = 1; k < t.size; k++) {
            awaitAck(k, r);
        }
        pipeline.fill();
    }

    @Override
    public void post(long r) {
        pendingInRound[(int) (r & roundMask)] = 0;
        if (window == 1) {
            for (int g = 0; g < plan.groups(); g++) {
                if (g > 0) {
                    awaitGroup(g - 1, r);
                }
                for (int i = plan.groupStart[g]; i < plan.groupStart[g + 1]; i++) {
                    postOp(i, r);
                }
            }
            return;
        }
        for (int i = 0; i < plan.ops(); i++) {
            postOp(i, r);
        }
    }

    /** Window 1, targets in turn: group g of round r completed (locally, or acked by its targets). */
    private void awaitGroup(int g, long r) {
        if (!remote) {
            pipeline.await(r);
            return;
        }
        for (int i = plan.groupStart[g]; i < plan.groupStart[g + 1]; i++) {
            awaitAck(plan.peer[i], r);
        }
    }

    private void postOp(int i, long r) {
        int peer = plan.peer[i];
        awaitAck(peer, r - credits);
        peerInFlight = layout == Layout.ROUND_ROBIN ? -1 : peer;
        if (checking && dropWriteTo == peer && i == lastOpTo[peer]) {
            return;
        }
        int c = plan.channel[i];
        int slot = pipeline.slot(r);
        int to = checking && swapTargets ? peer % targets + 1 : peer;
        long srcOff = block(slot, peer) + plan.offset[i];
        long dstOff = (long) slot * size + plan.offset[i];
        long len = checking && skipClear ? Math.min(64, plan.len[i]) : plan.len[i];
        if (checking && fault.fires(writesInFlight)) {
            if (fault.kind == TestHooks.PipelineFault.Kind.MISDIRECT) {
                dstOff = (long) ((slot + 1) % slots) * size + plan.offset[i];
            } else {
                len = Math.min(64, len);
            }
        }
        long imm = Immediate.encode(Immediate.DATA, 0, r);
        if (injectOp[i]) {
            engine.inject(c, srcMr[c], srcOff, len, to, dstOf[to][c], dstOff, imm, r);
            return;
        }
        int ri = (int) (r & roundMask);
        pendingInRound[ri]++;
        writesInFlight++;
        engine.write(c, srcMr[c], srcOff, len, to, dstOf[to][c], dstOff, imm, ri, r);
    }

    @Override
    public boolean complete(long r) {
        if (!remote) {
            return pendingInRound[(int) (r & roundMask)] == 0;
        }
        return firstUnacked(r) < 0;
    }

    /** The first target that has not acked round {@code r}, or -1. */
    private int firstUnacked(long r) {
        for (int k = 1; k < t.size; k++) {
            if (acked[k] < r) {
                return k;
            }
        }
        return -1;
    }

    @Override
    public void progress() {
        engine.progress();
    }

    @Override
    public String awaited() {
        return remote ? "waiting for the ack of a write round" : "local completion of a write";
    }

    @Override
    public int peerAwaited(long r) {
        int k = remote ? firstUnacked(r) : peerInFlight;
        return k >= 0 ? k : 1;
    }

    private void awaitAck(int peer, long r) {
        if (acked[peer] >= r) {
            return;
        }
        peerInFlight = peer;
        deadline.start();
        while (acked[peer] < r) {
            engine.progress();
            deadline.check("waiting for the ack of a write round", peer, r);
        }
    }

    /**
     * Leader iteration teardown, untimed and uncounted: drain, END, the targets' last acks, then
     * the checked pass: {@code slots} rounds posted as timed rounds are, each slot's source
     * blocks filled with the pattern of (0, target, that slot's round).
     */
    @Override
    public void leaderEndIteration() {
        // END first: targets ack cumulatively every ackEvery rounds, and the last round once they know it.
        long end = pipeline.posted();
        t.signalEnd(end);
        pipeline.drain();
        for (int k = 1; k < t.size; k++) {
            awaitAck(k, end);
        }
        t.barrier("targets cleared for the checked round");
        for (int q = 1; q <= slots; q++) {
            int slot = pipeline.slot(end + q);
            for (int k = 1; k < t.size; k++) {
                src.fill(block(slot, k), size, 0, k, end + q);
                if (q == 1 && corruptOffset >= 0 && corruptOffset < size) {
                    src.corrupt(block(slot, k) + corruptOffset);
                }
            }
        }
        checking = true;
        fault.arm();
        try {
            for (int q = 1; q <= slots; q++) {
                pipeline.post();
            }
            pipeline.drain();
        } finally {
            checking = false;
        }
        t.verdicts("write checked rounds " + (end + 1) + ".." + (end + slots), null);
    }

    // ---- target -------------------------------------------------------------------------

    @Override
    public void followerRound() {
        serve("waiting for the writes of a round", true);
    }

    @Override
    public void followerWarmRound() {
        serve("waiting for the writes of a round", true);
        if (lastAcked < served) {
            ack(served);
        }
    }

    /**
     * Serves round served + 1 once all its planned writes arrived, acking every ackEvery rounds;
     * with {@code stopAtEnd}, returns without serving once the leader's END says there is none.
     */
    private void serve(String what, boolean stopAtEnd) {
        long next = served + 1;
        int s = (int) (next & (ring - 1));
        if (arrivals[s] < opsForMe) {
            deadline.start();
            try {
                while (arrivals[s] < opsForMe) {
                    if (stopAtEnd) {
                        long ended = t.endedRounds();
                        if (ended >= 0 && served >= ended) {
                            return;
                        }
                    }
                    engine.progress();
                    deadline.check(what, 0, next);
                }
            } catch (BenchmarkSetupException e) {
                throw new BenchmarkSetupException(e.getMessage() + "; " + arrivals[s] + " of the " + opsForMe
                        + " planned writes arrived");
            }
        }
        arrivals[s] = 0;
        served = next;
        if (next % ackEvery == 0) {
            ack(next);
        }
    }

    private void ack(long r) {
        lastAcked = r;
        engine.ack(r);
    }

    /** Follower iteration teardown: serve up to END, ack it, clear, then serve and verify the checked pass. */
    @Override
    public void followerEndIteration() {
        long ended;
        while ((ended = t.endedRounds()) < 0 || served < ended) {
            serve("waiting for the writes of a round", true);
        }
        if (lastAcked < served) {
            ack(served);
        }
        if (!skipClear) {
            dst.clear();
        }
        t.barrier("targets cleared for the checked round");
        for (int q = 1; q <= slots; q++) {
            serve("waiting for the writes of the checked round", false);
        }
        if (lastAcked < served) {
            ack(served);
        }
        String verdict = null;
        for (int q = 1; q <= slots && verdict == null; q++) {
            int slot = Footprint.slotOf(ended + q, slots);
            try {
                dst.verify((long) slot * size, size, 0, t.rank, ended + q);
            } catch (Payload.CorruptionException e) {
                verdict = e.getMessage() + " (slot " + slot + " of " + slots + ", " + layout + ", " + t.benchmark() + ")";
            }
        }
        t.verdicts("write checked rounds " + (ended + 1) + ".." + (ended + slots), verdict);
    }

    // ---- completions (WriteEngine.Sink) ---------------------------------------------------

    @Override
    public void writeDone(int tag) {
        pendingInRound[tag]--;
        writesInFlight--;
    }

    @Override
    public void arrived(long data) {
        if (Immediate.sender(data) != 0 || Immediate.kind(data) != Immediate.DATA) {
            throw new BenchmarkSetupException("rank " + t.rank + ": a write with immediate data 0x"
                    + Long.toHexString(data) + " that rank 0's write rounds never send");
        }
        long ahead = Immediate.roundsAhead(data, served + 1);
        // The leader posts round r only once this rank acked r - credits: rounds in flight are
        // served + 1 .. served + credits, and the ring holds them.
        if (ahead >= ring) {
            throw new BenchmarkSetupException("rank " + t.rank + ": a write with immediate data for round "
                    + Immediate.roundBits(data) + " (mod 2^20) from rank 0 arrived after rank " + t.rank + " served round "
                    + served + ": more writes than the leader's plan of " + opsForMe + " per round");
        }
        long r = served + 1 + ahead;
        int s = (int) (r & (ring - 1));
        if (++arrivals[s] > opsForMe) {
            throw new BenchmarkSetupException("rank " + t.rank + ": round " + r + " from rank 0 brought " + arrivals[s]
                    + " writes with immediate data, but the leader's plan has " + opsForMe + " for this rank");
        }
    }

    @Override
    public void acked(int from, long r) {
        if (r > acked[from]) {
            acked[from] = r;
        }
    }
}

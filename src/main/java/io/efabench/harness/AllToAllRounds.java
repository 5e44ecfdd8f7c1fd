package io.efabench.harness;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

import io.efabench.fabric.Channel;
import io.efabench.fabric.MemoryRegion;
import io.efabench.fabric.RemoteRegion;
import io.efabench.harness.engine.Footprint;
import io.efabench.harness.engine.Immediate;
import io.efabench.harness.engine.OpPlan;
import io.efabench.harness.engine.OpPlan.Layout;
import io.efabench.harness.engine.RoundPipeline;
import io.efabench.harness.engine.WriteEngine;

/**
 * All-to-all: in every round each rank writes {@code size} bytes with immediate data to each of
 * the N-1 other ranks at once; the symmetric round protocol of docs/DESIGN.md ("All-to-all
 * rounds"), on the shared {@link WriteEngine} and {@link RoundPipeline}. Every rank runs the same
 * rounds; rank 0's JMH score is the result.
 *
 * <p>Buffers: {@code slots} slots of one {@code size} block per rank. In round r (slot r mod
 * slots) rank s writes its block (slot, p) of {@code src} into block (slot, s) of rank p's
 * {@code dst}. SINGLE writes every peer on channel 0, MULTI stripes each block over all channels,
 * ROUND_ROBIN writes peer p on channel (p + rank) % channels (the seed's rule).
 *
 * <p>A receiver counts each sender's writes per round against that sender's plan (allgathered
 * at setup), so a lost, duplicated or misrouted write fails the round. A round is complete at a
 * rank when its own writes completed locally and every peer's writes of it arrived. {@code window}
 * W rounds may be in flight: a rank posts round r only once round r - W completed, so no rank
 * runs more than W rounds ahead of any other, and a timed invocation ends when the oldest round
 * in flight completed (counted = completed). W = 1: an invocation is one all-to-all's latency.
 *
 * <p>End of an iteration: rank 0 takes END = its last round + W, the highest round any rank can
 * have posted, announces it on the rendezvous and marks its writes of the untimed rounds it then
 * runs up to END as FINAL; a rank learns END from the data itself before it could post past it.
 * Every rank runs rounds up to END and drains them, uncounted. Then the checked pass: every rank
 * fills each slot's source blocks with the pattern of (itself, peer, that slot's round), clears
 * its destination, and after a barrier runs {@code slots} more rounds through the same pipeline.
 */
public final class AllToAllRounds implements Rounds, RoundPipeline.Port, WriteEngine.Sink {
    /** Most rounds in flight per rank. */
    public static final int MAX_WINDOW = 64;

    private final FabricTrial t;
    private final Layout layout;
    private final long size;
    private final int window;
    private final int slots;
    private final int ranks;
    private final int me;
    private final int ring;
    private final int ringBits;
    private final TrialBuffer src;
    private final TrialBuffer dst;
    private final MemoryRegion[] srcMr;
    private final RemoteRegion[][] dstOf;
    private final OpPlan plan;
    /** Writes each sender's plan sends this rank per round. */
    private final int[] opsFrom;
    private final WriteEngine engine;
    private final RoundPipeline pipeline;

    // Sender side, per ring slot of this rank's rounds: when posted, whether counted, writes not completed (all / per peer).
    private final long[] postedAt;
    private final boolean[] timedRound;
    private final int[] pendingInRound;
    private final int[][] pendingTo;
    // Per peer, over this iteration's timed rounds: summed ns from a round's post to the local completion of its last write.
    private final long[] peerNanos;
    private final long[] peerRounds;

    // Receiver side.
    private final int[][] arrivals;
    private final int[] sendersDone;
    private long served;
    /** END as learned from rank 0's first FINAL write of this iteration, or -1. */
    private long finalEnd = -1;
    private int kind = Immediate.DATA;
    private boolean timed;
    private boolean checking;
    private int writesInFlight;

    private long iterationStart;
    private long lastRoundEnd;
    private long timedRounds;

    /** Test hooks, applied by rank N-1: EFABENCH_CORRUPT_OFFSET flips that byte of its checked block for one peer. */
    private final long corruptOffset = TestHooks.integer("EFABENCH_CORRUPT_OFFSET");
    private final TestHooks.PipelineFault fault = TestHooks.PipelineFault.fromEnvironment();

    public AllToAllRounds(FabricTrial t, Layout layout, long size, int windowParam, String slotsParam) {
        this.t = t;
        this.layout = layout;
        this.size = size;
        this.ranks = t.size;
        this.me = t.rank;
        if (windowParam < 1 || windowParam > MAX_WINDOW) {
            throw new BenchmarkSetupException("window=" + windowParam + ": must be from 1 to " + MAX_WINDOW + " rounds");
        }
        if (ranks > Immediate.MAX_RANKS) {
            throw new BenchmarkSetupException("all-to-all carries the sender in 10 bits of immediate data: at most "
                    + Immediate.MAX_RANKS + " ranks, not " + ranks);
        }
        int nch = t.channels.length;
        for (Channel ch : t.channels) {
            if (ch.maxCqData() != -1L && ch.maxCqData() < 0xFFFF_FFFFL) {
                throw new BenchmarkSetupException("all-to-all needs 4 bytes of immediate data; " + ch.nic().provider()
                        + " carries " + (64 - Long.numberOfLeadingZeros(ch.maxCqData())) + " bits");
            }
        }
        if (layout == Layout.MULTI && size < nch) {
            throw new BenchmarkSetupException("size " + size + " B cannot be split across " + nch + " channels");
        }
        long perSlot = Footprint.bufferBytes(ranks, size);
        this.slots = Footprint.slots(slotsParam, windowParam, perSlot);
        this.window = Math.min(windowParam, slots);
        this.ring = Integer.highestOneBit(2 * window + 1) * 2;
        this.ringBits = Integer.numberOfTrailingZeros(ring);
        src = t.buffer(Footprint.bufferBytes(slots, perSlot));
        dst = t.buffer(Footprint.bufferBytes(slots, perSlot));
        srcMr = src.regions();
        dstOf = t.exchange("all-to-all destination regions", dst.regions());

        plan = OpPlan.allToAll(t, layout, size);
        // Every rank learns what every sender's plan brings it, per channel: NICs (max message size) may differ.
        ByteBuffer mine = ByteBuffer.allocate(4 * ranks * nch);
        int[][] perPeerChannel = new int[ranks][nch];
        for (int i = 0; i < plan.ops(); i++) {
            perPeerChannel[plan.peer[i]][plan.channel[i]]++;
        }
        for (int p = 0; p < ranks; p++) {
            for (int c = 0; c < nch; c++) {
                mine.putInt(perPeerChannel[p][c]);
            }
        }
        List<byte[]> all = t.group.allgather("all-to-all op plans", mine.array(), t.timeout);
        opsFrom = new int[ranks];
        long[] unserved = new long[nch];
        for (int s = 0; s < ranks; s++) {
            ByteBuffer b = ByteBuffer.wrap(all.get(s));
            for (int p = 0; p < ranks; p++) {
                for (int c = 0; c < nch; c++) {
                    int k = b.getInt();
                    if (p == me && s != me) {
                        opsFrom[s] += k;
                        unserved[c] += (long) k * ring;
                    }
                }
            }
        }
        int[] contexts = plan.perChannel(nch);
        for (int c = 0; c < nch; c++) {
            contexts[c] *= window;
        }
        engine = new WriteEngine(t, contexts, false, unserved, 1, this);
        pipeline = new RoundPipeline(this, window, slots, new Deadline(t.group, t.timeout));
        postedAt = new long[ring];
        timedRound = new boolean[ring];
        pendingInRound = new int[ring];
        pendingTo = new int[ranks][ring];
        peerNanos = new long[ranks];
        peerRounds = new long[ranks];
        arrivals = new int[ranks][ring];
        sendersDone = new int[ring];
        for (int s = 0; s < slots; s++) {
            for (int p = 0; p < ranks; p++) {
                if (p != me) {
                    src.fill(block(s, p), size, me, p, 0);
                }
            }
        }
    }

    /** Offset of block (slot, rank) in either buffer. */
    private long block(int slot, int rank) {
        return ((long) slot * ranks + rank) * size;
    }

    /** Bytes this rank sends to other ranks per round: size x (N-1). */
    @Override
    public long bytesPerInvocation() {
        return size * (ranks - 1);
    }

    /** Rank 0 sends size to each peer and receives as much from each. */
    @Override
    public long nicBytesPerInvocation() {
        return 2 * bytesPerInvocation();
    }

    /** Size x N: nccl-tests' algbw numerator. */
    @Override
    public long algbwBytesPerInvocation() {
        return size * ranks;
    }

    /** One all-to-all is one latency, whatever the rank count. */
    @Override
    public int transfersPerInvocation() {
        return 1;
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

    /** Link speed of the channels this rank writes on. */
    @Override
    public double linkGbps() {
        return t.linkGbps(Arrays.stream(plan.channel).distinct().toArray());
    }

    @Override
    public int peerInFlight() {
        return firstMissing();
    }

    // ---- rounds --------------------------------------------------------------------------

    /** Rank 0's timed invocation: one round posted, the oldest one in flight completed. */
    @Override
    public void leaderRound() {
        pipeline.timed();
        lastRoundEnd = System.nanoTime();
        timedRounds++;
    }

    /** Any other rank's invocation: the same, or nothing once the rounds up to END are posted. */
    @Override
    public void followerRound() {
        if (pastEnd()) {
            return;
        }
        pipeline.timed();
        lastRoundEnd = System.nanoTime();
        timedRounds++;
    }

    /**
     * Follower: whether the next round lies past END. The wait for round next - W comes first:
     * it is the one the next post needs anyway, and it may be what brings END (rank 0's first
     * FINAL round is END - W + 1).
     */
    private boolean pastEnd() {
        long next = pipeline.posted() + 1;
        pipeline.await(next - window);
        long end = end();
        return end >= 0 && next > end;
    }

    /** END of this iteration if known (rendezvous or rank 0's FINAL writes), else -1. */
    private long end() {
        return finalEnd >= 0 ? finalEnd : t.endedRounds();
    }

    @Override
    public void leaderWarmRound() {
        warmRound();
    }

    @Override
    public void followerWarmRound() {
        warmRound();
    }

    /** Untimed, after the start barrier, on every rank: one whole round, the window filled, then the clocks start. */
    private void warmRound() {
        finalEnd = -1;
        timed = false;
        pipeline.warm();
        timed = true;
        pipeline.fill();
        Arrays.fill(peerNanos, 0);
        Arrays.fill(peerRounds, 0);
        timedRounds = 0;
        iterationStart = System.nanoTime();
        lastRoundEnd = iterationStart;
    }

    @Override
    public void post(long r) {
        int ri = (int) (r & (ring - 1));
        postedAt[ri] = System.nanoTime();
        timedRound[ri] = timed;
        int slot = pipeline.slot(r);
        long imm = Immediate.encode(kind, me, r);
        for (int i = 0; i < plan.ops(); i++) {
            int c = plan.channel[i];
            int peer = plan.peer[i];
            long dstOff = block(slot, me) + plan.offset[i];
            long len = plan.len[i];
            if (checking && me == ranks - 1 && fault.fires(writesInFlight)) {
                if (fault.kind == TestHooks.PipelineFault.Kind.MISDIRECT) {
                    dstOff = block((slot + 1) % slots, me) + plan.offset[i];
                } else {
                    len = Math.min(64, len);
                }
            }
            pendingInRound[ri]++;
            pendingTo[peer][ri]++;
            writesInFlight++;
            engine.write(c, srcMr[c], block(slot, peer) + plan.offset[i], len, peer, dstOf[peer][c], dstOff, imm,
                    (peer << ringBits) | ri, r);
        }
    }

    @Override
    public boolean complete(long r) {
        return served >= r && pendingInRound[(int) (r & (ring - 1))] == 0;
    }

    @Override
    public void progress() {
        engine.progress();
    }

    @Override
    public String awaited() {
        return "waiting for every peer's writes of a round and the local completion of this rank's";
    }

    @Override
    public int peerAwaited(long r) {
        int s = firstMissing();
        return s >= 0 ? s : (me + 1) % ranks;
    }

    /** The first sender whose writes of round served + 1 are incomplete (failure messages), or -1. */
    private int firstMissing() {
        int ri = (int) ((served + 1) & (ring - 1));
        for (int k = 1; k < ranks; k++) {
            int s = (me + ranks - k) % ranks;
            if (arrivals[s][ri] < opsFrom[s]) {
                return s;
            }
        }
        return -1;
    }

    // ---- end of an iteration --------------------------------------------------------------

    @Override
    public void leaderEndIteration() {
        long end = pipeline.posted() + window; // no rank can have posted past this: it needs rank 0's round end - window
        t.signalEnd(end);
        timed = false;
        kind = Immediate.FINAL;
        try {
            while (pipeline.posted() < end) {
                pipeline.post();
            }
        } finally {
            kind = Immediate.DATA;
        }
        finish(end);
    }

    @Override
    public void followerEndIteration() {
        timed = false;
        while (!pastEnd()) {
            pipeline.post();
        }
        finish(end());
    }

    /** Everything up to {@code end} drained (uncounted), then the checked pass and the iteration's spread. */
    private void finish(long end) {
        pipeline.drain();
        if (pipeline.posted() != end || served != end) {
            throw new BenchmarkSetupException("rank " + me + ": all-to-all round " + pipeline.posted() + " (served " + served
                    + ") past END " + end);
        }
        checkedPass(end);
        spread();
    }

    private void checkedPass(long end) {
        for (int q = 1; q <= slots; q++) {
            int slot = pipeline.slot(end + q);
            for (int p = 0; p < ranks; p++) {
                if (p != me) {
                    src.fill(block(slot, p), size, me, p, end + q);
                }
            }
        }
        int corruptFor = ranks == 2 ? 0 : 1;
        if (corruptOffset >= 0 && me == ranks - 1 && corruptOffset < size) {
            src.corrupt(block(pipeline.slot(end + 1), corruptFor) + corruptOffset);
        }
        dst.clear();
        t.barrier("all-to-all buffers cleared for the checked round");
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
        String verdict = null;
        for (int q = 1; q <= slots && verdict == null; q++) {
            int slot = pipeline.slot(end + q);
            for (int s = 0; s < ranks && verdict == null; s++) {
                if (s != me) {
                    try {
                        dst.verify(block(slot, s), size, s, me, end + q);
                    } catch (Payload.CorruptionException e) {
                        verdict = e.getMessage() + " (" + t.benchmark() + " " + layout + ", block of rank " + s + ", slot "
                                + slot + " of " + slots + ")";
                    }
                }
            }
        }
        t.verdicts("all-to-all checked rounds " + (end + 1) + ".." + (end + slots), verdict);
    }

    /**
     * Every rank's mean round time and per-peer write times of the iteration, gathered; rank 0
     * publishes the slowest rank's bandwidth and the lowest and highest per-peer receive
     * bandwidth ({@link Metrics}).
     */
    private void spread() {
        ByteBuffer mine = ByteBuffer.allocate(8 * (1 + ranks));
        mine.putDouble(timedRounds > 0 ? (double) (lastRoundEnd - iterationStart) / timedRounds : Double.NaN);
        for (int p = 0; p < ranks; p++) {
            mine.putDouble(peerRounds[p] > 0 ? (double) peerNanos[p] / peerRounds[p] : Double.NaN);
        }
        List<byte[]> all = t.group.allgather("all-to-all round times", mine.array(), t.timeout);
        if (me != 0) {
            return;
        }
        double slowest = 0;
        double[] sum = new double[ranks];
        int[] count = new int[ranks];
        for (int s = 0; s < ranks; s++) {
            ByteBuffer b = ByteBuffer.wrap(all.get(s));
            double roundNs = b.getDouble();
            if (!Double.isNaN(roundNs)) {
                slowest = Math.max(slowest, roundNs);
            }
            for (int q = 0; q < ranks; q++) {
                double ns = b.getDouble();
                if (q != s && !Double.isNaN(ns)) {
                    sum[q] += ns;
                    count[q]++;
                }
            }
        }
        double min = Double.POSITIVE_INFINITY;
        double max = 0;
        for (int q = 0; q < ranks; q++) {
            if (count[q] > 0 && sum[q] > 0) {
                double g = Metrics.gbps(size, sum[q] / count[q] / 1e9);
                min = Math.min(min, g);
                max = Math.max(max, g);
            }
        }
        Traffic.publishIterationSpread(min, max, slowest > 0 ? Metrics.gbps(bytesPerInvocation(), slowest / 1e9) : 0);
    }

    // ---- completions (WriteEngine.Sink) -----------------------------------------------------

    @Override
    public void writeDone(int tag) {
        int ri = tag & (ring - 1);
        int peer = tag >>> ringBits;
        pendingInRound[ri]--;
        writesInFlight--;
        if (--pendingTo[peer][ri] == 0 && timedRound[ri]) {
            peerNanos[peer] += System.nanoTime() - postedAt[ri];
            peerRounds[peer]++;
        }
    }

    @Override
    public void arrived(long data) {
        int sender = Immediate.sender(data);
        if (sender >= ranks || sender == me) {
            throw new BenchmarkSetupException("rank " + me + ": a write with immediate data names sender rank " + sender
                    + " (of " + ranks + "): not a peer");
        }
        long ahead = Immediate.roundsAhead(data, served + 1);
        if (ahead >= ring) {
            throw new BenchmarkSetupException("rank " + me + ": a write of round " + Immediate.roundBits(data)
                    + " (mod 2^20) from rank " + sender + " arrived after this rank served round " + served
                    + ": more writes than rank " + sender + "'s plan of " + opsFrom[sender] + " per round");
        }
        long r = served + 1 + ahead;
        if (Immediate.kind(data) == Immediate.FINAL) {
            // Writes are unordered: a later FINAL round may arrive first and overstate END; the
            // first one (END - W + 1) has arrived by the time END matters (pastEnd).
            long end = r - 1 + window;
            finalEnd = finalEnd < 0 ? end : Math.min(finalEnd, end);
        }
        int ri = (int) (r & (ring - 1));
        int n = ++arrivals[sender][ri];
        if (n > opsFrom[sender]) {
            throw new BenchmarkSetupException("rank " + me + ": round " + r + " from rank " + sender + " brought " + n
                    + " writes with immediate data, but its plan has " + opsFrom[sender] + " for this rank");
        }
        if (n == opsFrom[sender] && ++sendersDone[ri] == ranks - 1) {
            advanceServed();
        }
    }

    private void advanceServed() {
        while (true) {
            int ri = (int) ((served + 1) & (ring - 1));
            if (sendersDone[ri] != ranks - 1) {
                return;
            }
            sendersDone[ri] = 0;
            for (int s = 0; s < ranks; s++) {
                arrivals[s][ri] = 0;
            }
            served++;
        }
    }
}

package io.efabench.harness;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.efabench.fabric.Channel;
import io.efabench.fabric.Completion;
import io.efabench.fabric.MemoryRegion;
import io.efabench.fabric.RemoteRegion;
import io.efabench.harness.WriteRounds.Layout;

/**
 * All-to-all: in every round each rank writes {@code size} bytes with immediate data to each of
 * the N-1 other ranks at once; the symmetric round protocol of docs/DESIGN.md ("All-to-all
 * rounds"). Every rank runs the same rounds; rank 0's JMH score is the result.
 *
 * <p>Buffers: {@code src} and {@code dst} hold one block of {@code size} bytes per rank. Rank s
 * writes its block p of {@code src} into block s of rank p's {@code dst}. SINGLE writes every
 * peer on channel 0, MULTI stripes each peer's block over all channels, ROUND_ROBIN writes peer
 * p on channel (p + rank) % channels (the seed's rule). Peers are written in the order rank+1,
 * rank+2, ... so that N ranks do not all start on the same target.
 *
 * <p>Immediate data (32 bits): kind (2) | sender rank (10) | round (20). A receiver counts each
 * sender's writes per round against that sender's plan (allgathered at setup), so a lost,
 * duplicated or misrouted write fails the round, and knows each round complete only when every
 * sender's writes of it arrived.
 *
 * <p>{@code window} W = rounds a rank may have in flight. Before posting round r a rank waits
 * until it has every peer's writes of round r - W, so no rank runs more than W rounds ahead of
 * any other, and a receiver never holds more than 2W unserved rounds of a sender (a ring of
 * counters, of receives where FI_RX_CQ_DATA consumes them, and of write contexts, sized for
 * that). W = 1: an invocation returns when its writes completed locally and every peer's writes
 * of the round arrived, so it is one all-to-all's latency.
 *
 * <p>End of an iteration: rank 0 takes END = its last round + W, the highest round any rank can
 * have posted, announces it on the rendezvous and marks its writes of the untimed rounds it
 * then runs up to END as FINAL. A rank needs rank 0's writes of round r - W to post round r, so
 * it learns END from the data itself before it could post past it (the rendezvous message may
 * come later than the fabric's). Every rank runs rounds up to END, so nothing is left in flight.
 * Then every rank refills its source blocks with the pattern of (itself, peer, END), clears its
 * destination, and only after a barrier are the checked writes posted: nothing sent early can
 * land in a buffer being cleared or checked.
 */
public final class AllToAllRounds implements Rounds {
    /** Most rounds in flight per rank. */
    public static final int MAX_WINDOW = 64;
    static final int MAX_RANKS = 1 << 10;
    private static final int DATA = 1;
    private static final int CHECK = 2;
    /** Rank 0's rounds after its JMH iteration ended: the first one, f, says END = f - 1 + window. */
    private static final int FINAL = 3;
    private static final int SENDER_SHIFT = 20;
    private static final long ROUND_BITS = (1L << SENDER_SHIFT) - 1;
    /** Write contexts are 0..SLOT_BASE-1; receive slots (FI_RX_CQ_DATA) start here. */
    private static final int SLOT_BASE = 512;
    private static final int SLOTS = 256;

    private final FabricTrial t;
    private final Layout layout;
    private final long size;
    private final int window;
    private final int ranks;
    private final int me;
    private final int ring;
    private final TrialBuffer src;
    private final TrialBuffer dst;
    private final MemoryRegion[] srcMr;
    private final RemoteRegion[][] dstOf;
    private final ControlSlots[] slots;
    private final Completion comp;
    private final Deadline deadline;

    // This rank's plan: op i writes src[opSrc, +opLen) to rank opPeer's dst[opDst, +opLen) on channel opChannel.
    private final int[] opPeer;
    private final int[] opChannel;
    private final long[] opSrc;
    private final long[] opDst;
    private final long[] opLen;
    /** Writes each sender's plan sends this rank per round. */
    private final int[] opsFrom;

    // Write contexts per channel, and what each one carries: the peer and the ring slot of its round (-1: checked round).
    private final int[][] freeCtx;
    private final int[] freeTop;
    private final int[][] ctxPeer;
    private final int[][] ctxSlot;
    private int txPending;

    // Sender side, per ring slot of this rank's rounds: when posted, whether timed, writes not completed (all / per peer).
    private final long[] postedAt;
    private final boolean[] timedSlot;
    private final int[] pendingInSlot;
    private final int[][] pendingTo;
    // Per peer, over this iteration's timed rounds: summed ns from a round's post to the local completion of its last write.
    private final long[] peerNanos;
    private final long[] peerRounds;

    // Receiver side.
    private final int[][] arrivals;
    private final int[] sendersDone;
    private final int[] checkArrivals;
    private long served;
    private long round;
    /** END as learned from rank 0's first FINAL write of this iteration, or -1. */
    private long finalEnd = -1;

    // This rank's timed rounds in the current iteration.
    private long iterationStart;
    private long lastRoundEnd;
    private long timedRounds;

    private int waitingFor = -1;

    /** Test hook (EFABENCH_CORRUPT_OFFSET): rank N-1 flips this byte of its checked block for one peer, or -1. */
    private final long corruptOffset = WriteRounds.testHook("EFABENCH_CORRUPT_OFFSET");

    public AllToAllRounds(FabricTrial t, Layout layout, long size, int window) {
        this.t = t;
        this.layout = layout;
        this.size = size;
        this.ranks = t.size;
        this.me = t.rank;
        this.comp = t.completion;
        this.deadline = new Deadline(t.group, t.timeout);
        if (window < 1 || window > MAX_WINDOW) {
            throw new BenchmarkSetupException("window=" + window + ": must be from 1 to " + MAX_WINDOW + " rounds");
        }
        if (ranks > MAX_RANKS) {
            throw new BenchmarkSetupException("all-to-all carries the sender in 10 bits of immediate data: at most "
                    + MAX_RANKS + " ranks, not " + ranks);
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
        this.window = window;
        this.ring = Integer.highestOneBit(2 * window + 1) * 2;
        long total;
        try {
            total = Math.multiplyExact(size, (long) ranks);
        } catch (ArithmeticException e) {
            throw new BenchmarkSetupException("size " + size + " x " + ranks + " ranks overflows");
        }
        src = t.buffer(total);
        dst = t.buffer(total);
        srcMr = src.regions();
        dstOf = t.exchange("all-to-all destination regions", dst.regions());

        List<long[]> plan = plan();
        int n = plan.size();
        opPeer = new int[n];
        opChannel = new int[n];
        opSrc = new long[n];
        opDst = new long[n];
        opLen = new long[n];
        int[][] perPeerChannel = new int[ranks][nch];
        for (int i = 0; i < n; i++) {
            long[] op = plan.get(i);
            opPeer[i] = (int) op[0];
            opChannel[i] = (int) op[1];
            opSrc[i] = op[0] * size + op[2];
            opDst[i] = (long) me * size + op[2];
            opLen[i] = op[3];
            perPeerChannel[opPeer[i]][opChannel[i]]++;
        }
        // Every rank learns what every sender's plan brings it, per channel: NICs (max message size) may differ.
        ByteBuffer mine = ByteBuffer.allocate(4 * ranks * nch);
        for (int p = 0; p < ranks; p++) {
            for (int c = 0; c < nch; c++) {
                mine.putInt(perPeerChannel[p][c]);
            }
        }
        List<byte[]> all = t.group.allgather("all-to-all op plans", mine.array(), t.timeout);
        opsFrom = new int[ranks];
        int[] incomingPerChannel = new int[nch];
        for (int s = 0; s < ranks; s++) {
            ByteBuffer b = ByteBuffer.wrap(all.get(s));
            for (int p = 0; p < ranks; p++) {
                for (int c = 0; c < nch; c++) {
                    int k = b.getInt();
                    if (p == me && s != me) {
                        opsFrom[s] += k;
                        incomingPerChannel[c] += k;
                    }
                }
            }
        }

        // Contexts: a round's writes on a channel, for every round the ring can hold in flight.
        int maxOnChannel = 0;
        int[] onChannel = new int[nch];
        for (int c : opChannel) {
            maxOnChannel = Math.max(maxOnChannel, ++onChannel[c]);
        }
        long contexts = (long) maxOnChannel * ring;
        if (contexts > SLOT_BASE) {
            throw new BenchmarkSetupException("window=" + window + " with " + maxOnChannel + " writes per round on one"
                    + " channel needs " + contexts + " write contexts; at most " + SLOT_BASE
                    + " (use a smaller window, fewer ranks or more channels)");
        }
        int perChannel = (int) Math.max(1, contexts);
        freeCtx = new int[nch][perChannel];
        freeTop = new int[nch];
        ctxPeer = new int[nch][perChannel];
        ctxSlot = new int[nch][perChannel];
        for (int c = 0; c < nch; c++) {
            for (int k = 0; k < perChannel; k++) {
                freeCtx[c][k] = perChannel - 1 - k;
            }
            freeTop[c] = perChannel;
        }
        slots = new ControlSlots[nch];
        for (int c = 0; c < nch; c++) {
            if (t.channels[c].rxCqDataConsumesRecv()) {
                if ((long) incomingPerChannel[c] * ring > SLOTS) {
                    throw new BenchmarkSetupException("window=" + window + " lets " + (long) incomingPerChannel[c] * ring
                            + " writes be unserved on channel " + c + " (" + t.channels[c].nic().provider()
                            + " consumes a receive per immediate); at most " + SLOTS);
                }
                slots[c] = new ControlSlots(t, c, SLOT_BASE, SLOTS);
            }
        }
        postedAt = new long[ring];
        timedSlot = new boolean[ring];
        pendingInSlot = new int[ring];
        pendingTo = new int[ranks][ring];
        peerNanos = new long[ranks];
        peerRounds = new long[ranks];
        arrivals = new int[ranks][ring];
        sendersDone = new int[ring];
        checkArrivals = new int[ranks];
        for (int s = 0; s < ranks; s++) {
            if (s != me) {
                src.fill((long) s * size, size, me, s, 0);
            }
        }
    }

    /** {peer, channel, offset in the block, length} per op, peers from rank+1 on (WriteRounds' layouts). */
    private List<long[]> plan() {
        List<long[]> ops = new ArrayList<>();
        for (int k = 1; k < ranks; k++) {
            WriteRounds.addPeerOps(ops, t, layout, (me + k) % ranks, size);
        }
        return ops;
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

    /** Link speed of the channels this rank writes on. */
    @Override
    public double linkGbps() {
        return t.linkGbps(Arrays.stream(opChannel).distinct().toArray());
    }

    @Override
    public int peerInFlight() {
        return waitingFor;
    }

    // ---- rounds --------------------------------------------------------------------------

    /** Rank 0's timed invocation: one round. */
    @Override
    public void leaderRound() {
        round(true, DATA);
        lastRoundEnd = System.nanoTime();
        timedRounds++;
    }

    /** Any other rank's invocation: one round, or nothing once the rounds up to END are done. */
    @Override
    public void followerRound() {
        long end = end();
        if (end >= 0 && round >= end) {
            return;
        }
        if (round(true, DATA)) {
            lastRoundEnd = System.nanoTime();
            timedRounds++;
        }
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

    /** Untimed, after the start barrier, on every rank: one whole round, then this iteration's clocks start. */
    private void warmRound() {
        finalEnd = -1;
        round(false, DATA);
        awaitServed(round);
        awaitLocal();
        Arrays.fill(peerNanos, 0);
        Arrays.fill(peerRounds, 0);
        timedRounds = 0;
        iterationStart = System.nanoTime();
        lastRoundEnd = iterationStart;
    }

    /**
     * Posts round {@code round + 1} once every peer's round - window arrived; false (nothing
     * posted) when that round lies past END.
     */
    private boolean round(boolean timed, int kind) {
        long r = round + 1;
        awaitServed(r - window);
        if (me != 0) {
            long end = end();
            if (end >= 0 && r > end) {
                return false;
            }
        }
        int slot = (int) (r & (ring - 1));
        if (pendingInSlot[slot] != 0) { // the round that used this slot, r - ring, still has writes in flight
            deadline.start();
            while (pendingInSlot[slot] != 0) {
                progress();
                deadline.check("waiting for the local completion of an earlier round's writes", 0, r - ring);
            }
        }
        postedAt[slot] = System.nanoTime();
        timedSlot[slot] = timed;
        for (int i = 0; i < opPeer.length; i++) {
            post(i, kind, r, slot);
        }
        round = r;
        if (window == 1) {
            awaitServed(r);
            awaitLocal();
        } else {
            while (progress()) {
                // reap what has completed; the next round's window check blocks if needed
            }
        }
        return true;
    }

    private void post(int i, int kind, long r, int slot) {
        int c = opChannel[i];
        int peer = opPeer[i];
        if (freeTop[c] == 0) {
            waitingFor = peer;
            deadline.start();
            while (freeTop[c] == 0) {
                progress();
                deadline.check("waiting for a local write completion (contexts full)", peer, r);
            }
        }
        int ctx = freeCtx[c][--freeTop[c]];
        ctxPeer[c][ctx] = peer;
        ctxSlot[c][ctx] = slot;
        if (slot >= 0) {
            pendingInSlot[slot]++;
            pendingTo[peer][slot]++;
        }
        long data = ((long) kind << 30) | ((long) me << SENDER_SHIFT) | (r & ROUND_BITS);
        Channel ch = t.channels[c];
        if (ch.tryWrite(srcMr[c], opSrc[i], opLen[i], t.peer[peer][c], dstOf[peer][c], opDst[i], data, true, ctx) != 0) {
            waitingFor = peer;
            deadline.start();
            while (ch.tryWrite(srcMr[c], opSrc[i], opLen[i], t.peer[peer][c], dstOf[peer][c], opDst[i], data, true,
                    ctx) != 0) {
                progress();
                deadline.check("posting a write", peer, r);
            }
        }
        txPending++;
    }

    /** Waits until every peer's writes of every round up to {@code r} arrived. */
    private void awaitServed(long r) {
        if (served >= r) {
            return;
        }
        waitingFor = firstMissing();
        deadline.start();
        try {
            while (served < r) {
                progress();
                deadline.check("waiting for every peer's writes of a round", waitingFor, served + 1);
            }
        } catch (BenchmarkSetupException e) {
            throw new BenchmarkSetupException(e.getMessage() + "; missing: " + missing());
        }
        waitingFor = -1;
    }

    private void awaitLocal() {
        if (txPending == 0) {
            return;
        }
        deadline.start();
        while (txPending > 0) {
            progress();
            deadline.check("local completion of this rank's writes", waitingFor >= 0 ? waitingFor : (me + 1) % ranks,
                    round);
        }
    }

    /** The first sender whose writes of round served + 1 are incomplete (failure messages), or -1. */
    private int firstMissing() {
        int slot = (int) ((served + 1) & (ring - 1));
        for (int k = 1; k < ranks; k++) {
            int s = (me + ranks - k) % ranks;
            if (arrivals[s][slot] < opsFrom[s]) {
                return s;
            }
        }
        return -1;
    }

    private String missing() {
        int slot = (int) ((served + 1) & (ring - 1));
        StringBuilder b = new StringBuilder();
        for (int s = 0; s < ranks; s++) {
            if (s != me && arrivals[s][slot] < opsFrom[s]) {
                b.append(b.isEmpty() ? "" : ", ").append("rank ").append(s).append(" (").append(arrivals[s][slot])
                        .append(" of ").append(opsFrom[s]).append(" writes)");
            }
        }
        return "round " + (served + 1) + " from " + b;
    }

    // ---- end of an iteration --------------------------------------------------------------

    @Override
    public void leaderEndIteration() {
        long end = round + window; // no rank can have posted past this: it needs rank 0's round end - window
        t.signalEnd(end);
        while (round < end) {
            round(false, FINAL);
        }
        finish(end);
    }

    @Override
    public void followerEndIteration() {
        long end;
        while ((end = end()) < 0 || round < end) {
            round(false, DATA);
        }
        finish(end);
    }

    /** Everything up to {@code end} drained, then the checked round and the iteration's spread. */
    private void finish(long end) {
        awaitServed(end);
        awaitLocal();
        if (round != end || served != end) {
            throw new BenchmarkSetupException("rank " + me + ": all-to-all round " + round + " (served " + served
                    + ") past END " + end);
        }
        checkedRound(end);
        spread();
    }

    private void checkedRound(long r) {
        for (int s = 0; s < ranks; s++) {
            if (s != me) {
                src.fill((long) s * size, size, me, s, r);
            }
        }
        int corruptFor = ranks == 2 ? 0 : 1;
        if (corruptOffset >= 0 && me == ranks - 1 && corruptOffset < size) {
            src.corrupt((long) corruptFor * size + corruptOffset);
        }
        dst.clear();
        Arrays.fill(checkArrivals, 0);
        t.barrier("all-to-all buffers cleared for the checked round");
        for (int i = 0; i < opPeer.length; i++) {
            post(i, CHECK, r, -1);
        }
        awaitLocal();
        deadline.start();
        for (int s = 0; s < ranks; s++) {
            while (s != me && checkArrivals[s] < opsFrom[s]) {
                waitingFor = s;
                progress();
                deadline.check("waiting for the writes of the checked round", s, r);
            }
        }
        waitingFor = -1;
        String verdict = null;
        for (int s = 0; s < ranks && verdict == null; s++) {
            if (s != me) {
                try {
                    dst.verify((long) s * size, size, s, me, r);
                } catch (Payload.CorruptionException e) {
                    verdict = e.getMessage() + " (" + t.benchmark() + " " + layout + ", block of rank " + s + ")";
                }
            }
        }
        t.verdicts("all-to-all checked round " + r, verdict);
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

    // ---- completions ----------------------------------------------------------------------

    /**
     * One fi_cq_read of up to Completion.BATCH entries per channel, each handled; true if any
     * channel had one. Allocation-free.
     */
    private boolean progress() {
        boolean any = false;
        Channel[] chs = t.channels;
        for (int c = 0; c < chs.length; c++) {
            int n = chs[c].pollBatch(comp);
            for (int i = 0; i < n; i++) {
                comp.select(i);
                handle(c);
            }
            any |= n > 0;
        }
        return any;
    }

    private void handle(int c) {
        if (comp.isRemoteWrite()) {
            arrived(comp.data());
            if (slots[c] != null && slots[c].owns(comp.context())) {
                slots[c].repost(comp.context());
            }
        } else if (comp.isRecv()) {
            slots[c].repost(comp.context()); // only FI_RX_CQ_DATA slots are posted; nothing is sent to them
        } else {
            int ctx = comp.context();
            txPending--;
            freeCtx[c][freeTop[c]++] = ctx;
            int slot = ctxSlot[c][ctx];
            if (slot >= 0) {
                pendingInSlot[slot]--;
                int peer = ctxPeer[c][ctx];
                if (--pendingTo[peer][slot] == 0 && timedSlot[slot]) {
                    peerNanos[peer] += System.nanoTime() - postedAt[slot];
                    peerRounds[peer]++;
                }
            }
        }
    }

    private void arrived(long data) {
        int kind = (int) (data >>> 30) & 0x3;
        int sender = (int) (data >>> SENDER_SHIFT) & (MAX_RANKS - 1);
        long r20 = data & ROUND_BITS;
        if (sender >= ranks || sender == me) {
            throw new BenchmarkSetupException("rank " + me + ": a write with immediate data names sender rank " + sender
                    + " (of " + ranks + "): not a peer");
        }
        if (kind == CHECK) {
            if (++checkArrivals[sender] > opsFrom[sender]) {
                throw tooMany(sender, round, checkArrivals[sender]);
            }
            return;
        }
        long ahead = (r20 - (served + 1)) & ROUND_BITS;
        if (ahead >= ring) {
            throw new BenchmarkSetupException("rank " + me + ": a write of round " + r20 + " (mod 2^20) from rank " + sender
                    + " arrived after this rank served round " + served + ": more writes than rank " + sender
                    + "'s plan of " + opsFrom[sender] + " per round");
        }
        long r = served + 1 + ahead;
        if (kind == FINAL && finalEnd < 0) {
            finalEnd = r - 1 + window;
        }
        int slot = (int) (r & (ring - 1));
        int n = ++arrivals[sender][slot];
        if (n > opsFrom[sender]) {
            throw tooMany(sender, r, n);
        }
        if (n == opsFrom[sender] && ++sendersDone[slot] == ranks - 1) {
            advanceServed();
        }
    }

    private void advanceServed() {
        while (true) {
            int slot = (int) ((served + 1) & (ring - 1));
            if (sendersDone[slot] != ranks - 1) {
                return;
            }
            sendersDone[slot] = 0;
            for (int s = 0; s < ranks; s++) {
                arrivals[s][slot] = 0;
            }
            served++;
        }
    }

    private BenchmarkSetupException tooMany(int sender, long r, int arrived) {
        return new BenchmarkSetupException("rank " + me + ": round " + r + " from rank " + sender + " brought " + arrived
                + " writes with immediate data, but its plan has " + opsFrom[sender] + " for this rank");
    }
}

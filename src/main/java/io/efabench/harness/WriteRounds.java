package io.efabench.harness;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import io.efabench.fabric.Channel;
import io.efabench.fabric.Completion;
import io.efabench.fabric.MemoryRegion;
import io.efabench.fabric.RemoteRegion;

/**
 * RDMA writes with immediate data, rank 0 to ranks 1..N-1, in the leader-driven round
 * protocol of docs/DESIGN.md.
 *
 * <p>One leader invocation is one round: SINGLE and MULTI write the whole buffer to each
 * target (MULTI splits it into one stripe per channel); ROUND_ROBIN writes the whole buffer to
 * every target at once, target k on channel k % channels. Every write op carries the round
 * number as immediate data, and a target counts every op's arrival against the leader's op plan
 * (sent to every rank at setup; EFA is unordered: one immediate on the last chunk proves
 * nothing), then acks with a small send, cumulatively, every {@link #ackEvery} rounds.
 *
 * <p>{@code window} W: up to W writes outstanding per channel, each with its own context slot.
 * W = 1 is the latency mode: a round waits for the local completion of its writes (LOCAL) or
 * for every target's ack (REMOTE) before the invocation returns, so an invocation is one round
 * trip of the data. W > 1 pipelines: LOCAL posts the round, reaps what has completed and blocks
 * only when a channel's window is full; REMOTE returns once round r - W + 1 is acked. Credits
 * keep every target bounded: the leader posts round r to a target only once it acked round
 * r - credits (LOCAL: max(16, W); REMOTE: W), so a target's CQ and posted receives hold at most
 * credits rounds of writes.
 */
public final class WriteRounds implements Rounds {
    public enum Layout { SINGLE, MULTI, ROUND_ROBIN }

    /** Rounds a target may lag behind in LOCAL mode with window 1 (and at least, with any window). */
    static final int LOCAL_CREDITS = 16;
    /** Largest window: write contexts are 0..window-1, control slots start at SLOT_BASE. */
    public static final int MAX_WINDOW = 256;
    /** Writes carrying data are cut here at most: EFA splits larger RMA at FI_EFA_WRITE_SEGMENT_SIZE and
     * delivers the immediate on every segment. */
    static final long MAX_WRITE = 1L << 30;
    private static final int DATA = 1;
    private static final int CHECK = 2;
    private static final long ROUND_BITS = 0x0FFF_FFFFL;
    private static final int SLOT_BASE = 512;
    private static final int SLOTS = 256;
    private static final int ACK_CTX = 0;

    private final FabricTrial t;
    private final Layout layout;
    private final boolean remote;
    private final long size;
    private final int window;
    private final int credits;
    private final int ackEvery;
    private final int ring;
    private final TrialBuffer src;
    private final TrialBuffer dst;
    private final MemoryRegion[] srcMr;
    private final RemoteRegion[][] dstOf;
    private final ControlSlots[] slots;
    private final Completion comp;
    private final Deadline deadline;

    // Test hooks, read once at setup (final fields: nothing on the hot path reads the environment).
    /** Leader: the byte of every checked round's payload it flips (EFABENCH_CORRUPT_OFFSET), or -1. */
    private final long corruptOffset = testHook("EFABENCH_CORRUPT_OFFSET");
    /** Leader: checked round, target k's data goes to target k % (N-1) + 1 (EFABENCH_TEST_SWAP_TARGETS=1). */
    private final boolean swapTargets = testHook("EFABENCH_TEST_SWAP_TARGETS") == 1;
    /** Leader: the checked round's last write to this target is never posted (EFABENCH_TEST_DROP_WRITE=rank), or -1. */
    private final long dropWriteTo = testHook("EFABENCH_TEST_DROP_WRITE");
    /**
     * EFABENCH_TEST_SKIP_CLEAR=1: targets skip the clear before the checked round, and the leader's checked
     * writes carry their immediate data but only the first 64 bytes of payload (a payload that did not land):
     * the rest of the buffer is whatever the earlier rounds left there.
     */
    private final boolean skipClear = testHook("EFABENCH_TEST_SKIP_CLEAR") == 1;

    // The leader's plan, adopted by every rank: op i writes [opOffset, opOffset + opLen) to rank opPeer on
    // channel opChannel. Ops of group g are opStart[g] until opStart[g + 1] (window 1 runs groups in sequence).
    private final int[] opPeer;
    private final int[] opChannel;
    private final long[] opOffset;
    private final long[] opLen;
    private final int[] opStart;
    /**
     * Op i goes out with fi_inject_writedata: host memory and at most the channel's inject size,
     * the rule fi_rma_bw follows (benchmark_shared.c: transfer_size <= inject_size, never with
     * HMEM). An injected write generates no local completion: it is complete once posted.
     */
    private final boolean[] injectOp;
    private final int[] targets;
    private final long[] acked;

    // Leader: free write contexts per channel.
    private final int[][] freeCtx;
    private final int[] freeTop;

    // Target side.
    private final int opsForMe;
    private final int[] arrivals;
    private int checkArrivals;
    private long served;
    private long lastAcked;

    private long round;
    private int txPending;
    private int injectedSincePoll;
    /** The target the leader is posting to or waiting for; -1 while writes to several are in flight. */
    private int peerInFlight = -1;

    public WriteRounds(FabricTrial t, Layout layout, boolean remote, long size, int window) {
        this(t, layout, remote, size, window, true);
    }

    /** {@code inject}: post writes that fit the inject size with fi_inject_writedata (as fi_rma_bw does). */
    public WriteRounds(FabricTrial t, Layout layout, boolean remote, long size, int window, boolean inject) {
        this.t = t;
        this.layout = layout;
        this.remote = remote;
        this.size = size;
        this.comp = t.completion;
        this.deadline = new Deadline(t.group, t.timeout);
        if (window < 1 || window > MAX_WINDOW) {
            throw new BenchmarkSetupException("window=" + window + ": must be from 1 to " + MAX_WINDOW);
        }
        this.window = window;
        this.credits = remote ? window : Math.max(LOCAL_CREDITS, window);
        this.ackEvery = remote && window == 1 ? 1 : Math.max(1, credits / 4);
        this.ring = Integer.highestOneBit(credits) * 4;
        if (layout == Layout.MULTI && size < t.channels.length) {
            throw new BenchmarkSetupException("size " + size + " B cannot be split across " + t.channels.length + " channels");
        }
        src = t.buffer(size);
        dst = t.buffer(size);
        src.fill(t.rank, (t.rank + 1) % t.size, 0);
        srcMr = src.regions();
        dstOf = t.exchange("write target regions", dst.regions());

        // The leader plans; every rank adopts its plan, so targets whose NICs differ (channel count per NIC,
        // max_msg_size) still expect exactly the ops the leader posts.
        byte[] mine = t.rank == 0 ? encode(plan()) : new byte[0];
        long[][] ops = decode(t.group.allgather("write op plan", mine, t.timeout).get(0));
        int n = ops[0].length;
        opPeer = new int[n];
        opChannel = new int[n];
        opOffset = ops[2];
        opLen = ops[3];
        for (int i = 0; i < n; i++) {
            opPeer[i] = (int) ops[0][i];
            opChannel[i] = (int) ops[1][i];
        }
        injectOp = new boolean[n];
        for (int i = 0; i < n; i++) {
            injectOp[i] = inject && t.memory() == MemoryKind.HOST && opLen[i] <= t.channels[opChannel[i]].nic().injectSize();
        }
        int groups = (int) ops[4][0];
        opStart = new int[groups + 1];
        for (int g = 0; g <= groups; g++) {
            opStart[g] = (int) ops[4][1 + g];
        }
        if (n > SLOT_BASE) {
            throw new BenchmarkSetupException("a round would need " + n + " writes; at most " + SLOT_BASE
                    + " are supported (use fewer ranks, channels or a larger chunk)");
        }
        targets = new int[t.size - 1];
        for (int k = 1; k < t.size; k++) {
            targets[k - 1] = k;
        }
        acked = new long[t.size];
        int mineCount = 0;
        int maxPerTargetChannel = 0;
        int[][] perTargetChannel = new int[t.size][t.channels.length];
        for (int i = 0; i < n; i++) {
            mineCount += opPeer[i] == t.rank ? 1 : 0;
            maxPerTargetChannel = Math.max(maxPerTargetChannel, ++perTargetChannel[opPeer[i]][opChannel[i]]);
        }
        opsForMe = t.rank == 0 ? 0 : mineCount;
        arrivals = new int[ring];

        // A target's CQ and (FI_RX_CQ_DATA) posted receives hold at most `credits` rounds of writes per channel.
        long perChannel = (long) (credits + 1) * maxPerTargetChannel;
        if (perChannel > SLOTS) {
            throw new BenchmarkSetupException("window=" + window + " lets " + perChannel + " writes per channel be"
                    + " unserved at a target; at most " + SLOTS + " (use a smaller window or fewer chunks)");
        }
        // Every channel keeps receives posted: acks land on channel 0 at the leader; providers
        // with FI_RX_CQ_DATA also consume one at the target for every write with immediate data.
        slots = new ControlSlots[t.channels.length];
        for (int c = 0; c < t.channels.length; c++) {
            if (c == 0 || t.channels[c].rxCqDataConsumesRecv()) {
                slots[c] = new ControlSlots(t, c, SLOT_BASE, SLOTS);
            }
        }
        freeCtx = new int[t.channels.length][window];
        freeTop = new int[t.channels.length];
        for (int c = 0; c < t.channels.length; c++) {
            for (int k = 0; k < window; k++) {
                freeCtx[c][k] = window - 1 - k;
            }
            freeTop[c] = window;
        }
    }

    /** An integer test hook from the environment, read once at setup: -1 when unset. */
    static long testHook(String name) {
        String v = System.getenv(name);
        if (v == null || v.isBlank()) {
            return -1;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new BenchmarkSetupException(name + "=" + v + ": must be a whole number");
        }
    }

    /** The leader's op plan: {peer, channel, offset, length} per op, and the group starts. */
    private List<long[]> plan() {
        List<long[]> ops = new ArrayList<>();
        List<Long> starts = new ArrayList<>();
        for (int k = 1; k < t.size; k++) {
            if (layout != Layout.ROUND_ROBIN || k == 1) {
                starts.add((long) ops.size());
            }
            addPeerOps(ops, t, layout, k, size);
        }
        starts.add((long) ops.size());
        long[] g = new long[starts.size() + 1];
        g[0] = starts.size() - 1;
        for (int i = 0; i < starts.size(); i++) {
            g[1 + i] = starts.get(i);
        }
        ops.add(g); // the last entry: group count, then starts
        return ops;
    }

    private static byte[] encode(List<long[]> plan) {
        long[] groups = plan.get(plan.size() - 1);
        int n = plan.size() - 1;
        ByteBuffer b = ByteBuffer.allocate(8 + 32 * n + 8 * groups.length);
        b.putInt(n).putInt(groups.length);
        for (int i = 0; i < n; i++) {
            for (long v : plan.get(i)) {
                b.putLong(v);
            }
        }
        for (long v : groups) {
            b.putLong(v);
        }
        return b.array();
    }

    /** {peers, channels, offsets, lengths, groups} from rank 0's bytes. */
    private static long[][] decode(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        int n = b.getInt();
        int g = b.getInt();
        long[][] out = {new long[n], new long[n], new long[n], new long[n], new long[g]};
        for (int i = 0; i < n; i++) {
            for (int f = 0; f < 4; f++) {
                out[f][i] = b.getLong();
            }
        }
        for (int i = 0; i < g; i++) {
            out[4][i] = b.getLong();
        }
        return out;
    }

    /**
     * The ops {peer, channel, offset in the block, length} that write one {@code size}-byte block
     * to {@code peer} under {@code layout}, as rank {@code t.rank} plans them (Write and all-to-all):
     * SINGLE on channel 0, MULTI one stripe per channel, ROUND_ROBIN on channel (peer + rank) %
     * channels; each cut at the channel's max message size and 1 GiB.
     */
    static void addPeerOps(List<long[]> ops, FabricTrial t, Layout layout, int peer, long size) {
        int nch = t.channels.length;
        switch (layout) {
            case SINGLE -> addChunks(ops, t.maxMessageSize(0), peer, 0, 0, size);
            case MULTI -> {
                long stripe = size / nch;
                for (int c = 0; c < nch; c++) {
                    long off = c * stripe;
                    addChunks(ops, t.maxMessageSize(c), peer, c, off, c == nch - 1 ? size - off : stripe);
                }
            }
            case ROUND_ROBIN -> {
                int c = (peer + t.rank) % nch;
                addChunks(ops, t.maxMessageSize(c), peer, c, 0, size);
            }
        }
    }

    /** Splits [off, off + len) into ops no longer than the NIC's max message size {@code maxMessage}, nor 1 GiB. */
    private static void addChunks(List<long[]> ops, long maxMessage, int peer, int channel, long off, long len) {
        long max = maxMessage;
        if (max <= 0 || max > MAX_WRITE) {
            max = MAX_WRITE; // SIZE_MAX read as a signed long, or not reported: the 1 GiB cut
        }
        for (long done = 0; done < len; ) {
            long n = Math.min(max, len - done);
            ops.add(new long[] {peer, channel, off + done, n});
            done += n;
        }
    }

    @Override
    public int peerInFlight() {
        return t.rank == 0 ? peerInFlight : 0;
    }

    /** Payload bytes one leader invocation delivers, over all targets. */
    @Override
    public long bytesPerInvocation() {
        return size * (t.size - 1);
    }

    /** Transfers one invocation runs in sequence: one per target, or one for all in ROUND_ROBIN. */
    @Override
    public int transfersPerInvocation() {
        return layout == Layout.ROUND_ROBIN ? 1 : t.size - 1;
    }

    /** An invocation is one latency only with window 1: with a larger window rounds overlap. */
    @Override
    public boolean invocationIsLatency() {
        return window == 1;
    }

    /** Link speed of the channels one sequential transfer uses. */
    @Override
    public double linkGbps() {
        int[] used = new int[opStart[1] - opStart[0]];
        for (int i = 0; i < used.length; i++) {
            used[i] = opChannel[opStart[0] + i];
        }
        return t.linkGbps(used);
    }

    // ---- leader -------------------------------------------------------------------------

    /** One timed round (leader). */
    @Override
    public void leaderRound() {
        long r = ++round;
        if (window == 1) {
            for (int g = 0; g + 1 < opStart.length; g++) {
                for (int i = opStart[g]; i < opStart[g + 1]; i++) {
                    awaitAck(opPeer[i], r - credits);
                    post(i, DATA, r, opPeer[i]);
                }
                awaitTx();
                if (remote) {
                    for (int i = opStart[g]; i < opStart[g + 1]; i++) {
                        awaitAck(opPeer[i], r);
                    }
                }
            }
            return;
        }
        for (int i = 0; i < opPeer.length; i++) {
            awaitAck(opPeer[i], r - credits);
            post(i, DATA, r, opPeer[i]);
        }
        reapHalfWindow();
        if (remote) {
            for (int k : targets) {
                awaitAck(k, r - window + 1);
            }
        }
    }

    /** Untimed, after the start barrier: one round that returns once every target acked it. */
    @Override
    public void leaderWarmRound() {
        long r = ++round;
        for (int i = 0; i < opPeer.length; i++) {
            awaitAck(opPeer[i], r - credits);
            post(i, DATA, r, opPeer[i]);
        }
        awaitTx();
        for (int k : targets) {
            awaitAck(k, r);
        }
    }

    private void post(int i, int kind, long r, int peer) {
        peerInFlight = layout == Layout.ROUND_ROBIN ? -1 : peer;
        int c = opChannel[i];
        long data = ((long) kind << 28) | (r & ROUND_BITS);
        long len = kind == CHECK && skipClear ? Math.min(64, opLen[i]) : opLen[i];
        if (injectOp[i]) {
            inject(i, len, data, r, peer);
            return;
        }
        if (freeTop[c] == 0) {
            deadline.start();
            while (freeTop[c] == 0) {
                progress();
                deadline.check("waiting for a local write completion (window full)", peer, r);
            }
        }
        int ctx = freeCtx[c][--freeTop[c]];
        Channel ch = t.channels[c];
        if (ch.tryWrite(srcMr[c], opOffset[i], len, t.peer[peer][c], dstOf[peer][c], opOffset[i], data, true, ctx) != 0) {
            deadline.start();
            while (ch.tryWrite(srcMr[c], opOffset[i], len, t.peer[peer][c], dstOf[peer][c], opOffset[i], data, true,
                    ctx) != 0) {
                progress();
                deadline.check("posting a write", peer, r);
            }
        }
        txPending++;
    }

    /**
     * Posts {@code len} bytes of op i with fi_inject_writedata: no context, no completion to
     * reap. The provider still needs its progress to recycle inject buffers (shm frees one when
     * the peer's response comes back), so every half window of injected writes reads the CQs once.
     */
    private void inject(int i, long len, long data, long r, int peer) {
        if (++injectedSincePoll >= Math.max(1, window / 2)) {
            injectedSincePoll = 0;
            progress();
        }
        int c = opChannel[i];
        Channel ch = t.channels[c];
        if (ch.tryInjectWrite(srcMr[c], opOffset[i], len, t.peer[peer][c], dstOf[peer][c], opOffset[i], data) != 0) {
            deadline.start();
            while (ch.tryInjectWrite(srcMr[c], opOffset[i], len, t.peer[peer][c], dstOf[peer][c], opOffset[i], data) != 0) {
                progress();
                deadline.check("posting an injected write", peer, r);
            }
        }
    }

    private void awaitTx() {
        if (txPending == 0) {
            return;
        }
        deadline.start();
        while (txPending > 0) {
            progress();
            deadline.check("local completion of a write", peerInFlight >= 0 ? peerInFlight : 1, round);
        }
    }

    private void awaitAck(int peer, long r) {
        if (acked[peer] >= r) {
            return;
        }
        peerInFlight = peer;
        deadline.start();
        while (acked[peer] < r) {
            progress();
            deadline.check("waiting for the ack of a write round", peer, r);
        }
    }

    /**
     * Leader iteration teardown: drain, announce END, collect the last acks, run the checked
     * round. Every target gets its own pattern of (rank 0, target, round), so the source is
     * refilled per target and the targets are written in turn, each with the same ops (channels,
     * offsets, chunks) as in the timed rounds: data that lands on the wrong target fails there.
     */
    @Override
    public void leaderEndIteration() {
        awaitTx();
        // END first: targets ack cumulatively every ackEvery rounds and ack the last round once they know it.
        t.signalEnd(round);
        for (int k : targets) {
            awaitAck(k, round);
        }
        t.barrier("targets cleared for the checked round");
        for (int k : targets) {
            int to = swapTargets ? k % (t.size - 1) + 1 : k;
            src.fill(0, k, round);
            if (corruptOffset >= 0) {
                src.corrupt(corruptOffset);
            }
            int last = -1;
            for (int i = 0; i < opPeer.length; i++) {
                last = opPeer[i] == k ? i : last;
            }
            for (int i = 0; i < opPeer.length; i++) {
                if (opPeer[i] == k && !(dropWriteTo == k && i == last)) {
                    post(i, CHECK, round, to);
                }
            }
            awaitTx();
        }
        t.verdicts("write checked round " + round, null);
    }

    // ---- target -------------------------------------------------------------------------

    /** One follower invocation: serve the next round, or return at once after END. */
    @Override
    public void followerRound() {
        long next = served + 1;
        int slot = (int) (next & (ring - 1));
        if (arrivals[slot] < opsForMe) {
            deadline.start();
            try {
                while (arrivals[slot] < opsForMe) {
                    long ended = t.endedRounds();
                    if (ended >= 0 && served >= ended) {
                        return;
                    }
                    progress();
                    deadline.check("waiting for the writes of a round", 0, next);
                }
            } catch (BenchmarkSetupException e) {
                throw new BenchmarkSetupException(e.getMessage() + "; " + arrivals[slot] + " of the " + opsForMe
                        + " planned writes arrived");
            }
        }
        arrivals[slot] = 0;
        served = next;
        if (next % ackEvery == 0) {
            ack(next);
        }
    }

    @Override
    public void followerWarmRound() {
        followerRound();
        if (lastAcked < served) {
            ack(served);
        }
    }

    private void ack(long r) {
        lastAcked = r;
        ControlSlots s = slots[0];
        long off = s.sendOffset(ControlSlots.ACK, t.rank, r);
        Channel ch = t.channels[0];
        if (ch.trySend(s.mr(), off, 16, t.peer[0][0], 0, false, ACK_CTX) != 0) {
            deadline.start();
            while (ch.trySend(s.mr(), off, 16, t.peer[0][0], 0, false, ACK_CTX) != 0) {
                progress();
                deadline.check("posting an ack", 0, r);
            }
        }
        txPending++;
        deadline.start();
        while (txPending > 0) {
            progress();
            deadline.check("sending the ack", 0, r);
        }
    }

    /** Follower iteration teardown: serve the rounds not served yet, ack the last, then the checked round. */
    @Override
    public void followerEndIteration() {
        // Keep serving: the leader may still be running rounds when this rank's JMH timer ends.
        long ended;
        while ((ended = t.endedRounds()) < 0 || served < ended) {
            followerRound();
        }
        if (lastAcked < served) {
            ack(served);
        }
        if (!skipClear) {
            dst.clear();
        }
        checkArrivals = 0;
        t.barrier("targets cleared for the checked round");
        deadline.start();
        try {
            while (checkArrivals < opsForMe) {
                progress();
                deadline.check("waiting for the writes of the checked round", 0, ended);
            }
        } catch (BenchmarkSetupException e) {
            throw new BenchmarkSetupException(e.getMessage() + "; " + checkArrivals + " of the " + opsForMe
                    + " planned writes arrived");
        }
        String verdict = null;
        try {
            dst.verify(0, t.rank, ended);
        } catch (Payload.CorruptionException e) {
            verdict = e.getMessage() + " (" + layout + ", " + t.benchmark() + ")";
        }
        t.verdicts("write checked round " + ended, verdict);
    }

    // ---- completions --------------------------------------------------------------------

    /**
     * Pipelined rounds: reap completions in batches, like fi_rma_bw, only once a channel has
     * half its window in flight, and then until its CQ reads empty. One fi_cq_read per post
     * (each one a pass of the provider's progress engine) cost ~0.04 us per 64-byte write on shm
     * (0.20 -> 0.166 us per invocation, docs/PERFORMANCE.md).
     */
    private void reapHalfWindow() {
        Channel[] chs = t.channels;
        for (int c = 0; c < chs.length; c++) {
            if (freeTop[c] <= window / 2) {
                while (pollBatch(c) > 0) {
                    // handled in pollBatch
                }
            }
        }
    }

    /** One fi_cq_read of up to Completion.BATCH entries on channel c, each handled; how many there were. */
    private int pollBatch(int c) {
        int n = t.channels[c].pollBatch(comp);
        for (int i = 0; i < n; i++) {
            comp.select(i);
            handle(c);
        }
        return n;
    }

    /**
     * One fi_cq_read per channel, of up to Completion.BATCH entries. Allocation-free. Every
     * caller loops on its own condition, so not draining until a CQ reads empty keeps an extra
     * fi_cq_read (a poll() and a read() on tcp) off the path between the completion awaited and
     * the next post; reading a batch in that one call lets a target of many small writes pay the
     * provider's progress pass (which every fi_cq_read runs) once per batch, not once per write.
     */
    private void progress() {
        for (int c = 0; c < t.channels.length; c++) {
            pollBatch(c);
        }
    }

    private void handle(int c) {
        if (comp.isRemoteWrite()) {
            long data = comp.data();
            int kind = (int) (data >>> 28) & 0xF;
            if (kind == CHECK) {
                if (++checkArrivals > opsForMe) {
                    throw tooMany(round(data), checkArrivals);
                }
            } else {
                // The leader posts round r only once this rank acked r - credits: rounds in flight are
                // served + 1 .. served + credits, and the ring holds them.
                long ahead = (round(data) - (served + 1)) & ROUND_BITS;
                if (ahead >= ring) {
                    throw new BenchmarkSetupException("rank " + t.rank + ": a write with immediate data for round "
                            + round(data) + " from rank 0 arrived after rank " + t.rank + " served round " + served
                            + ": more writes than the leader's plan of " + opsForMe + " per round");
                }
                long r = served + 1 + ahead;
                int slot = (int) (r & (ring - 1));
                if (++arrivals[slot] > opsForMe) {
                    throw tooMany(r, arrivals[slot]);
                }
            }
            if (slots[c] != null && t.channels[c].rxCqDataConsumesRecv() && slots[c].owns(comp.context())) {
                slots[c].repost(comp.context());
            }
        } else if (comp.isRecv()) {
            int ctx = comp.context();
            ControlSlots s = slots[c];
            if (s.kind(ctx) == ControlSlots.ACK) {
                int from = s.senderRank(ctx);
                long r = s.round(ctx);
                if (r > acked[from]) {
                    acked[from] = r;
                }
            }
            s.repost(ctx);
        } else {
            txPending--;
            if (t.rank == 0) {
                freeCtx[c][freeTop[c]++] = comp.context();
            }
        }
    }

    private static long round(long data) {
        return data & ROUND_BITS;
    }

    private BenchmarkSetupException tooMany(long r, int arrived) {
        return new BenchmarkSetupException("rank " + t.rank + ": round " + r + " from rank 0 brought " + arrived
                + " writes with immediate data, but the leader's plan has " + opsForMe + " for this rank");
    }
}

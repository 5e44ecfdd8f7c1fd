package io.efabench.harness;

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
 * target in turn (MULTI splits it into one stripe per channel, all in flight together);
 * ROUND_ROBIN writes the whole buffer to every target at once, target k on channel
 * (k + rank) % channels. Every write op carries the round number as immediate data, and a
 * target counts every op's arrival (EFA is unordered: one immediate on the last chunk proves
 * nothing), then acks the round with a small send.
 *
 * <p>Completion: REMOTE ends a round when every target has acked it (the target saw every
 * immediate); LOCAL ends it at the local completion of every write, with at most
 * {@link #WINDOW} rounds not yet acked per target (credits keep the target's CQ bounded).
 */
public final class WriteRounds implements Rounds {
    public enum Layout { SINGLE, MULTI, ROUND_ROBIN }

    /** Rounds a target may lag behind in LOCAL mode. */
    static final int WINDOW = 16;
    private static final int RING = 64;
    private static final int DATA = 1;
    private static final int CHECK = 2;
    private static final long ROUND_BITS = 0x0FFF_FFFFL;
    private static final int SLOT_BASE = 512;
    private static final int SLOTS = 256;

    private final FabricTrial t;
    private final Layout layout;
    private final boolean remote;
    private final long size;
    private final TrialBuffer src;
    private final TrialBuffer dst;
    private final MemoryRegion[] srcMr;
    private final RemoteRegion[][] dstOf;
    private final ControlSlots[] slots;
    private final Completion comp;
    private final Deadline deadline;
    private final String corruptOffset = System.getenv("EFABENCH_CORRUPT_OFFSET");

    // Leader's plan: op i writes [opOffset, opOffset + opLen) to rank opPeer on channel opChannel.
    // Ops of group g are opStart[g] until opStart[g + 1]; the groups run in sequence.
    private final int[] opPeer;
    private final int[] opChannel;
    private final long[] opOffset;
    private final long[] opLen;
    private final int[] opStart;
    private final long[] acked;

    // Target side.
    private final int opsForMe;
    private final int[] arrivals = new int[RING];
    private int checkArrivals;
    private long served;

    private long round;
    private int txPending;
    /** The target the leader is posting to or waiting for; -1 while writes to several are in flight. */
    private int peerInFlight = -1;

    public WriteRounds(FabricTrial t, Layout layout, boolean remote, long size) {
        this.t = t;
        this.layout = layout;
        this.remote = remote;
        this.size = size;
        this.comp = t.completion;
        this.deadline = new Deadline(t.group, t.timeout);
        if (layout == Layout.MULTI && size < t.channels.length) {
            throw new BenchmarkSetupException("size " + size + " B cannot be split across " + t.channels.length + " channels");
        }
        src = t.buffer(size);
        dst = t.buffer(size);
        src.fill(t.rank, (t.rank + 1) % t.size, 0);
        srcMr = src.regions();
        dstOf = t.exchange("write target regions", dst.regions());

        // Every channel keeps receives posted: acks land on channel 0 at the leader; providers
        // with FI_RX_CQ_DATA also consume one at the target for every write with immediate data.
        slots = new ControlSlots[t.channels.length];
        for (int c = 0; c < t.channels.length; c++) {
            if (c == 0 || t.channels[c].rxCqDataConsumesRecv()) {
                slots[c] = new ControlSlots(t, c, SLOT_BASE, SLOTS);
            }
        }

        List<long[]> ops = new ArrayList<>();
        List<Integer> starts = new ArrayList<>();
        int nch = t.channels.length;
        for (int k = 1; k < t.size; k++) {
            if (layout != Layout.ROUND_ROBIN || k == 1) {
                starts.add(ops.size());
            }
            switch (layout) {
                case SINGLE -> addChunks(ops, k, 0, 0, size);
                case MULTI -> {
                    long stripe = size / nch;
                    for (int c = 0; c < nch; c++) {
                        long off = c * stripe;
                        addChunks(ops, k, c, off, c == nch - 1 ? size - off : stripe);
                    }
                }
                case ROUND_ROBIN -> addChunks(ops, k, (k + t.rank) % nch, 0, size);
            }
        }
        starts.add(ops.size());
        opPeer = new int[ops.size()];
        opChannel = new int[ops.size()];
        opOffset = new long[ops.size()];
        opLen = new long[ops.size()];
        for (int i = 0; i < ops.size(); i++) {
            long[] o = ops.get(i);
            opPeer[i] = (int) o[0];
            opChannel[i] = (int) o[1];
            opOffset[i] = o[2];
            opLen[i] = o[3];
        }
        opStart = starts.stream().mapToInt(Integer::intValue).toArray();
        if (ops.size() > SLOT_BASE) {
            throw new BenchmarkSetupException("a round would need " + ops.size() + " writes in flight; at most "
                    + SLOT_BASE + " are supported (use fewer ranks, channels or a larger chunk)");
        }
        acked = new long[t.size];
        int mine = 0;
        for (int p : opPeer) {
            mine += p == t.rank ? 1 : 0;
        }
        // The leader's plan covers every target; a target computes its share the same way.
        opsForMe = t.rank == 0 ? 0 : mine;
    }

    /** Splits [off, off + len) into ops no longer than the NIC's max message size. */
    private void addChunks(List<long[]> ops, int peer, int channel, long off, long len) {
        long max = t.maxMessageSize(channel);
        if (max <= 0) {
            max = Long.MAX_VALUE; // SIZE_MAX read as a signed long, or not reported: no limit
        }
        for (long done = 0; done < len; ) {
            long n = Math.min(max, len - done); // no off + max: max may be Long.MAX_VALUE
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
        for (int g = 0; g + 1 < opStart.length; g++) {
            for (int i = opStart[g]; i < opStart[g + 1]; i++) {
                if (!remote) {
                    awaitAck(opPeer[i], r - WINDOW);
                }
                post(i, DATA, r);
            }
            awaitTx();
            if (remote) {
                for (int i = opStart[g]; i < opStart[g + 1]; i++) {
                    awaitAck(opPeer[i], r);
                }
            }
        }
    }

    private void post(int i, int kind, long r) {
        peerInFlight = layout == Layout.ROUND_ROBIN ? -1 : opPeer[i];
        Channel ch = t.channels[opChannel[i]];
        long data = ((long) kind << 28) | (r & ROUND_BITS);
        deadline.start();
        while (ch.tryWrite(srcMr[opChannel[i]], opOffset[i], opLen[i], t.peer[opPeer[i]][opChannel[i]],
                dstOf[opPeer[i]][opChannel[i]], opOffset[i], data, true, i) != 0) {
            progress();
            deadline.check("posting a write", opPeer[i]);
        }
        txPending++;
    }

    private void awaitTx() {
        deadline.start();
        while (txPending > 0) {
            progress();
            deadline.check("local completion of a write", 1);
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
            deadline.check("waiting for the ack of a write round", peer);
        }
    }

    /**
     * Leader iteration teardown: drain, announce END, run the checked round. Every target gets
     * its own pattern of (rank 0, target, round), so the source is refilled per target and the
     * targets are written in turn, each with the same ops (channels, offsets, chunks) as in the
     * timed rounds: data that lands on the wrong target fails there.
     */
    @Override
    public void leaderEndIteration() {
        for (int k = 1; k < t.size; k++) {
            awaitAck(k, round);
        }
        t.signalEnd(round);
        t.barrier("targets cleared for the checked round");
        for (int k = 1; k < t.size; k++) {
            src.fill(0, k, round);
            if (corruptOffset != null) {
                src.corrupt(Long.parseLong(corruptOffset.trim()));
            }
            for (int i = 0; i < opPeer.length; i++) {
                if (opPeer[i] == k) {
                    post(i, CHECK, round);
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
        int slot = (int) (next % RING);
        deadline.start();
        while (arrivals[slot] < opsForMe) {
            long ended = t.endedRounds();
            if (ended >= 0 && served >= ended) {
                return;
            }
            progress();
            deadline.check("waiting for a write round (immediate data)", 0);
        }
        arrivals[slot] = 0;
        served = next;
        ack(next);
    }

    private void ack(long r) {
        ControlSlots s = slots[0];
        long off = s.sendOffset(ControlSlots.ACK, t.rank, r);
        Channel ch = t.channels[0];
        deadline.start();
        while (ch.trySend(s.mr(), off, 16, t.peer[0][0], 0, false, 0) != 0) {
            progress();
            deadline.check("posting an ack", 0);
        }
        txPending++;
        awaitTx();
    }

    /** Follower iteration teardown: serve the rounds not served yet, then the checked round. */
    @Override
    public void followerEndIteration() {
        // Keep serving: the leader may still be running rounds when this rank's JMH timer ends.
        long ended;
        while ((ended = t.endedRounds()) < 0 || served < ended) {
            followerRound();
        }
        dst.clear();
        checkArrivals = 0;
        t.barrier("targets cleared for the checked round");
        deadline.start();
        while (checkArrivals < opsForMe) {
            progress();
            deadline.check("waiting for the checked round", 0);
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
     * Reads at most one completion from each channel. Allocation-free. Every caller loops on its
     * own condition, so not draining until a CQ reads empty keeps an extra fi_cq_read (a poll()
     * and a read() on tcp) off the path between the completion awaited and the next post.
     */
    private void progress() {
        Channel[] chs = t.channels;
        for (int c = 0; c < chs.length; c++) {
            if (chs[c].poll(comp) == 1) {
                handle(c);
            }
        }
    }

    private void handle(int c) {
        if (comp.isRemoteWrite()) {
            long data = comp.data();
            int kind = (int) (data >>> 28) & 0xF;
            if (kind == CHECK) {
                checkArrivals++;
            } else {
                // Rounds are at most WINDOW + 1 apart, so the low bits pick the slot.
                arrivals[(int) ((data & ROUND_BITS) % RING)]++;
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
        }
    }
}

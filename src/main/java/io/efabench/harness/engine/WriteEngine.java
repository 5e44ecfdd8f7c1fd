package io.efabench.harness.engine;

import io.efabench.fabric.ChannelOps;
import io.efabench.fabric.Completion;
import io.efabench.fabric.Channel.InjectTarget;
import io.efabench.fabric.MemoryRegion;
import io.efabench.fabric.RemoteRegion;

import org.openjdk.jmh.annotations.CompilerControl;
import io.efabench.harness.BenchmarkSetupException;

/**
 * What every RMA workload (writes, and Read's reads) needs of the fabric, written once: op contexts per channel (a free
 * list, and a workload tag per context), posting with retry and progress, the one CQ loop that
 * hands every completion to the workload's {@link Sink}, the control slots (acks, and the
 * receives that FI_RX_CQ_DATA consumes) and the ack itself. It owns the writes in flight per
 * channel; which rounds are in flight is the scheduler's ({@link RoundPipeline}). Allocation-free
 * after construction.
 */
public final class WriteEngine implements StallWitness {
    /** Write contexts are 0..{@link #MAX_CONTEXTS}-1, the ack send uses {@link #ACK_CTX}, control slots start at {@link #SLOT_BASE}. */
    static final int SLOT_BASE = 512;
    static final int ACK_CTX = SLOT_BASE - 1;
    public static final int MAX_CONTEXTS = ACK_CTX;
    /** Receive slots per channel. */
    public static final int SLOTS = 256;

    /** The workload's side of the CQ loop; every call comes from {@link #progress}. */
    public interface Sink {
        /** A write or read this rank posted completed locally; {@code tag} is what it was posted with. */
        void rmaDone(int tag);

        /** A write with immediate data {@code data} landed in this rank's memory. */
        void arrived(long data);

        /** Rank {@code from} acked every round up to {@code round}. */
        default void acked(int from, long round) {
            throw new BenchmarkSetupException("an ack from rank " + from + " where this workload sends none");
        }
    }

    private final EngineSite t;
    private final ChannelOps[] channels;
    private final Sink sink;
    private final Completion comp;
    private final Deadline deadline;
    private final ControlSlots[] slots;
    private final int[][] freeCtx;
    private final int[] freeTop;
    private final int[][] tagOf;
    /** The peer each context's operation went to, for a failure line. */
    private final int[][] peerOf;
    /** Writes with immediate data that landed here per channel and sender, for a failure line. */
    private final long[][] arrivedOn;
    /** What {@link #expectArrivals} told: the counter of served rounds and each sender's writes per round per channel. */
    private ArrivalCounter served;
    private int[][] plannedOn;
    private final int injectPollEvery;
    private int injectedSincePoll;
    private int sendsPending;

    /**
     * @param contexts          writes the workload may have in flight per channel; above {@link #MAX_CONTEXTS} the
     *                          engine paces: it holds that many in flight and posts the rest as completions free
     *                          contexts (said once, on rank 0, and in provenance)
     * @param acks              whether acks travel (receive slots on channel 0)
     * @param unservedPerChannel most writes with immediate data a channel may hold unserved at this rank
     *                          (receives consumed under FI_RX_CQ_DATA); at most {@link #SLOTS}
     * @param injectPollEvery   injected writes between two reads of the CQs (shm recycles its inject buffers then)
     */
    public WriteEngine(EngineSite t, int[] contexts, boolean acks, long[] unservedPerChannel, int injectPollEvery,
            Sink sink) {
        this.t = t;
        this.channels = new ChannelOps[t.channelCount()];
        for (int c = 0; c < channels.length; c++) {
            channels[c] = t.channel(c);
        }
        this.sink = sink;
        this.comp = t.completion();
        this.deadline = t.deadline();
        this.injectPollEvery = Math.max(1, injectPollEvery);
        int nch = channels.length;
        freeCtx = new int[nch][];
        tagOf = new int[nch][];
        peerOf = new int[nch][];
        arrivedOn = new long[nch][t.size()];
        freeTop = new int[nch];
        slots = new ControlSlots[nch];
        int wanted = 0;
        for (int c = 0; c < nch; c++) {
            wanted = Math.max(wanted, contexts[c]);
            int n = Math.min(contexts[c], MAX_CONTEXTS);
            freeCtx[c] = new int[n];
            tagOf[c] = new int[n];
            peerOf[c] = new int[n];
            for (int k = 0; k < n; k++) {
                freeCtx[c][k] = n - 1 - k;
            }
            freeTop[c] = n;
            boolean consumes = channels[c].rxCqDataConsumesRecv();
            if (consumes && unservedPerChannel[c] > SLOTS) {
                throw new BenchmarkSetupException(unservedPerChannel[c] + " writes could be unserved on channel " + c + " ("
                        + channels[c].describe() + " consumes a receive per immediate); at most " + SLOTS
                        + " (use a smaller window or fewer chunks)");
            }
            if ((acks && c == 0) || consumes) {
                slots[c] = ControlSlots.open(t, c, SLOT_BASE, SLOTS);
            }
        }
        if (wanted > MAX_CONTEXTS) {
            t.notePaced(wanted, MAX_CONTEXTS);
        }
        t.watch(this);
    }

    /**
     * For failure lines: {@code counter} serves the rounds, and sender s's plan sends this rank
     * {@code perRound[s][c]} writes per round on channel c; a failed wait then names the channels
     * whose planned writes have not all arrived.
     */
    public void expectArrivals(ArrivalCounter counter, int[][] perRound) {
        served = counter;
        plannedOn = perRound;
    }

    /**
     * Posts a write of {@code len} bytes with immediate {@code imm}; waits (with progress) for a
     * free context and while the provider says -FI_EAGAIN. {@code peer} and {@code round} name the
     * wait in a failure.
     */
    public void write(int c, MemoryRegion src, long srcOff, long len, int peer, RemoteRegion dst, long dstOff, long imm,
            int tag, long round) {
        int ctx = takeContext(c, tag, "waiting for a local write completion (contexts full)", peer, round);
        ChannelOps ch = channels[c];
        long dest = t.peer(peer, c);
        if (ch.tryWrite(src, srcOff, len, dest, dst, dstOff, imm, true, ctx) != 0) {
            deadline.await(() -> ch.tryWrite(src, srcOff, len, dest, dst, dstOff, imm, true, ctx) == 0, this::progress,
                    "posting a write", peer, round);
        }
    }

    /**
     * Posts an RMA read of {@code len} bytes at {@code srcOff} of {@code peer}'s region {@code src}
     * into {@code dstOff} of {@code dst}; waits as {@link #write} does. Its local completion (the
     * bytes have arrived) reaches the sink as {@link Sink#rmaDone} with {@code tag}.
     */
    public void read(int c, MemoryRegion dst, long dstOff, long len, int peer, RemoteRegion src, long srcOff, int tag,
            long round) {
        int ctx = takeContext(c, tag, "waiting for a local read completion (contexts full)", peer, round);
        ChannelOps ch = channels[c];
        long dest = t.peer(peer, c);
        if (ch.tryRead(dst, dstOff, len, dest, src, srcOff, ctx) != 0) {
            deadline.await(() -> ch.tryRead(dst, dstOff, len, dest, src, srcOff, ctx) == 0, this::progress,
                    "posting a read", peer, round);
        }
    }

    /** A free context of channel {@code c} for an operation tagged {@code tag}, waiting (with progress) for one. */
    private int takeContext(int c, int tag, String what, int peer, long round) {
        if (freeTop[c] == 0) {
            deadline.await(() -> freeTop[c] > 0, this::progress, what, peer, round);
        }
        int ctx = freeCtx[c][--freeTop[c]];
        tagOf[c][ctx] = tag;
        peerOf[c][ctx] = peer;
        return ctx;
    }

    /**
     * Posts a write if a context is free and the provider takes it; false (nothing posted) when
     * not: for a caller that must not block, such as the proxy thread, which goes on reading
     * its ring and the CQs instead.
     */
    public boolean offer(int c, MemoryRegion src, long srcOff, long len, int peer, RemoteRegion dst, long dstOff, long imm,
            int tag) {
        if (freeTop[c] == 0) {
            return false;
        }
        int ctx = freeCtx[c][freeTop[c] - 1];
        if (channels[c].tryWrite(src, srcOff, len, t.peer(peer, c), dst, dstOff, imm, true, ctx) != 0) {
            return false; // -FI_EAGAIN: the provider's queue is full; completions first
        }
        freeTop[c]--;
        tagOf[c][ctx] = tag;
        peerOf[c][ctx] = peer;
        return true;
    }

    /**
     * Posts a write with fi_inject_writedata to {@code to} ({@code peer}'s region): no context, no
     * local completion, complete once posted. The provider still needs progress to recycle its
     * inject buffers, so the CQs are read before an injected write once {@code injectPollEvery}
     * went out since the last read (the caller's own waits read them too: at window 1 the wait for
     * the ack does it every round). Forced inline into its callers (WriteLeader's per-write path):
     * its C2 code is near InlineSmallCode, over which C2 stops inlining a callee compiled before its caller.
     */
    @CompilerControl(CompilerControl.Mode.INLINE)
    public void inject(InjectTarget to, long srcOff, long len, long dstOff, long imm, int peer, long round) {
        if (injectedSincePoll >= injectPollEvery) {
            progress();
        }
        injectedSincePoll++;
        if (to.tryInject(srcOff, len, dstOff, imm) != 0) {
            deadline.await(() -> to.tryInject(srcOff, len, dstOff, imm) == 0, this::progress, "posting an injected write",
                    peer, round);
        }
    }

    /**
     * Posts rank 0 the ack of every round up to {@code round} without waiting for its local
     * completion, which a later CQ read reaps; for a sink that acks from inside completion
     * handling, so the ack leaves as soon as the completion that earned it is counted. False,
     * nothing posted, while the previous ack is still sending (the send buffer holds one
     * message) or the provider refuses it for now: the caller acks later through {@link #ack}.
     */
    public boolean tryAck(long round) {
        if (sendsPending > 0) {
            return false;
        }
        ControlSlots s = slots[0];
        long off = s.sendOffset(ControlSlots.ACK, t.rank(), round);
        if (channels[0].trySend(s.mr(), off, 16, t.peer(0, 0), 0, false, ACK_CTX) != 0) {
            return false;
        }
        sendsPending++;
        return true;
    }

    /**
     * Sends rank 0 the ack of every round up to {@code round} on channel 0 and waits for its local
     * completion (and first for a {@link #tryAck}'s, whose buffer it reuses).
     */
    public void ack(long round) {
        awaitSends(round);
        if (!tryAck(round)) {
            deadline.await(() -> tryAck(round), this::progress, "posting an ack", 0, round);
        }
        awaitSends(round);
    }

    /** Waits (with progress) for the local completion of every ack posted; {@code round} names the wait in a failure. */
    public void awaitSends(long round) {
        if (sendsPending > 0) {
            deadline.await(() -> sendsPending == 0, this::progress, "sending the ack", 0, round);
        }
    }

    /**
     * One fi_cq_read of up to Completion.BATCH entries per channel, each handed to the sink;
     * true if any channel had one. Callers loop on their own condition: not draining a CQ until
     * it reads empty keeps an extra fi_cq_read (on tcp a poll() and a read()) off the path
     * between the completion awaited and the next post.
     */
    public boolean progress() {
        injectedSincePoll = 0;
        boolean any = false;
        for (int c = 0; c < channels.length; c++) {
            if (slots[c] != null) {
                slots[c].repostDeferred(); // the acks the last read reaped: after the caller's posts, not before
            }
            int n = channels[c].pollBatch(comp);
            for (int i = 0; i < n; i++) {
                comp.select(i);
                handle(c);
            }
            if (slots[c] != null) {
                slots[c].retryPending(); // a repost the provider refused, now that it progressed
            }
            any |= n > 0;
        }
        return any;
    }

    /** For failure lines only (a sender out of range is the sink's to refuse). */
    private void countArrival(int c, long data) {
        int sender = Immediate.sender(data);
        if (sender < arrivedOn[c].length) {
            arrivedOn[c][sender]++;
        }
    }

    private void handle(int c) {
        if (comp.isRemoteWrite()) {
            long data = comp.data();
            countArrival(c, data);
            sink.arrived(data);
            ControlSlots s = slots[c];
            if (s != null && channels[c].rxCqDataConsumesRecv() && s.owns(comp.context())) {
                s.repost(comp.context());
            }
        } else if (comp.isRecv()) {
            int ctx = comp.context();
            ControlSlots s = slots[c];
            if (s.kind(ctx) == ControlSlots.ACK) {
                sink.acked(s.senderRank(ctx), s.round(ctx));
            }
            s.repostLater(ctx);
        } else {
            int ctx = comp.context();
            if (ctx == ACK_CTX) {
                sendsPending--;
                return;
            }
            freeCtx[c][freeTop[c]++] = ctx;
            sink.rmaDone(tagOf[c][ctx]);
        }
    }

    /**
     * Per channel: this rank's operations to {@code peer} (-1: to any) posted and not completed,
     * and the writes {@code peer}'s plan sent on it through the round being served that have not
     * arrived. Channels with neither are left out.
     */
    @Override
    public String stalled(int peer, ChannelNames paths) {
        StringBuilder b = new StringBuilder();
        for (int c = 0; c < channels.length; c++) {
            int n = freeCtx[c].length;
            boolean[] free = new boolean[n];
            for (int k = 0; k < freeTop[c]; k++) {
                free[freeCtx[c][k]] = true;
            }
            int[] posted = new int[t.size()];
            for (int ctx = 0; ctx < n; ctx++) {
                if (!free[ctx]) {
                    posted[peerOf[c][ctx]]++;
                }
            }
            for (int p = 0; p < t.size(); p++) {
                if (posted[p] > 0 && (peer < 0 || p == peer)) {
                    b.append("; ").append(paths.channel(c, p)).append(": ").append(posted[p])
                            .append(posted[p] == 1 ? " operation" : " operations").append(" to rank ").append(p)
                            .append(" posted and not completed");
                }
            }
            if (served != null && plannedOn != null) {
                long through = served.served() + 1;
                for (int p = 0; p < t.size(); p++) {
                    long missing = plannedOn[p][c] * through - arrivedOn[c][p];
                    if (missing > 0 && (peer < 0 || p == peer)) {
                        b.append("; ").append(paths.channel(c, p)).append(": ").append(missing).append(" of rank ").append(p)
                                .append("'s writes through round ").append(through).append(" not arrived");
                    }
                }
            }
        }
        return b.toString();
    }
}

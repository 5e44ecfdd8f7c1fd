package io.efabench.harness.write;

import io.efabench.fabric.Channel.InjectTarget;
import io.efabench.fabric.MemoryRegion;
import io.efabench.fabric.RemoteRegion;

import org.openjdk.jmh.annotations.CompilerControl;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.Layout;
import io.efabench.harness.MemoryKind;
import io.efabench.harness.TestHooks;
import io.efabench.harness.engine.Deadline;
import io.efabench.harness.engine.Immediate;
import io.efabench.harness.engine.LocalCompletions;
import io.efabench.harness.engine.OpPlan;
import io.efabench.harness.engine.RoundPipeline;
import io.efabench.harness.engine.WriteEngine;
import io.efabench.harness.memory.TrialBuffer;
import io.efabench.harness.trial.RoundsSite;
import io.efabench.harness.trial.Side;

/** Rank 0 of Write ({@code WriteRounds}): posts the rounds, reaps, takes the acks, runs the checked pass. */
final class WriteLeader implements RoundPipeline.Port, Side, WriteEngine.Sink {
    private final WriteShape w;
    private final RoundsSite t;
    private final OpPlan plan;
    /** Read on every write: the shape's, kept here one load away. */
    private final long size;
    private final int window;
    /** Ranks of the group (read on every round's ack check). */
    private final int ranks;
    private final boolean roundRobin;
    private final TrialBuffer src;
    private final MemoryRegion[] srcMr;
    private final RemoteRegion[][] dstOf;
    /** Op i goes out with fi_inject_writedata (host memory, at most the inject size: fi_rma_bw's rule). */
    private final boolean[] injectOp;
    /** Where injected writes to target k on channel c go, resolved once (null without injected ops). */
    private final InjectTarget[][] injectTo;
    private final int[] lastOpTo;
    /** Whether any op completes locally (not injected): only then do rounds keep local counts. */
    private final boolean localOps;
    private final WriteEngine engine;
    private final RoundPipeline pipeline;
    private final Deadline deadline;
    private final TestHooks.PipelineFault fault = TestHooks.PipelineFault.fromEnvironment();
    private final LocalCompletions local;
    private final long[] acked;
    private boolean checking;
    private int kind = Immediate.DATA;
    private int peerInFlight = -1;

    WriteLeader(WriteShape w, TrialBuffer src, RemoteRegion[][] dstOf, boolean inject) {
        this.w = w;
        this.t = w.base.t;
        this.plan = w.base.plan;
        this.size = w.base.size;
        this.window = w.base.window;
        this.ranks = t.size();
        this.roundRobin = w.base.layout == Layout.ROUND_ROBIN;
        this.src = src;
        this.srcMr = src.regions();
        this.dstOf = dstOf;
        this.deadline = t.deadline();
        int n = plan.ops();
        injectOp = new boolean[n];
        lastOpTo = new int[t.size()];
        boolean injects = false;
        boolean posts = false;
        for (int i = 0; i < n; i++) {
            int c = plan.channel[i];
            injectOp[i] = inject && t.memory() == MemoryKind.HOST && plan.len[i] <= t.injectRmaSize(c);
            injects |= injectOp[i];
            posts |= !injectOp[i];
            lastOpTo[plan.peer[i]] = i;
        }
        localOps = posts;
        injectTo = injects ? new InjectTarget[t.size()][] : null;
        for (int k = 1; injects && k < t.size(); k++) {
            injectTo[k] = new InjectTarget[t.channelCount()];
            for (int c = 0; c < t.channelCount(); c++) {
                injectTo[k][c] = t.injectTarget(c, srcMr[c], k, dstOf[k][c]);
            }
        }
        acked = new long[t.size()];
        local = new LocalCompletions(t.size(), w.base.window);
        int[] contexts = plan.perChannel(t.channelCount());
        for (int c = 0; c < contexts.length; c++) {
            contexts[c] *= w.base.window;
        }
        engine = new WriteEngine(t, contexts, true, w.unservedPerChannel(), Math.max(1, w.base.window / 2), this);
        pipeline = new RoundPipeline(this, w.base.window, w.base.slots, deadline);
        for (int s = 0; s < w.base.slots; s++) {
            for (int k = 1; k < ranks; k++) {
                src.fill(block(s, k), w.base.size, 0, k, 0);
            }
        }
    }

    /** Offset of the source block for {@code slot} and {@code target}. */
    private long block(int slot, int target) {
        return ((long) slot * w.base.targets + (target - 1)) * w.base.size;
    }

    @Override
    public int peerInFlight() {
        return peerInFlight;
    }

    @Override
    public void round() {
        pipeline.timed();
    }

    /**
     * Untimed, after the start barrier: one round every target acked; with local completion then
     * one untimed window. A local completion can come before the bytes left the host (tcp: the
     * kernel's socket buffer took them), so a timed window finds up to a buffer of the window
     * before it still on its way, and the iteration's first must too: after the drained round
     * alone it completed ahead of the link, and the figure grew as iterations got shorter
     * (docs/perf/journal/cluster-in-a-box.md).
     */
    @Override
    public void warmRound() {
        long r = pipeline.warm();
        for (int k = 1; k < ranks; k++) {
            awaitAck(k, r);
        }
        if (!w.remote) {
            pipeline.timed();
        }
    }

    @Override
    public void post(long r, boolean closesWindow) {
        post(r, 1, closesWindow);
    }

    /**
     * Rounds {@code first} .. {@code first + rounds - 1}, timed and checked alike: at window 1
     * each round's groups in turn (targets one after another), else every op of each round.
     */
    @Override
    public void post(long first, int rounds, boolean closesLast) {
        long last = first + rounds - 1;
        for (long r = first; r <= last; r++) {
            // REMOTE: targets ack cumulatively every ackEvery rounds, and the round that closes a window at once.
            kind = w.remote && closesLast && r == last ? Immediate.ACK_ME : Immediate.DATA;
            if (localOps) {
                local.begin(r);
            }
            if (window == 1) {
                postInGroups(r);
            } else {
                for (int i = 0; i < plan.ops(); i++) {
                    postOp(i, r);
                }
            }
        }
    }

    private void postInGroups(long r) {
        for (int g = 0; g < plan.groups(); g++) {
            if (g > 0) {
                awaitGroup(g - 1, r);
            }
            for (int i = plan.groupStart[g]; i < plan.groupStart[g + 1]; i++) {
                postOp(i, r);
            }
        }
    }

    /** Window 1, targets in turn: group g of round r completed (locally, or acked by its targets). */
    private void awaitGroup(int g, long r) {
        if (!w.remote) {
            pipeline.await(r);
            return;
        }
        for (int i = plan.groupStart[g]; i < plan.groupStart[g + 1]; i++) {
            awaitAck(plan.peer[i], r);
        }
    }

    /**
     * Op {@code i} of round {@code r}. The checked pass's test hooks alter the op in
     * {@link #postChecked}, which posts through {@link #send} as a timed op does; kept apart so that
     * this method stays small enough for the JIT to inline into the round loop.
     *
     * <p>Forced inline (a JMH compiler hint for every fork): C2 refuses a callee whose own C2 code
     * exceeds InlineSmallCode, so the round loop's speed hung on compile order (docs/perf/journal/
     * write-64B-gap.md, "64 B: a JVM's speed hung on C2's compile order").
     */
    @CompilerControl(CompilerControl.Mode.INLINE)
    private void postOp(int i, long r) {
        int peer = plan.peer[i];
        awaitAck(peer, r - w.credits);
        peerInFlight = roundRobin ? -1 : peer;
        int slot = pipeline.slot(r);
        long srcOff = block(slot, peer) + plan.offset[i];
        long dstOff = (long) slot * size + plan.offset[i];
        long imm = Immediate.encode(kind, 0, r);
        if (checking) {
            postChecked(i, r, peer, slot, srcOff, dstOff, imm);
        } else {
            send(i, peer, peer, srcOff, plan.len[i], dstOff, imm, r);
        }
    }

    /** A checked op with the test hooks: a dropped or misdirected write, a short payload. */
    private void postChecked(int i, long r, int peer, int slot, long srcOff, long dstOff, long imm) {
        if (w.dropWriteTo == peer && i == lastOpTo[peer]) {
            return;
        }
        int to = w.swapTargets ? peer % w.base.targets + 1 : peer;
        long len = w.skipClear ? Math.min(64, plan.len[i]) : plan.len[i];
        if (fault.fires(local.inFlight())) {
            if (fault.kind == TestHooks.PipelineFault.Kind.MISDIRECT) {
                dstOff = (long) ((slot + 1) % w.base.slots) * w.base.size + plan.offset[i];
            } else {
                len = Math.min(64, len);
            }
        }
        send(i, peer, to, srcOff, len, dstOff, imm, r);
    }

    /** Posts op {@code i} to {@code to} (its planned {@code peer} keeps the local completion's count). Forced inline as {@link #postOp}. */
    @CompilerControl(CompilerControl.Mode.INLINE)
    private void send(int i, int peer, int to, long srcOff, long len, long dstOff, long imm, long r) {
        int c = plan.channel[i];
        if (injectOp[i]) {
            engine.inject(injectTo[to][c], srcOff, len, dstOff, imm, to, r);
        } else {
            engine.write(c, srcMr[c], srcOff, len, to, dstOf[to][c], dstOff, imm, local.posted(r, peer), r);
        }
    }

    @Override
    public boolean complete(long r) {
        return w.remote ? firstUnacked(r) < 0 : local.complete(r);
    }

    /** The first target that has not acked round {@code r}, or -1. */
    private int firstUnacked(long r) {
        for (int k = 1; k < ranks; k++) {
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
        return w.remote ? "waiting for the ack of a write round" : "local completion of a write";
    }

    @Override
    public int peerAwaited(long r) {
        int k = w.remote ? firstUnacked(r) : peerInFlight;
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
     * Iteration teardown, untimed and uncounted: END, the drain, the targets' last acks, then the
     * checked pass: {@code slots} rounds posted as timed rounds are, each slot's source blocks
     * filled with the pattern of (0, target, that slot's round).
     */
    @Override
    public void endIteration() {
        // END first: targets ack cumulatively every ackEvery rounds, and the last round once they know it.
        long end = pipeline.posted();
        t.signalEnd(end);
        pipeline.drain();
        for (int k = 1; k < ranks; k++) {
            awaitAck(k, end);
        }
        t.barrier("targets cleared for the checked round");
        for (int q = 1; q <= w.base.slots; q++) {
            int slot = pipeline.slot(end + q);
            for (int k = 1; k < ranks; k++) {
                src.fill(block(slot, k), w.base.size, 0, k, end + q);
                if (q == 1 && w.corruptOffset >= 0 && w.corruptOffset < w.base.size) {
                    src.corrupt(block(slot, k) + w.corruptOffset);
                }
            }
        }
        checking = true;
        fault.arm();
        try {
            for (int q = 1; q <= w.base.slots; q++) {
                pipeline.post();
            }
            pipeline.drain();
        } finally {
            checking = false;
        }
        t.verdicts("write checked rounds " + (end + 1) + ".." + (end + w.base.slots), null);
    }

    @Override
    public void rmaDone(int tag) {
        local.done(tag);
    }

    @Override
    public void arrived(long data) {
        throw new BenchmarkSetupException("rank 0: a write with immediate data 0x" + Long.toHexString(data)
                + " arrived at the leader, which write rounds never target");
    }

    @Override
    public void acked(int from, long r) {
        if (r > acked[from]) {
            acked[from] = r;
        }
    }
}

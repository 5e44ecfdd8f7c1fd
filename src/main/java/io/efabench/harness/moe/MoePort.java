package io.efabench.harness.moe;

import io.efabench.fabric.MemoryRegion;
import io.efabench.fabric.RemoteRegion;
import io.efabench.harness.Layout;
import io.efabench.harness.engine.Immediate;
import io.efabench.harness.engine.LocalCompletions;
import io.efabench.harness.engine.RoundPipeline;
import io.efabench.harness.engine.WriteEngine;
import io.efabench.harness.trial.FinalWrites;
import io.efabench.harness.trial.RoundsSite;

/**
 * One rank's MoE rounds as the shared {@link RoundPipeline} drives them and the shared
 * {@link WriteEngine} completes them: a round posts this rank's dispatch; once every other rank's
 * dispatch of it arrived (the experts have their tokens) it posts the combine, the expert outputs
 * back to their owners; it is complete once every rank's combine arrived here (the layer's tokens
 * are back) and this rank's writes of the round before completed locally. A write completes at
 * its sender when the target's ack returns, after its bytes landed: waiting for round r's own acks
 * before posting r + 1 held every round for a trip back through the queues (on the testbed 0.71-0.78
 * of the links instead of 0.86, journal moe.md), and no buffer needs it: a peer writes round r + 1
 * into the region this rank's round-r writes to it read from only after they arrived there. So the
 * acks of one round may lag into the next, never further, and {@link #drainLocal} takes the last
 * round's before an iteration ends. Dispatch writes carry {@link Immediate#DATA} (rank 0's
 * untimed rounds after its iteration: {@link Immediate#FINAL}), combine writes
 * {@link Immediate#RETURN}. Allocation-free while timed.
 */
final class MoePort implements RoundPipeline.Port, WriteEngine.Sink {
    private final RoundsSite t;
    private final int me;
    private final MoeBlocks blocks;
    private final MoeOps[] dispatchOps;
    private final MoeOps[] combineOps;
    private final WriteEngine engine;
    final RoundPipeline pipeline;
    private final LocalCompletions local;
    final PhaseArrivals dispatch;
    final PhaseArrivals combine;
    /** The last round whose combine this rank posted. */
    private long combinePosted;
    /** When this rank saw the last round's dispatch complete (System.nanoTime). */
    long dispatchDoneAt;

    /** END: rank 0's FINAL dispatch writes and the rendezvous (window 1). */
    final FinalWrites end;

    MoePort(RoundsSite t, MoePlan plan, MoeBlocks blocks, Layout layout) {
        this.t = t;
        this.me = t.rank();
        this.blocks = blocks;
        this.end = new FinalWrites(t, 1);
        int ranks = t.size();
        int nch = t.channelCount();
        dispatchOps = new MoeOps[MoePlan.ROUNDS];
        combineOps = new MoeOps[MoePlan.ROUNDS];
        int[][] dispatchIn = new int[MoePlan.ROUNDS][ranks];
        int[][] combineIn = new int[MoePlan.ROUNDS][ranks];
        int[] contexts = new int[nch];
        long[] unserved = new long[nch];
        long dB = plan.shape.dispatchTokenBytes();
        long cB = plan.shape.combineTokenBytes();
        for (int p = 0; p < MoePlan.ROUNDS; p++) {
            dispatchOps[p] = MoeOps.dispatch(t, layout, plan, p);
            combineOps[p] = MoeOps.combine(t, layout, plan, p);
            int[] d = dispatchOps[p].perChannel(nch);
            int[] c = combineOps[p].perChannel(nch);
            int in = 0;
            for (int s = 0; s < ranks; s++) {
                if (s != me) {
                    dispatchIn[p][s] = MoeOps.writes(t, layout, s, plan.recvCount[p][s] * dB);
                    combineIn[p][s] = MoeOps.writes(t, layout, s, plan.sendCount[p][s] * cB);
                    // Unserved here at once: a sender's dispatch of this round and the next (it posts
                    // r + 1 once its round r is done), and its combine of this round only (combine
                    // r + 1 needs this rank's dispatch r + 1, posted after its round r completed).
                    in += 2 * dispatchIn[p][s] + combineIn[p][s];
                }
            }
            for (int k = 0; k < nch; k++) {
                contexts[k] = Math.max(contexts[k], 2 * (d[k] + c[k])); // two rounds' writes uncompleted at once
                unserved[k] = Math.max(unserved[k], in);
            }
        }
        engine = new WriteEngine(t, contexts, false, unserved, 1, this);
        pipeline = new RoundPipeline(this, 1, 1, t.deadline());
        local = new LocalCompletions(ranks, 2);
        dispatch = new PhaseArrivals("dispatch", me, dispatchIn);
        combine = new PhaseArrivals("combine", me, combineIn);
    }

    @Override
    public void post(long r, boolean closesWindow) {
        local.begin(r);
        write(dispatchOps[MoePlan.routingOf(r)], blocks.dispatchSrcMr, blocks.dispatchDstOf, Immediate.encode(end.kind(), me, r), r);
    }

    /** The experts' side: once round r's dispatch is all here, its tokens go back to their owners. */
    private void postCombine(long r) {
        combinePosted = r;
        write(combineOps[MoePlan.routingOf(r)], blocks.combineSrcMr, blocks.combineDstOf,
                Immediate.encode(Immediate.RETURN, me, r), r);
    }

    /** Posts one phase's writes of round {@code r}, each counted against the round's local completions. */
    private void write(MoeOps ops, MemoryRegion[] src, RemoteRegion[][] dstOf, long imm, long r) {
        for (int i = 0; i < ops.ops(); i++) {
            int c = ops.channel[i];
            int peer = ops.peer[i];
            engine.write(c, src[c], ops.src[i], ops.len[i], peer, dstOf[peer][c], ops.dst[i], imm, local.posted(r, peer), r);
        }
    }

    @Override
    public boolean complete(long r) {
        if (combinePosted < r) {
            if (dispatch.served() < r) {
                return false;
            }
            dispatchDoneAt = System.nanoTime();
            postCombine(r);
        }
        return combine.served() >= r && local.complete(r - 1);
    }

    /** Untimed: waits until every write this rank posted completed locally (the last round's acks). */
    void drainLocal() {
        t.deadline().await(() -> local.inFlight() == 0, engine::progress,
                "waiting for the local completion of this rank's MoE writes", (me + 1) % t.size(), pipeline.posted());
    }

    @Override
    public void progress() {
        engine.progress();
    }

    @Override
    public String awaited() {
        return combinePosted < pipeline.posted() ? "waiting for every rank's MoE dispatch of a round"
                : "waiting for every rank's MoE combine of a round and the local completion of this rank's writes of the round before";
    }

    @Override
    public int peerAwaited(long r) {
        int s = combinePosted < r ? dispatch.firstMissing() : combine.firstMissing();
        return s >= 0 ? s : (me + 1) % t.size();
    }

    @Override
    public void rmaDone(int tag) {
        local.done(tag);
    }

    @Override
    public void arrived(long data) {
        int k = Immediate.kind(data);
        if (k == Immediate.RETURN) {
            combine.arrived(data);
            return;
        }
        long r = dispatch.arrived(data);
        if (k == Immediate.FINAL) {
            end.arrived(r); // at window 1 rank 0's only FINAL round is END itself
        }
    }
}

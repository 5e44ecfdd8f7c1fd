package io.efabench.harness.alltoall;

import io.efabench.harness.TestHooks;
import io.efabench.harness.engine.ArrivalCounter;
import io.efabench.harness.engine.Immediate;
import io.efabench.harness.engine.LocalCompletions;
import io.efabench.harness.engine.OpPlan;
import io.efabench.harness.engine.RoundPipeline;
import io.efabench.harness.engine.WriteEngine;
import io.efabench.harness.trial.FinalWrites;
import io.efabench.harness.trial.RoundsSite;


/**
 * One rank's all-to-all rounds as the shared {@link RoundPipeline} drives them and the shared
 * {@link WriteEngine} completes them ({@link AllToAllRounds} is the workload around it): posts a
 * round's writes to every peer, counts the peers' arrivals and this rank's local completions,
 * learns END from rank 0's FINAL writes, and feeds the {@link PeerSpread}.
 */
final class AllToAllPort implements RoundPipeline.Port, WriteEngine.Sink {
    private final RoundsSite t;
    private final int ranks;
    private final int me;
    private final int window;
    private final int slots;
    private final AllToAllBlocks blocks;
    private final OpPlan plan;
    private final WriteEngine engine;
    final RoundPipeline pipeline;
    private final LocalCompletions local;
    final ArrivalCounter arrivals;
    final PeerSpread spread;
    /** Test hook EFABENCH_TEST_SLOW_RECEIVE=k: rank k handles every arrival 5 ms late (a slow target). */
    private final boolean slowReceive;
    static final long SLOW_RECEIVE_NANOS = 5_000_000;

    /** END: rank 0's FINAL writes and the rendezvous. */
    final FinalWrites end;
    boolean timed;
    boolean checking;

    /** Test hook, applied by rank N-1. */
    final TestHooks.PipelineFault fault = TestHooks.PipelineFault.fromEnvironment();

    AllToAllPort(RoundsSite t, AllToAllBlocks blocks, OpPlan plan, int window, int slots) {
        this.t = t;
        this.ranks = t.size();
        this.me = t.rank();
        this.window = window;
        this.slots = slots;
        this.blocks = blocks;
        this.plan = plan;
        this.end = new FinalWrites(t, window);
        int nch = t.channelCount();
        // A rank posts round r only once it has every peer's round r - W: at most 2W + 1 rounds arrive unserved.
        int unservedRounds = 2 * window + 1;
        int[][] incoming = OpPlan.incoming(t, plan);
        int[] opsFrom = new int[ranks];
        long[] unserved = new long[nch];
        for (int s = 0; s < ranks; s++) {
            for (int c = 0; c < nch; c++) {
                opsFrom[s] += incoming[s][c];
                unserved[c] += (long) incoming[s][c] * unservedRounds;
            }
        }
        int[] contexts = plan.perChannel(nch);
        for (int c = 0; c < nch; c++) {
            contexts[c] *= window;
        }
        engine = new WriteEngine(t, contexts, false, unserved, 1, this);
        pipeline = new RoundPipeline(this, window, slots, t.deadline());
        local = new LocalCompletions(ranks, unservedRounds);
        arrivals = new ArrivalCounter(me, opsFrom, unservedRounds);
        engine.expectArrivals(arrivals, incoming);
        spread = new PeerSpread(ranks, local.ring());
        slowReceive = TestHooks.integer("EFABENCH_TEST_SLOW_RECEIVE") == me;
    }

    @Override
    public void post(long r, boolean closesWindow) {
        local.begin(r);
        spread.roundPosted(local.index(r), r, timed);
        int slot = pipeline.slot(r);
        long imm = Immediate.encode(end.kind(), me, r);
        for (int i = 0; i < plan.ops(); i++) {
            int c = plan.channel[i];
            int peer = plan.peer[i];
            long dstOff = blocks.block(slot, me) + plan.offset[i];
            long len = plan.len[i];
            if (checking && me == ranks - 1 && fault.fires(local.inFlight())) {
                if (fault.kind == TestHooks.PipelineFault.Kind.MISDIRECT) {
                    dstOff = blocks.block((slot + 1) % slots, me) + plan.offset[i];
                } else {
                    len = Math.min(64, len);
                }
            }
            engine.write(c, blocks.srcMr[c], blocks.block(slot, peer) + plan.offset[i], len, peer, blocks.dstOf[peer][c],
                    dstOff, imm, local.posted(r, peer), r);
        }
    }

    @Override
    public boolean complete(long r) {
        return arrivals.served() >= r && local.complete(r);
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
        int s = arrivals.firstMissing();
        return s >= 0 ? s : (me + 1) % ranks;
    }

    @Override
    public void rmaDone(int tag) {
        local.done(tag);
    }

    @Override
    public void arrived(long data) {
        if (slowReceive) {
            // Parked, not spinning: on a 2-CPU machine a spinning rank would slow its peers too.
            java.util.concurrent.locks.LockSupport.parkNanos(SLOW_RECEIVE_NANOS);
        }
        long r = arrivals.arrived(data);
        if (arrivals.senderComplete()) {
            spread.arrivedFrom(Immediate.sender(data), r, local.index(r));
        }
        if (Immediate.kind(data) == Immediate.FINAL) {
            end.arrived(r);
        }
    }
}

package io.efabench.harness;

import java.util.Arrays;

import io.efabench.harness.engine.ArrivalCounter;
import io.efabench.harness.engine.Footprint;
import io.efabench.harness.engine.Immediate;
import io.efabench.harness.engine.LocalCompletions;
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
 * <p>Buffers ({@link AllToAllBlocks}): {@code slots} slots of one {@code size} block per rank. In
 * round r (slot r mod slots) rank s writes its source block (slot, p) into destination block
 * (slot, s) of rank p. A round is complete at a rank when its own writes completed locally and every
 * peer's writes of it arrived ({@link ArrivalCounter}). {@code window} W rounds may be in flight
 * (capped at the slots): a timed invocation posts a window of W rounds and returns when every
 * one of them completed (counted = completed), so no rank runs more than W rounds ahead of any
 * other. W = 1: an invocation is one all-to-all's latency.
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
    private final AllToAllBlocks blocks;
    private final OpPlan plan;
    private final WriteEngine engine;
    private final RoundPipeline pipeline;
    private final LocalCompletions local;
    private final ArrivalCounter arrivals;
    private final PeerSpread spread;
    /** Test hook EFABENCH_TEST_SLOW_RECEIVE=k: rank k handles every arrival 5 ms late (a slow target). */
    private final boolean slowReceive;
    static final long SLOW_RECEIVE_NANOS = 5_000_000;

    /** END as learned from rank 0's FINAL writes of this iteration (the smallest bound), or -1. */
    private long finalEnd = -1;
    private int kind = Immediate.DATA;
    private boolean timed;
    private boolean checking;

    /** Test hook, applied by rank N-1. */
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
        Immediate.requireCarried(t.channels(), ranks);
        int nch = t.channelCount();
        if (layout == Layout.MULTI && size < nch) {
            throw new BenchmarkSetupException("size " + size + " B cannot be split across " + nch + " channels");
        }
        this.slots = Footprint.slots(slotsParam, windowParam, Footprint.bufferBytes(ranks, size));
        this.window = Footprint.roundsInFlight(windowParam, slots);
        blocks = new AllToAllBlocks(t, size, slots);
        plan = OpPlan.allToAll(t, layout, size);

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
        pipeline = new RoundPipeline(this, window, slots, new Deadline(t.group, t.timeout));
        local = new LocalCompletions(ranks, unservedRounds);
        arrivals = new ArrivalCounter(me, opsFrom, unservedRounds);
        spread = new PeerSpread(ranks, local.ring());
        slowReceive = TestHooks.integer("EFABENCH_TEST_SLOW_RECEIVE") == me;
    }

    /** Bytes this rank sends to other ranks per invocation: size x (N-1) x the rounds of a window. */
    @Override
    public long bytesPerInvocation() {
        return size * (ranks - 1) * window;
    }

    /** Rank 0 sends size to each peer and receives as much from each. */
    @Override
    public long nicBytesPerInvocation() {
        return 2 * bytesPerInvocation();
    }

    /** Size x N per round: nccl-tests' algbw numerator. */
    @Override
    public long algbwBytesPerInvocation() {
        return size * ranks * window;
    }

    /** One peer's size per round: the seed's all2all Gbps. */
    @Override
    public long seedBytesPerInvocation() {
        return size * window;
    }

    @Override
    public double seedLinkGbps() {
        return t.seedLinkGbps(layout);
    }

    /** The seed's all2all unit: one round, at window 1 (pipelined rounds have no round time of their own). */
    @Override
    public SeedRound seedRound() {
        return window == 1 ? new SeedRound("round_us", 1) : null;
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
        return arrivals.firstMissing();
    }

    // ---- rounds --------------------------------------------------------------------------

    /** Rank 0's timed invocation: a window of rounds, posted and completed. */
    @Override
    public void leaderRound() {
        spread.invocationStarted();
        pipeline.timed();
        spread.invocationDone();
    }

    /** Any other rank's invocation: the same, or nothing once the rounds up to END are posted. */
    @Override
    public void followerRound() {
        if (pastEnd()) {
            return;
        }
        spread.invocationStarted();
        pipeline.timed();
        spread.invocationDone();
    }

    /**
     * Follower: whether the next round lies past END. The wait for round next - W comes first:
     * it is the one the next post needs anyway, and it may be what brings END (rank 0's first
     * FINAL round is END - W + 1).
     */
    private boolean pastEnd() {
        long next = pipeline.posted() + 1;
        pipeline.await(next - window);
        long end = finalEnd >= 0 ? finalEnd : t.endedRounds();
        return end >= 0 && next > end;
    }

    @Override
    public void leaderWarmRound() {
        warmRound();
    }

    @Override
    public void followerWarmRound() {
        warmRound();
    }

    /** Untimed, after the start barrier, on every rank: one whole round, then the clocks start. */
    private void warmRound() {
        finalEnd = -1;
        timed = false;
        pipeline.warm();
        timed = true;
        spread.start();
    }

    @Override
    public void post(long r, boolean closesWindow) {
        local.begin(r);
        spread.roundPosted(local.index(r), r, timed);
        int slot = pipeline.slot(r);
        long imm = Immediate.encode(kind, me, r);
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
        finish(pipeline.posted());
    }

    /** Everything up to {@code end} drained (uncounted), then the checked pass and the iteration's spread. */
    private void finish(long end) {
        pipeline.drain();
        if (pipeline.posted() != end || arrivals.served() != end) {
            throw new BenchmarkSetupException("rank " + me + ": all-to-all round " + pipeline.posted() + " (served "
                    + arrivals.served() + ") past END " + end);
        }
        checkedPass(end);
        spread.publish(t, size, size * (ranks - 1) * window);
    }

    /** The checked pass: {@code slots} rounds through the same pipeline, every slot with its own patterns. */
    private void checkedPass(long end) {
        blocks.prepareCheck(end);
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
        t.verdicts("all-to-all checked rounds " + (end + 1) + ".." + (end + slots), blocks.verify(end, layout));
    }

    // ---- completions (WriteEngine.Sink) -----------------------------------------------------

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
            // Writes are unordered: a later FINAL round may arrive first and overstate END; the
            // first one (END - W + 1) has arrived by the time END matters (pastEnd).
            long end = r - 1 + window;
            finalEnd = finalEnd < 0 ? end : Math.min(finalEnd, end);
        }
    }
}

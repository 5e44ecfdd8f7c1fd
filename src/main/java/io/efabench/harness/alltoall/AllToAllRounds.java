package io.efabench.harness.alltoall;

import java.util.Arrays;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.Layout;
import io.efabench.harness.engine.OpPlan;
import io.efabench.harness.engine.RoundPipeline;
import io.efabench.harness.trial.RoundsSite;
import io.efabench.harness.trial.Side;

/**
 * All-to-all: in every round each rank writes {@code size} bytes with immediate data to each of
 * the N-1 other ranks at once; the symmetric round protocol of docs/DESIGN.md ("All-to-all
 * rounds"), on the shared {@code WriteEngine} and {@link RoundPipeline}. Every rank runs the same
 * rounds; rank 0's JMH score is the result.
 *
 * <p>Buffers ({@link AllToAllBlocks}): {@code slots} slots of one {@code size} block per rank. In
 * round r (slot r mod slots) rank s writes its source block (slot, p) into destination block
 * (slot, s) of rank p. A round is complete at a rank when its own writes completed locally and every
 * peer's writes of it arrived ({@code ArrivalCounter}). {@code window} W rounds may be in flight
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
public final class AllToAllRounds extends AllToAllShape {
    private final RoundsSite t;
    private final Layout layout;
    private final int me;
    private final AllToAllBlocks blocks;
    private final OpPlan plan;
    /** This rank's side of the pipeline and the engine: posts, arrivals, local completions. */
    private final AllToAllPort port;
    private final RoundPipeline pipeline;

    public AllToAllRounds(RoundsSite t, Layout layout, long size, int windowParam, String slotsParam) {
        super(size, t.size(), windowParam, slotsParam);
        this.t = t;
        this.layout = layout;
        this.me = t.rank();
        t.requireImmediates();
        if (layout == Layout.MULTI && size < t.channelCount()) {
            throw new BenchmarkSetupException("size " + size + " B cannot be split across " + t.channelCount() + " channels");
        }
        blocks = new AllToAllBlocks(t, size, slots);
        plan = OpPlan.allToAll(t, layout, size);
        port = new AllToAllPort(t, blocks, plan, window, slots);
        pipeline = port.pipeline;
    }

    /** Rank 0 sends size to each peer and receives as much from each. */
    @Override
    public long nicBytesPerInvocation() {
        return 2 * bytesPerInvocation();
    }

    @Override
    public double seedLinkGbps() {
        return t.seedLinkGbps(layout);
    }

    /** Link speed of the channels this rank writes on. */
    @Override
    public double linkGbps() {
        return t.linkGbps(Arrays.stream(plan.channel).distinct().toArray());
    }

    // ---- rounds --------------------------------------------------------------------------

    /** Untimed, after the start barrier, on every rank: one whole round, then the clocks start. */
    private void warmUp() {
        port.end.forget();
        port.timed = false;
        pipeline.warm();
        port.timed = true;
        port.spread.start();
    }

    // ---- end of an iteration --------------------------------------------------------------

    /** Everything up to {@code end} drained (uncounted), then the checked pass and the iteration's spread. */
    private void finish(long end) {
        pipeline.drain();
        if (pipeline.posted() != end || port.arrivals.served() != end) {
            throw new BenchmarkSetupException("rank " + me + ": all-to-all round " + pipeline.posted() + " (served "
                    + port.arrivals.served() + ") past END " + end);
        }
        checkedPass(end);
        port.spread.publish(t, size, bytesPerInvocation());
    }

    /** The checked pass: {@code slots} rounds through the same pipeline, every slot with its own patterns. */
    private void checkedPass(long end) {
        blocks.prepareCheck(end);
        t.barrier("all-to-all buffers cleared for the checked round");
        port.checking = true;
        port.fault.arm();
        try {
            for (int q = 1; q <= slots; q++) {
                pipeline.post();
            }
            pipeline.drain();
        } finally {
            port.checking = false;
        }
        t.verdicts("all-to-all checked rounds " + (end + 1) + ".." + (end + slots), blocks.verify(end, layout));
    }

    @Override
    public Side side() {
        return t.rank() == 0 ? new LeaderSide() : new FollowerSide();
    }

    /** Rank 0: times the rounds and says END. */
    private final class LeaderSide extends Sides {
        @Override
        public void warmRound() {
            warmUp();
        }

        /** Rank 0's timed invocation: a window of rounds, posted and completed. */
        @Override
        public void round() {
            port.spread.invocationStarted();
            pipeline.timed();
            port.spread.invocationDone();
        }

        @Override
        public void endIteration() {
            port.timed = false;
            finish(port.end.lead(pipeline));
        }
    }

    /** Every other rank: the same rounds until rank 0's END. */
    private final class FollowerSide extends Sides {
        @Override
        public void warmRound() {
            warmUp();
        }

        /** Any other rank's invocation: the same, or nothing once the rounds up to END are posted. */
        @Override
        public void round() {
            if (port.end.pastEnd(pipeline)) {
                return;
            }
            port.spread.invocationStarted();
            pipeline.timed();
            port.spread.invocationDone();
        }

        @Override
        public void endIteration() {
            port.timed = false;
            while (!port.end.pastEnd(pipeline)) {
                pipeline.post();
            }
            finish(pipeline.posted());
        }
    }

    /** What both sides name in a failure line. */
    private abstract class Sides implements Side {
        @Override
        public int peerInFlight() {
            return peerAwaited();
        }
    }

    /** The peer rank the current wait is for, or -1 (failure lines). */
    private int peerAwaited() {
        return port.arrivals.firstMissing();
    }
}

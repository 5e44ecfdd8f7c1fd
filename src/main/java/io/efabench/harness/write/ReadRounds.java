package io.efabench.harness.write;

import io.efabench.fabric.MemoryRegion;
import io.efabench.fabric.RemoteRegion;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.Layout;
import io.efabench.harness.TestHooks;
import io.efabench.harness.engine.Deadline;
import io.efabench.harness.engine.Footprint;
import io.efabench.harness.engine.LocalCompletions;
import io.efabench.harness.engine.RoundPipeline;
import io.efabench.harness.engine.WriteEngine;
import io.efabench.harness.memory.Payload;
import io.efabench.harness.memory.TrialBuffer;
import io.efabench.harness.trial.RoundsSite;
import io.efabench.harness.trial.Side;

/**
 * RDMA reads, rank 0 from ranks 1..N-1 (fi_readmsg; fabtests' {@code fi_rma_bw -o read},
 * perftest's {@code ib_read_bw}), on the shared engine with Write's layouts: a round reads
 * {@code size} bytes from every target, SINGLE on channel 0, MULTI one stripe per channel,
 * ROUND_ROBIN target k on channel (k + rank) % channels. A read is done at its local completion,
 * when the bytes are in rank 0's memory: the only completion a read has, so there is no
 * {@code completion} choice and no ack. {@code window} rounds are in flight, capped at the
 * {@code slots}; round r reads the target's slot r mod slots into the leader's block (slot,
 * target), so the rounds in flight touch distinct regions on both sides. A timed invocation posts
 * a window and returns when every read of it completed (counted = completed); window 1 reads the
 * targets in turn and an invocation is one round trip of the data.
 *
 * <p>Targets post nothing and see no completion, but tcp and shm serve a read in the target's
 * progress, so a target reads its CQs until the leader's END. After every iteration the checked
 * pass reads {@code slots} rounds through the same pipeline, each target slot filled with the
 * pattern of (target, 0, its round), and rank 0 checks every byte it read.
 */
public final class ReadRounds extends OneToManyRounds implements RoundPipeline.Port, WriteEngine.Sink {
    /** Rank 0: where the reads land; a target: what it serves. */
    private final TrialBuffer buffer;
    private final MemoryRegion[] bufferMr;
    /** Every rank's served region per channel; rank 0 reads {@code sourceOf[k][c]}. */
    private final RemoteRegion[][] sourceOf;
    private final WriteEngine engine;
    private final Deadline deadline;
    // Rank 0 only.
    private final RoundPipeline pipeline;
    private final LocalCompletions local;
    private final TestHooks.PipelineFault fault = TestHooks.PipelineFault.fromEnvironment();
    /** Checked pass: a target corrupts its first slot at this offset, or -1 (EFABENCH_CORRUPT_OFFSET). */
    private final long corruptOffset = TestHooks.integer("EFABENCH_CORRUPT_OFFSET");
    private boolean checking;
    private int peerInFlight = -1;

    public ReadRounds(RoundsSite t, Layout layout, long size, int windowParam, String slotsParam) {
        super(t, layout, size, windowParam, slotsParam, "read");
        // Rank 0 receives slots x targets blocks; a target serves slots blocks.
        buffer = t.buffer(Footprint.bufferBytes(slots, t.rank() == 0 ? size * targets : size));
        bufferMr = buffer.regions();
        sourceOf = t.exchange("read source regions", bufferMr);
        deadline = t.deadline();
        if (t.rank() == 0) {
            int[] contexts = plan.perChannel(t.channelCount());
            for (int c = 0; c < contexts.length; c++) {
                contexts[c] *= window;
            }
            engine = new WriteEngine(t, contexts, false, new long[t.channelCount()], 1, this);
            local = new LocalCompletions(t.size(), window);
            pipeline = new RoundPipeline(this, window, slots, deadline);
        } else {
            engine = new WriteEngine(t, new int[t.channelCount()], false, new long[t.channelCount()], 1, this);
            local = null;
            pipeline = null;
            buffer.fill(t.rank(), 0, 0); // what the timed rounds read: any bytes would do; the checked pass refills
        }
    }

    /** Offset of rank 0's block for {@code slot} and {@code target}. */
    private long block(int slot, int target) {
        return ((long) slot * targets + (target - 1)) * size;
    }

    /** A target: every slot with the pattern of (this rank, 0, the checked round that reads it after {@code end}). */
    private void fillCheckedSlots(long end) {
        for (int q = 1; q <= slots; q++) {
            int slot = Footprint.slotOf(end + q, slots);
            buffer.fill((long) slot * size, size, t.rank(), 0, end + q);
            if (q == 1 && corruptOffset >= 0 && corruptOffset < size) {
                buffer.corrupt((long) slot * size + corruptOffset);
            }
        }
    }

    @Override
    public void post(long r, boolean closesWindow) {
        local.begin(r);
        if (window == 1) { // the targets in turn, as Write's window 1
            for (int g = 0; g < plan.groups(); g++) {
                if (g > 0) {
                    pipeline.await(r);
                }
                for (int i = plan.groupStart[g]; i < plan.groupStart[g + 1]; i++) {
                    postOp(i, r);
                }
            }
            return;
        }
        for (int i = 0; i < plan.ops(); i++) {
            postOp(i, r);
        }
    }

    private void postOp(int i, long r) {
        int peer = plan.peer[i];
        peerInFlight = layout == Layout.ROUND_ROBIN ? -1 : peer;
        int c = plan.channel[i];
        int slot = pipeline.slot(r);
        long srcOff = (long) slot * size + plan.offset[i];
        long dstOff = block(slot, peer) + plan.offset[i];
        long len = plan.len[i];
        if (checking && fault.fires(local.inFlight())) {
            if (fault.kind == TestHooks.PipelineFault.Kind.MISDIRECT) {
                srcOff = (long) ((slot + 1) % slots) * size + plan.offset[i];
            } else {
                len = Math.min(64, len);
            }
        }
        engine.read(c, bufferMr[c], dstOff, len, peer, sourceOf[peer][c], srcOff, local.posted(r, peer), r);
    }

    @Override
    public boolean complete(long r) {
        return local.complete(r);
    }

    @Override
    public void progress() {
        engine.progress();
    }

    @Override
    public String awaited() {
        return "local completion of a read";
    }

    @Override
    public int peerAwaited(long r) {
        return peerInFlight >= 0 ? peerInFlight : 1;
    }

    /** Reads the CQs (which serves rank 0's reads) until the leader's END says more than {@code after}. */
    private long serveUntilEndAfter(long after) {
        t.deadline(t.waitBudget()).await(() -> t.endedRounds() > after, engine::progress,
                "serving reads until rank 0's END", 0, after + 1);
        return t.endedRounds();
    }

    @Override
    public void rmaDone(int tag) {
        if (local == null) {
            throw new BenchmarkSetupException("rank " + t.rank() + ": a local completion at a read target, which posts nothing");
        }
        local.done(tag);
    }

    @Override
    public void arrived(long data) {
        throw new BenchmarkSetupException("rank " + t.rank() + ": a write with immediate data 0x" + Long.toHexString(data)
                + " arrived, which read rounds never send");
    }

    @Override
    public Side side() {
        return t.rank() == 0 ? new LeaderSide() : new FollowerSide();
    }

    /** Rank 0: reads every target's block per round, runs the checked pass. */
    private final class LeaderSide extends Sides {
        @Override
        public void warmRound() {
            pipeline.warm();
        }

        @Override
        public void round() {
            pipeline.timed();
        }

        /**
         * Rank 0's iteration teardown, untimed: the drain, END, then the checked pass once the targets
         * filled their slots: {@code slots} rounds posted as timed rounds are, then END again (its
         * count past the first), and every byte read is checked.
         */
        @Override
        public void endIteration() {
            pipeline.drain();
            long end = pipeline.posted();
            t.signalEnd(end);
            buffer.clear();
            t.barrier("read sources filled for the checked round");
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
            t.signalEnd(end + slots);
            String verdict = null;
            for (int q = 1; q <= slots && verdict == null; q++) {
                int slot = Footprint.slotOf(end + q, slots);
                for (int k = 1; k <= targets && verdict == null; k++) {
                    try {
                        buffer.verify(block(slot, k), size, k, 0, end + q);
                    } catch (Payload.CorruptionException e) {
                        verdict = e.getMessage() + " (read from rank " + k + ", slot " + slot + " of " + slots + ", " + layout
                                + ", " + t.benchmark() + ")";
                    }
                }
            }
            t.verdicts("read checked rounds " + (end + 1) + ".." + (end + slots), verdict);
        }
    }

    /** Ranks 1..N-1: progress the reads rank 0 posts; fill the checked sources. */
    private final class FollowerSide extends Sides {
        /** Targets have nothing to serve but the reads themselves, which their progress does. */
        @Override
        public void warmRound() {
            engine.progress();
        }

        @Override
        public void round() {
            engine.progress();
        }

        /** A target's teardown: serve reads until END, fill the checked slots, serve the checked pass, verdicts. */
        @Override
        public void endIteration() {
            long end = serveUntilEndAfter(-1);
            fillCheckedSlots(end);
            t.barrier("read sources filled for the checked round");
            serveUntilEndAfter(end);
            t.verdicts("read checked rounds " + (end + 1) + ".." + (end + slots), null);
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
        return peerInFlight;
    }
}

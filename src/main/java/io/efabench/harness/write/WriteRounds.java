package io.efabench.harness.write;

import io.efabench.harness.Layout;
import io.efabench.harness.engine.Footprint;
import io.efabench.harness.memory.TrialBuffer;
import io.efabench.harness.trial.RoundsSite;
import io.efabench.harness.trial.Side;

/**
 * RDMA writes with immediate data, rank 0 to ranks 1..N-1, in the leader-driven round protocol
 * of docs/DESIGN.md: the setup every rank shares, then {@link WriteLeader} on rank 0 and
 * {@link WriteTarget} on the others, both on the shared engine.
 *
 * <p>A round writes {@code size} bytes to every target: SINGLE on channel 0, MULTI one stripe
 * per channel, ROUND_ROBIN target k on channel (k + rank) % channels. {@code window} rounds may
 * be in flight (with one target and SINGLE, fi_rma_bw's -W), capped at the {@code slots}; W = 1
 * runs the targets in turn (the seed's order) and an invocation is one round trip of the data.
 * A timed invocation posts a window of rounds and returns when every one completed, locally
 * (LOCAL) or acked by every target (REMOTE): counted = completed, as fabtests' bandwidth loop. Round r writes slot r mod slots on both sides:
 * the leader's source block (slot, target) and the target's block slot.
 *
 * <p>Credits keep every target bounded: the leader posts round r to a target only once it acked
 * round r - credits (LOCAL: max(16, W); REMOTE: W); targets ack cumulatively every
 * {@code ackEvery} rounds (LOCAL: credits / 2; REMOTE: W, the window's last round). After every iteration a checked pass of {@code slots} rounds runs
 * through the same pipeline, each slot with the pattern of (0, target, its round).
 */
public final class WriteRounds extends OneToManyRounds {
    /** Rounds a target may lag behind in LOCAL mode with a window under 16. */
    static final int LOCAL_CREDITS = 16;
    private final WriteShape shape;
    private final WriteLeader leader;
    private final WriteTarget target;

    /**
     * {@code inject}: post writes that fit the inject size with fi_inject_writedata (as fi_rma_bw
     * does); {@code slotsParam}: "auto" or a count ({@link Footprint}).
     */
    public WriteRounds(RoundsSite t, Layout layout, boolean remote, long size, int windowParam, boolean inject,
            String slotsParam) {
        super(requireImmediates(t), layout, size, windowParam, slotsParam, "write");
        int credits = remote ? window : Math.max(LOCAL_CREDITS, window);
        // REMOTE: one ack per window (its last round asks for it anyway); LOCAL: twice per credit span.
        shape = new WriteShape(this, remote, credits, remote ? window : Math.max(1, credits / 2));
        // The leader reads slots x targets source blocks; a target receives slots blocks; the leader's
        // own target region is never written (one page, for the exchange).
        TrialBuffer src = t.rank() == 0 ? t.buffer(Footprint.bufferBytes(slots, size * targets)) : null;
        TrialBuffer dst = t.buffer(t.rank() == 0 ? 4096 : Footprint.bufferBytes(slots, size));
        var dstOf = t.exchange("write target regions", dst.regions());
        if (t.rank() == 0) {
            leader = new WriteLeader(shape, src, dstOf, inject);
            target = null;
        } else {
            leader = null;
            target = new WriteTarget(shape, dst);
        }
    }

    /** Writes carry the immediates a target counts: refused before anything is opened where they cannot. */
    private static RoundsSite requireImmediates(RoundsSite t) {
        t.requireImmediates();
        return t;
    }

    @Override
    public Side side() {
        return leader != null ? leader : target;
    }
}

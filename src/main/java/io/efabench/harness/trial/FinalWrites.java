package io.efabench.harness.trial;

import io.efabench.harness.engine.Immediate;
import io.efabench.harness.engine.RoundPipeline;

/**
 * END for rounds a {@link RoundPipeline} posts over the fabric, once for every workload whose ranks
 * all run the same rounds (all-to-all, MoE; docs/DESIGN.md "END without a race"): rank 0 takes
 * END = its last round + W, the highest round any rank can have posted, says it on the rendezvous
 * and posts its rounds up to END with {@link Immediate#FINAL} writes; another rank learns END from
 * the first FINAL write that reaches it or from the rendezvous, whichever comes first, and posts
 * until its next round would lie past END. The port encodes {@link #kind()} into its writes and
 * hands every FINAL arrival to {@link #arrived}. Allocation-free.
 */
public final class FinalWrites {
    private final RoundsSite t;
    private final int window;
    private int kind = Immediate.DATA;
    /** END as this iteration's FINAL writes bound it (the smallest bound), or -1. */
    private long heard = -1;

    /** For rounds of window {@code window} on trial {@code t}. */
    public FinalWrites(RoundsSite t, int window) {
        this.t = t;
        this.window = window;
    }

    /** The immediate kind this rank's writes carry now: {@link Immediate#FINAL} while rank 0 runs up to END. */
    public int kind() {
        return kind;
    }

    /**
     * A FINAL write of round {@code r} arrived: rank 0 posts round r only once round r - W ended,
     * so END is at most r - 1 + W. Writes are unordered and a later FINAL round may come first; the
     * smallest bound is kept, and the first FINAL round (END - W + 1, which names END exactly)
     * has arrived by the time a follower needs END ({@link #pastEnd}).
     */
    public void arrived(long r) {
        long end = r - 1 + window;
        heard = heard < 0 ? end : Math.min(heard, end);
    }

    /** END as the FINAL writes so far bound it, or -1. */
    long heard() {
        return heard;
    }

    /** A new iteration: its END is not known yet. */
    public void forget() {
        heard = -1;
    }

    /**
     * Another rank: whether the next round lies past END. The wait for round next - W comes first:
     * the next post needs it anyway, and it may be what brings END (rank 0's first FINAL round).
     */
    public boolean pastEnd(RoundPipeline pipeline) {
        long next = pipeline.posted() + 1;
        pipeline.await(next - window);
        long end = heard >= 0 ? heard : t.endedRounds();
        return end >= 0 && next > end;
    }

    /** Rank 0: says END and posts its rounds up to it with FINAL writes; returns END. */
    public long lead(RoundPipeline pipeline) {
        long end = pipeline.posted() + window;
        t.signalEnd(end);
        kind = Immediate.FINAL;
        try {
            while (pipeline.posted() < end) {
                pipeline.post();
            }
        } finally {
            kind = Immediate.DATA;
        }
        return end;
    }
}

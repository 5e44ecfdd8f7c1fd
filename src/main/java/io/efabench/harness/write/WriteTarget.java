package io.efabench.harness.write;

import io.efabench.harness.engine.Follower;
import io.efabench.harness.engine.Footprint;
import io.efabench.harness.memory.Payload;
import io.efabench.harness.memory.TrialBuffer;
import io.efabench.harness.trial.RoundsSite;
import io.efabench.harness.trial.Side;


/**
 * Ranks 1..N-1 of Write ({@code WriteRounds}): the shared {@link Follower} serves and acks the rounds;
 * this class clears the target region before the checked pass and checks every slot of it.
 */
final class WriteTarget implements Side {
    private final WriteShape w;
    private final RoundsSite t;
    private final TrialBuffer dst;
    final Follower follower;

    WriteTarget(WriteShape w, TrialBuffer dst) {
        this.w = w;
        this.t = w.base.t;
        this.dst = dst;
        int fromLeader = 0;
        int[] onChannel = new int[t.channelCount()];
        for (int i = 0; i < w.base.plan.ops(); i++) {
            if (w.base.plan.peer[i] == t.rank()) {
                fromLeader++;
                onChannel[w.base.plan.channel[i]]++;
            }
        }
        follower = new Follower(t, fromLeader, w.credits, w.ackEvery, w.unservedPerChannel());
        follower.expectOnChannels(onChannel);
    }

    @Override
    public void warmRound() {
        follower.warmRound();
    }

    @Override
    public void round() {
        follower.serve("waiting for the writes of a round", true);
    }

    /** The leader: every write a target waits for is rank 0's. */
    @Override
    public int peerInFlight() {
        return 0;
    }

    /** Iteration teardown: serve up to END, clear, then serve and verify the checked pass, slot by slot. */
    @Override
    public void endIteration() {
        long ended = follower.serveToEnd();
        if (!w.skipClear) {
            dst.clear();
        }
        t.barrier("targets cleared for the checked round");
        follower.serveChecked(w.base.slots);
        String verdict = null;
        for (int q = 1; q <= w.base.slots && verdict == null; q++) {
            int slot = Footprint.slotOf(ended + q, w.base.slots);
            try {
                dst.verify((long) slot * w.base.size, w.base.size, 0, t.rank(), ended + q);
            } catch (Payload.CorruptionException e) {
                verdict = e.getMessage() + " (slot " + slot + " of " + w.base.slots + ", " + w.base.layout + ", " + t.benchmark() + ")";
            }
        }
        t.verdicts("write checked rounds " + (ended + 1) + ".." + (ended + w.base.slots), verdict);
    }
}

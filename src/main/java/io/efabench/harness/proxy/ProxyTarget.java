package io.efabench.harness.proxy;

import io.efabench.harness.engine.Follower;
import io.efabench.harness.engine.Footprint;
import io.efabench.harness.memory.Payload;
import io.efabench.harness.memory.TrialBuffer;
import io.efabench.harness.trial.FabricTrial;
import io.efabench.harness.trial.Side;


/**
 * Ranks 1..N-1 of the proxy ({@code ProxyRounds}): the shared {@link Follower} serves a launch's rounds and
 * acks its last; after every iteration this class clears the target region, serves the checked
 * launch as a timed one and checks every byte of every slot it wrote.
 */
final class ProxyTarget implements Side {
    private final ProxyShape p;
    private final FabricTrial t;
    private final TrialBuffer dst;
    private final Follower follower;

    /** {@code writesPerTarget}: the writes of rank 0's plan per round to this rank. */
    ProxyTarget(ProxyShape p, TrialBuffer dst, int writesPerTarget) {
        this.p = p;
        this.t = p.t;
        this.dst = dst;
        // Nothing bounds a launch's rounds at a target but the launch's end: all of them may
        // be in flight (unserved) at once; one cumulative ack per launch, for its last round.
        long[] unserved = new long[t.channelCount()];
        java.util.Arrays.fill(unserved, (long) writesPerTarget * p.rounds);
        follower = new Follower(t, writesPerTarget, p.rounds, p.rounds, unserved);
    }

    /** Serves one launch: its rounds. */
    @Override
    public void round() {
        for (int q = 0; q < p.rounds; q++) {
            follower.serve("waiting for the proxy's writes of a round", true);
        }
    }

    @Override
    public void warmRound() {
        for (int q = 0; q < p.rounds; q++) {
            follower.serve("waiting for the proxy's writes of the warm launch", false);
        }
    }

    /** The leader: every write a target waits for is rank 0's. */
    @Override
    public int peerInFlight() {
        return 0;
    }

    /** Serve up to END, clear, serve the checked launch as a timed one, check every byte of every slot written. */
    @Override
    public void endIteration() {
        long ended = follower.serveToEnd();
        dst.clear();
        t.barrier("targets cleared for the checked proxy round");
        follower.serveChecked(p.rounds);
        long first = ended + 1;
        String verdict = null;
        try {
            for (int q = 0; q < Math.min(p.rounds, p.slots); q++) {
                long r = p.lastRoundOfSlot(first, first + q);
                int slot = Footprint.slotOf(r, p.slots);
                try {
                    dst.verify(slot * p.stride, p.size, 0, t.rank, r);
                } catch (Payload.CorruptionException e) {
                    verdict = e.getMessage() + " (slot " + slot + " of " + p.slots + ", " + p.layout + (p.nbi ? " NBI" : "")
                            + ", " + t.benchmark() + ")";
                    break;
                }
            }
        } finally {
            t.verdicts("proxy checked launch of rounds " + first + ".." + (first + p.rounds - 1), verdict);
        }
    }
}

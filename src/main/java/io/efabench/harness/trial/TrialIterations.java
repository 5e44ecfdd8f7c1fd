package io.efabench.harness.trial;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.infra.IterationParams;

import io.efabench.rank.RankGroup;

/**
 * The trial's iterations as the leader-driven round protocol sees them (docs/DESIGN.md): which
 * iteration this is, how long JMH runs it (a peer may wait that long at a barrier), and END,
 * the leader's word that the iteration's rounds are over and how many there were.
 */
public final class TrialIterations {
    /** Signal slot carrying END = (iteration << 40) | rounds the leader ran in it. */
    private static final int END_SLOT = 0;
    private static final long ROUNDS_MASK = (1L << 40) - 1;

    private final RankGroup group;
    private Duration time = Duration.ZERO;
    private long iteration;

    TrialIterations(RankGroup group) {
        this.group = group;
    }

    /** Iteration start: counts it and remembers its time; returns its number. */
    long start(IterationParams ip) {
        return start(Duration.ofMillis(Math.max(0, ip.getTime().convertTo(TimeUnit.MILLISECONDS))));
    }

    /** As {@link #start(IterationParams)} for an iteration of {@code length} outside JMH. */
    long start(Duration length) {
        iteration++;
        time = length;
        return iteration;
    }

    /** JMH's time for one iteration (zero before the first). */
    Duration time() {
        return time;
    }

    /** Leader: announces that this iteration's rounds are over and how many there were. */
    public void signalEnd(long rounds) {
        group.signal(END_SLOT, (iteration << 40) | (rounds & ROUNDS_MASK));
    }

    /**
     * Follower: the number of rounds the leader ran in this iteration, or -1 while it has not
     * signalled END yet. A volatile read; no allocation.
     */
    public long endedRounds() {
        long v = group.signalled(END_SLOT);
        return v != Long.MIN_VALUE && (v >>> 40) == iteration ? v & ROUNDS_MASK : -1;
    }
}

package io.efabench.harness.trial;

import java.util.function.Function;

import org.openjdk.jmh.infra.IterationParams;
import io.efabench.harness.Metrics;
import io.efabench.harness.MetricsSink;
import io.efabench.harness.Traffic;

/**
 * Drives one benchmark's {@link Rounds} through JMH's callbacks on this rank: the leader's side on
 * rank 0, a follower's elsewhere; every failure fails the whole group ({@link FabricTrial#fail})
 * naming the peer the failed wait was for. Rank 0 also brackets each iteration's timed rounds with
 * its NIC byte counters (nic_bytes_ratio).
 */
public final class RoundDriver {
    private final FabricTrial t;
    private final Rounds r;
    private final Side side;
    private long nicBytesAtStart = -1;
    private long invocations;

    /**
     * Builds the benchmark's rounds on trial {@code t}, gives their traffic to the trial's
     * {@link MetricsSink}, records provenance, and drives them; a failure fails the whole group.
     */
    public static RoundDriver open(FabricTrial t, Function<FabricTrial, ? extends Rounds> make) {
        try {
            return build(t, make.apply(t));
        } catch (RuntimeException e) {
            throw t.fail(e);
        }
    }

    private static RoundDriver build(FabricTrial t, Rounds r) {
        MetricsSink metrics = t.metrics();
        metrics.traffic(new Traffic(r.bytesPerInvocation(), r.transfersPerInvocation(), r.linkGbps(), t.rank,
                r.invocationIsLatency()));
        if (r.algbwBytesPerInvocation() > 0) {
            metrics.collective(r.algbwBytesPerInvocation(), t.size);
        }
        metrics.seedRound(r.seedRound());
        metrics.seedBusbw(r.seedBytesPerInvocation(), r.seedLinkGbps());
        TrialProvenance.record(t, r);
        return new RoundDriver(t, r);
    }

    RoundDriver(FabricTrial t, Rounds r) {
        this.t = t;
        this.r = r;
        this.side = r.side();
    }

    /**
     * Iteration setup: the trial's start barrier, then one untimed round ({@link
     * Side#warmRound}): a rank leaves the barrier at its own pace, and the first timed
     * round would otherwise wait for the slowest one to get back into its polling loop (in
     * {@code -bm ss} with small batches that is most of the score).
     */
    public void beginIteration(IterationParams ip) {
        t.startIteration(ip);
        try {
            side.warmRound();
        } catch (RuntimeException e) {
            throw t.fail(e, side.peerInFlight());
        }
        invocations = 0;
        nicBytesAtStart = t.nicCounters != null ? t.nicCounters.bytes() : -1;
    }

    /** One {@code @Benchmark} invocation: the leader's round on rank 0, a follower's elsewhere. */
    public void round() {
        try {
            side.round();
            invocations++;
        } catch (RuntimeException e) {
            throw t.fail(e, side.peerInFlight());
        }
    }

    /** Iteration teardown: drain, END and the checked round, on the leader's or a follower's side. */
    public void endIteration() {
        if (nicBytesAtStart >= 0) {
            // Read before the drain and the checked round: their bytes are not in the timed count.
            long now = t.nicCounters.bytes();
            if (now >= 0) {
                t.metrics().nicBytesRatio(Metrics.nicBytesRatio(now - nicBytesAtStart,
                        invocations * r.nicBytesPerInvocation()));
            }
        }
        try {
            side.endIteration();
        } catch (RuntimeException e) {
            throw t.fail(e, side.peerInFlight());
        }
    }
}

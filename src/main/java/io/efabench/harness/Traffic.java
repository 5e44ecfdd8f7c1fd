package io.efabench.harness;

/**
 * What one {@code @Benchmark} invocation of the running trial moves, given to the trial's
 * {@link MetricsSink} in its setup (in the forked JVM) and read by {@link MetricsProfiler} after
 * each iteration.
 *
 * @param bytesPerInvocation     payload bytes one invocation delivers (all peers, all stripes)
 * @param transfersPerInvocation how many one-way transfers an invocation is made of, in sequence;
 *                               {@code lat_us} is the invocation time divided by this
 * @param linkGbps               summed link speed of the channels used, 0 when unknown
 * @param rank                   this process's rank; only rank 0's figures are results
 * @param invocationIsLatency    an invocation's time is a latency: one unpipelined round whose
 *                               transfers run one after another, nothing left in flight when it
 *                               returns. Only then does {@link MetricsProfiler} report the
 *                               latency percentiles ({@code lat_p50_us} ...) of {@code -bm sample};
 *                               pipelined rounds (writes with rounds in flight) publish false
 */
public record Traffic(long bytesPerInvocation, int transfersPerInvocation, double linkGbps, int rank,
        boolean invocationIsLatency) {

    /** A trial whose invocation time is a latency (see {@link #invocationIsLatency}). */
    public Traffic(long bytesPerInvocation, int transfersPerInvocation, double linkGbps, int rank) {
        this(bytesPerInvocation, transfersPerInvocation, linkGbps, rank, true);
    }

    public boolean leader() {
        return rank == 0;
    }
}

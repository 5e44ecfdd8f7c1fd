package io.efabench.harness;

/**
 * What one {@code @Benchmark} invocation of the running trial moves, published by the benchmark
 * in its trial setup (in the forked JVM) and read by {@link MetricsProfiler} after each iteration.
 *
 * @param bytesPerInvocation     payload bytes one invocation delivers (all peers, all stripes)
 * @param transfersPerInvocation how many one-way transfers an invocation is made of, in sequence;
 *                               {@code lat_us} is the invocation time divided by this
 * @param linkGbps               summed link speed of the channels used, 0 when unknown
 * @param rank                   this process's rank; only rank 0's figures are results
 */
public record Traffic(long bytesPerInvocation, int transfersPerInvocation, double linkGbps, int rank) {

    private static volatile Traffic current;
    private static volatile long checkedRounds;

    public static void publish(long bytesPerInvocation, int transfersPerInvocation, double linkGbps, int rank) {
        current = new Traffic(bytesPerInvocation, transfersPerInvocation, linkGbps, rank);
        checkedRounds = 0;
        DeviceClock.reset();
    }

    /**
     * Called by the benchmark thread when a checked round came back clean on every rank; the
     * running count is reported as the {@code checked_rounds} metric, so a result shows that
     * its payload was verified, not only sent.
     */
    @SuppressWarnings("NonAtomicOperationOnVolatileField") // one writer: the benchmark thread
    public static void checkedRoundPassed() {
        checkedRounds++;
    }

    /** Clean checked rounds since the trial published its traffic (warm-up included). */
    public static long checkedRounds() {
        return checkedRounds;
    }

    /** The trial's traffic, or null when no efabench benchmark published one. */
    public static Traffic current() {
        return current;
    }

    public boolean leader() {
        return rank == 0;
    }
}

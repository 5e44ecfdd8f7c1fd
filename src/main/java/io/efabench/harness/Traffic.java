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

    public static void publish(long bytesPerInvocation, int transfersPerInvocation, double linkGbps, int rank) {
        current = new Traffic(bytesPerInvocation, transfersPerInvocation, linkGbps, rank);
        DeviceClock.reset();
    }

    /** The trial's traffic, or null when no efabench benchmark published one. */
    public static Traffic current() {
        return current;
    }

    public boolean leader() {
        return rank == 0;
    }
}

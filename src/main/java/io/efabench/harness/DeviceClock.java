package io.efabench.harness;

/**
 * Time measured by the device (CUDA events) rather than the host, for benchmarks whose
 * figure of merit is the kernel's time. The benchmark adds each timed invocation's seconds;
 * {@link MetricsProfiler} uses the mean of the iteration instead of JMH's host score.
 * Single-threaded by construction (one benchmark thread per rank).
 */
public final class DeviceClock {
    private static double seconds;
    private static long invocations;

    private DeviceClock() {}

    public static void add(double s) {
        seconds += s;
        invocations++;
    }

    static synchronized void reset() {
        seconds = 0;
        invocations = 0;
    }

    /** Mean seconds per invocation since the last reset, or NaN when nothing was added. */
    static synchronized double meanAndReset() {
        double mean = invocations == 0 ? Double.NaN : seconds / invocations;
        seconds = 0;
        invocations = 0;
        return mean;
    }
}

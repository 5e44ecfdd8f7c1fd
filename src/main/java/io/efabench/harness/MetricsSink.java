package io.efabench.harness;


/**
 * Everything one trial tells {@link MetricsProfiler}: its {@link Traffic}, a collective's
 * nccl-tests figures, the seed's unit and BusBW, the clean checked rounds, and per iteration the
 * all-to-all spread, the NIC byte ratio and the device's own time. A trial opens one sink in its
 * setup and hands it to the code that measures (rounds, verdicts, the IPC rig); nothing else
 * publishes metrics.
 *
 * <p>JMH instantiates the profiler itself and gives it no way to reach a benchmark's state, so the
 * sink a trial opened is also this fork's {@link #current()}: the one bridge between harness and
 * profiler. Opening a sink replaces the previous trial's, so nothing carries over between trials
 * of one JVM ({@code -f 0}). Writers are the benchmark thread (and a trial's setup); the profiler
 * reads after each iteration from JMH's thread, so every field is volatile or guarded.
 */
public final class MetricsSink {
    private static volatile MetricsSink current;

    private volatile Traffic traffic;
    /** Collectives only: size x ranks, nccl-tests' algbw numerator; 0 for everything else. */
    private volatile long algbwBytesPerInvocation;
    /** Collectives only: the ranks taking part (nccl-tests' busbw factor (N-1)/N). */
    private volatile int collectiveRanks;
    /** The seed's timing unit where the benchmark has one ({@code Rounds#seedRound}), else null. */
    private volatile SeedRound seedRound;
    /** The seed's BusBW(%): its Gbps bytes per invocation and its link ({@code Rounds#seedLinkGbps}); 0 when unknown. */
    private volatile long seedBytesPerInvocation;
    private volatile double seedLinkGbps;
    private volatile long checkedRounds;
    private volatile double nicBytesRatio = Double.NaN;
    /** The last iteration's figures computed by rank 0 from every rank's ({@link IterationFigure}), or null. */
    private volatile java.util.List<IterationFigure> iterationFigures;
    private double deviceSeconds;
    private long deviceInvocations;

    private MetricsSink() {}

    /** A new, empty sink for the trial being set up; from now on the fork's {@link #current()}. */
    public static MetricsSink open() {
        MetricsSink s = new MetricsSink();
        current = s;
        return s;
    }

    /** The sink of the trial running in this JVM, or null where no efabench trial opened one. */
    static MetricsSink current() {
        return current;
    }

    /** What one invocation moves (see {@link Traffic}); until then the profiler adds nothing. */
    public void traffic(Traffic t) {
        traffic = t;
    }

    /** The published traffic, or null. */
    public Traffic traffic() {
        return traffic;
    }

    /** A collective's algbw numerator (size x ranks, nccl-tests' algbw) and its rank count. */
    public void collective(long algbwBytes, int ranks) {
        algbwBytesPerInvocation = algbwBytes;
        collectiveRanks = ranks;
    }

    long algbwBytesPerInvocation() {
        return algbwBytesPerInvocation;
    }

    int collectiveRanks() {
        return collectiveRanks;
    }

    /** The benchmark's seed-style round; null for none. */
    public void seedRound(SeedRound round) {
        seedRound = round;
    }

    SeedRound seedRound() {
        return seedRound;
    }

    /** What {@code seed_busbw_pct} divides: the seed's Gbps bytes per invocation, over its link. */
    public void seedBusbw(long bytesPerInvocation, double linkGbps) {
        seedBytesPerInvocation = bytesPerInvocation;
        seedLinkGbps = linkGbps;
    }

    long seedBytesPerInvocation() {
        return seedBytesPerInvocation;
    }

    double seedLinkGbps() {
        return seedLinkGbps;
    }

    /**
     * A checked round came back clean on every rank; the running count is the
     * {@code checked_rounds} metric, so a result shows that its payload was verified, not only sent.
     */
    @SuppressWarnings("NonAtomicOperationOnVolatileField") // one writer: the benchmark thread
    public void checkedRoundPassed() {
        checkedRounds++;
    }

    /** Clean checked rounds since the trial opened this sink (warm-up included). */
    public long checkedRounds() {
        return checkedRounds;
    }

    /**
     * Rank 0, in the iteration teardown: figures it computed from every rank's measurements (the
     * all-to-all's spread over pairs and ranks, MoE's rates and slowest rank; see {@link Metrics}).
     */
    public void iterationFigures(java.util.List<IterationFigure> figures) {
        iterationFigures = java.util.List.copyOf(figures);
    }

    /** The figures published for the last iteration, cleared on reading; null when none. */
    java.util.List<IterationFigure> takeIterationFigures() {
        java.util.List<IterationFigure> f = iterationFigures;
        iterationFigures = null;
        return f;
    }

    /** Rank 0, in the iteration teardown: NIC-counted bytes over the benchmark's own ({@link Metrics#nicBytesRatio}). */
    public void nicBytesRatio(double ratio) {
        nicBytesRatio = ratio;
    }

    /** The ratio published for the last iteration, cleared on reading; NaN when none. */
    double takeNicBytesRatio() {
        double r = nicBytesRatio;
        nicBytesRatio = Double.NaN;
        return r;
    }

    /**
     * One timed invocation's time as the device measured it (CUDA events), for benchmarks whose
     * figure of merit is the kernel's time: the profiler then uses the iteration's mean of these
     * instead of JMH's host score.
     */
    public synchronized void deviceSeconds(double s) {
        deviceSeconds += s;
        deviceInvocations++;
    }

    synchronized void resetDeviceClock() {
        deviceSeconds = 0;
        deviceInvocations = 0;
    }

    /** Mean device seconds per invocation since the last reset, or NaN when none were added. */
    synchronized double meanDeviceSecondsAndReset() {
        double mean = deviceInvocations == 0 ? Double.NaN : deviceSeconds / deviceInvocations;
        resetDeviceClock();
        return mean;
    }
}

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
 * @param invocationIsLatency    an invocation's time is a latency: one unpipelined round whose
 *                               transfers run one after another, nothing left in flight when it
 *                               returns. Only then does {@link MetricsProfiler} report the
 *                               latency percentiles ({@code lat_p50_us} ...) of {@code -bm sample};
 *                               pipelined rounds (writes with rounds in flight) publish false
 */
public record Traffic(long bytesPerInvocation, int transfersPerInvocation, double linkGbps, int rank,
        boolean invocationIsLatency) {

    private static volatile Traffic current;
    private static volatile long checkedRounds;
    /** Collectives only: size x ranks, nccl-tests' algbw numerator; 0 for everything else. */
    private static volatile long algbwBytesPerInvocation;
    /** Collectives only: the ranks taking part (nccl-tests' busbw factor (N-1)/N); 0 for everything else. */
    private static volatile int collectiveRanks;
    /** The seed's timing unit where the benchmark has one ({@link Rounds#seedRound}), else null. */
    private static volatile Rounds.SeedRound seedRound;
    /** The seed's BusBW(%): its Gbps bytes per invocation and its link ({@link Rounds#seedLinkGbps}); 0 when unknown. */
    private static volatile long seedBytesPerInvocation;
    private static volatile double seedLinkGbps;
    /** Collectives only: the last iteration's {min_peer_gbps, max_peer_gbps, slowest_rank_gbps}, or null. */
    private static volatile double[] iterationSpread;
    /** NICs with byte counters: the last iteration's nic_bytes_ratio, else NaN. */
    private static volatile double nicBytesRatio = Double.NaN;

    /** Publishes a trial's traffic whose invocation time is a latency (see {@link #invocationIsLatency}). */
    public static void publish(long bytesPerInvocation, int transfersPerInvocation, double linkGbps, int rank) {
        publish(bytesPerInvocation, transfersPerInvocation, linkGbps, rank, true);
    }

    public static void publish(long bytesPerInvocation, int transfersPerInvocation, double linkGbps, int rank,
            boolean invocationIsLatency) {
        current = new Traffic(bytesPerInvocation, transfersPerInvocation, linkGbps, rank, invocationIsLatency);
        checkedRounds = 0;
        algbwBytesPerInvocation = 0;
        collectiveRanks = 0;
        seedRound = null;
        seedBytesPerInvocation = 0;
        seedLinkGbps = 0;
        iterationSpread = null;
        nicBytesRatio = Double.NaN;
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

    /**
     * A collective's algbw numerator (size x ranks, nccl-tests' algbw) and its rank count,
     * published after {@link #publish}.
     */
    public static void publishCollective(long algbwBytes, int ranks) {
        algbwBytesPerInvocation = algbwBytes;
        collectiveRanks = ranks;
    }

    /** Ranks of a collective, else 0. */
    public static int collectiveRanks() {
        return collectiveRanks;
    }

    /** The benchmark's seed-style round ({@link Rounds#seedRound}), published after {@link #publish}; null for none. */
    public static void publishSeedRound(Rounds.SeedRound round) {
        seedRound = round;
    }

    public static Rounds.SeedRound seedRound() {
        return seedRound;
    }

    /** What {@code seed_busbw_pct} divides: the seed's Gbps bytes per invocation, over its link. */
    public static void publishSeedBusbw(long bytesPerInvocation, double linkGbps) {
        seedBytesPerInvocation = bytesPerInvocation;
        seedLinkGbps = linkGbps;
    }

    public static long seedBytesPerInvocation() {
        return seedBytesPerInvocation;
    }

    public static double seedLinkGbps() {
        return seedLinkGbps;
    }

    /** Size x ranks for a collective, else 0: {@code algbw_gbps} is reported only where positive. */
    public static long algbwBytesPerInvocation() {
        return algbwBytesPerInvocation;
    }

    /**
     * Rank 0 of a collective, in the iteration teardown: the spread over peers and ranks of the
     * iteration just measured (each in Gbps, see {@link Metrics}); read once by the profiler.
     */
    public static void publishIterationSpread(double[] minP50MaxPeerGbps, double slowestRankGbps) {
        iterationSpread = new double[] {minP50MaxPeerGbps[0], minP50MaxPeerGbps[1], minP50MaxPeerGbps[2], slowestRankGbps};
    }

    /** The spread published for the last iteration, cleared on reading; null when none. */
    static double[] takeIterationSpread() {
        double[] s = iterationSpread;
        iterationSpread = null;
        return s;
    }

    /** Rank 0, in the iteration teardown: NIC-counted bytes over the benchmark's own ({@link Metrics#nicBytesRatio}). */
    public static void publishNicBytesRatio(double ratio) {
        nicBytesRatio = ratio;
    }

    /** The ratio published for the last iteration, cleared on reading; NaN when none. */
    static double takeNicBytesRatio() {
        double r = nicBytesRatio;
        nicBytesRatio = Double.NaN;
        return r;
    }

    /** The trial's traffic, or null when no efabench benchmark published one. */
    public static Traffic current() {
        return current;
    }

    public boolean leader() {
        return rank == 0;
    }
}

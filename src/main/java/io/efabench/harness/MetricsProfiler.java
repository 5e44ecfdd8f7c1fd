package io.efabench.harness;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.Aggregator;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ResultRole;
import org.openjdk.jmh.results.ScalarResult;
import org.openjdk.jmh.util.ListStatistics;
import org.openjdk.jmh.util.SampleBuffer;
import org.openjdk.jmh.util.Statistics;

/**
 * Adds the secondary metrics {@code gbps}, {@code busbw_pct} and {@code lat_us} and, in
 * {@code -bm sample}, the latency percentiles {@code lat_p50_us}, {@code lat_p90_us},
 * {@code lat_p99_us}, {@code lat_p999_us} to every iteration of an efabench benchmark (enable
 * with {@code -prof io.efabench.harness.MetricsProfiler}; {@code run-jmh.sh} always does). The
 * latency metrics appear only where an invocation is one latency
 * ({@link Traffic#invocationIsLatency}): pipelined write rounds with {@code window} > 1 report
 * none, since a round's share of the time is not a latency. The
 * figures derive from JMH's own primary score (or, for GPU benchmarks, the CUDA-event time in
 * {@link DeviceClock}) and the {@link Traffic} the benchmark published, through the formulas in
 * {@link Metrics}. On follower ranks it adds only {@code follower} = the rank, to mark that
 * rank's numbers as mirrors, not results.
 *
 * <p>In {@code -bm sample} JMH pools every sample of every iteration into the primary score; the
 * metrics here pool the same samples ({@link Pooled}), so {@code lat_us} × transfers is the
 * primary score per invocation. A mean of iteration means would not be: a time-based iteration
 * with slow rounds holds fewer samples, and an unweighted mean over-weights it.
 */
public final class MetricsProfiler implements InternalProfiler {
    /** Percentiles reported in sample mode, and their metric names. */
    static final double[] PERCENTILES = {50, 90, 99, 99.9};
    static final String[] PERCENTILE_NAMES = {"lat_p50_us", "lat_p90_us", "lat_p99_us", "lat_p999_us"};

    @Override
    public String getDescription() {
        return "efabench secondary metrics: gbps, busbw_pct, lat_us, lat_pNN_us (rank 0 only)";
    }

    @Override
    public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
        DeviceClock.reset();
    }

    @Override
    public Collection<? extends Result> afterIteration(BenchmarkParams bp, IterationParams ip, IterationResult ir) {
        Traffic t = Traffic.current();
        List<Result> out = new ArrayList<>(8);
        if (t == null || ir.getRawPrimaryResults().isEmpty()) {
            return out; // not an efabench benchmark, or the iteration failed
        }
        if (!t.leader()) {
            out.add(new ScalarResult("follower", t.rank(), "rank", AggregationPolicy.MAX));
            return out;
        }
        double device = DeviceClock.meanAndReset();
        Result<?> primary = ir.getPrimaryResult();
        if (Double.isNaN(device) && bp.getMode() == Mode.SampleTime) {
            out.addAll(pooled(t, invocationNanos(primary, bp.getOpsPerInvocation(), ip.getBatchSize()),
                    t.invocationIsLatency() && ip.getBatchSize() == 1 && bp.getOpsPerInvocation() == 1));
        } else {
            double seconds = Double.isNaN(device) ? secondsPerInvocation(bp, ip, primary) : device;
            if (seconds > 0 && !Double.isInfinite(seconds)) {
                double gbps = Metrics.gbps(t.bytesPerInvocation(), seconds);
                out.add(new ScalarResult("gbps", gbps, "Gbps", AggregationPolicy.AVG));
                double pct = Metrics.busbwPct(gbps, t.linkGbps());
                if (!Double.isNaN(pct)) {
                    out.add(new ScalarResult("busbw_pct", pct, "%", AggregationPolicy.AVG));
                }
                if (t.invocationIsLatency()) {
                    out.add(new ScalarResult("lat_us", Metrics.transferLatUs(seconds, t.transfersPerInvocation()), "us",
                            AggregationPolicy.AVG));
                }
                Rounds.SeedRound seed = Traffic.seedRound();
                if (seed != null && t.invocationIsLatency()) {
                    out.add(new ScalarResult(seed.metric(), Metrics.transferLatUs(seconds, seed.perInvocation()), "us",
                            AggregationPolicy.AVG));
                }
                long algbwBytes = Traffic.algbwBytesPerInvocation();
                if (algbwBytes > 0) {
                    out.add(new ScalarResult("algbw_gbps", Metrics.gbps(algbwBytes, seconds), "Gbps", AggregationPolicy.AVG));
                    double alg = Metrics.ncclAlgbwGBs(algbwBytes, seconds);
                    out.add(new ScalarResult("nccl_algbw_gbs", alg, "GB/s", AggregationPolicy.AVG));
                    out.add(new ScalarResult("nccl_busbw_gbs", Metrics.ncclAlltoallBusbwGBs(alg, Traffic.collectiveRanks()),
                            "GB/s", AggregationPolicy.AVG));
                }
            }
        }
        double nicRatio = Traffic.takeNicBytesRatio();
        if (Double.isFinite(nicRatio)) {
            out.add(new ScalarResult("nic_bytes_ratio", nicRatio, "ratio", AggregationPolicy.AVG));
        }
        double[] spread = Traffic.takeIterationSpread();
        if (spread != null) {
            String[] names = {"min_peer_gbps", "max_peer_gbps", "slowest_rank_gbps"};
            for (int i = 0; i < names.length; i++) {
                if (spread[i] > 0 && !Double.isInfinite(spread[i])) {
                    out.add(new ScalarResult(names[i], spread[i], "Gbps", AggregationPolicy.AVG));
                }
            }
        }
        long checked = Traffic.checkedRounds();
        if (checked > 0) {
            // Running total, so the trial's figure (MAX) is every clean checked round, warm-up included.
            out.add(new ScalarResult("checked_rounds", checked, "rounds", AggregationPolicy.MAX));
        }
        return out;
    }

    /**
     * The sample-mode metrics of one iteration, all over one buffer of invocation times; with
     * {@code percentiles} false (a batch, several ops per invocation, or pipelined rounds: a
     * sample is then not one latency) only the mean-based ones.
     */
    static List<Pooled> pooled(Traffic t, SampleBuffer invocationNanos, boolean percentiles) {
        List<Pooled> out = new ArrayList<>(8);
        out.add(new Pooled("gbps", Pooled.GBPS, 0, invocationNanos, t));
        long algbwBytes = Traffic.algbwBytesPerInvocation();
        if (algbwBytes > 0) {
            out.add(new Pooled("algbw_gbps", Pooled.GBPS, 0, invocationNanos, algbwBytes, t.transfersPerInvocation(), 0));
            out.add(new Pooled("nccl_algbw_gbs", Pooled.NCCL_ALGBW, 0, invocationNanos, algbwBytes, Traffic.collectiveRanks(), 0));
            out.add(new Pooled("nccl_busbw_gbs", Pooled.NCCL_BUSBW, 0, invocationNanos, algbwBytes, Traffic.collectiveRanks(), 0));
        }
        if (t.linkGbps() > 0) {
            out.add(new Pooled("busbw_pct", Pooled.BUSBW_PCT, 0, invocationNanos, t));
        }
        if (!t.invocationIsLatency()) {
            return out; // pipelined rounds: an invocation's time is not a latency, so no lat_us at all
        }
        out.add(new Pooled("lat_us", Pooled.LAT_US, 0, invocationNanos, t));
        Rounds.SeedRound seed = Traffic.seedRound();
        if (seed != null) {
            out.add(new Pooled(seed.metric(), Pooled.LAT_US, 0, invocationNanos, t.bytesPerInvocation(), seed.perInvocation(), 0));
        }
        if (percentiles) {
            for (int i = 0; i < PERCENTILES.length; i++) {
                out.add(new Pooled(PERCENTILE_NAMES[i], Pooled.LAT_PERCENTILE, PERCENTILES[i], invocationNanos, t));
            }
        }
        return out;
    }

    /**
     * The iteration's samples (JMH's time per op, in the score unit) as nanoseconds per
     * invocation ({@link Metrics#secondsPerInvocation}).
     */
    static SampleBuffer invocationNanos(Result<?> samplePrimary, int opsPerInvocation, int batchSize) {
        String unit = samplePrimary.getScoreUnit();
        int slash = unit.indexOf('/');
        SampleBuffer b = new SampleBuffer();
        if (slash < 0 || unit.startsWith("ops/")) {
            return b;
        }
        double secondsPerUnit = secondsIn(unit.substring(0, slash));
        Iterator<Map.Entry<Double, Long>> it = samplePrimary.getStatistics().getRawData();
        while (it.hasNext()) {
            Map.Entry<Double, Long> e = it.next();
            long ns = Math.round(Metrics.secondsPerInvocation(e.getKey() * secondsPerUnit, opsPerInvocation, batchSize)
                    * 1e9);
            for (long n = e.getValue(); n > 0; n--) {
                b.add(Math.max(0, ns));
            }
        }
        return b;
    }

    /**
     * Seconds one {@code @Benchmark} invocation took, from the primary result: throughput
     * modes report operations per time unit, the others time per operation; in every mode an
     * operation is a batch ({@code -bs}) divided by operations-per-invocation
     * ({@link Metrics#secondsPerInvocation}).
     */
    static double secondsPerInvocation(BenchmarkParams bp, IterationParams ip, Result<?> primary) {
        return secondsPerInvocation(primary.getScore(), primary.getScoreUnit(), bp.getOpsPerInvocation(),
                ip.getBatchSize());
    }

    static double secondsPerInvocation(double score, String unit, int opsPerInvocation, int batchSize) {
        int slash = unit.indexOf('/');
        if (slash < 0) {
            return Double.NaN;
        }
        double perOp;
        if (unit.startsWith("ops/")) {
            perOp = 1.0 / (score / secondsIn(unit.substring(slash + 1)));
        } else {
            perOp = score * secondsIn(unit.substring(0, slash));
        }
        return Metrics.secondsPerInvocation(perOp, opsPerInvocation, batchSize);
    }

    private static double secondsIn(String unit) {
        TimeUnit tu = switch (unit) {
            case "ns" -> TimeUnit.NANOSECONDS;
            case "us" -> TimeUnit.MICROSECONDS;
            case "ms" -> TimeUnit.MILLISECONDS;
            case "s" -> TimeUnit.SECONDS;
            case "min" -> TimeUnit.MINUTES;
            case "hr" -> TimeUnit.HOURS;
            case "day" -> TimeUnit.DAYS;
            default -> throw new IllegalArgumentException("unknown JMH time unit " + unit);
        };
        return tu.toNanos(1) / 1e9;
    }

    /**
     * A sample-mode metric over pooled invocation times: iterations (and threads) merge their
     * samples, like JMH's own sample-mode score, and the figure is computed once over all of
     * them through {@link Metrics}. The score error is the 99.9% half-width of the mean carried
     * over to the metric (relative for gbps and busbw_pct); percentiles have none.
     */
    public static final class Pooled extends Result<Pooled> {
        private static final long serialVersionUID = 1L;
        static final int GBPS = 0;
        static final int BUSBW_PCT = 1;
        static final int LAT_US = 2;
        static final int LAT_PERCENTILE = 3;
        /** nccl-tests' algbw (GB/s) of {@code bytes} = size x N; {@code transfers} carries N. */
        static final int NCCL_ALGBW = 4;
        /** nccl-tests' alltoall busbw (GB/s): the algbw x (N-1)/N, N in {@code transfers}. */
        static final int NCCL_BUSBW = 5;

        private final int kind;
        private final double percentile;
        private final SampleBuffer invocationNanos;
        // Traffic's figures, not the record: results travel from the forked JVM by serialization.
        private final long bytes;
        private final int transfers;
        private final double linkGbps;
        private final long samples;
        private final double error;

        Pooled(String label, int kind, double percentile, SampleBuffer invocationNanos, Traffic t) {
            this(label, kind, percentile, invocationNanos, t.bytesPerInvocation(), t.transfersPerInvocation(),
                    t.linkGbps());
        }

        Pooled(String label, int kind, double percentile, SampleBuffer invocationNanos, long bytes,
                int transfers, double linkGbps) {
            this(label, kind, percentile, invocationNanos, bytes, transfers, linkGbps,
                    invocationNanos.getStatistics(1e-9));
        }

        private Pooled(String label, int kind, double percentile, SampleBuffer invocationNanos, long bytes,
                int transfers, double linkGbps, Statistics seconds) {
            super(ResultRole.SECONDARY, label, single(figure(kind, percentile, seconds, bytes, transfers, linkGbps)),
                    unit(kind), AggregationPolicy.AVG);
            this.kind = kind;
            this.percentile = percentile;
            this.invocationNanos = invocationNanos;
            this.bytes = bytes;
            this.transfers = transfers;
            this.linkGbps = linkGbps;
            this.samples = seconds.getN();
            double relative = seconds.getN() > 2 ? seconds.getMeanErrorAt(0.999) / seconds.getMean() : Double.NaN;
            this.error = kind == LAT_PERCENTILE ? Double.NaN : Math.abs(getScore() * relative);
        }

        private static double figure(int kind, double percentile, Statistics seconds, long bytes, int transfers,
                double linkGbps) {
            if (seconds.getN() == 0) {
                return Double.NaN;
            }
            double mean = seconds.getMean();
            return switch (kind) {
                case GBPS -> Metrics.gbps(bytes, mean);
                case BUSBW_PCT -> Metrics.busbwPct(Metrics.gbps(bytes, mean), linkGbps);
                case LAT_US -> Metrics.transferLatUs(mean, transfers);
                case NCCL_ALGBW -> Metrics.ncclAlgbwGBs(bytes, mean);
                case NCCL_BUSBW -> Metrics.ncclAlltoallBusbwGBs(Metrics.ncclAlgbwGBs(bytes, mean), transfers);
                default -> Metrics.transferLatUs(seconds.getPercentile(percentile), transfers);
            };
        }

        private static String unit(int kind) {
            return switch (kind) {
                case GBPS -> "Gbps";
                case BUSBW_PCT -> "%";
                case NCCL_ALGBW, NCCL_BUSBW -> "GB/s";
                default -> "us";
            };
        }

        private static Statistics single(double v) {
            ListStatistics s = new ListStatistics();
            s.addValue(v);
            return s;
        }

        @Override
        public double getScoreError() {
            return error;
        }

        @Override
        public double[] getScoreConfidence() {
            double score = getScore();
            return Double.isNaN(error) ? new double[] {score, score} : new double[] {score - error, score + error};
        }

        @Override
        public long getSampleCount() {
            return samples;
        }

        @Override
        protected Aggregator<Pooled> getThreadAggregator() {
            return Pooled::merge;
        }

        @Override
        protected Aggregator<Pooled> getIterationAggregator() {
            return Pooled::merge;
        }

        /** Pools the samples of several iterations (or threads) of one metric. */
        static Pooled merge(Collection<Pooled> results) {
            SampleBuffer all = new SampleBuffer();
            Pooled first = null;
            for (Pooled r : results) {
                all.addAll(r.invocationNanos);
                if (first == null) {
                    first = r;
                }
            }
            if (first == null) {
                throw new IllegalArgumentException("nothing to merge");
            }
            return new Pooled(first.getLabel(), first.kind, first.percentile, all, first.bytes, first.transfers,
                    first.linkGbps);
        }
    }
}

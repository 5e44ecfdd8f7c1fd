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
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;
import org.openjdk.jmh.util.SampleBuffer;

/**
 * Adds the secondary metrics {@code gbps}, {@code busbw_pct} and {@code lat_us} and, in
 * {@code -bm sample}, the latency percentiles {@code lat_p50_us}, {@code lat_p90_us},
 * {@code lat_p99_us}, {@code lat_p999_us} to every iteration of an efabench benchmark (enable
 * with {@code -prof io.efabench.harness.MetricsProfiler}; {@code run-jmh.sh} always does). The
 * latency metrics appear only where an invocation is one latency
 * ({@link Traffic#invocationIsLatency}): pipelined write rounds with {@code window} > 1 report
 * none, since a round's share of the time is not a latency. The
 * figures derive from JMH's own primary score (or, for GPU benchmarks, the CUDA-event time the benchmark
 * added to its sink) and the {@link Traffic} the trial gave its {@link MetricsSink}, through the formulas in
 * {@link Metrics}. On follower ranks it adds only {@code follower} = the rank, to mark that
 * rank's numbers as mirrors, not results.
 *
 * <p>Every figure is over the trial's total time, never a mean of per-iteration figures: rates
 * are the bytes of all measured invocations over the time they took, times are that time over
 * the invocations (or transfers). In {@code -bm sample} JMH pools every sample of every iteration
 * into the primary score; the metrics here pool the same samples ({@link PooledMetric}), so
 * {@code lat_us} × transfers is the primary score per invocation. In thrpt, avgt and ss each
 * iteration adds its invocations and their time ({@link OverTime}): JMH's avgt score is the plain
 * mean of its iterations' scores, so there {@code lat_us} × transfers differs from it where the
 * iterations differ (a slow iteration holds fewer invocations and weighs less here), and
 * {@code gbps} = bytes x 8 / that same mean time always.
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
        MetricsSink m = MetricsSink.current();
        if (m != null) {
            m.resetDeviceClock();
        }
    }

    @Override
    public Collection<? extends Result> afterIteration(BenchmarkParams bp, IterationParams ip, IterationResult ir) {
        MetricsSink m = MetricsSink.current();
        Traffic t = m == null ? null : m.traffic();
        List<Result> out = new ArrayList<>(8);
        if (t == null || ir.getRawPrimaryResults().isEmpty()) {
            return out; // not an efabench benchmark, or the iteration failed
        }
        if (!t.leader()) {
            out.add(new ScalarResult("follower", t.rank(), "rank", AggregationPolicy.MAX));
            return out;
        }
        double device = m.meanDeviceSecondsAndReset();
        Result<?> primary = ir.getPrimaryResult();
        if (Double.isNaN(device) && bp.getMode() == Mode.SampleTime) {
            out.addAll(pooled(m, invocationNanos(primary, bp.getOpsPerInvocation(), ip.getBatchSize()),
                    t.invocationIsLatency() && ip.getBatchSize() == 1 && bp.getOpsPerInvocation() == 1));
        } else {
            double seconds = Double.isNaN(device) ? secondsPerInvocation(bp, ip, primary) : device;
            if (seconds > 0 && !Double.isInfinite(seconds)) {
                double invocations = invocations(ir, bp.getOpsPerInvocation(), ip.getBatchSize());
                for (Figure f : figures(m)) {
                    out.add(new OverTime(f, seconds, invocations));
                }
            }
        }
        double nicRatio = m.takeNicBytesRatio();
        if (Double.isFinite(nicRatio)) {
            out.add(new ScalarResult("nic_bytes_ratio", nicRatio, "ratio", AggregationPolicy.AVG));
        }
        List<IterationFigure> figures = m.takeIterationFigures();
        if (figures != null) {
            for (IterationFigure f : figures) {
                if (Double.isFinite(f.value())) {
                    out.add(new ScalarResult(f.name(), f.value(), f.unit(), AggregationPolicy.AVG));
                }
            }
        }
        long checked = m.checkedRounds();
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
    static List<PooledMetric> pooled(MetricsSink m, SampleBuffer invocationNanos, boolean percentiles) {
        Traffic t = m.traffic();
        List<PooledMetric> out = new ArrayList<>(12);
        for (Figure f : figures(m)) {
            out.add(new PooledMetric(f, Double.NaN, invocationNanos));
        }
        if (percentiles && t.invocationIsLatency()) {
            for (int i = 0; i < PERCENTILES.length; i++) {
                out.add(new PooledMetric(new Figure(PERCENTILE_NAMES[i], Figure.LAT_US, 0, t.transfersPerInvocation(), 0),
                        PERCENTILES[i], invocationNanos));
            }
        }
        return out;
    }

    /**
     * The metrics that derive from a mean invocation time, for this trial's traffic: gbps,
     * algbw and nccl-tests' figures for a collective, busbw_pct where the link is known, and
     * where an invocation is a latency lat_us and the seed's unit (rtt_us, round_us).
     */
    static List<Figure> figures(MetricsSink m) {
        Traffic t = m.traffic();
        List<Figure> out = new ArrayList<>(8);
        if (t.bytesPerInvocation() > 0) { // MoE's bytes differ by round: its rates are iteration figures
            out.add(new Figure("gbps", Figure.GBPS, t.bytesPerInvocation(), 1, 0));
        }
        long algbwBytes = m.algbwBytesPerInvocation();
        if (algbwBytes > 0) {
            out.add(new Figure("algbw_gbps", Figure.GBPS, algbwBytes, 1, 0));
            out.add(new Figure("nccl_algbw_gbs", Figure.NCCL_ALGBW, algbwBytes, m.collectiveRanks(), 0));
            out.add(new Figure("nccl_busbw_gbs", Figure.NCCL_BUSBW, algbwBytes, m.collectiveRanks(), 0));
        }
        if (t.linkGbps() > 0 && t.bytesPerInvocation() > 0) {
            out.add(new Figure("busbw_pct", Figure.BUSBW_PCT, t.bytesPerInvocation(), 1, t.linkGbps()));
        }
        if (m.seedLinkGbps() > 0 && m.seedBytesPerInvocation() > 0) {
            out.add(new Figure("seed_busbw_pct", Figure.BUSBW_PCT, m.seedBytesPerInvocation(), 1, m.seedLinkGbps()));
        }
        if (t.invocationIsLatency()) { // pipelined rounds: an invocation's time is not a latency
            out.add(new Figure("lat_us", Figure.LAT_US, 0, t.transfersPerInvocation(), 0));
        }
        SeedRound seed = m.seedRound(); // the seed's unit, overlapping or not (the proxy's NBI rounds)
        if (seed != null) {
            out.add(new Figure(seed.metric(), Figure.LAT_US, 0, seed.perInvocation(), 0));
        }
        return out;
    }

    /**
     * Invocations the iteration measured: JMH's measured operations (invocations x
     * opsPerInvocation / batch in thrpt and avgt, batches in single-shot) turned back into
     * invocations; 1 where JMH reports none.
     */
    static double invocations(IterationResult ir, int opsPerInvocation, int batchSize) {
        long ops = ir.getMetadata() != null ? ir.getMetadata().getMeasuredOps() : 0;
        return ops > 0 ? (double) ops * Math.max(1, batchSize) / Math.max(1, opsPerInvocation) : 1;
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
}

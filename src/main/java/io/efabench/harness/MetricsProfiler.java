package io.efabench.harness;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * Adds the secondary metrics {@code gbps}, {@code busbw_pct} and {@code lat_us} to every
 * iteration of an efabench benchmark (enable with {@code -prof io.efabench.harness.MetricsProfiler};
 * {@code run-jmh.sh} always does). The figures derive from JMH's own primary score (or, for
 * GPU benchmarks, the CUDA-event time in {@link DeviceClock}) and the {@link Traffic} the
 * benchmark published, through the formulas in {@link Metrics}. On follower ranks it adds only
 * {@code follower} = the rank, to mark that rank's numbers as mirrors, not results.
 */
public final class MetricsProfiler implements InternalProfiler {

    @Override
    public String getDescription() {
        return "efabench secondary metrics: gbps, busbw_pct, lat_us (rank 0 only)";
    }

    @Override
    public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
        DeviceClock.reset();
    }

    @Override
    public Collection<? extends Result> afterIteration(BenchmarkParams bp, IterationParams ip, IterationResult ir) {
        Traffic t = Traffic.current();
        List<Result> out = new ArrayList<>(4);
        if (t == null || ir.getRawPrimaryResults().isEmpty()) {
            return out; // not an efabench benchmark, or the iteration failed
        }
        if (!t.leader()) {
            out.add(new ScalarResult("follower", t.rank(), "rank", AggregationPolicy.MAX));
            return out;
        }
        double device = DeviceClock.meanAndReset();
        double seconds = Double.isNaN(device) ? secondsPerInvocation(bp, ip, ir.getPrimaryResult()) : device;
        if (!(seconds > 0) || Double.isInfinite(seconds)) {
            return out;
        }
        double gbps = Metrics.gbps(t.bytesPerInvocation(), seconds);
        out.add(new ScalarResult("gbps", gbps, "Gbps", AggregationPolicy.AVG));
        double pct = Metrics.busbwPct(gbps, t.linkGbps());
        if (!Double.isNaN(pct)) {
            out.add(new ScalarResult("busbw_pct", pct, "%", AggregationPolicy.AVG));
        }
        out.add(new ScalarResult("lat_us", Metrics.latUs(seconds / t.transfersPerInvocation()), "us",
                AggregationPolicy.AVG));
        long checked = Traffic.checkedRounds();
        if (checked > 0) {
            // Running total, so the trial's figure (MAX) is every clean checked round, warm-up included.
            out.add(new ScalarResult("checked_rounds", checked, "rounds", AggregationPolicy.MAX));
        }
        return out;
    }

    /**
     * Seconds one {@code @Benchmark} invocation took, from the primary result: throughput
     * modes report operations per time unit, the others time per operation, where JMH has
     * divided by operations-per-invocation; single-shot scores time the whole batch
     * ({@code -bs}), so they are divided by the batch size here.
     */
    static double secondsPerInvocation(BenchmarkParams bp, IterationParams ip, Result<?> primary) {
        double score = primary.getScore();
        String unit = primary.getScoreUnit();
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
        double perInvocation = perOp * bp.getOpsPerInvocation();
        return bp.getMode() == Mode.SingleShotTime ? perInvocation / Math.max(1, ip.getBatchSize()) : perInvocation;
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

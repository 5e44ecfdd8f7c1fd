package io.efabench.report;

import java.util.Map;
import java.util.TreeMap;
import io.efabench.harness.Sizes;
import io.efabench.harness.BenchmarkSetupException;

/**
 * One entry of a JMH JSON result file: a benchmark method run with one set of params.
 *
 * @param benchmark fully qualified method, e.g. io.efabench.bench.WriteBenchmark.write
 * @param mode      JMH mode short label: thrpt, avgt, sample, ss
 * @param params    the @Param values exactly as JMH wrote them, in JMH's (sorted) key order
 * @param primary   the primary metric (the timed score)
 * @param secondary secondary metrics by name (gbps, busbw_pct, lat_us, profiler outputs)
 */
public record JmhResult(String benchmark, String mode, Map<String, String> params,
                        Metric primary, Map<String, Metric> secondary) {

    /** Name of the primary metric in {@link #metric(String)}. */
    public static final String PRIMARY = "score";

    /**
     * A score with JMH's error: the half-width of the 99.9% confidence interval, NaN when JMH
     * could not compute one (a single iteration).
     */
    public record Metric(double score, double error, String unit) {
        /** The error, or 0 when JMH reported none. */
        public double errorOrZero() {
            return Double.isFinite(error) ? error : 0;
        }
    }

    /** {@code "score"} is the primary metric; any other name a secondary metric, or null when absent. */
    public Metric metric(String name) {
        return PRIMARY.equals(name) ? primary : secondary.get(name);
    }

    /** The {@code size} param in bytes, or -1 when the benchmark has none. */
    public long sizeBytes() {
        String size = params.get("size");
        if (size == null) {
            return -1;
        }
        try {
            return Sizes.parse(size);
        } catch (BenchmarkSetupException e) {
            throw new ReportException(e.getMessage());
        }
    }

    /** "WriteBenchmark.write": the class's simple name and the method. */
    public String shortName() {
        int method = benchmark.lastIndexOf('.');
        int cls = method > 0 ? benchmark.lastIndexOf('.', method - 1) : -1;
        return benchmark.substring(cls + 1);
    }

    /** What identifies this entry across runs: benchmark, mode and every param. */
    public String key() {
        return benchmark + " " + mode + " " + new TreeMap<>(params);
    }
}

package io.efabench.harness.trial;

import java.util.TreeSet;

import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;

/**
 * What every rank of a trial must agree on: benchmark, params and the JMH settings that decide
 * how many iterations and invocations run. Two ranks with different keys would deadlock or
 * drift, so the rendezvous refuses them and names both keys.
 */
public final class TrialKey {
    private TrialKey() {}

    public static String of(BenchmarkParams bp) {
        StringBuilder sb = new StringBuilder();
        String name = bp.getBenchmark();
        sb.append(name.substring(name.lastIndexOf('.', name.lastIndexOf('.') - 1) + 1));
        for (String k : new TreeSet<>(bp.getParamsKeys())) {
            sb.append(' ').append(k).append('=').append(bp.getParam(k));
        }
        sb.append(" mode=").append(bp.getMode().shortLabel());
        sb.append(" warmup=").append(iterations(bp.getWarmup()));
        sb.append(" measurement=").append(iterations(bp.getMeasurement()));
        sb.append(" threads=").append(bp.getThreads());
        return sb.toString();
    }

    /**
     * The trial's name in file names (provenance fragments): the benchmark class's simple name and
     * its sorted params, so a later trial of the same run cannot overwrite an earlier one's files.
     */
    public static String tag(BenchmarkParams bp) {
        java.util.SortedMap<String, String> params = new java.util.TreeMap<>();
        bp.getParamsKeys().forEach(k -> params.put(k, bp.getParam(k)));
        return tag(benchmark(bp), params);
    }

    /** The benchmark class's simple name ({@code WriteBenchmark}), as users write it. */
    public static String benchmark(BenchmarkParams bp) {
        String name = bp.getBenchmark();
        String cls = name.substring(0, name.lastIndexOf('.'));
        return cls.substring(cls.lastIndexOf('.') + 1);
    }

    static String tag(String benchmark, java.util.SortedMap<String, String> params) {
        StringBuilder s = new StringBuilder(benchmark);
        params.forEach((k, v) -> s.append('-').append(k).append('_').append(v));
        return s.toString().replaceAll("[^A-Za-z0-9._-]", "_");
    }

    private static String iterations(IterationParams ip) {
        return ip.getCount() + "x" + ip.getTime() + (ip.getBatchSize() > 1 ? "/batch" + ip.getBatchSize() : "");
    }
}

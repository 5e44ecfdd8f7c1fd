package io.efabench.harness;

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

    private static String iterations(IterationParams ip) {
        return ip.getCount() + "x" + ip.getTime() + (ip.getBatchSize() > 1 ? "/batch" + ip.getBatchSize() : "");
    }
}

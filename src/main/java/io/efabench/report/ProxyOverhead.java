package io.efabench.report;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The proxy's overhead per round (issue "Proxy as the seed runs it"): every Proxy config's round
 * time minus its Direct twin's (ProxySingle - DirectSingle, ...: the same launch of rounds made by
 * the proxy thread itself, so the difference is the GPU queue: doorbell, push, quiet), from one
 * run with every other param equal. A round's time is the invocation's (a launch) over its
 * {@code rounds}; in sample mode the p50 and p99 rows subtract the twins' percentiles of it
 * ({@code lat_p50_us}, {@code lat_p99_us}: blocking configs only, NBI rounds overlap).
 */
final class ProxyOverhead {
    /** The proxy experiment's benchmark ({@link JmhResult#shortName}). */

    private ProxyOverhead() {}

    /** The overhead table of the proxy results among {@code results}; empty when no Proxy config has its Direct twin. */
    static String render(List<JmhResult> results) {
        Map<String, JmhResult> byKey = new HashMap<>();
        for (JmhResult r : results) {
            byKey.put(r.key(), r);
        }
        List<String[]> rows = new ArrayList<>();
        for (JmhResult proxy : results) {
            String config = proxy.params().get("config");
            if (!proxy.shortName().equals(Experiment.PROXY) || config == null || !config.startsWith("Proxy")) {
                continue;
            }
            Map<String, String> twinParams = new HashMap<>(proxy.params());
            twinParams.put("config", "Direct" + config.substring("Proxy".length()));
            JmhResult direct = byKey.get(new JmhResult(proxy.benchmark(), proxy.mode(), twinParams, null, Map.of()).key());
            if (direct == null) {
                continue;
            }
            double p = roundUs(proxy);
            double d = roundUs(direct);
            rows.add(new String[] {proxy.params().getOrDefault("size", Cells.MISSING), config, us(p), us(d), us(p - d),
                us(diff(proxy, direct, "lat_p50_us")), us(diff(proxy, direct, "lat_p99_us")), Cells.format(d / p, "%.3f")});
        }
        if (rows.isEmpty()) {
            return "";
        }
        StringBuilder out = new StringBuilder();
        out.append("Proxy overhead per round: a Proxy config's round minus its Direct twin's (the proxy thread making the same"
                + " requests), same run (us; p50/p99: sample mode, blocking configs)\n");
        out.append("| Size | Config | Proxy round | Direct round | Overhead | Overhead p50 | Overhead p99 | Proxy / Direct rate |\n");
        out.append("|-----:|:-------|------------:|-------------:|---------:|-------------:|-------------:|--------------------:|\n");
        for (String[] row : rows) {
            out.append("| ").append(String.join(" | ", row)).append(" |\n");
        }
        return out.toString();
    }

    /**
     * A round's time in us: {@code round_us} (total time over every round of the trial), or for
     * results without it the primary score (time per invocation, or invocations per time) over the rounds.
     */
    static double roundUs(JmhResult r) {
        JmhResult.Metric round = r.metric("round_us");
        if (round != null) {
            return round.score();
        }
        int rounds = Integer.parseInt(r.params().getOrDefault("rounds", "1"));
        JmhResult.Metric m = r.primary();
        String[] unit = m.unit().split("/");
        if (unit.length != 2) {
            return Double.NaN;
        }
        double us = unit[1].equals("op") ? m.score() * usPer(unit[0]) : usPer(unit[1]) / m.score();
        return us / rounds;
    }

    private static double usPer(String unit) {
        return switch (unit) {
            case "ns" -> 1e-3;
            case "us" -> 1;
            case "ms" -> 1e3;
            case "s" -> 1e6;
            case "min" -> 6e7;
            default -> Double.NaN;
        };
    }

    private static double diff(JmhResult a, JmhResult b, String metric) {
        JmhResult.Metric x = a.metric(metric);
        JmhResult.Metric y = b.metric(metric);
        return x == null || y == null ? Double.NaN : x.score() - y.score();
    }

    private static String us(double v) {
        return Cells.format(v, "%.2f");
    }
}

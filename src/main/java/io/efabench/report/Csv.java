package io.efabench.report;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import io.efabench.harness.Sizes;

/**
 * One CSV per experiment ({@code <stem>.csv}), one row per (config, params, size): long format
 * so that spreadsheets and pandas can pivot it. Absent metrics are empty cells.
 */
public final class Csv {
    private static final MathContext DIGITS = new MathContext(7);

    private Csv() {}

    /** Writes {@code <dir>/<stem>.csv} and returns its path. */
    public static Path write(Experiment e, Path dir) {
        Path file = dir.resolve(e.stem() + ".csv");
        try {
            Files.writeString(file, render(e));
        } catch (IOException ex) {
            throw new ReportException("cannot write " + file + ": " + ex.getMessage(), ex);
        }
        return file;
    }

    /**
     * Columns: size_bytes, size, config, the other params (sorted), gbps, gbps_error, busbw_pct,
     * lat_us, (lat_p50_us, lat_p90_us, lat_p99_us, lat_p999_us when any result has them),
     * checked_rounds (verified rounds behind the figure; empty where the benchmark has none),
     * (rtt_us or round_us, the seed's unit, where any result has it), (algbw_gbps, nccl_algbw_gbs,
     * nccl_busbw_gbs, min_peer_gbps, p50_peer_gbps, max_peer_gbps, slowest_rank_gbps for all-to-all), score,
     * score_error, score_unit, mode.
     */
    /** All-to-all's extra metrics, as columns where any result has them. */
    static final List<String> COLLECTIVE = List.of("algbw_gbps", "nccl_algbw_gbs", "nccl_busbw_gbs", "min_peer_gbps",
            "p50_peer_gbps", "max_peer_gbps", "slowest_rank_gbps");

    public static String render(Experiment e) {
        TreeSet<String> paramKeys = new TreeSet<>();
        e.cells().values().forEach(m -> m.values().forEach(r -> paramKeys.addAll(r.params().keySet())));
        paramKeys.remove("size");
        paramKeys.remove("config");
        List<String> header = new ArrayList<>(List.of("size_bytes", "size", "config"));
        header.addAll(paramKeys);
        boolean pct = Table.hasPercentiles(e);
        boolean collective = e.cells().values().stream().flatMap(m -> m.values().stream())
                .anyMatch(r -> r.metric("algbw_gbps") != null);
        header.addAll(List.of("gbps", "gbps_error", "busbw_pct", "lat_us"));
        if (pct) header.addAll(Table.PERCENTILES);
        header.add("checked_rounds");
        SeedUnit seed = SeedUnit.of(e);
        if (seed != null && seed.metric != null) header.add(seed.metric);
        if (collective) header.addAll(COLLECTIVE);
        header.addAll(List.of("score", "score_error", "score_unit", "mode"));
        StringBuilder out = new StringBuilder(String.join(",", header)).append('\n');
        for (String group : e.groups()) {
            for (long size : e.sizes()) {
                JmhResult r = e.cell(group, size);
                if (r == null) continue;
                List<String> row = new ArrayList<>();
                row.add(size < 0 ? "" : Long.toString(size));
                row.add(size < 0 ? "" : Sizes.label(size));
                row.add(r.params().getOrDefault("config", ""));
                for (String key : paramKeys) row.add(r.params().getOrDefault(key, ""));
                JmhResult.Metric gbps = r.metric("gbps");
                row.add(gbps == null ? "" : number(gbps.score()));
                row.add(gbps == null ? "" : number(gbps.error()));
                row.add(score(r.metric("busbw_pct")));
                row.add(score(r.metric("lat_us")));
                if (pct) {
                    for (String m : Table.PERCENTILES) row.add(score(r.metric(m)));
                }
                row.add(score(r.metric("checked_rounds")));
                if (seed != null && seed.metric != null) row.add(score(r.metric(seed.metric)));
                if (collective) {
                    for (String m : COLLECTIVE) row.add(score(r.metric(m)));
                }
                row.add(number(r.primary().score()));
                row.add(number(r.primary().error()));
                row.add(r.primary().unit());
                row.add(r.mode());
                out.append(String.join(",", row.stream().map(Csv::quote).toList())).append('\n');
            }
        }
        return out.toString();
    }

    private static String score(JmhResult.Metric m) {
        return m == null ? "" : number(m.score());
    }

    /** Seven significant digits, plain notation; empty for NaN/infinite. */
    static String number(double v) {
        if (!Double.isFinite(v)) return "";
        return new BigDecimal(v).round(DIGITS).stripTrailingZeros().toPlainString();
    }

    static String quote(String cell) {
        if (cell.indexOf(',') < 0 && cell.indexOf('"') < 0 && cell.indexOf('\n') < 0) return cell;
        return '"' + cell.replace("\"", "\"\"") + '"';
    }
}

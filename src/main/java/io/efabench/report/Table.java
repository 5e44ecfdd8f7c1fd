package io.efabench.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import io.efabench.harness.Sizes;

/**
 * Seed-style Markdown tables: {@code Size | Count | <config> Gbps | BusBW(%) | Lat(us)} repeated
 * per column group, every cell right-aligned; "-" where a metric is absent (busbw_pct is omitted
 * when the link speed is unknown), plus {@code p50(us) | p90(us) | p99(us) | p99.9(us)} per group
 * when the experiment has latency percentiles. Where results carry the seed's unit of time
 * ({@link SeedUnit}: SendRecv's {@code rtt_us}, all-to-all's {@code round_us}) the three columns
 * use the seed's formulas, said in the heading: Gbps = size x 8 / unit, Lat = unit, BusBW over the
 * link our busbw_pct used; all-to-all adds nccl-tests' {@code algbw(GB/s) | busbw(GB/s)}.
 */
public final class Table {
    /** The per-transfer latency percentiles of {@code -bm sample}, when a result has them. */
    static final List<String> PERCENTILES = List.of("lat_p50_us", "lat_p90_us", "lat_p99_us", "lat_p999_us");
    private static final List<String> PERCENTILE_HEADERS = List.of("p50(us)", "p90(us)", "p99(us)", "p99.9(us)");

    private Table() {}

    /** Heading, fixed params and the table of one experiment. */
    public static String render(Experiment e) {
        if (!hasMetric(e, "gbps")) {
            return renderScores(e);
        }
        StringBuilder out = heading(e);
        SeedUnit seed = SeedUnit.of(e);
        boolean nccl = hasMetric(e, "nccl_algbw_gbs");
        if (seed != null) {
            out.append(seed.note).append("\n\n");
        } else if (hasMetric(e, "seed_busbw_pct")) {
            out.append("BusBW(%) as the seed: over one NIC for Single, all of the rank's NICs for Multi and RoundRobin"
                    + " (JSON: seed_busbw_pct; busbw_pct is over the NICs a transfer used).\n\n");
        }
        List<List<String>> rows = new ArrayList<>();
        boolean pct = hasPercentiles(e);
        List<String> header = new ArrayList<>(List.of("Size", "Count"));
        for (String group : e.groups()) {
            header.addAll(List.of(group + " Gbps", "BusBW(%)", "Lat(us)"));
            if (nccl) header.addAll(List.of("algbw(GB/s)", "busbw(GB/s)"));
            if (pct) header.addAll(PERCENTILE_HEADERS);
        }
        rows.add(header);
        for (long size : e.sizes()) {
            List<String> row = new ArrayList<>();
            row.add(size < 0 ? Cells.MISSING : Sizes.label(size));
            row.add(size < 0 ? Cells.MISSING : Long.toString(size / Float.BYTES) /* the seed's count: 4-byte floats */);
            for (String group : e.groups()) {
                JmhResult r = e.cell(group, size);
                double[] f = SeedUnit.figures(seed, r, size);
                row.addAll(List.of(Cells.format(f[0], "%.2f"), Cells.format(f[1], "%.1f"), Cells.format(f[2], "%.2f")));
                if (nccl) {
                    row.add(format(r, "nccl_algbw_gbs", "%.2f"));
                    row.add(format(r, "nccl_busbw_gbs", "%.2f"));
                }
                if (pct) {
                    for (String m : PERCENTILES) row.add(format(r, m, "%.2f"));
                }
            }
            rows.add(row);
        }
        return out.append(markdown(rows)).toString();
    }

    /**
     * A benchmark that moves no payload (ProxyQueueBenchmark: requests/s, a round trip's time):
     * one row per column group with JMH's own score, error and unit, and in sample mode JMH's
     * percentiles of it.
     */
    private static String renderScores(Experiment e) {
        StringBuilder out = heading(e);
        boolean pct = hasMetric(e, JmhResults.SCORE_PERCENTILES[0][1]);
        List<List<String>> rows = new ArrayList<>();
        List<String> header = new ArrayList<>(List.of("Config", "Size", "Score", "Error", "Unit"));
        if (pct) header.addAll(List.of("p50", "p90", "p99", "p99.9"));
        rows.add(header);
        for (String group : e.groups()) {
            for (long size : e.sizes()) {
                JmhResult r = e.cell(group, size);
                if (r == null) continue;
                List<String> row = new ArrayList<>(List.of(group, size < 0 ? Cells.MISSING : Sizes.label(size),
                        format(r, "score", "%.3f"), Double.isFinite(r.primary().error())
                                ? String.format(Locale.ROOT, "%.3f", r.primary().error()) : Cells.MISSING, r.primary().unit()));
                if (pct) {
                    for (String[] p : JmhResults.SCORE_PERCENTILES) row.add(format(r, p[1], "%.3f"));
                }
                rows.add(row);
            }
        }
        return out.append(markdown(rows, 1)).toString();
    }

    private static StringBuilder heading(Experiment e) {
        StringBuilder out = new StringBuilder();
        out.append("## ").append(e.shortName()).append(" (").append(e.mode()).append(")\n");
        if (!e.fixed().isEmpty()) {
            List<String> fixed = new ArrayList<>();
            e.fixed().forEach((k, v) -> fixed.add(k + "=" + v));
            out.append("params: ").append(String.join(", ", fixed)).append('\n');
        }
        return out.append('\n');
    }

    private static boolean hasMetric(Experiment e, String metric) {
        return e.cells().values().stream().flatMap(m -> m.values().stream()).anyMatch(r -> r.metric(metric) != null);
    }

    /** Whether any result of the experiment has the latency percentiles (sample mode, one latency per sample). */
    static boolean hasPercentiles(Experiment e) {
        return hasMetric(e, PERCENTILES.getFirst());
    }

    private static String format(JmhResult r, String metric, String pattern) {
        JmhResult.Metric m = r == null ? null : r.metric(metric);
        return m == null || !Double.isFinite(m.score()) ? Cells.MISSING : String.format(Locale.ROOT, pattern, m.score());
    }

    /** Rows (the first is the header) as a Markdown table with right-aligned, padded columns. */
    static String markdown(List<List<String>> rows) {
        return markdown(rows, 0);
    }

    /** As {@link #markdown(List)}, with the first {@code leftAligned} columns (names, not numbers) left-aligned. */
    static String markdown(List<List<String>> rows, int leftAligned) {
        int[] width = new int[rows.getFirst().size()];
        for (List<String> row : rows) {
            for (int c = 0; c < row.size(); c++) width[c] = Math.max(width[c], row.get(c).length());
        }
        StringBuilder out = new StringBuilder();
        for (int r = 0; r < rows.size(); r++) {
            line(out, rows.get(r), width, leftAligned);
            if (r == 0) {
                out.append('|');
                for (int c = 0; c < width.length; c++) {
                    out.append(c < leftAligned ? ":" + "-".repeat(width[c] + 1) + "|" : "-".repeat(width[c] + 1) + ":|");
                }
                out.append('\n');
            }
        }
        return out.toString();
    }

    private static void line(StringBuilder out, List<String> cells, int[] width, int leftAligned) {
        out.append('|');
        for (int c = 0; c < width.length; c++) {
            String cell = cells.get(c);
            String pad = " ".repeat(width[c] - cell.length());
            out.append(' ').append(c < leftAligned ? cell + pad : pad + cell).append(" |");
        }
        out.append('\n');
    }
}

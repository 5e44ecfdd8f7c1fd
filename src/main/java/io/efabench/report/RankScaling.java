package io.efabench.report;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;

import com.google.gson.JsonObject;

/**
 * Bandwidth against rank count (the seed's "bandwidth vs nodes" figure), from several runs of
 * the same benchmark at different rank counts: one line per (benchmark, config and other params,
 * size), x = the run's rank count from its provenance. Writes {@code ranks.csv} and, per
 * benchmark, {@code <stem>-ranks.png} into the last run's folder, and prints a table.
 */
final class RankScaling {
    private RankScaling() {}

    /** One result of one run, with that run's rank count. */
    record Point(int ranks, JmhResult result) {}

    static int run(List<Path> runs, String metric, PrintStream out) {
        if (runs.size() < 2) {
            throw new ReportException("ranks needs two or more runs (run dirs or JMH JSON files), got " + runs.size());
        }
        // series key -> rank count -> result (a later run at the same rank count replaces an earlier one)
        List<Point> points = new ArrayList<>();
        for (Path run : runs) {
            int ranks = ranksOf(run);
            for (JmhResult r : JmhResults.read(run)) {
                points.add(new Point(ranks, r));
            }
        }
        // A series is named by the params that vary within its benchmark (config, size...), like a table's groups.
        Map<String, Map<String, java.util.Set<String>>> values = new LinkedHashMap<>();
        for (Point p : points) {
            p.result().params().forEach((k, v) -> values.computeIfAbsent(benchmarkOf(p.result()), b -> new TreeMap<>())
                    .computeIfAbsent(k, x -> new java.util.TreeSet<>()).add(v));
        }
        Map<String, Map<String, TreeMap<Integer, JmhResult>>> byBenchmark = new LinkedHashMap<>();
        java.util.TreeSet<Integer> rankCounts = new java.util.TreeSet<>();
        for (Point p : points) {
            String b = benchmarkOf(p.result());
            List<String> parts = new ArrayList<>();
            new TreeMap<>(p.result().params()).forEach((k, v) -> {
                if (values.get(b).get(k).size() > 1) {
                    parts.add(k + "=" + v);
                }
            });
            String series = parts.isEmpty() ? "all" : String.join(", ", parts);
            byBenchmark.computeIfAbsent(b, k -> new LinkedHashMap<>()).computeIfAbsent(series, k -> new TreeMap<>())
                    .put(p.ranks(), p.result());
            rankCounts.add(p.ranks());
        }
        Path dir = JmhResults.runDir(runs.getLast());
        StringBuilder csv = new StringBuilder("benchmark,series,ranks," + metric + "," + metric + "_error\n");
        List<String> pngs = new ArrayList<>();
        for (var b : byBenchmark.entrySet()) {
            out.println();
            out.println("## " + b.getKey() + ": " + metric + " by rank count");
            out.println();
            StringBuilder head = new StringBuilder("| series |");
            StringBuilder rule = new StringBuilder("|---|");
            for (int n : rankCounts) {
                head.append(' ').append(n).append(" ranks |");
                rule.append("---:|");
            }
            out.println(head);
            out.println(rule);
            XYChart chart = new XYChartBuilder().width(Plots.WIDTH).height(Plots.HEIGHT)
                    .title(b.getKey() + ": " + metric + " vs rank count").xAxisTitle("Ranks").yAxisTitle(metric).build();
            Plots.style(chart.getStyler(), chart.getTitle());
            chart.getStyler().setYAxisMin(0.0);
            chart.getStyler().setXAxisDecimalPattern("#");
            for (var s : b.getValue().entrySet()) {
                List<Double> xs = new ArrayList<>();
                List<Double> ys = new ArrayList<>();
                StringBuilder line = new StringBuilder("| " + s.getKey() + " |");
                for (int n : rankCounts) {
                    JmhResult r = s.getValue().get(n);
                    JmhResult.Metric m = r == null ? null : r.metric(metric);
                    if (m == null || !Double.isFinite(m.score())) {
                        line.append(" - |");
                        continue;
                    }
                    xs.add((double) n);
                    ys.add(m.score());
                    line.append(String.format(" %.2f |", m.score()));
                    csv.append(String.join(",", Csv.quote(b.getKey()), Csv.quote(s.getKey()), Integer.toString(n),
                            Csv.number(m.score()), Csv.number(m.error()))).append('\n');
                }
                out.println(line);
                if (xs.size() >= 2) {
                    chart.addSeries(s.getKey(), xs, ys);
                }
            }
            if (!chart.getSeriesMap().isEmpty()) {
                Path png = dir.resolve(b.getKey().replaceAll("[^A-Za-z0-9]+", "-").replaceAll("-+$", "").toLowerCase()
                        + "-ranks.png");
                try {
                    pngs.add(Plots.save(chart, png).getFileName().toString());
                } catch (RuntimeException | Error e) {
                    out.println("plot skipped: " + e);
                }
            }
        }
        Path file = dir.resolve("ranks.csv");
        try {
            Files.writeString(file, csv);
        } catch (IOException e) {
            throw new ReportException("cannot write " + file + ": " + e.getMessage(), e);
        }
        out.println();
        out.println("csv: ranks.csv" + (pngs.isEmpty() ? "" : ", plots: " + String.join(" ", pngs)) + " in " + dir);
        return 0;
    }

    private static String benchmarkOf(JmhResult r) {
        return r.shortName() + " (" + r.mode() + ")";
    }

    /** The run's rank count, from its provenance ("ranks"). */
    static int ranksOf(Path run) {
        JsonObject p = Provenance.load(JmhResults.runDir(run));
        String ranks = Provenance.brief(p.get("ranks"));
        try {
            return Integer.parseInt(ranks);
        } catch (NumberFormatException e) {
            throw new ReportException(run + ": its provenance names no rank count (\"ranks\"); run it through run-jmh.sh");
        }
    }
}

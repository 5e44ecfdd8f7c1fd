package io.efabench.report;

import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.AxesChartStyler;
import org.knowm.xchart.style.Styler;
import io.efabench.harness.Sizes;

/**
 * PNG charts of one experiment, 1000x600: {@code <stem>-bandwidth.png} (Gbps vs size, log2
 * x axis), {@code <stem>-latency.png} (log-log) and, for a grid x block sweep,
 * {@code <stem>-sweep.png} (Gbps per launch shape, bars per size). No error bars: with few
 * iterations JMH's 99.9% intervals dwarf the curves; the CSV carries them.
 */
public final class Plots {
    public static final int WIDTH = 1000;
    public static final int HEIGHT = 600;
    private static final int MAX_SWEEP_SIZES = 4;

    static {
        System.setProperty("java.awt.headless", "true");
    }

    private Plots() {}

    /** Writes the charts that the experiment has data for; {@code context} (e.g. "tcp, 2 ranks") goes into titles. */
    public static List<Path> write(Experiment e, Path dir, String context) {
        List<Path> files = new ArrayList<>();
        if (e.sizes().stream().noneMatch(s -> s > 0)) return files;
        String subtitle = subtitle(e, context);
        XYChart bandwidth = sizeChart(e, "bandwidth vs message size" + subtitle, "Bandwidth (Gbps)", "gbps", false);
        if (bandwidth != null) files.add(save(bandwidth, dir.resolve(e.stem() + "-bandwidth.png")));
        XYChart latency = sizeChart(e, "latency vs message size" + subtitle, "Latency (us, log scale)", "lat_us", true);
        if (latency != null) files.add(save(latency, dir.resolve(e.stem() + "-latency.png")));
        if (e.isGridBlockSweep()) {
            CategoryChart sweep = sweepChart(e, subtitle);
            if (sweep != null) files.add(save(sweep, dir.resolve(e.stem() + "-sweep.png")));
        }
        return files;
    }

    private static String subtitle(Experiment e, String context) {
        List<String> parts = new ArrayList<>();
        if (context != null && !context.isBlank()) parts.add(context);
        e.fixed().forEach((k, v) -> parts.add(k + "=" + v));
        parts.add(e.mode());
        return " (" + String.join(", ", parts) + ")";
    }

    /** One line per column group; x = log2(size) labelled 256K/1M/1G. Null when no group has the metric. */
    private static XYChart sizeChart(Experiment e, String what, String yTitle, String metric, boolean logY) {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT)
                .title(e.shortName() + ": " + what).xAxisTitle("Message size (bytes, log2 scale)").yAxisTitle(yTitle).build();
        style(chart.getStyler(), chart.getTitle());
        chart.getStyler().setxAxisTickLabelsFormattingFunction(Plots::log2Label);
        chart.getStyler().setYAxisLogarithmic(logY);
        chart.getStyler().setYAxisDecimalPattern(logY ? "#,##0.###" : "#,##0.#");
        if (!logY) chart.getStyler().setYAxisMin(0.0);
        double minX = Double.MAX_VALUE, maxX = -Double.MAX_VALUE;
        for (String group : e.groups()) {
            List<Double> xs = new ArrayList<>(), ys = new ArrayList<>();
            for (long size : e.sizes()) {
                JmhResult r = e.cell(group, size);
                JmhResult.Metric m = r == null ? null : r.metric(metric);
                if (size <= 0 || m == null || !Double.isFinite(m.score()) || (logY && m.score() <= 0)) continue;
                double x = Math.log(size) / Math.log(2);
                xs.add(x);
                ys.add(m.score());
                minX = Math.min(minX, x);
                maxX = Math.max(maxX, x);
            }
            if (xs.isEmpty()) continue;
            java.awt.Color color = chart.addSeries(group, xs, ys).getLineColor(); // XChart cycles marker shapes, so overlapping lines stay apart
            if (metric.equals("lat_us")) {
                addBand(chart, e, group, "lat_p50_us", "p50", color);
                addBand(chart, e, group, "lat_p99_us", "p99", color);
            }
        }
        if (chart.getSeriesMap().isEmpty()) return null;
        // Whole powers of two at both ends: XChart formats the ends too, and an empty label there hides all ticks.
        chart.getStyler().setXAxisMin(Math.floor(minX) - 1);
        chart.getStyler().setXAxisMax(Math.ceil(maxX) + 1);
        return chart;
    }

    /** A dashed line of a latency percentile under (p50) or over (p99) a group's mean, in the group's colour. */
    private static void addBand(XYChart chart, Experiment e, String group, String metric, String name,
            java.awt.Color color) {
        List<Double> xs = new ArrayList<>(), ys = new ArrayList<>();
        for (long size : e.sizes()) {
            JmhResult r = e.cell(group, size);
            JmhResult.Metric m = r == null ? null : r.metric(metric);
            if (size <= 0 || m == null || !Double.isFinite(m.score()) || m.score() <= 0) continue;
            xs.add(Math.log(size) / Math.log(2));
            ys.add(m.score());
        }
        if (xs.isEmpty()) return;
        org.knowm.xchart.XYSeries s = chart.addSeries(group + " " + name, xs, ys);
        s.setLineStyle(org.knowm.xchart.style.lines.SeriesLines.DASH_DASH);
        s.setMarker(org.knowm.xchart.style.markers.SeriesMarkers.NONE);
        if (color != null) {
            s.setLineColor(color);
        }
    }

    /** Bars: one category per grid x block (and copy-engine) group, one bar per selected size. */
    private static CategoryChart sweepChart(Experiment e, String subtitle) {
        CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT)
                .title(e.shortName() + ": bandwidth by grid x block" + subtitle)
                .xAxisTitle("Launch shape (grid x block) or config").yAxisTitle("Bandwidth (Gbps)").build();
        style(chart.getStyler(), chart.getTitle());
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setYAxisDecimalPattern("#,##0.#");
        if (e.groups().size() > 6) chart.getStyler().setXAxisLabelRotation(30);
        for (long size : sweepSizes(e.sizes())) {
            List<String> xs = new ArrayList<>();
            List<Double> ys = new ArrayList<>();
            for (String group : e.groups()) {
                JmhResult r = e.cell(group, size);
                JmhResult.Metric m = r == null ? null : r.metric("gbps");
                xs.add(group);
                ys.add(m == null || !Double.isFinite(m.score()) ? 0.0 : m.score());
            }
            chart.addSeries(Sizes.label(size), xs, ys);
        }
        return chart.getSeriesMap().isEmpty() ? null : chart;
    }

    /** At most four sizes, spread over the sweep and always including the largest. */
    static List<Long> sweepSizes(List<Long> sizes) {
        List<Long> positive = sizes.stream().filter(s -> s > 0).toList();
        if (positive.size() <= MAX_SWEEP_SIZES) return positive;
        List<Long> picked = new ArrayList<>();
        for (int i = 0; i < MAX_SWEEP_SIZES; i++) {
            long s = positive.get((int) Math.round(i * (positive.size() - 1) / (double) (MAX_SWEEP_SIZES - 1)));
            if (!picked.contains(s)) picked.add(s);
        }
        return picked;
    }

    private static String log2Label(double x) {
        long k = Math.round(x);
        if (Math.abs(x - k) > 1e-6 || k < 0 || k > 62) return "";
        return Sizes.label(1L << k);
    }

    /** Title font size that keeps a long title (benchmark, provider, ranks, params) inside the image. */
    private static int titleFontSize(String title) {
        return (int) Math.max(10, Math.min(16, (WIDTH - 60) / (0.62 * Math.max(1, title.length()))));
    }

    static void style(AxesChartStyler s, String title) {
        s.setChartBackgroundColor(Color.WHITE);
        s.setPlotBackgroundColor(Color.WHITE);
        s.setPlotGridLinesColor(new Color(220, 220, 220));
        s.setPlotBorderVisible(true);
        s.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, titleFontSize(title)));
        s.setAxisTitleFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        s.setAxisTickLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        s.setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        s.setLegendPosition(Styler.LegendPosition.OutsideE);
        s.setLegendBorderColor(new Color(200, 200, 200));
        s.setChartTitleBoxVisible(false);
        s.setAntiAlias(true);
    }

    static Path save(org.knowm.xchart.internal.chartpart.Chart<?, ?> chart, Path file) {
        try {
            BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
        } catch (IOException ex) {
            throw new ReportException("cannot write " + file + ": " + ex.getMessage(), ex);
        }
        return file;
    }
}

package io.efabench.report;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;

import io.efabench.provenance.JvmLayout;

/**
 * Compares two runs entry by entry (same benchmark, mode and params). A change counts when
 * |new - old| exceeds the combined error errOld + errNew (JMH's scoreError is the half-width of
 * the 99.9% confidence interval; a missing error counts as 0). A regression is a change for the
 * worse that is both beyond the combined error and larger than the threshold in percent.
 */
public final class Compare {
    /** Exit status: no regression. */
    public static final int OK = 0;
    /** Exit status: at least one matched entry regressed beyond threshold and error. */
    public static final int REGRESSED = 1;
    /**
     * Exit status: no entry of OLD matches one of NEW (benchmark, mode and params), so nothing
     * was compared; a CI gate must not read that as "no regression".
     */
    public static final int NOTHING_MATCHED = 4;

    public enum Verdict {
        REGRESSION("REGRESSION"), IMPROVEMENT("improved"), SMALL_WORSE("worse, under threshold"),
        SMALL_BETTER("better, under threshold"), NOISE("within error"), NO_DATA("n/a");

        final String text;

        Verdict(String text) {
            this.text = text;
        }
    }

    /** One matched entry. changePct is NaN when either side lacks the metric or old is 0. */
    public record Row(JmhResult oldResult, JmhResult newResult, JmhResult.Metric oldMetric,
                      JmhResult.Metric newMetric, double changePct, boolean beyondError, Verdict verdict) {}

    /** The outcome: matched rows and the keys present in one file only. */
    public record Outcome(List<Row> rows, List<JmhResult> onlyOld, List<JmhResult> onlyNew) {
        public boolean regressed() {
            return rows.stream().anyMatch(r -> r.verdict() == Verdict.REGRESSION);
        }
    }

    private Compare() {}

    /** Reads both files, prints the comparison, returns {@link #OK}, {@link #REGRESSED} or {@link #NOTHING_MATCHED}. */
    public static int run(Path oldPath, Path newPath, String metric, double thresholdPct, PrintStream out) {
        if (!(thresholdPct >= 0)) throw new ReportException("threshold must be a percentage >= 0, got " + thresholdPct);
        List<JmhResult> olds = JmhResults.read(oldPath);
        List<JmhResult> news = JmhResults.read(newPath);
        requireMetric(olds, metric, "OLD " + oldPath);
        requireMetric(news, metric, "NEW " + newPath);
        Outcome outcome = compare(olds, news, metric, thresholdPct);
        print(outcome, metric, thresholdPct, oldPath, newPath, out);
        String layout = layoutDifference(Provenance.load(runDir(oldPath)), Provenance.load(runDir(newPath)));
        if (layout != null) {
            out.println(layout);
        }
        return outcome.rows().isEmpty() ? NOTHING_MATCHED : outcome.regressed() ? REGRESSED : OK;
    }

    /** Matches entries and judges each; pure, for tests and other callers. */
    public static Outcome compare(List<JmhResult> olds, List<JmhResult> news, String metric, double thresholdPct) {
        Map<String, JmhResult> newByKey = new LinkedHashMap<>();
        news.forEach(r -> newByKey.putIfAbsent(r.key(), r));
        Set<String> oldKeys = new TreeSet<>();
        List<Row> rows = new ArrayList<>();
        List<JmhResult> onlyOld = new ArrayList<>();
        for (JmhResult o : olds) {
            if (!oldKeys.add(o.key())) continue;
            JmhResult n = newByKey.get(o.key());
            if (n == null) onlyOld.add(o);
            else rows.add(judge(o, n, metric, thresholdPct));
        }
        List<JmhResult> onlyNew = newByKey.values().stream().filter(n -> !oldKeys.contains(n.key())).toList();
        return new Outcome(rows, onlyOld, onlyNew);
    }

    /**
     * One line when the two runs' JVMs laid objects out differently (provenance's {@code
     * jvm_layout}: header, reference and alignment sizes and the flags behind them), naming each
     * fact that changed; a Java-side figure (footprint, false sharing) moves with them. Null when
     * both agree or neither recorded it.
     */
    static String layoutDifference(JsonObject oldProvenance, JsonObject newProvenance) {
        JsonElement o = oldProvenance.get(JvmLayout.KEY);
        JsonElement n = newProvenance.get(JvmLayout.KEY);
        if (o == null && n == null) return null;
        if (o == null || n == null) {
            return "JVM layout: recorded in " + (o == null ? "NEW" : "OLD") + " only (" + Provenance.brief(o == null ? n : o)
                    + "): the other run predates it or has no provenance";
        }
        if (o.equals(n)) return null;
        if (!o.isJsonObject() || !n.isJsonObject() || o.getAsJsonObject().has(Provenance.PER_SOURCE)
                || n.getAsJsonObject().has(Provenance.PER_SOURCE)) {
            return "JVM layout differs (a run's ranks disagree among themselves): OLD " + Provenance.brief(o) + " -> NEW " + Provenance.brief(n);
        }
        List<String> changes = new ArrayList<>();
        Set<String> keys = new TreeSet<>(o.getAsJsonObject().keySet());
        keys.addAll(n.getAsJsonObject().keySet());
        for (String k : keys) {
            JsonElement a = o.getAsJsonObject().get(k);
            JsonElement b = n.getAsJsonObject().get(k);
            if (a == null ? b != null : !a.equals(b)) {
                changes.add(k + " " + (a == null ? "-" : Provenance.brief(a)) + " -> " + (b == null ? "-" : Provenance.brief(b)));
            }
        }
        return "JVM layout differs: " + String.join("; ", changes)
                + " (Java-side footprints and which fields share a cache line hold for one layout)";
    }

    /** A run folder, or the folder a result file sits in. */
    private static Path runDir(Path fileOrRunDir) {
        if (java.nio.file.Files.isDirectory(fileOrRunDir)) return fileOrRunDir;
        Path parent = fileOrRunDir.toAbsolutePath().getParent();
        return parent == null ? fileOrRunDir : parent;
    }

    static Row judge(JmhResult o, JmhResult n, String metric, double thresholdPct) {
        JmhResult.Metric om = o.metric(metric);
        JmhResult.Metric nm = n.metric(metric);
        if (om == null || nm == null || !Double.isFinite(om.score()) || !Double.isFinite(nm.score()) || om.score() == 0) {
            return new Row(o, n, om, nm, Double.NaN, false, Verdict.NO_DATA);
        }
        double change = (nm.score() - om.score()) / Math.abs(om.score()) * 100;
        boolean beyond = Math.abs(nm.score() - om.score()) > om.errorOrZero() + nm.errorOrZero();
        double worsePct = higherIsBetter(metric, o) ? -change : change;
        Verdict v;
        if (!beyond) v = Verdict.NOISE;
        else if (worsePct > thresholdPct) v = Verdict.REGRESSION;
        else if (-worsePct > thresholdPct) v = Verdict.IMPROVEMENT;
        else v = worsePct > 0 ? Verdict.SMALL_WORSE : Verdict.SMALL_BETTER;
        return new Row(o, n, om, nm, change, beyond, v);
    }

    /**
     * Bandwidths and throughput: higher is better. Latencies and time-per-operation scores
     * (avgt, sample, ss): lower is better.
     */
    static boolean higherIsBetter(String metric, JmhResult r) {
        switch (metric) {
            case "gbps", "busbw_pct" -> { return true; }
            case "lat_us" -> { return false; }
            case JmhResult.PRIMARY -> { return r.mode().equals("thrpt"); }
            default -> {
                JmhResult.Metric m = r.metric(metric);
                String unit = m == null ? "" : m.unit();
                return !(unit.endsWith("/op") || unit.matches("(ns|us|µs|ms|s|min|hr)"));
            }
        }
    }

    private static void requireMetric(List<JmhResult> results, String metric, String which) {
        if (JmhResult.PRIMARY.equals(metric) || results.stream().anyMatch(r -> r.metric(metric) != null)) return;
        Set<String> available = new TreeSet<>();
        results.forEach(r -> available.addAll(r.secondary().keySet()));
        available.add(JmhResult.PRIMARY);
        throw new ReportException("metric '" + metric + "' not found in " + which + "; available: " + String.join(", ", available));
    }

    private static void print(Outcome outcome, String metric, double thresholdPct, Path oldPath, Path newPath, PrintStream out) {
        out.printf(Locale.ROOT, "compare %s: OLD %s -> NEW %s, threshold %s%%%n", metric, oldPath, newPath, Csv.number(thresholdPct));
        out.println("(a change counts when |new - old| > errOld + errNew, the 99.9% half-widths added)");
        out.println();
        List<List<String>> table = new ArrayList<>();
        table.add(List.of("Benchmark", "Mode", "Params", "Old", "New", "Change", "Beyond error", "Verdict"));
        for (Row r : outcome.rows()) {
            table.add(List.of(r.oldResult().shortName(), r.oldResult().mode(), params(r.oldResult()),
                    value(r.oldMetric()), value(r.newMetric()),
                    Double.isNaN(r.changePct()) ? "-" : String.format(Locale.ROOT, "%+.1f%%", r.changePct()),
                    r.verdict() == Verdict.NO_DATA ? "-" : r.beyondError() ? "yes" : "no", r.verdict().text));
        }
        if (!outcome.rows().isEmpty()) out.print(Table.markdown(table, 3));
        for (JmhResult r : outcome.onlyOld()) out.println("only in OLD: " + r.shortName() + " " + r.mode() + " " + params(r));
        for (JmhResult r : outcome.onlyNew()) out.println("only in NEW: " + r.shortName() + " " + r.mode() + " " + params(r));
        if (outcome.rows().isEmpty()) {
            out.println();
            out.println("nothing compared: no entry of OLD (" + oldPath + ") matches one of NEW (" + newPath
                    + ") in benchmark, mode and params (exit " + NOTHING_MATCHED + ")");
            return;
        }
        long regressions = outcome.rows().stream().filter(r -> r.verdict() == Verdict.REGRESSION).count();
        out.println();
        out.println(regressions == 0
                ? "no regression beyond " + Csv.number(thresholdPct) + "% and the combined error"
                : regressions + " regression(s) beyond " + Csv.number(thresholdPct) + "% and the combined error");
    }

    private static String params(JmhResult r) {
        List<String> parts = new ArrayList<>();
        r.params().forEach((k, v) -> parts.add(k + "=" + v));
        return String.join(" ", parts);
    }

    private static String value(JmhResult.Metric m) {
        if (m == null) return "-";
        String err = Double.isFinite(m.error()) ? readable(m.error()) : "?";
        return (readable(m.score()) + " ± " + err + " " + m.unit()).trim();
    }

    /** Two decimals for ordinary magnitudes, four significant digits for small ones, no exponents. */
    static String readable(double v) {
        double a = Math.abs(v);
        if (!Double.isFinite(v)) return String.valueOf(v);
        if (a >= 1 || a == 0) return String.format(Locale.ROOT, "%.2f", v);
        return new java.math.BigDecimal(v).round(new java.math.MathContext(4)).stripTrailingZeros().toPlainString();
    }
}

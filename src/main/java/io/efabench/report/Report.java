package io.efabench.report;

import com.google.gson.JsonObject;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Command line: {@code java -cp benchmarks.jar io.efabench.report.Report <command> ...}.
 * Exit status: 0 done, 1 compare found a regression, 2 bad input or usage, 3 internal error.
 */
public final class Report {
    public static final int USAGE = 2;
    public static final int INTERNAL = 3;

    static final String USAGE_TEXT = """
            usage: Report <command> ...
              tables <run-dir|jmh.json>     print seed-style tables, write <experiment>.csv next to the results
              plots <run-dir|jmh.json>      write <experiment>-bandwidth/-latency/-sweep.png next to the results
              compare OLD NEW [--metric gbps|lat_us|busbw_pct|score|NAME] [--threshold PCT]
                                            compare two runs (files or run dirs); exit 1 on a regression,
                                            4 when no entry of OLD matches one of NEW
              ranks RUN RUN... [--metric gbps|NAME]
                                            bandwidth against rank count over runs made at different rank counts:
                                            a table, ranks.csv and <benchmark>-ranks.png in the last run's folder
              provenance <run-dir>          merge <run-dir>/provenance/*.json into <run-dir>/provenance.json
              all <run-dir>                 provenance, tables, CSV and plots (what the launcher runs)""";

    private Report() {}

    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        System.exit(run(args, System.out, System.err));
    }

    /** Runs one command; never throws, returns the exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0) {
            err.println(USAGE_TEXT);
            return USAGE;
        }
        try {
            return switch (args[0]) {
                case "tables" -> tables(path(args, 1, 2), out);
                case "plots" -> plots(path(args, 1, 2), out);
                case "compare" -> compare(args, out);
                case "ranks" -> ranks(args, out);
                case "provenance" -> provenance(runDir(args), out);
                case "all" -> all(runDir(args), out, err);
                case "help", "-h", "--help" -> {
                    out.println(USAGE_TEXT);
                    yield 0;
                }
                default -> throw new ReportException("unknown command '" + args[0] + "' (tables, plots, compare, ranks, provenance, all)");
            };
        } catch (ReportException e) {
            err.println("report: " + e.getMessage());
            return USAGE;
        } catch (RuntimeException | Error e) {
            err.println("report: internal error: " + e);
            return INTERNAL;
        }
    }

    private static int tables(Path input, PrintStream out) {
        List<Experiment> experiments = Experiment.of(JmhResults.read(input));
        Path dir = JmhResults.runDir(input);
        printTables(experiments, Provenance.summary(Provenance.load(dir)), out);
        writeCsvs(experiments, dir, out);
        return 0;
    }

    private static int plots(Path input, PrintStream out) {
        List<Experiment> experiments = Experiment.of(JmhResults.read(input));
        Path dir = JmhResults.runDir(input);
        writePlots(experiments, dir, Provenance.load(dir), out);
        return 0;
    }

    private static int provenance(Path runDir, PrintStream out) {
        JsonObject merged = Provenance.merge(runDir);
        if (merged.size() == 0) {
            throw new ReportException("no provenance fragments in " + runDir.resolve(Provenance.FRAGMENT_DIR));
        }
        out.println(Provenance.summary(merged));
        out.println("wrote " + runDir.resolve(Provenance.MERGED_FILE));
        return 0;
    }

    private static int all(Path runDir, PrintStream out, PrintStream err) {
        List<Experiment> experiments = Experiment.of(JmhResults.read(runDir));
        JsonObject provenance = Provenance.merge(runDir);
        printTables(experiments, Provenance.summary(provenance), out);
        writeCsvs(experiments, runDir, out);
        try {
            writePlots(experiments, runDir, provenance, out);
        } catch (RuntimeException | Error e) {
            // Tables and CSV are already out; a missing font or display library must not hide them.
            err.println("report: plots skipped: " + (e instanceof ReportException ? e.getMessage() : e.toString()));
        }
        return 0;
    }

    private static int compare(String[] args, PrintStream out) {
        List<String> files = new ArrayList<>();
        String metric = "gbps";
        double threshold = 5;
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--metric") || a.equals("--threshold")) {
                if (i + 1 >= args.length) throw new ReportException(a + " needs a value");
                String v = args[++i];
                if (a.equals("--metric")) metric = v;
                else threshold = percent(v);
            } else if (a.startsWith("--metric=")) {
                metric = a.substring("--metric=".length());
            } else if (a.startsWith("--threshold=")) {
                threshold = percent(a.substring("--threshold=".length()));
            } else if (a.startsWith("--")) {
                throw new ReportException("unknown option " + a + " (--metric, --threshold)");
            } else {
                files.add(a);
            }
        }
        if (files.size() != 2) throw new ReportException("compare needs OLD and NEW (JMH JSON files or run dirs), got " + files.size());
        if (metric.isBlank()) throw new ReportException("--metric needs a name");
        return Compare.run(Path.of(files.get(0)), Path.of(files.get(1)), metric, threshold, out);
    }

    private static int ranks(String[] args, PrintStream out) {
        List<Path> runs = new ArrayList<>();
        String metric = "gbps";
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("--metric") && i + 1 < args.length) {
                metric = args[++i];
            } else if (args[i].startsWith("--")) {
                throw new ReportException("unknown option " + args[i] + " (--metric)");
            } else {
                runs.add(Path.of(args[i]));
            }
        }
        return RankScaling.run(runs, metric, out);
    }

    private static double percent(String v) {
        try {
            double t = Double.parseDouble(v.endsWith("%") ? v.substring(0, v.length() - 1) : v);
            if (!(t >= 0) || Double.isInfinite(t)) throw new NumberFormatException();
            return t;
        } catch (NumberFormatException e) {
            throw new ReportException("--threshold wants a percentage >= 0, got '" + v + "'");
        }
    }

    private static void printTables(List<Experiment> experiments, String summary, PrintStream out) {
        if (!summary.isEmpty()) out.println(summary);
        for (Experiment e : experiments) {
            out.println();
            out.print(Table.render(e));
            List<JmhResult> all = new ArrayList<>();
            e.cells().values().forEach(bySize -> all.addAll(bySize.values()));
            for (String extra : List.of(ProxyOverhead.render(all), MoeTable.render(all))) {
                if (!extra.isEmpty()) {
                    out.println();
                    out.print(extra);
                }
            }
        }
        out.println();
    }

    private static void writeCsvs(List<Experiment> experiments, Path dir, PrintStream out) {
        List<String> names = new ArrayList<>();
        for (Experiment e : experiments) names.add(Csv.write(e, dir).getFileName().toString());
        out.println("csv: " + String.join(" ", names) + " in " + dir);
    }

    private static void writePlots(List<Experiment> experiments, Path dir, JsonObject provenance, PrintStream out) {
        String context = context(provenance);
        List<String> names = new ArrayList<>();
        for (Experiment e : experiments) {
            for (Path p : Plots.write(e, dir, context)) names.add(p.getFileName().toString());
        }
        out.println("plots: " + (names.isEmpty() ? "none (no sized results)" : String.join(" ", names)) + " in " + dir);
    }

    /** "tcp, 2 ranks" for plot titles. */
    static String context(JsonObject provenance) {
        List<String> parts = new ArrayList<>();
        String provider = Provenance.brief(provenance.get("provider"));
        String ranks = Provenance.brief(provenance.get("ranks"));
        if (!provider.isEmpty()) parts.add(provider);
        if (!ranks.isEmpty()) parts.add(ranks + " ranks");
        return String.join(", ", parts);
    }

    private static Path path(String[] args, int index, int expectedLength) {
        if (args.length != expectedLength) throw new ReportException(args[0] + " takes one argument: a run dir or a JMH JSON file");
        return Path.of(args[index]);
    }

    private static Path runDir(String[] args) {
        Path dir = path(args, 1, 2);
        if (!Files.isDirectory(dir)) throw new ReportException(args[0] + ": not a run directory: " + dir);
        return dir;
    }
}

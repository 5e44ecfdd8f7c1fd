package io.efabench.report;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonParseException;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reads the JSON that JMH writes with {@code -rf json}. */
public final class JmhResults {
    /** The result file's name inside a run folder. */
    public static final String FILE_NAME = "jmh.json";

    private JmhResults() {}

    /** A run folder means its jmh.json; a file means itself. */
    public static Path resolve(Path fileOrRunDir) {
        Path file = Files.isDirectory(fileOrRunDir) ? fileOrRunDir.resolve(FILE_NAME) : fileOrRunDir;
        if (!Files.isRegularFile(file)) {
            throw new ReportException(Files.isDirectory(fileOrRunDir)
                    ? "no " + FILE_NAME + " in " + fileOrRunDir
                    : "no such file: " + fileOrRunDir);
        }
        return file;
    }

    /** The folder that a report about {@code fileOrRunDir} is written to: the run folder, or the file's folder. */
    public static Path runDir(Path fileOrRunDir) {
        Path file = resolve(fileOrRunDir).toAbsolutePath();
        return file.getParent();
    }

    /** Every entry of the file (or the run folder's jmh.json), in file order; never empty. */
    public static List<JmhResult> read(Path fileOrRunDir) {
        Path file = resolve(fileOrRunDir);
        JsonElement root;
        try (Reader in = Files.newBufferedReader(file)) {
            root = JsonParser.parseReader(in);
        } catch (IOException e) {
            throw new ReportException(file + ": cannot read: " + e.getMessage(), e);
        } catch (JsonParseException e) {
            throw new ReportException(file + ": malformed JSON: " + firstLine(e.getMessage()), e);
        }
        if (!root.isJsonArray()) {
            throw new ReportException(file + ": not a JMH result file (expected a JSON array of results)");
        }
        List<JmhResult> results = new ArrayList<>();
        JsonArray array = root.getAsJsonArray();
        for (int i = 0; i < array.size(); i++) {
            try {
                results.add(entry(array.get(i).getAsJsonObject()));
            } catch (RuntimeException e) {
                throw new ReportException(file + ": entry " + i + " is not a JMH result: "
                        + firstLine(String.valueOf(e.getMessage())), e);
            }
        }
        if (results.isEmpty()) throw new ReportException(file + ": holds no benchmark results");
        return results;
    }

    /** JMH's scorePercentiles keys and the names they are read as. */
    static final String[][] SCORE_PERCENTILES = {
        {"50.0", "score_p50"}, {"90.0", "score_p90"}, {"99.0", "score_p99"}, {"99.9", "score_p999"}};

    private static JmhResult entry(JsonObject o) {
        String benchmark = required(o, "benchmark").getAsString();
        String mode = required(o, "mode").getAsString();
        Map<String, String> params = new LinkedHashMap<>();
        if (o.has("params")) {
            for (var p : o.getAsJsonObject("params").entrySet()) params.put(p.getKey(), p.getValue().getAsString());
        }
        // IpcBenchmark sweeps launch shapes as one param, shape=GRIDxBLOCK (e.g. 128x256, 2smx1024):
        // read it as the grid and block params the tables and plots group by.
        String shape = params.get("shape");
        int x = shape == null ? -1 : shape.lastIndexOf('x');
        if (x > 0 && !params.containsKey("grid")) {
            params.remove("shape");
            params.put("grid", shape.substring(0, x));
            params.put("block", shape.substring(x + 1));
        }
        JsonObject primaryJson = required(o, "primaryMetric").getAsJsonObject();
        JmhResult.Metric primary = metric(primaryJson);
        Map<String, JmhResult.Metric> secondary = new LinkedHashMap<>();
        // Sample mode: JMH's percentiles of the primary, as score_p50 .. score_p999 (same unit).
        if (mode.equals("sample") && primaryJson.has("scorePercentiles")) {
            JsonObject pct = primaryJson.getAsJsonObject("scorePercentiles");
            for (String[] p : SCORE_PERCENTILES) {
                if (pct.has(p[0])) {
                    secondary.put(p[1], new JmhResult.Metric(number(pct.get(p[0])), Double.NaN, primary.unit()));
                }
            }
        }
        if (o.has("secondaryMetrics")) {
            for (var m : o.getAsJsonObject("secondaryMetrics").entrySet()) {
                secondary.put(m.getKey(), metric(m.getValue().getAsJsonObject()));
            }
        }
        return new JmhResult(benchmark, mode, Collections.unmodifiableMap(params), primary,
                Collections.unmodifiableMap(secondary));
    }

    private static JmhResult.Metric metric(JsonObject m) {
        String unit = m.has("scoreUnit") ? m.get("scoreUnit").getAsString() : "";
        return new JmhResult.Metric(number(required(m, "score")), m.has("scoreError") ? number(m.get("scoreError")) : Double.NaN, unit);
    }

    /** JMH writes NaN and infinities as the strings "NaN", "+INF", "-INF". */
    private static double number(JsonElement e) {
        if (e.getAsJsonPrimitive().isNumber()) return e.getAsDouble();
        return switch (e.getAsString()) {
            case "NaN" -> Double.NaN;
            case "+INF", "Infinity" -> Double.POSITIVE_INFINITY;
            case "-INF", "-Infinity" -> Double.NEGATIVE_INFINITY;
            default -> Double.parseDouble(e.getAsString());
        };
    }

    private static JsonElement required(JsonObject o, String name) {
        JsonElement e = o.get(name);
        if (e == null || e.isJsonNull()) throw new ReportException("missing \"" + name + "\"");
        return e;
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}

package io.efabench.report;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import io.efabench.provenance.ProvenanceFragments;

/**
 * Where a run's numbers came from. Ranks and the launcher each write a fragment (a flat JSON
 * object, {@link ProvenanceFragments}) into {@code <run>/provenance/<name>.json}; {@link #merge} folds them into
 * {@code <run>/provenance.json}: a fact every source agrees on appears once, a fact the sources
 * disagree on appears as {@code {"per_source": {name: value, ...}}}.
 */
public final class Provenance {
    public static final String FRAGMENT_DIR = ProvenanceFragments.FRAGMENT_DIR;
    public static final String MERGED_FILE = "provenance.json";
    public static final String LAUNCHER = ProvenanceFragments.LAUNCHER;
    static final String PER_SOURCE = "per_source";

    private static final Gson GSON = new GsonBuilder().setPrettyPrinting().serializeNulls()
            .serializeSpecialFloatingPointValues().disableHtmlEscaping().create();

    /** Summary keys in the order a reader wants them. */
    private static final List<String> SUMMARY_KEYS = List.of("provider", "ranks", "hosts", "libfabric_runtime",
            "libfabric_header", "nics", "gpus", "driver", "jvm", "git_commit", "timestamp");

    private Provenance() {}

    /**
     * Merges the fragments (the launcher's first, then the others by name) and writes
     * {@code <runDir>/provenance.json}; returns the merged object, empty (and writes nothing) when
     * there are no fragments.
     */
    public static JsonObject merge(Path runDir) {
        JsonObject merged = mergeFragments(runDir);
        if (merged.size() == 0) return merged;
        Path file = runDir.resolve(MERGED_FILE);
        try {
            Files.writeString(file, GSON.toJson(merged) + "\n");
        } catch (IOException e) {
            throw new ReportException("cannot write " + file + ": " + e.getMessage(), e);
        }
        return merged;
    }

    /** The run's provenance: provenance.json when present, else the fragments merged in memory. */
    public static JsonObject load(Path runDir) {
        Path file = runDir.resolve(MERGED_FILE);
        if (Files.isRegularFile(file)) return readObject(file);
        return mergeFragments(runDir);
    }

    /** One line for table headers and plot titles, e.g. {@code provenance: provider=tcp, ranks=2, ...}; empty if none. */
    public static String summary(JsonObject p) {
        List<String> parts = new ArrayList<>();
        for (String key : SUMMARY_KEYS) {
            JsonElement value = p.get(key);
            if (value == null && key.equals("git_commit")) value = p.get("commit");
            if (value == null || value.isJsonNull()) continue;
            String text = brief(value);
            if (!text.isEmpty()) parts.add(key + "=" + text);
        }
        return parts.isEmpty() ? "" : "provenance: " + String.join(", ", parts);
    }

    /** A fact as short text: arrays comma-joined, NICs as name(100G), per-source values deduplicated. */
    static String brief(JsonElement e) {
        if (e == null || e.isJsonNull()) return "";
        if (e.isJsonPrimitive()) return e.getAsString();
        if (e.isJsonArray()) {
            Set<String> items = new LinkedHashSet<>();
            e.getAsJsonArray().forEach(x -> items.add(brief(x)));
            return String.join(",", items);
        }
        JsonObject o = e.getAsJsonObject();
        if (o.has(PER_SOURCE)) {
            Set<String> items = new LinkedHashSet<>();
            o.getAsJsonObject(PER_SOURCE).entrySet().forEach(x -> items.add(brief(x.getValue())));
            return String.join(" | ", items);
        }
        if (o.has("name")) {
            JsonElement speed = o.has("link_gbps") ? o.get("link_gbps") : null;
            String gbps = speed == null || speed.isJsonNull() ? "" : speed.getAsString().replaceAll("\\.0$", "");
            return o.get("name").getAsString()
                    + (gbps.isEmpty() || gbps.equals("0") ? "(link ?)" : "(" + gbps + "G)");
        }
        return o.toString();
    }

    private static JsonObject mergeFragments(Path runDir) {
        Map<String, JsonObject> sources = new LinkedHashMap<>();
        Path launcherAtTop = runDir.resolve(LAUNCHER + ".json");
        if (Files.isRegularFile(launcherAtTop)) sources.put(LAUNCHER, readObject(launcherAtTop));
        Path dir = runDir.resolve(FRAGMENT_DIR);
        if (Files.isDirectory(dir)) {
            Map<String, Path> fragments = new TreeMap<>((a, b) ->
                    a.equals(LAUNCHER) ? (b.equals(LAUNCHER) ? 0 : -1) : b.equals(LAUNCHER) ? 1 : a.compareTo(b));
            try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*.json")) {
                for (Path f : files) {
                    String n = f.getFileName().toString();
                    if (!n.startsWith(".")) fragments.put(n.substring(0, n.length() - ".json".length()), f);
                }
            } catch (IOException e) {
                throw new ReportException("cannot list " + dir + ": " + e.getMessage(), e);
            }
            fragments.forEach((name, f) -> sources.put(name, readObject(f)));
        }
        JsonObject merged = new JsonObject();
        if (sources.isEmpty()) return merged;
        Set<String> keys = new LinkedHashSet<>();
        sources.values().forEach(o -> keys.addAll(o.keySet()));
        for (String key : keys) {
            JsonObject perSource = new JsonObject();
            Set<JsonElement> distinct = new LinkedHashSet<>();
            sources.forEach((name, o) -> {
                if (o.has(key)) {
                    perSource.add(name, o.get(key));
                    distinct.add(o.get(key));
                }
            });
            if (distinct.size() == 1) {
                merged.add(key, distinct.iterator().next());
            } else {
                JsonObject wrapper = new JsonObject();
                wrapper.add(PER_SOURCE, perSource);
                merged.add(key, wrapper);
            }
        }
        JsonArray names = new JsonArray();
        sources.keySet().forEach(names::add);
        merged.add("sources", names);
        return merged;
    }

    private static JsonObject readObject(Path file) {
        try {
            JsonElement e = JsonParser.parseString(Files.readString(file));
            if (!e.isJsonObject()) throw new ReportException(file + ": a provenance fragment must be a JSON object");
            return e.getAsJsonObject();
        } catch (IOException e) {
            throw new ReportException("cannot read " + file + ": " + e.getMessage(), e);
        } catch (JsonParseException e) {
            throw new ReportException(file + ": malformed JSON: " + e.getMessage().lines().findFirst().orElse(""), e);
        }
    }
}

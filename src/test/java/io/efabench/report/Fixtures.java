package io.efabench.report;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;

/** Test fixtures (see src/test/resources/io/efabench/report/README.md) and helpers. */
final class Fixtures {
    static final String REAL_WRITE = "real-write.json";
    static final String REAL_SAMPLE = "real-sample-1iter.json";
    static final String HANDMADE = "handmade.json";

    private Fixtures() {}

    static String text(String resource) {
        try (InputStream in = Fixtures.class.getResourceAsStream(resource)) {
            if (in == null) throw new IllegalStateException("missing test resource " + resource);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Copies a fixture into {@code dir/jmh.json} (a run folder) and returns the folder. */
    static Path runDir(String resource, Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(JmhResults.FILE_NAME), text(resource));
        return dir;
    }

    /** Writes a copy of a fixture with every entry changed by {@code edit}, returns the file. */
    static Path edited(String resource, Path file, Consumer<JsonObject> edit) throws IOException {
        JsonArray entries = JsonParser.parseString(text(resource)).getAsJsonArray();
        for (JsonElement e : entries) edit.accept(e.getAsJsonObject());
        Files.writeString(file, new GsonBuilder().setPrettyPrinting().create().toJson(entries));
        return file;
    }

    /** Sets a metric's score to score*factor and its error to errorPct of the new score. */
    static Consumer<JsonObject> scale(String metric, double factor, double errorPct) {
        return entry -> {
            JsonObject m = metric.equals("score") ? entry.getAsJsonObject("primaryMetric")
                    : entry.getAsJsonObject("secondaryMetrics").getAsJsonObject(metric);
            if (m == null) return;
            double score = m.get("score").getAsDouble() * factor;
            m.addProperty("score", score);
            m.addProperty("scoreError", score * errorPct / 100);
        };
    }

    /** Result of running the CLI in-process. */
    record Run(int status, String out, String err) {}

    static Run report(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
        int status = Report.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}

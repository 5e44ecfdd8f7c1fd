package io.efabench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.google.gson.JsonObject;

/** The sample-mode latency percentiles (lat_p50_us ...) in tables, CSV and the latency plot. */
class PercentilesTest {
    @TempDir
    Path tmp;

    private Experiment withPercentiles() throws Exception {
        Path file = Fixtures.edited(Fixtures.REAL_SAMPLE, tmp.resolve("jmh.json"), entry -> {
            JsonObject sec = entry.getAsJsonObject("secondaryMetrics");
            double[] v = {11.5, 17.25, 107.0, 9988.5};
            String[] names = {"lat_p50_us", "lat_p90_us", "lat_p99_us", "lat_p999_us"};
            for (int i = 0; i < v.length; i++) {
                JsonObject m = new JsonObject();
                m.addProperty("score", v[i]);
                m.addProperty("scoreError", "NaN");
                m.addProperty("scoreUnit", "us");
                sec.add(names[i], m);
            }
        });
        return Experiment.of(JmhResults.read(file)).getFirst();
    }

    @Test
    void tableShowsThePercentilesAfterTheMean() throws Exception {
        String table = Table.render(withPercentiles());
        assertTrue(table.contains("| Lat(us) | p50(us) | p90(us) | p99(us) | p99.9(us) |"), table);
        assertTrue(table.contains("|   11.50 |") && table.contains("|   9988.50 |"), table);
    }

    @Test
    void csvHasThePercentileColumnsOnlyWhenPresent() throws Exception {
        List<String> lines = Csv.render(withPercentiles()).lines().toList();
        List<String> header = List.of(lines.getFirst().split(","));
        int p50 = header.indexOf("lat_p50_us");
        assertEquals(header.indexOf("lat_us") + 1, p50, lines.getFirst());
        assertEquals(List.of("lat_p50_us", "lat_p90_us", "lat_p99_us", "lat_p999_us"), header.subList(p50, p50 + 4));
        assertEquals("9988.5", lines.get(1).split(",")[p50 + 3], lines.get(1));

        Path plain = tmp.resolve("plain");
        Experiment without = Experiment.of(JmhResults.read(Fixtures.runDir(Fixtures.REAL_SAMPLE, plain))).getFirst();
        assertFalse(Csv.render(without).contains("lat_p50_us"));
        assertFalse(Table.render(without).contains("p50(us)"));
    }

    @Test
    void latencyPlotIsWrittenWithTheBands() throws Exception {
        List<Path> files = Plots.write(withPercentiles(), tmp, "tcp, 2 ranks");
        Path latency = files.stream().filter(f -> f.toString().endsWith("-latency.png")).findFirst().orElseThrow();
        assertTrue(Files.size(latency) > 1000);
    }
}

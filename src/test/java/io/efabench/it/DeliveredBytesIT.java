package io.efabench.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;

/**
 * Counted = completed, end to end over tcp on loopback: with rounds in flight, a figure does not
 * depend on the iteration's length, and a deep window reads no more than a window of one beyond
 * what pipelining can give. Before the shared engine, Write 256M at window 64 read 273 Gbps at
 * -r 300ms, 59 at -r 2s and 33 at window 1 on this kind of machine: the writes still in flight at
 * the end of an iteration were counted, and the drain was free.
 *
 * <p>The dev and CI machines swing 2x between runs and within one (docs/perf/journal/write-vs-fi_rma_bw.md): the
 * runs are compared as {@link #assertShortEqualsLong} says.
 */
class DeliveredBytesIT {

    @TempDir
    Path tmp;

    /**
     * 64M at window 8, not the 256M at 64 of the bug above: a window of 64 x 256M took ~7 s here,
     * one op in the short and in the long iterations alike, so the two could not differ; a window
     * of 8 x 64M takes ~0.2 s, longer than a short iteration and a tenth of a long one (and each
     * iteration's checked pass covers 512M, not 16G).
     */
    @Test
    void writeWindow8At64MReadsTheSameAtShortAndLongIterations() throws Exception {
        assertShortEqualsLong(2, "WriteBenchmark", List.of("-p", "config=SinglePin", "-p", "size=64M", "-p",
                "completion=local", "-p", "window=8,1"));
    }

    @Test
    void allToAllWindow8At16MReadsTheSameAtShortAndLongIterations() throws Exception {
        // 16M, not 64M: at 64M an attempt took 134 s here, most of it setup and checked rounds over
        // 1 GiB per rank, at 16M 66 s (2026-12-01, 2-core VM); a window (8 rounds x 2 peers x 16M
        // per rank) still takes about 0.2 s, longer than a short iteration.
        assertShortEqualsLong(3, "AllToAllBenchmark", List.of("-p", "config=SinglePin", "-p", "size=16M", "-p",
                "window=8,1"));
    }

    /** Rounds in flight write distinct regions: a target's buffer spans slots x size, recorded in provenance. */
    @Test
    void theFootprintIsOneRegionPerRoundInFlightAndRecorded() throws Exception {
        Path dir = tmp.resolve("footprint");
        JsonArray results = Ranks.start(dir, 2, "tcp", Ranks.quick("WriteBenchmark", "-p", "config=SinglePin", "-p",
                "size=64K", "-p", "window=8", "-p", "completion=local"),
                (rank, cmd, env) -> env.put("EFABENCH_RUN_DIR", dir.toString())).awaitClean(180);
        assertTrue(results.get(0).getAsJsonObject().getAsJsonObject("secondaryMetrics").has("checked_rounds"));
        Path fragment;
        try (var files = Files.newDirectoryStream(dir.resolve("provenance"), "footprint-rank1-WriteBenchmark*.json")) {
            fragment = files.iterator().next(); // one per trial: this run has one
        }
        JsonObject target = JsonParser.parseString(Files.readString(fragment)).getAsJsonObject();
        assertEquals(8, target.get("slots").getAsInt(), target.toString());
        assertEquals(8, target.get("rounds_in_flight").getAsInt(), target.toString());
        assertEquals(8 * 65536L, target.get("payload_bytes").getAsLong(), "the target's buffer: 8 slots of 64K");
        // Host memory's registration is recorded too (page-locked where a GPU is visible).
        assertTrue(target.get("registration").getAsString().startsWith("host, "), target.toString());
    }

    /**
     * Runs the deep window and window 1 with short (100 ms) and with long (2 s) iterations and
     * compares the median iteration of each: in each run the deep window reads at most 1.5x window
     * 1, the short run at most 1.3x the long one, and the two agree within 15%, or their deep-window
     * figures over their own window-1 figures do (the dev and CI machines drop into a state about
     * half as fast for seconds at a time, in any config: docs/perf/journal/write-vs-fi_rma_bw.md).
     * Short iterations as short as a window or two, so a window counted and not awaited weighs
     * about double in them and little in 2 s; medians, not the best iteration, which at one op an
     * iteration is the luckiest op (a sound build read 1.26-1.47x best against best at 100 ms).
     * Counted at 300 ms by best iteration, a build that left each timed window's completion to the
     * next invocation read 1.39-1.48x and passed on its third attempt through the normalized ratio
     * (its window 1 was counted high too), where sound builds read 0.82-1.32x. An attempt that
     * misses is made again, four times at most.
     */
    private void assertShortEqualsLong(int ranks, String benchmark, List<String> params) throws Exception {
        String last = "";
        for (int attempt = 1; attempt <= 4; attempt++) {
            double[] shortRun = median(run(ranks, benchmark, params, "100ms", "6", "short" + attempt));
            double[] longRun = median(run(ranks, benchmark, params, "2s", "3", "long" + attempt));
            // [0]: the deep window, [1]: window 1, in each run
            double raw = shortRun[0] / longRun[0];
            double normalized = raw / (shortRun[1] / longRun[1]);
            last = String.format("%s attempt %d: -r 100ms %s Gbps, -r 2s %s Gbps (medians; deep window, window 1):"
                    + " short/long %.3f, over window 1 %.3f", benchmark, attempt, Arrays.toString(shortRun),
                    Arrays.toString(longRun), raw, normalized);
            System.out.println(last);
            boolean bounded = shortRun[0] <= 1.5 * shortRun[1] && longRun[0] <= 1.5 * longRun[1];
            if (bounded && raw <= 1.3 && (Math.abs(raw - 1) <= 0.15 || Math.abs(normalized - 1) <= 0.15)) {
                return;
            }
        }
        throw new AssertionError("four attempts missed (deep window above 1.5x window 1, short above 1.3x long,"
                + " or short and long iterations more than 15% apart); the last: " + last);
    }

    private JsonArray run(int ranks, String benchmark, List<String> params, String iteration, String iterations,
            String name) throws Exception {
        List<String> args = new ArrayList<>(List.of(benchmark));
        args.addAll(params);
        args.addAll(List.of("-f", "1", "-wi", "1", "-w", "300ms", "-i", iterations, "-r", iteration, "-foe", "true",
                "-prof", "io.efabench.harness.MetricsProfiler"));
        return Ranks.start(tmp.resolve(name), ranks, "tcp", args, null).awaitClean(400);
    }

    /** The median iteration's gbps, per result (the order of -p window). */
    private static double[] median(JsonArray results) {
        double[] out = new double[results.size()];
        for (int i = 0; i < results.size(); i++) {
            JsonArray raw = results.get(i).getAsJsonObject().getAsJsonObject("secondaryMetrics")
                    .getAsJsonObject("gbps").getAsJsonArray("rawData").get(0).getAsJsonArray();
            double[] v = new double[raw.size()];
            int k = 0;
            for (JsonElement e : raw) {
                v[k++] = e.getAsDouble();
            }
            Arrays.sort(v);
            out[i] = v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
        }
        return out;
    }
}

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

    @Test
    void writeWindow64At256MReadsTheSameAtShortAndLongIterations() throws Exception {
        assertShortEqualsLong(2, "WriteBenchmark", List.of("-p", "config=SinglePin", "-p", "size=256M", "-p",
                "completion=local", "-p", "window=64,1"));
    }

    @Test
    void allToAllWindow8At16MReadsTheSameAtShortAndLongIterations() throws Exception {
        // 16M, not 64M: at 64M an attempt took 134 s here, most of it setup and checked rounds over
        // 1 GiB per rank, at 16M 66 s (2026-12-01, 2-core VM); a window (8 rounds x 2 peers x 16M
        // per rank) still takes about 0.2 s, most of a short iteration.
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
     * Runs the deep window and window 1 with short and with long iterations and compares the best
     * iteration of each: in each run the deep window reads at most 1.5x window 1, and the two runs
     * agree within 15%. The dev and CI machines drop into a state about half as fast for seconds
     * at a time, in any config (docs/perf/journal/write-vs-fi_rma_bw.md): a slow state only ever lowers an iteration,
     * so the best iteration is the machine's rate, while counting posts raises it (the bug this
     * guards against read 4.6x between the two runs and 8x window 1, every time). The runs also
     * agree when their deep-window figures over their own window-1 figures agree within 15%, and
     * an attempt that misses is made again, four times at most.
     */
    private void assertShortEqualsLong(int ranks, String benchmark, List<String> params) throws Exception {
        String last = "";
        for (int attempt = 1; attempt <= 4; attempt++) {
            double[] shortRun = best(run(ranks, benchmark, params, "300ms", "4", "short" + attempt));
            double[] longRun = best(run(ranks, benchmark, params, "2s", "3", "long" + attempt));
            // [0]: the deep window, [1]: window 1, in each run
            double raw = shortRun[0] / longRun[0];
            double normalized = raw / (shortRun[1] / longRun[1]);
            last = String.format("%s attempt %d: -r 300ms %s Gbps, -r 2s %s Gbps (deep window, window 1): short/long"
                    + " %.3f, over window 1 %.3f", benchmark, attempt, Arrays.toString(shortRun),
                    Arrays.toString(longRun), raw, normalized);
            System.out.println(last);
            boolean bounded = shortRun[0] <= 1.5 * shortRun[1] && longRun[0] <= 1.5 * longRun[1];
            if (bounded && (Math.abs(raw - 1) <= 0.15 || Math.abs(normalized - 1) <= 0.15)) {
                return;
            }
        }
        throw new AssertionError("four attempts missed (deep window above 1.5x window 1, or short and long"
                + " iterations more than 15% apart); the last: " + last);
    }

    private JsonArray run(int ranks, String benchmark, List<String> params, String iteration, String iterations,
            String name) throws Exception {
        List<String> args = new ArrayList<>(List.of(benchmark));
        args.addAll(params);
        args.addAll(List.of("-f", "1", "-wi", "1", "-w", "300ms", "-i", iterations, "-r", iteration, "-foe", "true",
                "-prof", "io.efabench.harness.MetricsProfiler"));
        return Ranks.start(tmp.resolve(name), ranks, "tcp", args, null).awaitClean(400);
    }

    /** The best iteration's gbps, per result (the order of -p window). */
    private static double[] best(JsonArray results) {
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
            out[i] = v[v.length - 1];
        }
        return out;
    }
}

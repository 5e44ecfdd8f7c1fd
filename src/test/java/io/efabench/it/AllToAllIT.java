package io.efabench.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;

/**
 * AllToAllBenchmark with real rank processes: every rank writes to every other rank each round,
 * checked rounds verify every pair, and the collective's metrics follow from each other.
 */
class AllToAllIT {

    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0} ranks over {1}")
    @CsvSource({"2, tcp", "3, tcp", "4, tcp", "2, shm", "3, shm", "4, shm"})
    void hostConfigsRunAndVerifyEveryPair(int ranks, String provider) throws Exception {
        JsonArray results = run(ranks, provider, Ranks.quickInProcess("AllToAllBenchmark", "-p", "size=64K", "-p", "channels=2",
                "-p", "config=SinglePin,MultiPin,RoundRobinPin"));
        assertEquals(3, results.size());
        for (JsonElement e : results) {
            assertCollectiveMetrics(e.getAsJsonObject(), ranks);
        }
    }

    /**
     * Rounds in flight, and the JMH modes that give ranks different invocation counts or a
     * fixed batch: none may deadlock, drift past END or leave a write in flight into the
     * checked round (that would fail the check or the arrival counts).
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "window=4 avgt|-p window=4 -bm avgt",
        "sample|-bm sample",
        "thrpt bs 3|-bm thrpt -bs 3",
        "single-shot bs 7|-bm ss -bs 7 -wi 2"})
    void windowsAndModesEndCleanly(String name, String extra) throws Exception {
        List<String> args = new ArrayList<>(Ranks.quick("AllToAllBenchmark", "-p", "size=16K", "-p", "channels=2",
                "-p", "config=RoundRobinPin"));
        args.set(args.indexOf("-i") + 1, "2");
        List<String> more = new ArrayList<>(List.of(extra.split(" ")));
        int wi = more.indexOf("-wi");
        if (wi >= 0) { // replaces quick()'s warm-up count
            args.set(args.indexOf("-wi") + 1, more.get(wi + 1));
            more.subList(wi, wi + 2).clear();
        }
        args.addAll(more);
        JsonArray results = run(3, "shm", args);
        assertEquals(1, results.size());
        JsonObject secondary = results.get(0).getAsJsonObject().getAsJsonObject("secondaryMetrics");
        assertTrue(secondary.getAsJsonObject("checked_rounds").get("score").getAsDouble() >= 3, name + ": " + secondary);
        assertEquals(!name.startsWith("window"), secondary.has("lat_us"), name + ": lat_us only with window 1");
    }

    @Test
    void aCorruptedByteNamesSenderReceiverRoundAndOffset() throws Exception {
        // Only rank N-1 applies the hook: it corrupts its block for rank 1.
        Ranks r = Ranks.start(tmp, 3, "tcp", Ranks.quick("AllToAllBenchmark", "-p", "size=64K", "-p", "config=SinglePin"),
                (rank, cmd, env) -> env.put("EFABENCH_CORRUPT_OFFSET", "12345"));
        String logs = r.awaitAllFailed(180);
        assertTrue(logs.matches("(?s).*rank 1: corrupted byte at offset 12345 of round \\d+ from rank 2.*block of rank 2.*"),
                logs);
    }

    /** A non-leader rank killed mid-run: every other rank exits non-zero within 60 s naming it. */
    @Test
    void killingAMiddleRankEndsEveryOtherNamingIt() throws Exception {
        List<String> args = List.of("AllToAllBenchmark", "-p", "size=64K", "-p", "config=SinglePin", "-f", "1",
                "-wi", "0", "-i", "200", "-r", "1s", "-foe", "true");
        int ranks = 4;
        int victim = 2;
        Ranks r = Ranks.start(tmp, ranks, "tcp", args, null);
        try {
            Ranks.waitFor(r.logs.get(0), "Iteration   2:", 180);
            r.killAndExpectNamed(victim, 60);
        } finally {
            r.killAll();
        }
    }

    /**
     * Issue 20: the spread is measured where the bytes land. Rank 2 handles every arrival 5 ms late
     * (test hook EFABENCH_TEST_SLOW_RECEIVE): the pairs into it, and out of it (it starts each
     * round late), are the slow ones and show in min_peer_gbps; the pairs between ranks 0 and 1
     * stay fast and make max_peer_gbps. The floor, max >= 2.5 x min, sits between what the hook
     * gives and what no hook gives on the 2-core machine: 4.1x (a CI run, 2026-12-01) to above 5x
     * with it, 1.6x without it; a miss is measured again, 3 attempts at most ({@link Floors}). The
     * slowest pair can be no faster than one 5 ms arrival per block, and the slowest rank is the max
     * per invocation, so no faster than rank 0's own figure: upper bounds, asserted at once.
     */
    @Test
    void aSlowTargetShowsInTheSlowestPairsAndNotInTheFastest() throws Exception {
        Floors.hold("AllToAll, rank 2 slow", 3, attempt -> {
            JsonArray results = Ranks.start(tmp.resolve("slow" + attempt), 3, "shm", Ranks.quick("AllToAllBenchmark", "-p",
                    "size=64K", "-p", "config=SinglePin"), (rank, cmd, env) -> env.put("EFABENCH_TEST_SLOW_RECEIVE", "2"))
                    .awaitClean(600);
            JsonObject s = results.get(0).getAsJsonObject().getAsJsonObject("secondaryMetrics");
            double min = score(s, "min_peer_gbps");
            double max = score(s, "max_peer_gbps");
            double perPeer5ms = 65536 * 8 / 5e-3 / 1e9; // a pair that waits one 5 ms arrival at least
            assertTrue(min < perPeer5ms, "slowest pair " + min + " Gbps, at most " + perPeer5ms + ": " + s);
            assertTrue(score(s, "slowest_rank_gbps") <= score(s, "gbps") * 1.05, s.toString());
            return new Floors.Measured(List.of(new Floors.Floor("fastest pair over the slowest (x)", max / min, 2.5,
                    "fastest " + max + " Gbps, slowest " + min)), s.toString());
        });
    }

    private JsonArray run(int ranks, String provider, List<String> args) throws Exception {
        return Ranks.start(tmp, ranks, provider, args, null).awaitClean(600);
    }

    /**
     * gbps counts the N-1 peers' bytes and algbw_gbps size x N over the same time, so their ratio
     * is exactly N / (N-1); the spread and the slowest rank are there and positive; every
     * iteration's checked round passed.
     */
    private static void assertCollectiveMetrics(JsonObject result, int ranks) {
        JsonObject s = result.getAsJsonObject("secondaryMetrics");
        for (String m : new String[] {"gbps", "algbw_gbps", "lat_us", "min_peer_gbps", "p50_peer_gbps", "max_peer_gbps",
            "slowest_rank_gbps", "checked_rounds"}) {
            assertTrue(s.has(m) && s.getAsJsonObject(m).get("score").getAsDouble() > 0, m + " in " + result);
        }
        double gbps = score(s, "gbps");
        double algbw = score(s, "algbw_gbps");
        assertEquals((double) ranks / (ranks - 1), algbw / gbps, 1e-9, result.toString());
        assertTrue(score(s, "min_peer_gbps") <= score(s, "p50_peer_gbps")
                && score(s, "p50_peer_gbps") <= score(s, "max_peer_gbps"), result.toString());
        assertTrue(score(s, "checked_rounds") >= 2, "warm-up and measured iterations each check a round: " + result);
    }

    private static double score(JsonObject secondary, String metric) {
        return secondary.getAsJsonObject(metric).get("score").getAsDouble();
    }
}

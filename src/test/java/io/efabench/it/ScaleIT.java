package io.efabench.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;

/**
 * Defaults at rank counts past what a window fits: every benchmark with its default window, slots,
 * channels, completion and host configs at 16 ranks over 4 emulated nodes (srun -N 4
 * --ntasks-per-node=4 on the testbed), and the issue's own case, 12 local ranks over shm writing 1M
 * with window 64 (704 writes per channel where a channel holds 511). The engine paces and says so
 * once; every trial runs, verified. Only the size is pinned (one per benchmark), to keep CI short.
 */
class ScaleIT {
    private static final String TB = Testbed.TB;
    private static final int NODES = 4;
    private static final int PER_NODE = 4;
    private static final List<String> TIMING = List.of("-wi", "1", "-w", "500ms", "-i", "1", "-r", "1s", "-f", "1");
    private static String skip;

    @TempDir
    Path results;

    @BeforeAll
    static void up() throws Exception {
        // 1 Gbit NICs: the 2 cores, not the links, bound 16 ranks' rounds here.
        skip = Testbed.upUnlessSkipped(List.of("ip", "tc", "nsenter", "slurmd", "slurmctld", "srun", "munged"), "--nodes",
                Integer.toString(NODES), "--rails", "2", "--rate", "1gbit", "--slurm");
    }

    @AfterAll
    static void down() throws Exception {
        Testbed.downUnlessSkipped(skip);
    }

    /** The configs rank 0's jmh.json holds, in order. */
    private static List<String> configs(JsonArray json) {
        List<String> out = new ArrayList<>();
        for (JsonElement e : json) {
            JsonObject params = e.getAsJsonObject().getAsJsonObject("params");
            out.add(params.get("config").getAsString()
                    + (params.has("completion") ? " " + params.get("completion").getAsString() : ""));
        }
        return out;
    }

    /** Every trial verified at least one checked round (Write, Read and AllToAll check their payloads). */
    private static void verified(JsonArray json, String context) {
        for (JsonElement e : json) {
            JsonObject sec = e.getAsJsonObject().getAsJsonObject("secondaryMetrics");
            if (sec.has("checked_rounds")) {
                assertTrue(sec.getAsJsonObject("checked_rounds").get("score").getAsDouble() > 0, "unverified trial: " + e + "\n"
                        + context);
            }
        }
    }

    /**
     * One benchmark with its defaults at 16 ranks, 4 per node: every host config trial in jmh.json,
     * verified, the ranks on all 4 nodes; returns the run's log.
     */
    private String sixteenRanks(String benchmark, String size, List<String> expected) throws Exception {
        Assumptions.assumeTrue(skip == null, skip);
        Path log = results.resolve(benchmark + ".out");
        List<String> cmd = new ArrayList<>(List.of("srun", "-N", Integer.toString(NODES), "--ntasks-per-node="
                + PER_NODE, "bash", Testbed.SCRIPT.toString(), benchmark, "-p", "size=" + size));
        cmd.addAll(TIMING);
        long start = System.nanoTime();
        Process p = new Testbed(results).onNode(TB + "-head", Map.of("MASTER_PORT", Integer.toString(Ranks.freePort())), cmd,
                log);
        int code = Ranks.awaitExit(p, log, 900);
        String out = Files.readString(log);
        assertEquals(0, code, out);
        Path run;
        try (Stream<Path> s = Files.list(results)) {
            run = s.filter(d -> Files.isDirectory(d) && d.getFileName().toString().startsWith("slurm-")
                    && !Files.exists(d.resolve(".seen"))).findFirst().orElseThrow();
        }
        Files.writeString(run.resolve(".seen"), "");
        JsonArray json = JsonParser.parseString(Files.readString(run.resolve("jmh.json"))).getAsJsonArray();
        assertEquals(expected, configs(json), "every host config's trial, in jmh.json\n" + out);
        verified(json, out);
        Set<String> hosts = new TreeSet<>();
        try (Stream<Path> s = Files.list(run.resolve("provenance"))) {
            for (Path f : s.filter(f -> f.getFileName().toString().startsWith("locality-rank")).toList()) {
                hosts.add(JsonParser.parseString(Files.readString(f)).getAsJsonObject().get("host").getAsString());
            }
        }
        assertEquals(NODES, hosts.size(), "ranks on every node: " + hosts);
        System.out.printf("scale: %s at %d ranks over %d nodes, size %s: %.0f s%n", benchmark, NODES * PER_NODE, NODES, size,
                (System.nanoTime() - start) / 1e9);
        return out;
    }

    private static void pacedOnce(String out, String context) {
        long said = out.lines().filter(l -> l.contains("operations in flight on a channel") && l.contains("(paced)")).count();
        assertTrue(said >= 1, "the engine says it paces:\n" + context);
    }

    @Test
    void writeDefaultsAtSixteenRanksPace() throws Exception {
        // Window 64 x 15 targets: 960 writes a channel would hold; the engine holds 511.
        String out = sixteenRanks("WriteBenchmark", "64K", List.of("SinglePin remote", "MultiPin remote",
                "RoundRobinPin remote", "SinglePin local", "MultiPin local", "RoundRobinPin local"));
        pacedOnce(out, out);
    }

    @Test
    void readDefaultsAtSixteenRanksPace() throws Exception {
        String out = sixteenRanks("ReadBenchmark", "64K", List.of("SinglePin", "MultiPin", "RoundRobinPin"));
        pacedOnce(out, out);
    }

    @Test
    void allToAllDefaultsAtSixteenRanks() throws Exception {
        sixteenRanks("AllToAllBenchmark", "64K", List.of("SinglePin", "MultiPin", "RoundRobinPin"));
    }

    @Test
    void sendRecvDefaultsAtSixteenRanks() throws Exception {
        sixteenRanks("SendRecvBenchmark", "128K", List.of("SingleHost"));
    }

    /** The abort: 12 local ranks over shm, Write 1M with its default window 64 (704 writes a channel). */
    @Test
    void twelveLocalRanksOverShmWriteWithTheDefaultWindow(@TempDir Path tmp) throws Exception {
        Ranks r = Ranks.start(tmp, 12, "shm", Ranks.quick("WriteBenchmark", "-p", "config=SinglePin,RoundRobinPin", "-p",
                "size=1M"), null);
        JsonArray json = r.awaitClean(600);
        assertEquals(List.of("SinglePin remote", "RoundRobinPin remote", "SinglePin local", "RoundRobinPin local"),
                configs(json), r.allLogs());
        verified(json, r.allLogs());
        String log0 = r.log(0);
        assertTrue(log0.contains("would put 704 operations in flight on a channel") && log0.contains("(paced)"),
                "rank 0 says what it capped:\n" + log0);
    }
}

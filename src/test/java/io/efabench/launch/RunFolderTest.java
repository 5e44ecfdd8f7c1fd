package io.efabench.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A run folder before its ranks start (Launch start) and after they end (Launch finish). */
class RunFolderTest {
    @TempDir
    Path results;

    private List<String> start(Map<String, String> env, String mode, String rank, String world, String... jmh) {
        List<String> args = new java.util.ArrayList<>(List.of(mode, results.toString(), "", rank, world, "tcp", "no", "host1", "2",
                "./run-jmh.sh", "it's", "--"));
        args.addAll(List.of(jmh));
        return RunFolder.start(args.toArray(String[]::new), env);
    }

    @Test
    void aLocalRunGetsAFolderProvenanceAndEachRanksArguments() throws Exception {
        List<String> a = start(Map.of("EFABENCH_NO_METRICS", "1", "MASTER_PORT", "29555"), "local", "0", "2", "LauncherProbe");
        Path dir = Path.of(a.getFirst());
        assertEquals(List.of("29555", "60", "2 ranks on 127.0.0.1:29555 over FI_PROVIDER=tcp; run folder " + RunFolder.rel(dir),
                "rank 0's output follows (also in " + RunFolder.rel(dir) + "/logs/rank0.log); rank 1's output goes to "
                        + RunFolder.rel(dir) + "/logs/rank1.log (its JMH numbers only mirror rank 0)"), a.subList(1, 5));
        assertEquals(results, dir.getParent());
        for (String sub : List.of("logs", "followers", "provenance")) {
            assertTrue(Files.isDirectory(dir.resolve(sub)), sub);
        }
        String launcher = Files.readString(dir.resolve("provenance/launcher.json"));
        assertTrue(launcher.contains("\"ranks\": 2") && launcher.contains("\"host1\""), launcher);
        assertTrue(launcher.contains("\"command_line\": \"./run-jmh.sh 'it'\\\\''s'\""), launcher);
        List<String> follower = List.of("LauncherProbe", "-foe", "true", "-rf", "json", "-rff", dir.resolve("followers/rank1.json").toString());
        List<String> leader = List.of("LauncherProbe", "-foe", "true", "-rf", "json", "-rff", dir.resolve("jmh.json").toString());
        assertEquals(List.of("7"), a.subList(5, 6), "rank 1 first");
        assertEquals(follower, a.subList(6, 13));
        assertEquals(leader, a.subList(14, 21));
        assertEquals(21, a.size());
        assertFalse(Files.readString(dir.resolve("provenance/launcher.json")).isEmpty());
        List<String> one = start(Map.of(), "local", "0", "1", "LauncherProbe");
        assertTrue(!Path.of(one.getFirst()).equals(dir), "a second run in the same second gets a folder of its own");
        int port = Integer.parseInt(one.get(1));
        assertTrue(port >= 20000 && port < 32000, "a free port below the ephemeral range: " + port);
        assertTrue(one.get(2 + 1).startsWith("1 rank on 127.0.0.1:" + port + " over"), one.get(3));
    }

    @Test
    void aClusterRankNamesTheJobsFolderAndOnlyRankZeroWritesProvenance() {
        List<String> a = start(Map.of("SLURM_JOB_ID", "42", "EFABENCH_NO_METRICS", "1"), "slurm", "1", "4", "X");
        Path dir = results.resolve("slurm-42");
        assertEquals(List.of(dir.toString(), "", "", "", "", "7", "X", "-foe", "true", "-rf", "json", "-rff", dir.resolve("followers/rank1.json").toString()), a);
        assertFalse(Files.exists(dir.resolve("provenance/launcher.json")));
    }

    @Test
    void theCommandLineIsQuotedOnlyWhereNeeded() {
        assertEquals("./run-jmh.sh WriteBenchmark -p size=4K,1M 'a b' 'it'\\''s' ''",
                RunFolder.shellWords(List.of("./run-jmh.sh", "WriteBenchmark", "-p", "size=4K,1M", "a b", "it's", "")));
    }

    @Test
    void theGracePeriodIsSixtySecondsOrTheTimeoutAndTen() {
        assertEquals("60", RunFolder.grace(Map.of("EFABENCH_TIMEOUT_S", "30")));
        assertEquals("110", RunFolder.grace(Map.of("EFABENCH_TIMEOUT_S", "100")));
        assertEquals("5", RunFolder.grace(Map.of("EFABENCH_GRACE_S", "5", "EFABENCH_TIMEOUT_S", "100")));
        assertEquals("EFABENCH_GRACE_S=5s is not a number of seconds",
                assertThrows(IllegalArgumentException.class, () -> RunFolder.grace(Map.of("EFABENCH_GRACE_S", "5s"))).getMessage());
    }

    @Test
    void badArgumentsAreRefusedBeforeAnyFolderIsMade() throws Exception {
        assertThrows(IllegalArgumentException.class, () -> start(Map.of(), "local", "0", "2", "X", "-rf", "csv"));
        try (var left = Files.list(results)) {
            assertEquals(0, left.count());
        }
    }

    @Test
    void finishListsTheFlameGraphsOrSaysThereAreNone() throws Exception {
        Path dir = results.resolve("run");
        Files.createDirectories(dir.resolve("profile/b"));
        Files.writeString(dir.resolve("profile/b/flame.html"), "<html/>");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertEquals(0, RunFolder.finish(dir, true, false, new PrintStream(out, true)));
        assertEquals("run-jmh: flame graphs:\n  " + RunFolder.rel(dir.resolve("profile/b/flame.html")) + "\n", out.toString());
        ByteArrayOutputStream none = new ByteArrayOutputStream();
        assertEquals(0, RunFolder.finish(results.resolve("empty"), true, false, new PrintStream(none, true)));
        assertEquals("", none.toString(), "the warning goes to stderr");
    }
}

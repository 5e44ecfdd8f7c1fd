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
        List<String> args = new java.util.ArrayList<>(List.of(mode, results.toString(), "", rank, world, "tcp", "no", "host1", "--"));
        args.addAll(List.of(jmh));
        return RunFolder.start(args.toArray(String[]::new), env);
    }

    @Test
    void aLocalRunGetsAFolderProvenanceAndEachRanksArguments() throws Exception {
        List<String> a = start(Map.of("EFABENCH_NO_METRICS", "1"), "local", "0", "2", "LauncherProbe");
        Path dir = Path.of(a.getFirst());
        assertEquals(results, dir.getParent());
        for (String sub : List.of("logs", "followers", "provenance")) {
            assertTrue(Files.isDirectory(dir.resolve(sub)), sub);
        }
        String launcher = Files.readString(dir.resolve("provenance/launcher.json"));
        assertTrue(launcher.contains("\"ranks\": 2") && launcher.contains("\"host1\""), launcher);
        List<String> follower = List.of("LauncherProbe", "-foe", "true", "-rf", "json", "-rff", dir.resolve("followers/rank1.json").toString());
        List<String> leader = List.of("LauncherProbe", "-foe", "true", "-rf", "json", "-rff", dir.resolve("jmh.json").toString());
        assertEquals(List.of("7"), a.subList(1, 2), "rank 1 first");
        assertEquals(follower, a.subList(2, 9));
        assertEquals(leader, a.subList(10, 17));
        assertEquals(17, a.size());
        assertFalse(Files.readString(dir.resolve("provenance/launcher.json")).isEmpty());
        Path second = Path.of(start(Map.of(), "local", "0", "1", "LauncherProbe").getFirst());
        assertTrue(!second.equals(dir), "a second run in the same second gets a folder of its own");
    }

    @Test
    void aClusterRankNamesTheJobsFolderAndOnlyRankZeroWritesProvenance() {
        List<String> a = start(Map.of("SLURM_JOB_ID", "42", "EFABENCH_NO_METRICS", "1"), "slurm", "1", "4", "X");
        Path dir = results.resolve("slurm-42");
        assertEquals(List.of(dir.toString(), "7", "X", "-foe", "true", "-rf", "json", "-rff", dir.resolve("followers/rank1.json").toString()), a);
        assertFalse(Files.exists(dir.resolve("provenance/launcher.json")));
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

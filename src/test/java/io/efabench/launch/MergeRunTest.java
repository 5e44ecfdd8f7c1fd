package io.efabench.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * RunFolder.merge: the quick suite without a GPU runs SendRecv and Write as two JMH runs (their
 * config names differ, and JMH's -p applies to every benchmark); the second joins the first's run
 * folder, so one folder holds both halves and results/latest points at it.
 */
class MergeRunTest {
    @TempDir
    Path results;

    @Test
    void theSecondSuiteJoinsTheFirstRunFolder() throws Exception {
        Path into = results.resolve("20261124-100000");
        Path from = results.resolve("20261124-100030-write");
        write(into.resolve("jmh.json"), "[{\"benchmark\": \"SendRecvBenchmark.pingPong\"}]");
        write(into.resolve("logs/rank0.log"), "sendrecv rank 0");
        write(into.resolve("provenance/launcher.json"), "{\"first\": 1}");
        write(from.resolve("jmh.json"), "[{\"benchmark\": \"WriteBenchmark.write\"}, {\"benchmark\": \"WriteBenchmark.write\"}]");
        write(from.resolve("logs/rank0.log"), "write rank 0");
        write(from.resolve("followers/rank1.json"), "[]");
        write(from.resolve("provenance/launcher.json"), "{\"second\": 2}");
        write(from.resolve("provenance/fabric-WriteBenchmark-size_4K.json"), "{}");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        RunFolder.merge(into, from, "write", false, new PrintStream(out, true));

        String json = Files.readString(into.resolve("jmh.json"));
        assertEquals(1, json.split("SendRecvBenchmark").length - 1, json);
        assertEquals(2, json.split("WriteBenchmark").length - 1, json);
        assertEquals("sendrecv rank 0", Files.readString(into.resolve("logs/rank0.log")));
        assertEquals("write rank 0", Files.readString(into.resolve("logs/rank0-write.log")));
        assertEquals("{\"second\": 2}", Files.readString(into.resolve("provenance/launcher-write.json")));
        assertTrue(Files.exists(into.resolve("provenance/fabric-WriteBenchmark-size_4K.json")));
        assertTrue(Files.exists(into.resolve("followers/rank1.json")));
        assertFalse(Files.exists(from), "the second folder is gone");
        assertEquals(into.getFileName(), Files.readSymbolicLink(results.resolve("latest")));
        assertEquals("run-jmh: " + RunFolder.rel(from) + "'s results joined " + RunFolder.rel(into) + "\n", out.toString());
    }

    /** Under a cluster launcher rank 0 merges and the other ranks' logs stay where they wrote them. */
    @Test
    void aClusterRunKeepsTheSecondFolderAndItsHiddenMarkers() throws Exception {
        Path into = results.resolve("slurm-7");
        Path from = results.resolve("slurm-7-write");
        write(into.resolve("jmh.json"), "");
        write(from.resolve("jmh.json"), "[]");
        write(from.resolve("logs/rank0.log"), "rank 0");
        write(from.resolve("logs/.rank0.started"), "");
        RunFolder.merge(into, from, "write", true, new PrintStream(new ByteArrayOutputStream()));
        assertTrue(Files.exists(from.resolve("logs/.rank0.started")), "hidden files stay");
        assertTrue(Files.exists(into.resolve("logs/rank0.log")));
        assertTrue(Files.exists(from.resolve("jmh.json")), "the folder stays whole but for the moved files");
    }

    private static void write(Path file, String text) throws Exception {
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
    }
}

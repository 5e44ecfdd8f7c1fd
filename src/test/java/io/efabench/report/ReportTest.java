package io.efabench.report;

import static io.efabench.report.Fixtures.report;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportTest {
    @TempDir
    Path tmp;

    @Test
    void allWritesProvenanceTablesCsvAndPlots() throws Exception {
        Path run = Fixtures.runDir(Fixtures.HANDMADE, tmp.resolve("run"));
        ProvenanceTest.writeRun(run);
        Fixtures.Run r = report("all", run.toString());
        assertEquals(0, r.status(), r.err());
        assertEquals("", r.err());
        List<String> lines = r.out().lines().toList();
        assertTrue(lines.getFirst().startsWith("provenance: provider=tcp, ranks=2"), r.out());
        assertTrue(r.out().contains("## WriteBenchmark.write (avgt)"), r.out());
        assertTrue(r.out().contains("## IpcBenchmark.write (avgt)"), r.out());
        for (String f : List.of("provenance.json", "write.csv", "ipc.csv", "write-bandwidth.png", "write-latency.png",
                "ipc-bandwidth.png", "ipc-latency.png", "ipc-sweep.png")) {
            assertTrue(Files.size(run.resolve(f)) > 0, f);
        }
    }

    @Test
    void tablesOnAFileWritesCsvNextToIt() throws Exception {
        Path run = Fixtures.runDir(Fixtures.REAL_WRITE, tmp.resolve("run"));
        Fixtures.Run r = report("tables", run.resolve("jmh.json").toString());
        assertEquals(0, r.status(), r.err());
        assertTrue(r.out().contains("| SinglePin/local Gbps |"), r.out());
        assertTrue(Files.exists(run.resolve("write.csv")));
    }

    @Test
    void badInputExitsTwoWithOneLine() throws Exception {
        Path notJson = Files.writeString(tmp.resolve("jmh.json"), "this is not json");
        for (String[] args : new String[][] {
                {}, {"frobnicate"}, {"tables"}, {"tables", tmp.resolve("nope").toString()},
                {"tables", notJson.toString()}, {"plots", notJson.toString()},
                {"provenance", notJson.toString()}, {"provenance", tmp.toString()}, {"all", tmp.resolve("nope").toString()}}) {
            Fixtures.Run r = report(args);
            assertEquals(2, r.status(), String.join(" ", args));
            if (args.length > 0) {
                assertEquals(1, r.err().lines().count(), String.join(" ", args) + " -> " + r.err());
                assertTrue(r.err().startsWith("report: "), r.err());
            }
        }
        assertEquals(0, report("--help").status());
    }
}

package io.efabench.report;

import static io.efabench.report.Fixtures.report;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RankScalingTest {
    @TempDir
    Path tmp;

    private Path run(String fixture, String name, int ranks) throws Exception {
        Path dir = Fixtures.runDir(fixture, tmp.resolve(name));
        Files.writeString(dir.resolve(Provenance.MERGED_FILE), "{\"provider\": \"shm\", \"ranks\": " + ranks + "}");
        return dir;
    }

    @Test
    void tabulatesAndPlotsEachSeriesByRankCount() throws Exception {
        Path two = run("real-alltoall-2ranks.json", "a", 2);
        Path three = run("real-alltoall-3ranks.json", "b", 3);
        Fixtures.Run r = report("ranks", two.toString(), three.toString());
        assertEquals(0, r.status(), r.err());
        assertTrue(r.out().contains("| series | 2 ranks | 3 ranks |"), r.out());
        // The series are named by what varies (config, size), not by the params every result shares.
        assertTrue(r.out().contains("| config=SinglePin, size=1M | 63.40 | 24.35 |"), r.out());
        List<String> csv = Files.readAllLines(three.resolve("ranks.csv"));
        assertEquals("benchmark,series,ranks,gbps,gbps_error", csv.getFirst());
        assertEquals(1 + 4 * 2, csv.size(), "4 series at 2 rank counts: " + csv);
        assertTrue(Files.size(three.resolve("alltoallbenchmark-alltoall-avgt-ranks.png")) > 0);
    }

    @Test
    void otherMetricsAndBadInput() throws Exception {
        Path two = run("real-alltoall-2ranks.json", "a", 2);
        Path three = run("real-alltoall-3ranks.json", "b", 3);
        Fixtures.Run algbw = report("ranks", two.toString(), three.toString(), "--metric", "algbw_gbps");
        assertEquals(0, algbw.status(), algbw.err());
        assertTrue(algbw.out().contains("algbw_gbps by rank count"), algbw.out());
        Fixtures.Run one = report("ranks", two.toString());
        assertEquals(2, one.status());
        assertTrue(one.err().startsWith("report: ranks needs two or more runs"), one.err());
        Path noRanks = Fixtures.runDir("real-alltoall-2ranks.json", tmp.resolve("c"));
        Files.writeString(noRanks.resolve(Provenance.MERGED_FILE), "{\"provider\": \"shm\"}");
        Fixtures.Run missing = report("ranks", noRanks.toString(), three.toString());
        assertEquals(2, missing.status());
        assertTrue(missing.err().contains("names no rank count"), missing.err());
    }
}

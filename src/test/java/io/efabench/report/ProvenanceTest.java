package io.efabench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.efabench.provenance.ProvenanceFragments;

class ProvenanceTest {
    @TempDir
    Path run;

    static Map<String, Object> rank(int rank, String host) {
        Map<String, Object> facts = new LinkedHashMap<>();
        facts.put("provider", "tcp");
        facts.put("libfabric_header", "1.17");
        facts.put("libfabric_runtime", "1.17.0");
        facts.put("nics", List.of(Map.of("name", "lo", "link_gbps", 0), Map.of("name", "eth0", "link_gbps", 100)));
        facts.put("ranks", 2);
        facts.put("rank", rank);
        facts.put("host", host);
        return facts;
    }

    static void writeRun(Path run) {
        ProvenanceFragments.writeFragment(run, "launcher", Map.of("jvm", "25.0.3", "git_commit", "abc1234",
                "command_line", "./run-jmh.sh WriteBenchmark", "hosts", List.of("node1"), "timestamp", "2025-11-22T20:00:00Z"));
        ProvenanceFragments.writeFragment(run, "rank-0", rank(0, "node1"));
        ProvenanceFragments.writeFragment(run, "rank-1", rank(1, "node1"));
    }

    @Test
    void mergeKeepsAgreedFactsOnceAndDisagreementsPerSource() throws Exception {
        writeRun(run);
        JsonObject merged = Provenance.merge(run);
        JsonObject onDisk = JsonParser.parseString(Files.readString(run.resolve("provenance.json"))).getAsJsonObject();
        assertEquals(merged, onDisk);
        assertEquals("tcp", merged.get("provider").getAsString());
        assertEquals(2, merged.get("ranks").getAsInt());
        assertEquals(List.of("launcher", "rank-0", "rank-1"),
                merged.getAsJsonArray("sources").asList().stream().map(e -> e.getAsString()).toList());
        JsonObject perRank = merged.getAsJsonObject("rank").getAsJsonObject("per_source");
        assertEquals(0, perRank.get("rank-0").getAsInt());
        assertEquals(1, perRank.get("rank-1").getAsInt());
        assertEquals("provenance: provider=tcp, ranks=2, hosts=node1, libfabric_runtime=1.17.0, libfabric_header=1.17, "
                + "nics=lo(link ?),eth0(100G), jvm=25.0.3, git_commit=abc1234, timestamp=2025-11-22T20:00:00Z",
                Provenance.summary(merged));
    }

    @Test
    void rewritingAFragmentReplacesIt() throws Exception {
        ProvenanceFragments.writeFragment(run, "rank-0", Map.of("provider", "tcp"));
        ProvenanceFragments.writeFragment(run, "rank-0", Map.of("provider", "shm"));
        assertEquals("shm", Provenance.merge(run).get("provider").getAsString());
        try (var files = Files.list(run.resolve("provenance"))) {
            assertEquals(List.of("rank-0.json"), files.map(p -> p.getFileName().toString()).toList());
        }
    }

    @Test
    void launcherFileAtTheTopOfTheRunCounts() throws Exception {
        Files.writeString(run.resolve("launcher.json"), "{\"jvm\": \"25\", \"hosts\": [\"a\", \"b\"]}");
        assertEquals("provenance: hosts=a,b, jvm=25", Provenance.summary(Provenance.merge(run)));
    }

    @Test
    void badFragmentsAreOneLineErrors() throws Exception {
        assertThrows(IllegalArgumentException.class, () -> ProvenanceFragments.writeFragment(run, "../x", Map.of()));
        Files.createDirectories(run.resolve("provenance"));
        Files.writeString(run.resolve("provenance/rank-0.json"), "[1, 2]");
        assertTrue(assertThrows(ReportException.class, () -> Provenance.merge(run)).getMessage()
                .endsWith("rank-0.json: a provenance fragment must be a JSON object"));
    }

    @Test
    void noFragmentsMeansNothingWritten() {
        assertEquals(0, Provenance.merge(run).size());
        assertFalse(Files.exists(run.resolve("provenance.json")));
        assertEquals("", Provenance.summary(new JsonObject()));
    }

    @Test
    void recordWithoutARunDirDoesNothing() {
        assumeTrue(System.getenv(ProvenanceFragments.RUN_DIR_ENV) == null, ProvenanceFragments.RUN_DIR_ENV + " is set in this environment");
        ProvenanceFragments.record("rank-0", Map.of("provider", "tcp"));
        assertFalse(Files.exists(run.resolve("provenance")));
    }
}

package io.efabench.report;

import static io.efabench.report.Fixtures.REAL_WRITE;
import static io.efabench.report.Fixtures.edited;
import static io.efabench.report.Fixtures.report;
import static io.efabench.report.Fixtures.scale;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Compare on genuine JMH output (real-write.json) against edited copies of it. */
class CompareTest {
    @TempDir
    Path tmp;

    /** OLD: the real file with gbps errors set to 1% so that a 30% change is clearly beyond them. */
    private Path old() throws Exception {
        return edited(REAL_WRITE, tmp.resolve("old.json"), scale("gbps", 1.0, 1));
    }

    @Test
    void sameResultsPass() throws Exception {
        Path run = Fixtures.runDir(REAL_WRITE, tmp.resolve("run"));
        Fixtures.Run r = report("compare", run.toString(), run.resolve("jmh.json").toString());
        assertEquals(0, r.status(), r.out() + r.err());
        assertTrue(r.out().contains("no regression beyond 5% and the combined error"), r.out());
        assertEquals(8, r.out().lines().filter(l -> l.contains("within error")).count(), r.out());
    }

    /** Two runs whose JVMs laid objects out differently (8-byte references past a 32 GB heap): compare says which facts. */
    @Test
    void jvmLayoutDifferenceIsNamed() throws Exception {
        Path a = Fixtures.runDir(REAL_WRITE, tmp.resolve("a"));
        Path b = Fixtures.runDir(REAL_WRITE, tmp.resolve("b"));
        String layout = "{\"object_header_bytes\": 12, \"reference_bytes\": %d, \"compressed_oops\": %s, \"object_alignment_bytes\": 8}";
        java.nio.file.Files.writeString(a.resolve("provenance.json"), "{\"jvm_layout\": " + layout.formatted(4, "true") + "}");
        java.nio.file.Files.writeString(b.resolve("provenance.json"), "{\"jvm_layout\": " + layout.formatted(8, "false") + "}");
        Fixtures.Run r = report("compare", a.toString(), b.resolve("jmh.json").toString());
        assertEquals(0, r.status(), r.out() + r.err());
        assertTrue(r.out().contains("JVM layout differs: compressed_oops true -> false; reference_bytes 4 -> 8"), r.out());

        java.nio.file.Files.writeString(b.resolve("provenance.json"), "{\"jvm_layout\": " + layout.formatted(4, "true") + "}");
        Fixtures.Run same = report("compare", a.toString(), b.toString());
        assertFalse(same.out().contains("JVM layout"), same.out());
    }

    /** A CI gate must not pass vacuously: no entry in common is exit 4 and a line saying so, not "no regression". */
    @Test
    void noMatchingEntryExitsNonZeroSayingSo() throws Exception {
        Path renamed = edited(REAL_WRITE, tmp.resolve("new.json"),
                e -> e.addProperty("benchmark", e.get("benchmark").getAsString() + "Renamed"));
        Fixtures.Run r = report("compare", old().toString(), renamed.toString());
        assertEquals(Compare.NOTHING_MATCHED, r.status(), r.out() + r.err());
        assertTrue(r.out().contains("nothing compared: no entry of OLD"), r.out());
        assertFalse(r.out().contains("no regression"), r.out());
    }

    @Test
    void injectedBandwidthDropFails() throws Exception {
        Path dropped = edited(REAL_WRITE, tmp.resolve("new.json"), scale("gbps", 0.7, 1));
        Fixtures.Run r = report("compare", old().toString(), dropped.toString(), "--metric", "gbps", "--threshold", "5");
        assertEquals(1, r.status(), r.out() + r.err());
        assertEquals(8, r.out().lines().filter(l -> l.endsWith(" REGRESSION |")).count(), r.out());
        assertTrue(r.out().contains("-30.0%"), r.out());
        assertTrue(r.out().contains("8 regression(s) beyond 5% and the combined error"), r.out());
    }

    @Test
    void dropWithinTheCombinedErrorPasses() throws Exception {
        // 30% down, but each side's 99.9% half-width is 40% of its score: not beyond the error.
        Path noisyOld = edited(REAL_WRITE, tmp.resolve("old.json"), scale("gbps", 1.0, 40));
        Path noisyNew = edited(REAL_WRITE, tmp.resolve("new.json"), scale("gbps", 0.7, 40));
        Fixtures.Run r = report("compare", noisyOld.toString(), noisyNew.toString());
        assertEquals(0, r.status(), r.out() + r.err());
        assertFalse(r.out().contains("REGRESSION"), r.out());
    }

    @Test
    void dropBelowTheThresholdPasses() throws Exception {
        Path slightlyLower = edited(REAL_WRITE, tmp.resolve("new.json"), scale("gbps", 0.97, 0.1));
        Fixtures.Run r = report("compare", old().toString(), slightlyLower.toString(), "--threshold", "5");
        assertEquals(0, r.status(), r.out() + r.err());
        assertTrue(r.out().contains("worse, under threshold"), r.out());
        assertEquals(1, report("compare", old().toString(), slightlyLower.toString(), "--threshold=2").status());
    }

    @Test
    void improvementPasses() throws Exception {
        Path better = edited(REAL_WRITE, tmp.resolve("new.json"), scale("gbps", 1.3, 1));
        Fixtures.Run r = report("compare", old().toString(), better.toString());
        assertEquals(0, r.status(), r.out() + r.err());
        assertEquals(8, r.out().lines().filter(l -> l.endsWith(" improved |")).count(), r.out());
    }

    @Test
    void latencyIncreaseFails() throws Exception {
        Path oldLat = edited(REAL_WRITE, tmp.resolve("old.json"), scale("lat_us", 1.0, 1));
        Path slower = edited(REAL_WRITE, tmp.resolve("new.json"), scale("lat_us", 1.3, 1));
        assertEquals(1, report("compare", oldLat.toString(), slower.toString(), "--metric", "lat_us").status());
        // The same files read the other way round: latency went down, which is better.
        assertEquals(0, report("compare", slower.toString(), oldLat.toString(), "--metric", "lat_us").status());
    }

    @Test
    void primaryTimeScoreIncreaseFails() throws Exception {
        Path oldScore = edited(REAL_WRITE, tmp.resolve("old.json"), scale("score", 1.0, 1));
        Path slower = edited(REAL_WRITE, tmp.resolve("new.json"), scale("score", 1.3, 1));
        Fixtures.Run r = report("compare", oldScore.toString(), slower.toString(), "--metric", "score");
        assertEquals(1, r.status(), r.out());
        assertTrue(r.out().contains("us/op"), r.out());
    }

    @Test
    void entriesInOneFileOnlyAreListedNotFailed() throws Exception {
        Path renamed = edited(REAL_WRITE, tmp.resolve("new.json"), entry -> {
            var params = entry.getAsJsonObject("params");
            if (params.get("config").getAsString().equals("MultiPin")) params.addProperty("config", "RoundRobinPin");
        });
        Fixtures.Run r = report("compare", old().toString(), renamed.toString());
        assertEquals(0, r.status(), r.out());
        assertEquals(4, r.out().lines().filter(l -> l.startsWith("only in OLD: WriteBenchmark.write avgt")).count(), r.out());
        assertEquals(4, r.out().lines().filter(l -> l.startsWith("only in NEW:") && l.contains("config=RoundRobinPin")).count());
    }

    @Test
    void missingBusbwIsNotAFailure() throws Exception {
        Path busOld = edited(REAL_WRITE, tmp.resolve("old.json"), scale("busbw_pct", 1.0, 1));
        Fixtures.Run r = report("compare", busOld.toString(), busOld.toString(), "--metric", "busbw_pct");
        assertEquals(0, r.status(), r.out());
        assertEquals(4, r.out().lines().filter(l -> l.endsWith(" n/a |")).count(), r.out());
    }

    @Test
    void usageErrorsExitTwoWithOneLine() throws Exception {
        Path old = old();
        for (String[] args : new String[][] {
                {"compare", old.toString()},
                {"compare", old.toString(), tmp.resolve("missing.json").toString()},
                {"compare", old.toString(), old.toString(), "--metric", "nosuch"},
                {"compare", old.toString(), old.toString(), "--threshold", "five"},
                {"compare", old.toString(), old.toString(), "--threshold", "-1"},
                {"compare", old.toString(), old.toString(), "--metric"},
                {"compare", old.toString(), old.toString(), "--bogus"}}) {
            Fixtures.Run r = report(args);
            assertEquals(2, r.status(), String.join(" ", args) + ": " + r.err());
            assertEquals(1, r.err().lines().count(), r.err());
            assertTrue(r.err().startsWith("report: "), r.err());
        }
        assertEquals("report: metric 'nosuch' not found in OLD " + old + "; available: busbw_pct, gbps, lat_us, score",
                report("compare", old.toString(), old.toString(), "--metric", "nosuch").err().strip());
    }

    @Test
    void directionFollowsMetricAndMode() throws Exception {
        JmhResult avgt = JmhResults.read(Fixtures.runDir(REAL_WRITE, tmp)).getFirst();
        assertTrue(Compare.higherIsBetter("gbps", avgt));
        assertTrue(Compare.higherIsBetter("busbw_pct", avgt));
        assertFalse(Compare.higherIsBetter("lat_us", avgt));
        assertFalse(Compare.higherIsBetter("score", avgt));
        JmhResult thrpt = new JmhResult("a.B.c", "thrpt", avgt.params(), avgt.primary(), avgt.secondary());
        assertTrue(Compare.higherIsBetter("score", thrpt));
    }
}

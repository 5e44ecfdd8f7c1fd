package io.efabench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JmhResultsTest {
    @TempDir
    Path tmp;

    @Test
    void readsRealJmhOutput() throws Exception {
        List<JmhResult> rs = JmhResults.read(Fixtures.runDir(Fixtures.REAL_WRITE, tmp));
        assertEquals(8, rs.size());
        JmhResult first = rs.getFirst();
        assertEquals("fixture.WriteBenchmark.write", first.benchmark());
        assertEquals("WriteBenchmark.write", first.shortName());
        assertEquals("avgt", first.mode());
        assertEquals(List.of("channels", "completion", "config", "size"), List.copyOf(first.params().keySet()));
        assertEquals("us/op", first.primary().unit());
        assertEquals("Gbps", first.metric("gbps").unit());
        assertTrue(first.metric("gbps").score() > 0 && Double.isFinite(first.metric("gbps").error()));
        for (JmhResult r : rs) {
            assertEquals(r.params().get("config").equals("SinglePin"), r.metric("busbw_pct") != null, r.key());
            assertNotNull(r.metric("lat_us"));
        }
    }

    @Test
    void singleIterationErrorsAreNaN() throws Exception {
        JmhResult r = JmhResults.read(Fixtures.runDir(Fixtures.REAL_SAMPLE, tmp)).getFirst();
        assertEquals("sample", r.mode());
        assertEquals(4096, r.sizeBytes());
        assertTrue(Double.isNaN(r.metric("gbps").error()));
        assertEquals(0, r.metric("gbps").errorOrZero());
        assertNull(r.metric("nosuch"));
    }

    @Test
    void badInputIsOneLine() throws Exception {
        assertEquals("no jmh.json in " + tmp, assertThrows(ReportException.class, () -> JmhResults.read(tmp)).getMessage());
        assertEquals("no such file: " + tmp.resolve("x.json"),
                assertThrows(ReportException.class, () -> JmhResults.read(tmp.resolve("x.json"))).getMessage());
        Path broken = Files.writeString(tmp.resolve("broken.json"), "[{\"benchmark\": ");
        assertTrue(assertThrows(ReportException.class, () -> JmhResults.read(broken)).getMessage()
                .startsWith(broken + ": malformed JSON"));
        Path object = Files.writeString(tmp.resolve("object.json"), "{}");
        assertEquals(object + ": not a JMH result file (expected a JSON array of results)",
                assertThrows(ReportException.class, () -> JmhResults.read(object)).getMessage());
        Path empty = Files.writeString(tmp.resolve("empty.json"), "[]");
        assertEquals(empty + ": holds no benchmark results",
                assertThrows(ReportException.class, () -> JmhResults.read(empty)).getMessage());
        Path noMode = Files.writeString(tmp.resolve("nomode.json"), "[{\"benchmark\": \"a.B.c\"}]");
        assertEquals(noMode + ": entry 0 is not a JMH result: missing \"mode\"",
                assertThrows(ReportException.class, () -> JmhResults.read(noMode)).getMessage());
    }
}

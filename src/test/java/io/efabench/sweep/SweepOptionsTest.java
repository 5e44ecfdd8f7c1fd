package io.efabench.sweep;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

class SweepOptionsTest {
    @Test
    void defaultsAreTheDocumentedOnes() {
        SweepOptions o = SweepOptions.parse(new String[0]);
        assertEquals(0, o.quick());
        assertEquals(1 << 20, o.size());
        Thresholds t = o.thresholds(0, false);
        assertEquals(Thresholds.LINE_FRACTION, t.lineFraction());
        assertEquals(Thresholds.REFERENCE_FRACTION, t.referenceFraction());
        assertEquals(Thresholds.Z_LIMIT, t.zLimit());
        assertEquals(Thresholds.LATENCY_FACTOR, t.latencyFactor());
    }

    @Test
    void sharedCpusLowerTheRelativeFloorUnlessOneIsGiven() {
        assertEquals(Thresholds.SHARED_CPUS_REFERENCE_FRACTION, SweepOptions.parse(new String[0]).thresholds(0, true)
                .referenceFraction());
        assertEquals(0.8, SweepOptions.parse(new String[] {"--reference-fraction", "0.8"}).thresholds(0, true)
                .referenceFraction());
        IllegalArgumentException renamed = assertThrows(IllegalArgumentException.class,
                () -> SweepOptions.parse(new String[] {"--median-fraction", "0.8"}));
        assertTrue(renamed.getMessage().contains("--reference-fraction"), renamed.getMessage());
    }

    @Test
    void quickTakesAnOptionalCountAndSizesTheirUnits() {
        assertEquals(3, SweepOptions.parse(new String[] {"--quick"}).quick());
        SweepOptions o = SweepOptions.parse(new String[] {"--quick", "5", "--size", "64K", "--line-gbps", "100"});
        assertEquals(5, o.quick());
        assertEquals(65536, o.size());
        assertEquals(100, o.thresholds(0, false).lineGbps());
        assertEquals(200, SweepOptions.parse(new String[] {}).thresholds(200, false).lineGbps(), "the fleet's known rate");
        assertEquals(Double.POSITIVE_INFINITY, o.thresholds(0, true).latencyFactor(), "round trips not judged on shared CPUs");
    }

    /** Device memory where the node has a GPU unless told; what every rank must agree on includes it. */
    @Test
    void memoryIsAutoByDefaultAndPartOfTheKey() {
        assertEquals("auto", SweepOptions.parse(new String[0]).memory());
        SweepOptions host = SweepOptions.parse(new String[] {"--memory", "host"});
        assertEquals("host", host.memory());
        assertTrue(host.key().contains("memory=host"), host.key());
    }

    @Test
    void badInputIsOneLine() {
        for (List<String> bad : List.of(List.of("--size", "12Q"), List.of("--quick", "0"), List.of("--reference-fraction", "2"),
                List.of("--frobnicate"), List.of("--seconds"), List.of("--memory", "gpu"))) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> SweepOptions.parse(bad.toArray(String[]::new)), bad.toString());
            assertTrue(e.getMessage().startsWith("sweep: "), e.getMessage());
        }
    }
}

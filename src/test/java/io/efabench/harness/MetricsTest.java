package io.efabench.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class MetricsTest {
    @Test
    void gbpsIsDecimalBitsPerSecond() {
        // 1 MiB in 100 us: 1048576 * 8 / 1e-4 / 1e9 = 83.886 Gbps
        assertEquals(83.886, Metrics.gbps(1 << 20, 100e-6), 1e-3);
        assertEquals(10.486, Metrics.gbytesPerSec(1 << 20, 100e-6), 1e-3);
    }

    @Test
    void busbwIsPercentOfKnownLinkOnly() {
        assertEquals(97.0, Metrics.busbwPct(97, 100), 1e-9);
        assertTrue(Double.isNaN(Metrics.busbwPct(97, 0)));
    }

    @Test
    void latencyInMicroseconds() {
        assertEquals(12.5, Metrics.latUs(12.5e-6), 1e-12);
    }

    @org.junit.jupiter.api.Test
    void nicBytesRatioIsNicBytesOverPayloadAndPublishedOncePerIteration() {
        org.junit.jupiter.api.Assertions.assertEquals(1.25, Metrics.nicBytesRatio(1250, 1000), 1e-12);
        org.junit.jupiter.api.Assertions.assertTrue(Double.isNaN(Metrics.nicBytesRatio(5, 0)), "nothing moved: no ratio");
        MetricsSink sink = MetricsSink.open();
        sink.nicBytesRatio(1.02);
        org.junit.jupiter.api.Assertions.assertEquals(1.02, sink.takeNicBytesRatio());
        org.junit.jupiter.api.Assertions.assertTrue(Double.isNaN(sink.takeNicBytesRatio()), "one iteration's figure");
    }
}

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
}

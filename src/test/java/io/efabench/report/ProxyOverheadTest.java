package io.efabench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The proxy overhead table subtracts each Proxy config's round from its Direct twin's of the same run. */
class ProxyOverheadTest {
    private static final String B = "io.efabench.bench.ProxyBenchmark.put";

    private static JmhResult put(String mode, String config, double score, String unit, Map<String, JmhResult.Metric> sec) {
        return new JmhResult(B, mode, Map.of("config", config, "size", "8M", "rounds", "16"),
                new JmhResult.Metric(score, Double.NaN, unit), sec);
    }

    private static JmhResult.Metric us(double v) {
        return new JmhResult.Metric(v, Double.NaN, "us");
    }

    @Test
    void overheadIsTheRoundMinusTheDirectTwinsRound() {
        String table = ProxyOverhead.render(List.of(
                put("sample", "ProxySingle", 0.32, "ms/op", Map.of("lat_p50_us", us(19.5), "lat_p99_us", us(25))),
                put("sample", "DirectSingle", 272, "us/op", Map.of("lat_p50_us", us(17), "lat_p99_us", us(18))),
                put("thrpt", "ProxySingleNBI", 1 / 240.0, "ops/us", Map.of()),
                put("thrpt", "DirectSingleNBI", 1 / 224.0, "ops/us", Map.of()),
                put("sample", "ProxyMulti", 300, "us/op", Map.of())));
        // 320 us over 16 rounds = 20 us against 17: 3 us per round; p50 19.5 - 17.
        assertTrue(table.contains("| 8M | ProxySingle | 20.00 | 17.00 | 3.00 | 2.50 | 7.00 | 0.850 |"), table);
        // thrpt: 240 us per launch = 15 us per round against 14; no percentiles.
        assertTrue(table.contains("| 8M | ProxySingleNBI | 15.00 | 14.00 | 1.00 | - | - | 0.933 |"), table);
        assertTrue(!table.contains("ProxyMulti |"), "no DirectMulti twin in the run: no row\n" + table);
    }

    @Test
    void noTwinsNoTable() {
        assertEquals("", ProxyOverhead.render(List.of(put("avgt", "ProxySingle", 100, "us/op", Map.of()))));
    }
}

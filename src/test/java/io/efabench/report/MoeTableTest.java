package io.efabench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The MoE table puts each result's figures in one row, and is absent without MoE results. */
class MoeTableTest {
    private static JmhResult.Metric m(double v, String unit) {
        return new JmhResult.Metric(v, Double.NaN, unit);
    }

    @Test
    void aRowPerResultWithItsFigures() {
        JmhResult r = new JmhResult("io.efabench.bench.MoeBenchmark.dispatchAndCombine", "avgt",
                Map.of("config", "SingleDMA", "dtype", "BF16", "tokens", "4096", "routing", "hot:0.25"), m(2247.5, "us/op"),
                Map.of("moe_gbs", m(277.447, "GB/s"), "moe_wire_gbs", m(242.785, "GB/s"), "imbalance", m(3.994, "max/mean"),
                        "slowest_rank_us", m(2901.1, "us"), "busiest_nic_gbps", m(0, "Gbps")));
        String table = MoeTable.render(List.of(r));
        assertTrue(table.contains("| SingleDMA | BF16 | 4096 | hot:0.25 | 2247.5 us/op | 2901.1 | - | 277.447 | - | - | 242.785 | 3.99"
                + " | 0.0000 |"), table);
        assertEquals("", MoeTable.render(List.of(new JmhResult("io.efabench.bench.WriteBenchmark.write", "avgt", Map.of(),
                m(1, "us/op"), Map.of()))));
    }
}

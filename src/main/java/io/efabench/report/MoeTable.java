package io.efabench.report;

import java.util.ArrayList;
import java.util.List;

/**
 * The MoE table ({@code MoeBenchmark}): per config, dtype, tokens and routing, the round (rank 0's
 * primary, in its unit per op), the slowest rank's mean and p99, the rates counted DeepEP's way
 * (both phases, dispatch, combine) and over the wire, the imbalance and the busiest NIC's Gbps:
 * the figures README's "MoE dispatch and combine" defines, side by side.
 */
final class MoeTable {
    static final String MOE = "MoeBenchmark.dispatchAndCombine";
    private static final String[] GBS = {"moe_gbs", "moe_dispatch_gbs", "moe_combine_gbs", "moe_wire_gbs"};

    private MoeTable() {}

    /** The table of the MoE results among {@code results}; empty when there are none. */
    static String render(List<JmhResult> results) {
        List<String[]> rows = new ArrayList<>();
        for (JmhResult r : results) {
            if (!r.shortName().equals(MOE)) {
                continue;
            }
            List<String> row = new ArrayList<>(List.of(param(r, "config"), param(r, "dtype"), param(r, "tokens"),
                    param(r, "routing"), Cells.format(r.primary().score(), "%.1f") + " " + r.primary().unit(),
                    value(r, "slowest_rank_us", "%.1f"), value(r, "slowest_rank_p99_us", "%.1f")));
            for (String m : GBS) {
                row.add(value(r, m, "%.3f"));
            }
            row.add(value(r, "imbalance", "%.2f"));
            row.add(value(r, "busiest_nic_gbps", "%.4f"));
            rows.add(row.toArray(String[]::new));
        }
        if (rows.isEmpty()) {
            return "";
        }
        StringBuilder out = new StringBuilder();
        out.append("MoE dispatch + combine (GB/s: DeepEP's count per rank, mean over ranks; wire: from other ranks only;"
                + " slowest rank per round, us; README \"MoE dispatch and combine\")\n");
        out.append("| Config | Dtype | Tokens | Routing | Round (rank 0) | Slowest rank | Slowest p99 | moe GB/s | dispatch | combine"
                + " | wire | Imbalance | Busiest NIC Gbps |\n");
        out.append("|:--|:--|--:|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
        for (String[] row : rows) {
            out.append("| ").append(String.join(" | ", row)).append(" |\n");
        }
        return out.toString();
    }

    private static String param(JmhResult r, String name) {
        return r.params().getOrDefault(name, Cells.MISSING);
    }

    private static String value(JmhResult r, String metric, String pattern) {
        JmhResult.Metric m = r.metric(metric);
        return m == null ? Cells.MISSING : Cells.format(m.score(), pattern);
    }
}

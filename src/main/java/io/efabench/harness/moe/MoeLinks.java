package io.efabench.harness.moe;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.efabench.harness.Layout;
import io.efabench.harness.engine.Stripes;

/**
 * What the links must carry per routing: for dispatch and for combine, the bytes of the busiest
 * NIC in its busier direction (ranks on one host share its NICs; channel c of every rank is the
 * host's NIC c, rail-aligned; pairs on one host cross no link), summed over the two phases, which
 * run one after the other. A round cannot take less than that over the NIC's rate: the bound
 * {@code busiest_nic_gbps} and {@code moe_link_bound_us} are held against.
 */
final class MoeLinks {
    private MoeLinks() {}

    /** Per routing: the busiest NIC's bytes of dispatch plus those of combine. */
    static long[] busiest(int[][][] n, List<String> hosts, Layout layout, int channels, long dispatchTokenBytes,
            long combineTokenBytes) {
        Map<String, Integer> index = new HashMap<>();
        int[] host = new int[hosts.size()];
        for (int r = 0; r < host.length; r++) {
            host[r] = index.computeIfAbsent(hosts.get(r), h -> index.size());
        }
        long[] out = new long[n.length];
        for (int p = 0; p < n.length; p++) {
            out[p] = phase(n[p], host, index.size(), layout, channels, dispatchTokenBytes, false)
                    + phase(n[p], host, index.size(), layout, channels, combineTokenBytes, true);
        }
        return out;
    }

    /** One phase's busiest NIC direction: dispatch o -> d carries n[o][d] tokens, combine d -> o the same. */
    private static long phase(int[][] n, int[] host, int hosts, Layout layout, int channels, long tokenBytes, boolean back) {
        long[][] sent = new long[hosts][channels];
        long[][] received = new long[hosts][channels];
        for (int o = 0; o < n.length; o++) {
            for (int d = 0; d < n.length; d++) {
                if (host[o] == host[d] || n[o][d] == 0) {
                    continue;
                }
                int from = back ? d : o;
                int to = back ? o : d;
                long bytes = n[o][d] * tokenBytes;
                for (int c = 0; c < channels; c++) {
                    long b = switch (layout) {
                        case SINGLE -> c == 0 ? bytes : 0;
                        case MULTI -> Stripes.length(bytes, channels, c);
                        case ROUND_ROBIN -> c == (to + from) % channels ? bytes : 0;
                    };
                    sent[host[from]][c] += b;
                    received[host[to]][c] += b;
                }
            }
        }
        long max = 0;
        for (int h = 0; h < hosts; h++) {
            for (int c = 0; c < channels; c++) {
                max = Math.max(max, Math.max(sent[h][c], received[h][c]));
            }
        }
        return max;
    }
}

package io.efabench.report;

import java.util.List;
import java.util.Locale;
import io.efabench.harness.Metrics;


/**
 * The seed's unit of time for a table's Gbps and Lat columns, where the results carry one: the
 * ping-pong round trip ({@code rtt_us}, SendRecv: the seed's Gbps = size x 8 / RTT, Lat = RTT)
 * or the all-to-all round ({@code round_us}: the seed's Gbps = one peer's size x 8 / round, Lat =
 * round). Our JSON's {@code gbps} counts every byte delivered (both directions of a ping-pong, all
 * N-1 peers of a round) and {@code lat_us} one transfer; the proxy's unit is a launch over its
 * rounds. The seed-style table shows the seed's
 * figures, computed here through {@link Metrics}, and its heading says so.
 */
final class SeedUnit {
    final String metric;
    final String note;

    private SeedUnit(String metric, String note) {
        this.metric = metric;
        this.note = note;
    }

    private static final List<SeedUnit> KNOWN = List.of(
            new SeedUnit("rtt_us", "Seed formulas: Gbps = size x 8 / RTT, Lat(us) = RTT, BusBW(%) = that Gbps over the link"
                    + " (JSON: gbps = 2 x size x 8 / RTT, both directions; lat_us = RTT / 2; rtt_us = RTT)."),
            new SeedUnit("round_us", "Seed formulas: Gbps = size (one peer's block) x 8 / round, Lat(us) = round, BusBW(%) ="
                    + " that Gbps over the link (JSON: gbps = size x (N-1) x 8 / round, all peers; round_us = round);"
                    + " algbw/busbw: nccl-tests' alltoall_perf in GB/s (algbw = size x N / round, busbw = algbw x (N-1)/N)."));

    /**
     * The proxy's: the seed timed a launch of its kernel and divided by the iterations; a launch
     * here is one invocation of {@code rounds} rounds, and {@code round_us} its time over them,
     * NBI's overlapping rounds included.
     */
    private static final SeedUnit LAUNCH = new SeedUnit("round_us", "Seed formulas: Lat(us) = a launch's time / its rounds (the"
            + " seed's time / iters, NBI's overlapping rounds too), Gbps = size x 8 / Lat, BusBW(%) = that Gbps over the link"
            + " (JSON: gbps counts every target's bytes; lat_us only where rounds do not overlap, the blocking configs).");

    /** The unit of the experiment's results, or null where they carry none (Write, IPC). */
    static SeedUnit of(Experiment e) {
        if (e.shortName().equals(Experiment.PROXY)) {
            return LAUNCH;
        }
        for (SeedUnit u : KNOWN) {
            boolean any = e.cells().values().stream().flatMap(m -> m.values().stream()).anyMatch(r -> r.metric(u.metric) != null);
            if (any) {
                return u;
            }
        }
        return null;
    }

    /**
     * {Gbps, BusBW(%), Lat(us)} of one result as the seed's table has them, NaN where missing:
     * by {@code unit}'s formulas where there is one, else our gbps, busbw_pct and lat_us (the
     * seed's Write and Proxy tables: per-transfer latency, bytes over time).
     */
    static double[] figures(SeedUnit unit, JmhResult r, long size) {
        if (r == null) {
            return new double[] {Double.NaN, Double.NaN, Double.NaN};
        }
        double seedPct = score(r, "seed_busbw_pct"); // the seed's denominator, where the run recorded it
        if (unit == null) {
            return new double[] {score(r, "gbps"), Double.isNaN(seedPct) ? score(r, "busbw_pct") : seedPct, score(r, "lat_us")};
        }
        double t = score(r, unit.metric);
        if (!(t > 0)) {
            return new double[] {Double.NaN, Double.NaN, Double.NaN};
        }
        double gbps = Metrics.seedGbps(size, t);
        return new double[] {gbps, Double.isNaN(seedPct) ? Metrics.seedBusbwPct(gbps, score(r, "gbps"), score(r, "busbw_pct"))
                : seedPct, t};
    }

    private static double score(JmhResult r, String metric) {
        JmhResult.Metric m = r.metric(metric);
        return m == null ? Double.NaN : m.score();
    }
}

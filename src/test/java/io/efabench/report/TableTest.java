package io.efabench.report;

import io.efabench.harness.Sizes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TableTest {
    @TempDir
    Path tmp;

    private List<Experiment> handmade() throws Exception {
        return Experiment.of(JmhResults.read(Fixtures.runDir(Fixtures.HANDMADE, tmp)));
    }

    @Test
    void writeTableLooksLikeTheSeed() throws Exception {
        Experiment write = handmade().getFirst();
        assertEquals("""
                ## WriteBenchmark.write (avgt)
                params: channels=1, completion=remote

                | Size |     Count | SinglePin Gbps | BusBW(%) |  Lat(us) | MultiPin Gbps | BusBW(%) |  Lat(us) |
                |-----:|----------:|---------------:|---------:|---------:|--------------:|---------:|---------:|
                | 256K |     65536 |          31.58 |     31.6 |    66.54 |         32.76 |        - |    64.11 |
                |   1M |    262144 |          63.27 |     63.3 |   132.63 |        114.82 |        - |    73.06 |
                |   1G | 268435456 |          97.68 |     97.7 | 87936.29 |        380.00 |        - | 22604.91 |
                """, Table.render(write));
    }

    @Test
    void ipcColumnGroupsAreGridByBlockPlusCopyEngine() throws Exception {
        Experiment ipc = handmade().get(1);
        assertEquals(List.of("Kernel/1x256", "Kernel/128x256", "CopyEngine"), ipc.groups());
        assertEquals("ipc", ipc.stem());
        assertTrue(ipc.isGridBlockSweep());
        String table = Table.render(ipc);
        assertTrue(table.contains("| Kernel/1x256 Gbps |"), table);
        assertTrue(table.contains("| CopyEngine Gbps |"), table);
    }

    @Test
    void everyRowHasTheSameWidthAndRightAlignedCells() throws Exception {
        for (Experiment e : Experiment.of(JmhResults.read(Fixtures.runDir(Fixtures.REAL_WRITE, tmp)))) {
            List<String> lines = Table.render(e).lines().filter(l -> l.startsWith("|")).toList();
            int width = lines.getFirst().length();
            for (String line : lines) {
                assertEquals(width, line.length(), line);
                assertTrue(line.endsWith(" |") || line.endsWith(":|"), line);
            }
            // Every cell of a data row ends right before " |": right-aligned.
            for (String cell : lines.get(2).split("\\|")) {
                if (!cell.isEmpty()) assertTrue(cell.endsWith(" ") && !cell.endsWith("  "), "'" + cell + "'");
            }
            // Real fixture: 2 configs x 2 completions, MultiPin without busbw.
            assertEquals(List.of("SinglePin/local", "SinglePin/remote", "MultiPin/local", "MultiPin/remote"), e.groups());
            String[] cells = lines.get(2).split("\\|");
            assertEquals("-", cells[10].trim()); // MultiPin/local BusBW(%)
            assertTrue(Double.parseDouble(cells[4].trim()) > 0); // SinglePin/local BusBW(%)
            assertEquals("256K", cells[1].trim());
            assertEquals("65536", cells[2].trim());
        }
    }

    @Test
    void numericVaryingParamsAreNamed() throws Exception {
        Path file = Fixtures.edited(Fixtures.HANDMADE, tmp.resolve("channels.json"), entry -> {
            var params = entry.getAsJsonObject("params");
            if (params.get("config").getAsString().equals("MultiPin")) params.addProperty("channels", "4");
        });
        Experiment write = Experiment.of(JmhResults.read(file)).getFirst();
        assertEquals(List.of("SinglePin/channels=1", "MultiPin/channels=4"), write.groups());
    }

    /** A benchmark without payload metrics (the proxy's queue) gets JMH's score, unit and sample percentiles. */
    @Test
    void queueTableShowsScoresAndSamplePercentiles() throws Exception {
        List<Experiment> queue = Experiment.of(JmhResults.read(Fixtures.runDir("real-proxyqueue-h200.json", tmp)));
        String flood = Table.render(queue.get(0));
        assertTrue(flood.contains("| flood  |    - | 29663407.548 |"), flood);
        assertTrue(flood.contains("ops/s"), flood);
        String rtt = Table.render(queue.get(1));
        assertTrue(rtt.contains("| Config    | Size |  Score | Error |  Unit |    p50 |    p90 |    p99 |  p99.9 |"), rtt);
        assertTrue(rtt.contains("| roundTrip |    - | 12.597 |"), rtt);
        assertTrue(rtt.contains("| 12.496 |"), rtt);
    }

    /** The data rows of a rendered table, cells trimmed, header and separator dropped. */
    private static List<List<String>> rows(String table) {
        return table.lines().filter(l -> l.startsWith("|") && !l.startsWith("|-") && !l.startsWith("| Size"))
                .map(l -> java.util.Arrays.stream(l.substring(1, l.length() - 1).split("\\|")).map(String::trim).toList())
                .toList();
    }

    private static double metric(Experiment e, long size, String name) {
        return e.cell(e.groups().getFirst(), size).metric(name).score();
    }

    /**
     * Issue 20, golden: SendRecv's seed-style Gbps is size x 8 / RTT and its Lat the RTT (the
     * seed's SendRecv table), from rtt_us; our JSON's gbps counts both directions (2x) and lat_us
     * is one way (RTT / 2), so the formula changed back fails here.
     */
    @Test
    void sendRecvTableUsesTheSeedsFormulasFromTheRoundTrip() throws Exception {
        Experiment e = Experiment.of(JmhResults.read(Fixtures.runDir("real-sendrecv-2ranks-rtt.json", tmp))).getFirst();
        String table = Table.render(e);
        assertTrue(table.contains("Seed formulas: Gbps = size x 8 / RTT, Lat(us) = RTT"), table);
        List<List<String>> rows = rows(table);
        assertEquals(2, rows.size(), table);
        for (List<String> row : rows) {
            long size = Sizes.parse(row.get(0));
            double rtt = metric(e, size, "rtt_us");
            assertEquals(String.format(java.util.Locale.ROOT, "%.2f", size * 8.0 / (rtt * 1e3)), row.get(2), table);
            assertEquals(String.format(java.util.Locale.ROOT, "%.2f", rtt), row.get(4), table);
            assertEquals(2 * metric(e, size, "lat_us"), rtt, rtt * 1e-9, "rtt_us is the whole round trip");
        }
    }

    /**
     * Issue 20, golden: the proxy's seed-style table is the seed's (time of a launch / its
     * iterations, and one buffer x 8 over that), for blocking and NBI configs alike, from a real
     * run on the lent H100 (2 ranks sharing it under MPS, shm): Lat = round_us (the launches' time
     * over their 16 rounds each), Gbps = size x 8 / Lat. NBI reports no lat_us (its rounds overlap),
     * yet its seed Lat is there; lat_us of a blocking config is the same per-round time.
     */
    @Test
    void proxyTableUsesTheSeedsFormulasPerLaunch() throws Exception {
        Experiment e = Experiment.of(JmhResults.read(Fixtures.runDir("real-proxy-h100-mps.json", tmp))).getFirst();
        String table = Table.render(e);
        assertTrue(table.contains("Seed formulas: Lat(us) = a launch's time / its rounds"), table);
        List<List<String>> rows = rows(table);
        assertEquals(2, rows.size(), table);
        for (List<String> row : rows) {
            long size = Sizes.parse(row.get(0));
            for (int g = 0; g < e.groups().size(); g++) {
                JmhResult r = e.cell(e.groups().get(g), size);
                double lat = r.metric("round_us").score();
                assertEquals(String.format(java.util.Locale.ROOT, "%.2f", size * 8.0 / (lat * 1e3)), row.get(2 + 3 * g), table);
                assertEquals(String.format(java.util.Locale.ROOT, "%.2f", lat), row.get(4 + 3 * g), table);
                if (r.metric("lat_us") != null) {
                    assertEquals(lat, r.metric("lat_us").score(), lat * 1e-6, "blocking lat_us is the per-round time");
                }
            }
        }
        assertTrue(e.groups().contains("ProxySingleNBI") && e.cell("ProxySingleNBI", Sizes.parse("8M")).metric("lat_us") == null);
    }

    /**
     * Issue 20, golden: all-to-all at N = 4: the seed's Gbps is one peer's size x 8 / round and its
     * Lat the round (from round_us), not our gbps over all N-1 peers; nccl-tests' columns are
     * alltoall_perf's algbw = size x N / round and busbw = algbw x (N-1)/N, in GB/s.
     */
    @Test
    void allToAllTableUsesTheSeedsFormulasAndNcclTestsColumns() throws Exception {
        Experiment e = Experiment.of(JmhResults.read(Fixtures.runDir("real-alltoall-4ranks-nccl.json", tmp))).getFirst();
        String table = Table.render(e);
        assertTrue(table.contains("| SinglePin Gbps | BusBW(%) | Lat(us) | algbw(GB/s) | busbw(GB/s) |"), table);
        List<List<String>> rows = rows(table);
        assertEquals(2, rows.size(), table);
        int n = 4;
        for (List<String> row : rows) {
            long size = Sizes.parse(row.get(0));
            double round = metric(e, size, "round_us");
            assertEquals(String.format(java.util.Locale.ROOT, "%.2f", size * 8.0 / (round * 1e3)), row.get(2), table);
            assertEquals(String.format(java.util.Locale.ROOT, "%.2f", round), row.get(4), table);
            double algbw = metric(e, size, "nccl_algbw_gbs");
            double busbw = metric(e, size, "nccl_busbw_gbs");
            assertEquals(String.format(java.util.Locale.ROOT, "%.2f", algbw), row.get(5), table);
            assertEquals(String.format(java.util.Locale.ROOT, "%.2f", busbw), row.get(6), table);
            assertEquals(algbw * (n - 1) / n, busbw, busbw * 1e-9, "busbw = algbw x (N-1)/N");
            assertEquals(metric(e, size, "algbw_gbps") / 8, algbw, algbw * 1e-9, "algbw in GB/s is nccl's, in Gbps ours / 8");
        }
    }

    /** Issue 20: the seed command's side-by-side table: ours by the seed's formulas, the seed's cell, their ratio. */
    @Test
    void seedComparisonPutsTheSeedsCellAndTheRatioBesideOurs() throws Exception {
        List<JmhResult> results = JmhResults.read(Fixtures.runDir("real-sendrecv-2ranks-rtt.json", tmp));
        String table = SeedComparison.render("sendrecv", results, "setup line");
        assertTrue(table.contains("| Size | SingleHost Gbps |"), table);
        Experiment e = Experiment.of(results).getFirst();
        double ours = 1048576 * 8.0 / (metric(e, 1L << 20, "rtt_us") * 1e3);
        List<String> row = rows(table).stream().filter(r -> r.get(0).equals("1M")).findFirst().orElseThrow();
        assertEquals(String.format(java.util.Locale.ROOT, "%.2f", ours), row.get(1), table);
        assertEquals("26.83", row.get(2), table); // the seed's Host 1M
        assertEquals(String.format(java.util.Locale.ROOT, "%.2f", ours / 26.83), row.get(3), table);
        assertEquals("312.70", row.get(5), table);
        assertTrue(table.contains("fractions of link not compared"), table);
        List<String> small = rows(table).stream().filter(r -> r.get(0).equals("4K")).findFirst().orElseThrow();
        assertEquals("-", small.get(2), "4K is not in the seed's table: " + table);
    }

    /**
     * Issue 20: Write's BusBW(%) as the seed's: where a result carries seed_busbw_pct (over all of
     * the rank's NICs for Multi and RoundRobin), the table shows it, not busbw_pct (the NICs used).
     */
    @Test
    void writeBusbwIsTheSeedsOverAllOfTheRanksNics() throws Exception {
        com.google.gson.JsonArray a = com.google.gson.JsonParser.parseString(java.nio.file.Files.readString(
                Path.of("src/test/resources/io/efabench/report/real-write.json"))).getAsJsonArray();
        for (var el : a) {
            var m = el.getAsJsonObject().getAsJsonObject("secondaryMetrics");
            if (m.has("busbw_pct")) {
                var seed = m.getAsJsonObject("busbw_pct").deepCopy();
                seed.addProperty("score", m.getAsJsonObject("busbw_pct").get("score").getAsDouble() * 0.75); // 3 of 4 NICs used
                m.add("seed_busbw_pct", seed);
            }
        }
        Path f = tmp.resolve("with-seed-busbw.json");
        java.nio.file.Files.writeString(f, a.toString());
        Experiment e = Experiment.of(JmhResults.read(f)).getFirst();
        String table = Table.render(e);
        assertTrue(table.contains("BusBW(%) as the seed: over one NIC for Single, all of the rank's NICs"), table);
        JmhResult r = e.cell(e.groups().getFirst(), 256L << 10);
        String expected = String.format(java.util.Locale.ROOT, "%.1f", r.metric("seed_busbw_pct").score());
        assertTrue(rows(table).stream().anyMatch(row -> row.get(0).equals("256K") && row.get(3).equals(expected)), table);
    }
}

package io.efabench.report;

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
}

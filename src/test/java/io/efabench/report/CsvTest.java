package io.efabench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CsvTest {
    @TempDir
    Path tmp;

    @Test
    void oneRowPerConfigAndSizeWithEmptyMissingMetrics() throws Exception {
        Experiment write = Experiment.of(JmhResults.read(Fixtures.runDir(Fixtures.HANDMADE, tmp))).getFirst();
        Path file = Csv.write(write, tmp);
        assertEquals(tmp.resolve("write.csv"), file);
        List<String> lines = Files.readAllLines(file);
        assertEquals(List.of(
                "size_bytes,size,config,channels,completion,gbps,gbps_error,busbw_pct,lat_us,checked_rounds,score,score_error,score_unit,mode",
                "262144,256K,SinglePin,1,remote,31.58,0.3158,31.6,66.54,,66.54,0.6654,us/op,avgt",
                "1048576,1M,SinglePin,1,remote,63.27,0.6327,63.3,132.63,,132.63,1.3263,us/op,avgt",
                "1073741824,1G,SinglePin,1,remote,97.68,0.9768,97.7,87936.29,,87936.29,879.3629,us/op,avgt",
                "262144,256K,MultiPin,1,remote,32.76,0.3276,,64.11,,64.11,0.6411,us/op,avgt",
                "1048576,1M,MultiPin,1,remote,114.82,1.1482,,73.06,,73.06,0.7306,us/op,avgt",
                "1073741824,1G,MultiPin,1,remote,380,3.8,,22604.91,,22604.91,226.0491,us/op,avgt"), lines);
    }

    @Test
    void unknownErrorIsAnEmptyCell() throws Exception {
        Experiment e = Experiment.of(JmhResults.read(Fixtures.runDir(Fixtures.REAL_SAMPLE, tmp))).getFirst();
        List<String> lines = Csv.render(e).lines().toList();
        List<String> header = List.of(lines.get(0).split(","));
        String[] cells = lines.get(1).split(",", -1);
        assertEquals("4096", cells[header.indexOf("size_bytes")]);
        assertEquals("4K", cells[header.indexOf("size")]);
        assertEquals("1", cells[header.indexOf("channels")]);
        assertEquals("", cells[header.indexOf("gbps_error")], lines.get(1)); // "NaN" in the JSON
        assertEquals("sample", cells[header.indexOf("mode")]);
    }

    /** The verified rounds behind each figure reach the CSV, as in the JSON (empty where a result has none). */
    @Test
    void checkedRoundsIsAColumn() throws Exception {
        List<JmhResult> results = JmhResults.read(Fixtures.runDir("real-alltoall-2ranks.json", tmp));
        Experiment e = Experiment.of(results).getFirst();
        List<String> lines = Csv.render(e).lines().toList();
        List<String> header = List.of(lines.getFirst().split(","));
        int col = header.indexOf("checked_rounds");
        assertTrue(col > 0, lines.getFirst());
        for (String line : lines.subList(1, lines.size())) {
            String cell = line.split(",", -1)[col];
            assertTrue(Double.parseDouble(cell) >= 1, line);
        }
    }

    @Test
    void numbersArePlainWithSevenDigits() {
        assertEquals("0.0001234568", Csv.number(0.00012345678));
        assertEquals("123456800", Csv.number(123456789));
        assertEquals("", Csv.number(Double.NaN));
    }

    @Test
    void allToAllAddsItsCollectiveColumns() throws Exception {
        Experiment e = Experiment.of(JmhResults.read(Fixtures.runDir("real-alltoall-2ranks.json",
                java.nio.file.Files.createTempDirectory("csv")))).getFirst();
        java.util.List<String> lines = Csv.render(e).lines().toList();
        assertTrue(lines.getFirst().contains(",lat_us,checked_rounds,algbw_gbps,nccl_algbw_gbs,nccl_busbw_gbs,min_peer_gbps,p50_peer_gbps,max_peer_gbps,slowest_rank_gbps,score,"),
                lines.getFirst());
        String[] row = lines.get(1).split(",");
        java.util.List<String> head = java.util.List.of(lines.getFirst().split(","));
        double gbps = Double.parseDouble(row[head.indexOf("gbps")]);
        double algbw = Double.parseDouble(row[head.indexOf("algbw_gbps")]);
        assertEquals(2.0, algbw / gbps, 1e-5, "2 ranks: algbw = gbps x N / (N-1)");
    }
}

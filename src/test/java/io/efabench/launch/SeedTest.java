package io.efabench.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.efabench.report.SeedTables;

/** What ./run-jmh.sh seed runs for each of the seed's experiments, and its seed data. */
class SeedTest {

    @Test
    void writeRunsTheSeedsConfigsSizesAndSemanticsWithFourRanks() {
        List<String> host = Seed.plan(Seed.Experiment.WRITE, 0, "quick", List.of());
        assertEquals("4", host.get(0));
        assertEquals("WriteBenchmark -p config=SinglePin -p size=256K,512K -p window=1 -p completion=local " + Seed.TIMES,
                host.get(1));
        assertTrue(host.contains("note: no GPU visible here: the device configs (SingleDMA, MultiDMA, RoundRobinDMA) are skipped"),
                host.toString());
        List<String> gpu = Seed.plan(Seed.Experiment.WRITE, 1, "all", List.of("-i", "5"));
        assertTrue(gpu.get(1).startsWith("WriteBenchmark -p config=SinglePin,SingleDMA,MultiDMA,RoundRobinDMA -p size=256K,512K,1M,"
                + "2M,4M,8M,16M,32M,64M,128M,256M,512M,1G -p window=1 -p completion=local -i 5"), gpu.get(1));
        assertTrue(!gpu.get(1).contains("-wi 1"), "the user's timing replaces the default: " + gpu.get(1));
    }

    @Test
    void sendRecvAndAllToAllTakeTheSeedsRankCounts() {
        assertEquals("2", Seed.plan(Seed.Experiment.SENDRECV, 0, "all", List.of()).get(0));
        List<String> a2a = Seed.plan(Seed.Experiment.ALL2ALL, 0, "4M", List.of());
        assertEquals("4", a2a.get(0));
        assertEquals("AllToAllBenchmark -p config=SinglePin,MultiPin -p size=4M -p window=1 " + Seed.TIMES, a2a.get(1));
    }

    @Test
    void proxyAndIpcSayWhatTheyNeedWithoutAGpu() {
        IllegalArgumentException p = assertThrows(IllegalArgumentException.class,
                () -> Seed.plan(Seed.Experiment.PROXY, 0, "all", List.of()));
        assertTrue(p.getMessage().startsWith("seed proxy needs a GPU"), p.getMessage());
        IllegalArgumentException i = assertThrows(IllegalArgumentException.class,
                () -> Seed.plan(Seed.Experiment.IPC, 1, "all", List.of()));
        assertEquals("seed ipc needs 2 or more GPUs with NVLink (CUDA IPC), one per rank; 1 is visible here", i.getMessage());
        assertEquals("2", Seed.plan(Seed.Experiment.IPC, 2, "all", List.of()).get(0));
        IllegalArgumentException s = assertThrows(IllegalArgumentException.class, () -> Seed.sizes("write", "3M"));
        assertTrue(s.getMessage().contains("3M is not in the seed's table"), s.getMessage());
    }

    /** The data file holds the seed's tables as printed (../shared/seeds/000-003). */
    @Test
    void theSeedTablesAreTheSeedsNumbers() {
        SeedTables.Cell sr = SeedTables.cell("sendrecv", "SingleDevice", 128L << 20);
        assertEquals(48.28, sr.gbps());
        assertEquals(22237.97, sr.latUs());
        SeedTables.Cell a2a = SeedTables.cell("all2all", "SingleDMA", 4L << 20);
        assertEquals(12.53, a2a.gbps());
        assertEquals(2677.27, a2a.latUs());
        assertEquals(95.0, SeedTables.cell("write", "MultiDMA", 1L << 30).busbwPct());
        assertEquals(379.08, SeedTables.cell("proxy", "ProxyMultiNBI", 1L << 30).gbps());
        assertEquals(List.of("SinglePin", "SingleDMA", "MultiDMA", "RoundRobinDMA"), SeedTables.configs("write"));
        assertEquals(13, SeedTables.sizes("write").size());
        assertEquals(11, SeedTables.sizes("sendrecv").size());
    }
}

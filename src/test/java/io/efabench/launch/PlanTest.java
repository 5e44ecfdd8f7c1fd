package io.efabench.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.efabench.rank.RankEnv;

/** What one ./run-jmh.sh command does, as the script reads it (Launch plan). */
class PlanTest {
    private static final Map<String, String> SLURM = Map.of("SLURM_PROCID", "2", "SLURM_NTASKS", "4", "SLURM_LOCALID", "0",
            "SLURM_NTASKS_PER_NODE", "2", "SLURM_JOB_NODELIST", "a,b", "SLURM_JOB_ID", "7");

    private static List<String> local(Map<String, String> env, boolean gpu, String... args) {
        return Plan.plan(false, List.of(args), env, () -> {
            throw new AssertionError("no launcher's variables are read outside a launcher");
        }, () -> gpu, () -> gpu ? 1 : 0);
    }

    private static List<String> cluster(String... args) {
        return Plan.plan(true, List.of(args), Map.of(), () -> RankEnv.fromMap(SLURM), () -> false, () -> 0);
    }

    @Test
    void aLocalRunNamesItsRanksProviderAndSuite() {
        List<String> p = local(Map.of(), true, "--ranks", "3", "--provider", "shm", "--profile", "WriteBenchmark", "-p", "size=4K");
        assertEquals(List.of("run", "", "0", "3", "shm", "yes", "report", "suite", "", "5", "WriteBenchmark", "-p", "size=4K", "-e",
                "LauncherProbeBenchmark"), p);
        List<String> defaults = local(Map.of(), true, "LauncherProbe");
        assertEquals(List.of("run", "", "0", "2", "tcp", "no", "report", "suite", "", "1", "LauncherProbe"), defaults,
                "2 ranks over tcp; a named test helper is not hidden");
        assertEquals("efa", local(Map.of("FI_PROVIDER", "efa"), true, "X").get(4), "the environment's provider");
    }

    @Test
    void helpAndListingsAreNotRuns() {
        assertEquals(List.of("usage"), local(Map.of(), false, "--ranks", "2", "--help"));
        assertEquals(List.of("exec", "-l", "-e", "LauncherProbeBenchmark"), local(Map.of(), false, "-l"));
        assertEquals(List.of("exec", "--help", "-e", "LauncherProbeBenchmark"), local(Map.of(), false, "--", "--help"), "after --, JMH's help");
    }

    @Test
    void withoutAGpuTheQuickSuiteIsTwoRunsMergedIntoOne() {
        List<String> p = local(Map.of(), false);
        assertEquals("merged", p.get(6));
        assertEquals("note", p.get(7));
        assertEquals(2, p.stream().filter("suite"::equals).count(), p.toString());
        assertEquals("write", p.get(p.lastIndexOf("suite") + 1), "the second run's folder suffix");
        assertEquals("report", local(Map.of(), true).get(6), "with a GPU, one run");
    }

    @Test
    void underALauncherTheRankIsRankEnvsAndRanksAreRefused() {
        assertEquals(List.of("run", "slurm", "2", "4", "", "no", "report"), cluster("LauncherProbe").subList(0, 7));
        assertEquals("tcp", cluster("--provider", "tcp", "LauncherProbe").get(4));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> cluster("--ranks", "2", "X"));
        assertEquals("--ranks is not allowed under slurm: the job launcher starts the ranks", e.getMessage());
    }

    @Test
    void theSeedRunsItsOwnRanksAndArguments() {
        List<String> p = local(Map.of(), false, "seed", "write", "--sizes", "256K", "--", "-wi", "0", "-i", "1");
        assertEquals(List.of("run", "", "0", "4", "tcp", "no", "seed:write"), p.subList(0, 7));
        assertTrue(p.contains("seed write: 4 local ranks on this host stand for the seed's 4 nodes: same work, not the same network"),
                p.toString());
        int suite = p.indexOf("suite");
        List<String> args = p.subList(suite + 3, p.size());
        assertEquals(Integer.parseInt(p.get(suite + 2)), args.size());
        assertEquals(List.of("WriteBenchmark", "-p", "config=SinglePin", "-p", "size=256K", "-p", "window=1", "-p", "completion=local",
                "-wi", "0", "-i", "1"), args);
        assertThrows(IllegalArgumentException.class, () -> local(Map.of(), false, "seed", "proxy"), "proxy needs a GPU");
    }
}

package io.efabench.rank;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RankEnvTest {

    private static String error(Map<String, String> env) {
        return assertThrows(RankException.class, () -> RankEnv.fromMap(env)).getMessage();
    }

    /** run-jmh.sh's own ranks carry torchrun's variables but are named as what they are. */
    @Test
    void theLocalLaunchersRanksSayLocal() {
        Map<String, String> vars = new java.util.HashMap<>(Map.of("RANK", "1", "WORLD_SIZE", "2", "MASTER_ADDR", "127.0.0.1",
                "MASTER_PORT", "29500"));
        assertEquals("torchrun", RankEnv.fromMap(vars).source());
        vars.put("EFABENCH_RANK_SOURCE", "local");
        RankEnv local = RankEnv.fromMap(vars);
        assertEquals("local", local.source());
        assertEquals(1, local.rank());
        assertEquals(29500, local.masterPort());
    }

    @Test
    void noLauncherMeansOneProcessWithNothingToBind() {
        RankEnv env = RankEnv.fromMap(Map.of("PATH", "/usr/bin"));
        assertEquals(new RankEnv(0, 1, 0, 1, "127.0.0.1", 0, "single"), env);
        assertEquals(env, RankEnv.single());
    }

    @Test
    void torchrun() {
        RankEnv env = RankEnv.fromMap(Map.of("RANK", "3", "WORLD_SIZE", "4", "LOCAL_RANK", "1",
                "LOCAL_WORLD_SIZE", "2", "MASTER_ADDR", "node-a", "MASTER_PORT", "29501"));
        assertEquals(new RankEnv(3, 4, 1, 2, "node-a", 29501, "torchrun"), env);
    }

    @Test
    void torchrunWithoutLocalVariablesMeansOneHost() {
        RankEnv env = RankEnv.fromMap(Map.of("RANK", "1", "WORLD_SIZE", "2",
                "MASTER_ADDR", "127.0.0.1", "MASTER_PORT", "29500"));
        assertEquals(new RankEnv(1, 2, 1, 2, "127.0.0.1", 29500, "torchrun"), env);
        RankEnv unknownLocalSize = RankEnv.fromMap(Map.of("RANK", "1", "WORLD_SIZE", "2", "LOCAL_RANK", "0",
                "MASTER_ADDR", "h", "MASTER_PORT", "29500"));
        assertEquals(0, unknownLocalSize.localWorldSize());
    }

    @Test
    void worldOfOneNeedsNoMaster() {
        RankEnv env = RankEnv.fromMap(Map.of("RANK", "0", "WORLD_SIZE", "1"));
        assertEquals(new RankEnv(0, 1, 0, 1, "127.0.0.1", 0, "torchrun"), env);
    }

    @Test
    void slurmTakesTheFirstHostOfTheNodeListAndAPortFromTheJobId() {
        RankEnv env = RankEnv.fromMap(Map.of("SLURM_PROCID", "5", "SLURM_NTASKS", "8", "SLURM_LOCALID", "1",
                "SLURM_NODEID", "1", "SLURM_TASKS_PER_NODE", "4(x2)",
                "SLURM_JOB_NODELIST", "p5-[001-004,007],gpu1", "SLURM_JOB_ID", "123456"));
        assertEquals(new RankEnv(5, 8, 1, 4, "p5-001", 29956, "slurm"), env);
    }

    @Test
    void slurmPrefersTheStepAndLetsMasterVariablesOverride() {
        Map<String, String> step = Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "3", "SLURM_LOCALID", "0",
                "SLURM_NODEID", "1", "SLURM_STEP_TASKS_PER_NODE", "1,2", "SLURM_TASKS_PER_NODE", "8(x4)",
                "SLURM_JOB_NODELIST", "node[1-4]", "SLURM_STEP_NODELIST", "node[3-4]", "SLURM_JOB_ID", "7");
        assertEquals(new RankEnv(0, 3, 0, 2, "node3", 29507, "slurm"), RankEnv.fromMap(step));
        Map<String, String> overridden = new java.util.HashMap<>(step);
        overridden.put("MASTER_ADDR", "10.0.0.9");
        overridden.put("MASTER_PORT", "40000");
        assertEquals(new RankEnv(0, 3, 0, 2, "10.0.0.9", 40000, "slurm"), RankEnv.fromMap(overridden));
    }

    @Test
    void slurmLocalSizeFallsBackToNtasksPerNodeThenUnknown() {
        assertEquals(8, RankEnv.fromMap(Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "16",
                "SLURM_NTASKS_PER_NODE", "8", "SLURM_NODELIST", "a,b", "SLURM_JOB_ID", "1")).localWorldSize());
        assertEquals(0, RankEnv.fromMap(Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "16",
                "SLURM_TASKS_PER_NODE", "2,14", "SLURM_NODELIST", "a,b", "SLURM_JOB_ID", "1")).localWorldSize());
    }

    @Test
    void openMpi() {
        RankEnv env = RankEnv.fromMap(Map.of("OMPI_COMM_WORLD_RANK", "2", "OMPI_COMM_WORLD_SIZE", "4",
                "OMPI_COMM_WORLD_LOCAL_RANK", "0", "OMPI_COMM_WORLD_LOCAL_SIZE", "2",
                "MASTER_ADDR", "head", "MASTER_PORT", "29500"));
        assertEquals(new RankEnv(2, 4, 0, 2, "head", 29500, "openmpi"), env);
    }

    @Test
    void openMpiWinsOverTheSlurmBatchStepItRunsIn() {
        RankEnv env = RankEnv.fromMap(Map.of("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "2",
                "SLURM_PROCID", "0", "SLURM_NTASKS", "2", "SLURM_JOB_NODELIST", "n1", "SLURM_JOB_ID", "9",
                "MASTER_ADDR", "n1", "MASTER_PORT", "29500"));
        assertEquals(1, env.rank());
        assertEquals("openmpi", env.source());
    }

    @Test
    void openMpiWithoutMasterSaysHowToSetIt() {
        String message = error(Map.of("OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "2"));
        assertEquals("OMPI_COMM_WORLD_SIZE=2 but MASTER_ADDR is not set (Open MPI has no rendezvous address:"
                + " mpirun -x MASTER_ADDR=<host of rank 0> -x MASTER_PORT=29500)", message);
    }

    @Test
    void badValuesGiveOneLineNamingTheVariable() {
        Map<String, String> master = Map.of("MASTER_ADDR", "h", "MASTER_PORT", "29500");
        assertEquals("RANK=\"x\" is not an integer", error(with(master, "RANK", "x", "WORLD_SIZE", "2")));
        assertEquals("WORLD_SIZE=\"2.5\" is not an integer", error(with(master, "RANK", "0", "WORLD_SIZE", "2.5")));
        assertEquals("RANK=2 but WORLD_SIZE=2 (ranks are 0..1)", error(with(master, "RANK", "2", "WORLD_SIZE", "2")));
        assertEquals("RANK=-1 is negative", error(with(master, "RANK", "-1", "WORLD_SIZE", "2")));
        assertEquals("WORLD_SIZE=0 must be at least 1", error(with(master, "RANK", "0", "WORLD_SIZE", "0")));
        assertEquals("RANK is set but WORLD_SIZE is not", error(with(master, "RANK", "0")));
        assertEquals("WORLD_SIZE is set but RANK is not", error(with(master, "WORLD_SIZE", "2")));
        assertEquals("LOCAL_RANK=2 but LOCAL_WORLD_SIZE is 2", error(with(master, "RANK", "0", "WORLD_SIZE", "4",
                "LOCAL_RANK", "2", "LOCAL_WORLD_SIZE", "2")));
        assertEquals("WORLD_SIZE=2 but MASTER_PORT is not set",
                error(Map.of("RANK", "0", "WORLD_SIZE", "2", "MASTER_ADDR", "h")));
        assertEquals("WORLD_SIZE=2 but MASTER_ADDR is not set",
                error(Map.of("RANK", "0", "WORLD_SIZE", "2", "MASTER_PORT", "29500")));
        assertEquals("MASTER_PORT=70000 is outside 1..65535",
                error(Map.of("RANK", "0", "WORLD_SIZE", "2", "MASTER_ADDR", "h", "MASTER_PORT", "70000")));
        assertEquals("MASTER_PORT=0 is outside 1..65535",
                error(Map.of("RANK", "0", "WORLD_SIZE", "2", "MASTER_ADDR", "h", "MASTER_PORT", "0")));
        assertEquals("MASTER_PORT=\"http\" is not an integer",
                error(Map.of("RANK", "0", "WORLD_SIZE", "2", "MASTER_ADDR", "h", "MASTER_PORT", "http")));
    }

    @Test
    void badSlurmValues() {
        assertEquals("SLURM_JOB_NODELIST=\"p5-[001-\" is not a Slurm host list: '[' is not closed",
                error(Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "2", "SLURM_JOB_NODELIST", "p5-[001-",
                        "SLURM_JOB_ID", "1")));
        assertEquals("SLURM_NTASKS=2 but neither MASTER_PORT nor SLURM_JOB_ID is set",
                error(Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "2", "SLURM_JOB_NODELIST", "a")));
        assertEquals("SLURM_NTASKS=2 but neither SLURM_JOB_NODELIST nor MASTER_ADDR is set",
                error(Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "2", "SLURM_JOB_ID", "1")));
        assertEquals("SLURM_PROCID=4 but SLURM_NTASKS=4 (ranks are 0..3)",
                error(Map.of("SLURM_PROCID", "4", "SLURM_NTASKS", "4", "SLURM_JOB_NODELIST", "a", "SLURM_JOB_ID", "1")));
        assertEquals("SLURM_TASKS_PER_NODE=\"2(x\" is not a Slurm task count list like 2(x3),1",
                error(Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "2", "SLURM_TASKS_PER_NODE", "2(x",
                        "SLURM_JOB_NODELIST", "a", "SLURM_JOB_ID", "1")));
    }

    @Test
    void hostlistExpansion() {
        assertEquals(List.of("node1", "node2", "node3"), Hostlist.expand("node[1-3]"));
        assertEquals(List.of("a", "b"), Hostlist.expand("a,b"));
        assertEquals(List.of("p5-001", "p5-002", "p5-003", "p5-004", "p5-007", "gpu1"),
                Hostlist.expand("p5-[001-004,007],gpu1"));
        assertEquals(List.of("n08", "n09", "n10", "n11"), Hostlist.expand("n[08-11]"));
        assertEquals(List.of("n9", "n10", "n11"), Hostlist.expand("n[9-11]"));
        assertEquals(List.of("r1-n01", "r1-n02", "r2-n01", "r2-n02"), Hostlist.expand("r[1-2]-n[01-02]"));
        assertEquals(List.of("10.0.0.5"), Hostlist.expand("10.0.0.5"));
        assertEquals("ip-10-1-2-3", Hostlist.first("ip-10-1-2-3,ip-10-1-2-[4-5]"));
    }

    @Test
    void badHostlists() {
        for (String bad : List.of("", "n[1-", "n]1[", "n[3-1]", "n[a-b]", "n[]", "a,,b", "n[1-2[3]]")) {
            assertThrows(IllegalArgumentException.class, () -> Hostlist.expand(bad), bad);
        }
    }

    @Test
    void timeoutFromEnvironment() {
        assertEquals(Duration.ofSeconds(60), RankGroup.timeoutFrom(null));
        assertEquals(Duration.ofSeconds(5), RankGroup.timeoutFrom(" 5 "));
        assertEquals("EFABENCH_TIMEOUT_S=\"1.5\" is not a positive integer (seconds)",
                assertThrows(RankException.class, () -> RankGroup.timeoutFrom("1.5")).getMessage());
        assertEquals("EFABENCH_TIMEOUT_S=0 is outside 1..31536000 seconds",
                assertThrows(RankException.class, () -> RankGroup.timeoutFrom("0")).getMessage());
    }

    private static Map<String, String> with(Map<String, String> base, String... kv) {
        Map<String, String> m = new java.util.HashMap<>(base);
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }
}

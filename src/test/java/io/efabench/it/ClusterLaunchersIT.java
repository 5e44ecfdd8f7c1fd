package io.efabench.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.google.gson.JsonArray;
import com.google.gson.JsonParser;

/**
 * The launchers users have, for real: Open MPI's {@code mpirun} and a one-node Slurm cluster
 * (Debian's slurm-wlm and munge, started here as root) run {@code ./run-jmh.sh} as the README's
 * cluster section says; results land in the run folder named after the job, and a killed srun
 * task ends the job with a line naming its rank. Skipped, saying why, where the tools are missing
 * or the test is not root (.ci/run installs them on CI).
 */
class ClusterLaunchersIT {
    private static final Path SCRIPT = Path.of("run-jmh.sh").toAbsolutePath();
    private static Path slurmDir;
    private static final List<Process> DAEMONS = new ArrayList<>();

    @TempDir
    Path results;

    private static boolean root() throws Exception {
        Process p = new ProcessBuilder("id", "-u").start();
        return new String(p.getInputStream().readAllBytes()).trim().equals("0");
    }

    /** A one-node Slurm cluster on this host, with its own config, state and logs in a temp folder. */
    @BeforeAll
    static void startSlurm() throws Exception {
        if (!root() || !Ranks.onPath("slurmctld") || !Ranks.onPath("slurmd") || !Ranks.onPath("srun") || !Ranks.onPath("munged")) {
            return;
        }
        slurmDir = Files.createTempDirectory("efabench-slurm");
        String host = run(List.of("hostname", "-s"), Map.of(), 10).trim();
        int cpus = Runtime.getRuntime().availableProcessors();
        Files.writeString(slurmDir.resolve("slurm.conf"), String.join("\n",
                "ClusterName=efabench-it", "SlurmctldHost=" + host, "AuthType=auth/munge",
                "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core", "SlurmUser=root", "ReturnToService=2", "SchedulerType=sched/builtin",
                "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none", "MpiDefault=none",
                "PropagateResourceLimits=NONE", "SlurmctldPort=16817", "SlurmdPort=16818",
                "SlurmctldPidFile=" + slurmDir.resolve("slurmctld.pid"), "SlurmdPidFile=" + slurmDir.resolve("slurmd.pid"),
                "SlurmdSpoolDir=" + slurmDir.resolve("spool"), "StateSaveLocation=" + slurmDir.resolve("state"),
                "SlurmctldLogFile=" + slurmDir.resolve("slurmctld.log"), "SlurmdLogFile=" + slurmDir.resolve("slurmd.log"),
                "NodeName=" + host + " CPUs=" + cpus + " State=UNKNOWN",
                "PartitionName=it Nodes=" + host + " Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8", ""));
        Files.createDirectories(slurmDir.resolve("spool"));
        Files.createDirectories(slurmDir.resolve("state"));
        // munged: the Debian package's key, its own run folder; one already running is fine.
        if (new ProcessBuilder("sh", "-c", "munge -n | unmunge").start().waitFor() != 0) {
            run(List.of("sh", "-c", "mkdir -p /run/munge && chown munge:munge /run/munge && (test -f /etc/munge/munge.key"
                    + " || mungekey -c) && chown -R munge:munge /etc/munge && su -s /bin/sh munge -c /usr/sbin/munged"),
                    Map.of(), 30);
        }
        String conf = slurmDir.resolve("slurm.conf").toString();
        DAEMONS.add(new ProcessBuilder("/usr/sbin/slurmctld", "-D", "-f", conf).redirectErrorStream(true)
                .redirectOutput(slurmDir.resolve("slurmctld.out").toFile()).start());
        DAEMONS.add(new ProcessBuilder("/usr/sbin/slurmd", "-D", "-f", conf).redirectErrorStream(true)
                .redirectOutput(slurmDir.resolve("slurmd.out").toFile()).start());
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < end) {
            String state = run(List.of("sinfo", "-h", "-o", "%T"), Map.of("SLURM_CONF", conf), 10);
            if (state.contains("idle") || state.contains("mixed")) {
                return;
            }
            Thread.sleep(500);
        }
        fail("the one-node Slurm cluster did not come up in 60 s: " + Files.readString(slurmDir.resolve("slurmd.log")));
    }

    /** A job a failed test left queued or running must not hold the node for the next test. */
    @org.junit.jupiter.api.AfterEach
    void cancelJobs() throws Exception {
        if (slurmDir != null) {
            run(List.of("scancel", "--user", "root"), Map.of("SLURM_CONF", slurmDir.resolve("slurm.conf").toString()), 10);
        }
    }

    @AfterAll
    static void stopSlurm() {
        for (Process p : DAEMONS) {
            p.destroy();
        }
    }

    private static String run(List<String> cmd, Map<String, String> env, int seconds) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
        }
        return new String(out);
    }

    /** Starts a launcher command from the project root; everything of efabench's own environment cleared. */
    private Process start(List<String> cmd, Map<String, String> env, Path out) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile());
        Map<String, String> e = pb.environment();
        for (String v : List.of("RANK", "WORLD_SIZE", "SLURM_PROCID", "SLURM_JOB_ID", "OMPI_COMM_WORLD_RANK", "MASTER_PORT",
                "MASTER_ADDR")) {
            e.remove(v);
        }
        e.put("EFABENCH_JAR", Ranks.JAR.toAbsolutePath().toString());
        e.put("EFABENCH_RESULTS", results.toString());
        e.putAll(env);
        return pb.start();
    }

    private static List<String> quick(String... args) {
        List<String> a = new ArrayList<>(List.of(args));
        a.addAll(List.of("-f", "1", "-wi", "1", "-w", "200ms", "-i", "1", "-r", "300ms"));
        return a;
    }

    private Path onlyRunFolder(String prefix, String log) throws IOException {
        try (Stream<Path> s = Files.list(results)) {
            List<Path> runs = s.filter(p -> p.getFileName().toString().startsWith(prefix)).toList();
            assertEquals(1, runs.size(), "one run folder named " + prefix + "*: " + runs + "\n" + log);
            return runs.getFirst();
        }
    }

    @Test
    void mpirunRunsOneRankPerProcessIntoOneRunFolder() throws Exception {
        Assumptions.assumeTrue(Ranks.onPath("mpirun"), "no mpirun here (Debian: apt-get install openmpi-bin)");
        Assumptions.assumeTrue(root(), "the test passes --allow-run-as-root only as root");
        List<String> cmd = new ArrayList<>(List.of("mpirun", "-n", "2", "--oversubscribe", "--allow-run-as-root",
                "-x", "EFABENCH_JAR", "-x", "EFABENCH_RESULTS", "-x", "MASTER_ADDR=127.0.0.1",
                "-x", "MASTER_PORT=" + Ranks.freePort(), "bash", SCRIPT.toString(), "--provider", "tcp"));
        cmd.addAll(quick("WriteBenchmark", "-p", "size=64K", "-p", "config=SinglePin", "-p", "completion=local"));
        Path out = results.resolve("mpirun.out");
        int code = Ranks.awaitExit(start(cmd, Map.of(), out), out, 240);
        String log = Files.readString(out);
        assertEquals(0, code, log);
        Path run = onlyRunFolder("openmpi-", log);
        JsonArray json = JsonParser.parseString(Files.readString(run.resolve("jmh.json"))).getAsJsonArray();
        assertEquals(1, json.size(), log);
        assertTrue(Files.size(run.resolve("followers/rank1.json")) > 0, "rank 1's mirror in the same folder:\n" + log);
        assertTrue(Files.readString(run.resolve("provenance.json")).contains("openmpi"), log);
    }

    private Process srun(int tasks, Path out, String... jmh) throws IOException {
        Assumptions.assumeTrue(slurmDir != null, "no one-node Slurm cluster here (root with slurm-wlm and munge needed;"
                + " .ci/run installs them)");
        // --overcommit: more tasks than this host's CPUs (4 on a 2-core CI machine) in one job.
        List<String> cmd = new ArrayList<>(List.of("srun", "-n", Integer.toString(tasks), "--overcommit", "bash",
                SCRIPT.toString(), "--provider", "tcp"));
        cmd.addAll(List.of(jmh));
        return start(cmd, Map.of("SLURM_CONF", slurmDir.resolve("slurm.conf").toString(),
                "MASTER_PORT", Integer.toString(Ranks.freePort())), out);
    }

    @Test
    void srunRunsWriteAndAllToAll() throws Exception {
        Path out = results.resolve("srun-write.out");
        Process p = srun(2, out, quick("WriteBenchmark", "-p", "size=64K", "-p", "config=SinglePin", "-p",
                "completion=local").toArray(String[]::new));
        int code = Ranks.awaitExit(p, out, 240);
        String log = Files.readString(out);
        assertEquals(0, code, log);
        Path run = onlyRunFolder("slurm-", log);
        assertTrue(run.getFileName().toString().matches("slurm-\\d+\\.\\d+"), run.toString());
        assertEquals(1, JsonParser.parseString(Files.readString(run.resolve("jmh.json"))).getAsJsonArray().size(), log);

        Path out4 = results.resolve("srun-alltoall.out");
        Process q = srun(4, out4, quick("AllToAllBenchmark", "-p", "size=64K", "-p", "config=SinglePin").toArray(String[]::new));
        int code4 = Ranks.awaitExit(q, out4, 300);
        String log4 = Files.readString(out4);
        assertEquals(0, code4, log4);
        assertTrue(log4.contains("## AllToAllBenchmark.allToAll"), log4);
    }

    /** SIGKILL of one task's JVM mid-run: srun ends non-zero and the output names the dead rank. */
    @Test
    void aKilledSrunTaskEndsTheJobNamingItsRank() throws Exception {
        Path out = results.resolve("srun-kill.out");
        Process p = srun(3, out, "WriteBenchmark", "-p", "size=64K", "-p", "config=SinglePin", "-p", "completion=local",
                "-f", "1", "-wi", "0", "-i", "200", "-r", "1s");
        try {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
            ProcessHandle victim = null;
            while (victim == null && System.nanoTime() < end && p.isAlive()) {
                Thread.sleep(500);
                if (!Files.readString(out).contains("Iteration   2:")) {
                    continue;
                }
                victim = ProcessHandle.allProcesses().filter(h -> h.info().command().orElse("").endsWith("/java"))
                        .filter(h -> environ(h).contains("SLURM_PROCID=2\0")).findFirst().orElse(null);
            }
            if (victim == null) {
                fail("rank 2's JVM never appeared:\n" + Files.readString(out));
            }
            victim.descendants().forEach(ProcessHandle::destroyForcibly);
            victim.destroyForcibly();
            int code = Ranks.awaitExit(p, out, 90);
            String log = Files.readString(out);
            assertNotEquals(0, code, log);
            assertTrue(log.matches("(?s).*\\brank 2\\b[^\\n]*\\b(died|disconnected)\\b.*"), "another rank names rank 2 as dead:\n" + log);
        } finally {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    private static String environ(ProcessHandle h) {
        try {
            return Files.readString(Path.of("/proc", Long.toString(h.pid()), "environ"),
                    java.nio.charset.StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            return "";
        }
    }
}

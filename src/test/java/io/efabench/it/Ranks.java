package io.efabench.it;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Starts a real multi-process rank group: N JVMs running {@code java -jar benchmarks.jar}
 * with torchrun-style variables, as the launcher does, and collects their exit codes and output.
 */
final class Ranks {
    static final Path JAR = Path.of(System.getProperty("efabench.jar", "target/benchmarks.jar"));
    static final String JAVA = ProcessHandle.current().info().command().orElse("java");
    /** The JDK's signal-chaining library: libfabric's shm provider installs SIGSEGV handlers. */
    static final Path JSIG = Path.of(JAVA).getParent().getParent().resolve("lib/libjsig.so");

    final List<Process> processes = new ArrayList<>();
    /** When the ranks were started: /dev/shm regions made since then are this job's. */
    final java.time.Instant started = java.time.Instant.now().minusSeconds(1);
    final List<Path> logs = new ArrayList<>();
    final Path dir;

    private Ranks(Path dir) {
        this.dir = dir;
    }

    /**
     * Skips the calling test class, with the reason, unless a GPU is visible and this libfabric's
     * shm offers FI_HMEM (a build with CUDA): the device-memory and proxy ITs run on a GPU machine.
     */
    static void assumeGpuWithHmem(String what) {
        org.junit.jupiter.api.Assumptions.assumeTrue(io.efabench.harness.memory.TrialGpu.present(),
                "no GPU visible here: " + what + " runs on a GPU machine");
        String reason = null;
        try {
            io.efabench.fabric.Discovery.discover(true, "shm").close();
        } catch (io.efabench.fabric.FabricException e) {
            reason = e.getMessage();
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(reason == null,
                "this libfabric's shm offers no FI_HMEM (build one with CUDA): " + reason);
    }

    /** True where {@code tool} is on PATH or in /usr/sbin (root's daemons: slurmd, munged). */
    static boolean onPath(String tool) {
        return java.util.stream.Stream.of(System.getenv("PATH").split(":")).anyMatch(d -> Files.isExecutable(Path.of(d, tool)))
                || Files.isExecutable(Path.of("/usr/sbin", tool));
    }

    /** {@code p}'s exit status; past {@code seconds} it and its children are killed and the test fails with {@code out}. */
    static int awaitExit(Process p, Path out, int seconds) throws Exception {
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            org.junit.jupiter.api.Assertions.fail("still running after " + seconds + " s:\n" + Files.readString(out));
        }
        return p.exitValue();
    }

    /** Quick JMH settings for tests: one fork, one short warmup and measurement iteration. */
    static List<String> quick(String... args) {
        List<String> a = new ArrayList<>(List.of(args));
        a.addAll(List.of("-f", "1", "-wi", "1", "-w", "200ms", "-i", "1", "-r", "300ms", "-foe", "true",
                "-prof", "io.efabench.harness.MetricsProfiler"));
        return a;
    }

    /**
     * As {@link #quick}, but every trial in the rank's own JVM ({@code -f 0}): for the tests that run
     * a matrix of trials to see each verify, where a fresh JVM per trial and rank (JVM start,
     * libfabric's init, class loading, JIT) is most of a trial's time: Write's 24 trials at 2 ranks
     * took 92 s forked and 35 s in process on the 2-core machine. The forked path keeps its tests
     * (every benchmark forks in the testbed, fault, failure and mode tests).
     */
    static List<String> quickInProcess(String... args) {
        List<String> a = quick(args);
        a.set(a.indexOf("-f") + 1, "0");
        return a;
    }

    /**
     * A free port below the kernel's ephemeral range (32768+), like the launcher's (RunFolder.port): a
     * port from ServerSocket(0) is ephemeral, and the JMH host JVMs of the ranks bind ephemeral
     * ports for their forks while rank 0 is still starting, so one took the rendezvous port once
     * ("answered but is not an efabench rendezvous").
     */
    static int freePort() throws IOException {
        java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
        for (int i = 0; i < 200; i++) {
            int port = 20000 + random.nextInt(12000);
            try (ServerSocket s = new ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
                return s.getLocalPort();
            } catch (IOException taken) {
                // try another
            }
        }
        throw new IOException("no free port found in 20000-31999");
    }

    /** Starts {@code n} ranks; {@code perRank} may adjust each rank's args or env (may be null). */
    static Ranks start(Path dir, int n, String provider, List<String> jmhArgs, PerRank perRank) throws IOException {
        Files.createDirectories(dir);
        Ranks r = new Ranks(dir);
        int port = freePort();
        for (int k = 0; k < n; k++) {
            List<String> cmd = new ArrayList<>(List.of(JAVA, "-Djmh.ignoreLock=true", "--enable-native-access=ALL-UNNAMED", "-jar", JAR.toString()));
            cmd.addAll(jmhArgs);
            cmd.addAll(List.of("-rf", "json", "-rff", dir.resolve("rank" + k + ".json").toString()));
            ProcessBuilder pb = new ProcessBuilder(cmd);
            Map<String, String> env = pb.environment();
            env.put("RANK", Integer.toString(k));
            env.put("WORLD_SIZE", Integer.toString(n));
            env.put("LOCAL_RANK", Integer.toString(k));
            env.put("LOCAL_WORLD_SIZE", Integer.toString(n));
            env.put("MASTER_ADDR", "127.0.0.1");
            env.put("MASTER_PORT", Integer.toString(port));
            env.put("FI_PROVIDER", provider);
            env.put("EFABENCH_LOOPBACK", "1");
            env.put("EFABENCH_TIMEOUT_S", "30");
            env.put("LD_PRELOAD", JSIG.toString());
            if (perRank != null) {
                perRank.adjust(k, cmd, env);
                pb.command(cmd);
            }
            Path log = dir.resolve("rank" + k + ".log");
            pb.redirectErrorStream(true).redirectOutput(log.toFile());
            r.logs.add(log);
            r.processes.add(pb.start());
        }
        return r;
    }

    interface PerRank {
        void adjust(int rank, List<String> cmd, Map<String, String> env);
    }

    /** Waits for every rank; kills all and returns null codes for those still running at the deadline. */
    Integer[] await(long seconds) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        Integer[] codes = new Integer[processes.size()];
        for (int k = 0; k < processes.size(); k++) {
            long left = Math.max(0, end - System.nanoTime());
            Process p = processes.get(k);
            if (p.waitFor(left, TimeUnit.NANOSECONDS)) {
                codes[k] = p.exitValue();
            }
        }
        killAll();
        return codes;
    }

    /** Waits for every rank, asserts each exited 0, and returns rank 0's JMH results ({@code rank0.json}). */
    com.google.gson.JsonArray awaitClean(long seconds) throws InterruptedException, IOException {
        Integer[] codes = await(seconds);
        for (int k = 0; k < codes.length; k++) {
            org.junit.jupiter.api.Assertions.assertEquals(0, codes[k], "rank " + k + " failed:\n" + allLogs());
        }
        return com.google.gson.JsonParser.parseString(Files.readString(dir.resolve("rank0.json"))).getAsJsonArray();
    }

    /** Waits for every rank and asserts each failed (non-zero, none hung); returns all logs. */
    String awaitAllFailed(long seconds) throws InterruptedException, IOException {
        Integer[] codes = await(seconds);
        String logs = allLogs();
        for (Integer c : codes) {
            org.junit.jupiter.api.Assertions.assertNotNull(c, "a rank hung:\n" + logs);
            org.junit.jupiter.api.Assertions.assertNotEquals(0, c, logs);
        }
        return logs;
    }

    /**
     * SIGKILLs rank {@code victim}'s JVMs (the JMH host and its fork); every other rank must exit
     * non-zero within {@code seconds} of the kill, and its first {@code efabench:} error line must
     * say that rank {@code victim} died or disconnected.
     */
    void killAndExpectNamed(int victim, long seconds) throws Exception {
        Process p = processes.get(victim);
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        long killedAt = System.nanoTime();
        for (int k = 0; k < processes.size(); k++) {
            if (k == victim) {
                continue;
            }
            Process q = processes.get(k);
            long left = seconds * 1000 - (System.nanoTime() - killedAt) / 1_000_000;
            if (!q.waitFor(Math.max(1, left), TimeUnit.MILLISECONDS)) {
                throw new AssertionError("rank " + k + " still runs " + seconds + " s after rank " + victim + " died:\n"
                        + allLogs());
            }
            if (q.exitValue() == 0) {
                throw new AssertionError("rank " + k + " exited 0 after rank " + victim + " died:\n" + log(k));
            }
            assertNamesTheDead(k, victim);
        }
    }

    /** Rank k's first {@code efabench:} error line says that rank {@code dead} died or disconnected. */
    void assertNamesTheDead(int k, int dead) throws IOException {
        String log = log(k);
        String line = log.lines().filter(l -> l.contains("efabench: ") && !l.contains("# efabench: ")).findFirst()
                .orElseThrow(() -> new AssertionError("rank " + k + " printed no efabench: error:\n" + log));
        if (!line.matches(".*\\brank " + dead + "\\b[^;]*\\b(died|disconnected)\\b.*")) {
            throw new AssertionError("rank " + k + "'s error does not name dead rank " + dead + ": " + line + "\n" + log);
        }
    }

    /** Waits until {@code text} appears in {@code log}. */
    static void waitFor(Path log, String text, int seconds) throws Exception {
        long end = System.currentTimeMillis() + seconds * 1000L;
        while (System.currentTimeMillis() < end) {
            if (Files.exists(log) && Files.readString(log).contains(text)) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("'" + text + "' did not appear in " + log + ":\n" + Files.readString(log));
    }

    void killAll() {
        for (Process p : processes) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    String log(int k) throws IOException {
        return Files.readString(logs.get(k));
    }

    String allLogs() throws IOException {
        StringBuilder sb = new StringBuilder();
        for (int k = 0; k < logs.size(); k++) {
            sb.append("---- rank ").append(k).append(" ----\n").append(log(k)).append('\n');
        }
        return sb.toString();
    }

    /**
     * Waits for every rank and asserts each failed (non-zero, none hung) with a line matching
     * {@code regex} somewhere in the logs, and that no failed rank left its shm region (issue 22:
     * ranks that fail a trial run no JMH teardown, so their endpoints are never closed).
     */
    void assertAllFail(String regex) throws Exception {
        Integer[] codes = await(240);
        String logs = allLogs();
        for (Integer c : codes) {
            org.junit.jupiter.api.Assertions.assertNotNull(c, "a rank hung:\n" + logs);
            org.junit.jupiter.api.Assertions.assertNotEquals(0, c, logs);
        }
        org.junit.jupiter.api.Assertions.assertTrue(java.util.regex.Pattern.compile(regex).matcher(logs).find(),
                "expected /" + regex + "/:\n" + logs);
        try (var files = java.nio.file.Files.newDirectoryStream(java.nio.file.Path.of("/dev/shm"), "[0-9]*:[0-9]*:[0-9]*")) {
            for (java.nio.file.Path f : files) {
                long pid = Long.parseLong(f.getFileName().toString().split(":")[0]);
                org.junit.jupiter.api.Assertions.assertTrue(ProcessHandle.of(pid).isPresent()
                        || java.nio.file.Files.getLastModifiedTime(f).toInstant().isBefore(started),
                        "a failed rank left its shm region " + f);
            }
        }
    }
}

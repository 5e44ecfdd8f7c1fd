package io.efabench.it;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;

/**
 * The ITs' handle on {@code ./run-jmh.sh testbed} (emulated nodes as network namespaces): bring it
 * up and down, run commands on its nodes, start ranks on them as torchrun would, read what they
 * left. One per test class; {@code results} is where the ranks' run folders and logs go.
 */
final class Testbed {
    static final Path SCRIPT = Path.of("run-jmh.sh").toAbsolutePath();
    /** The testbed's names: efb-n1, ... (EFABENCH_TESTBED_NAME, as the script reads it, for a second one beside). */
    static final String TB = System.getenv().getOrDefault("EFABENCH_TESTBED_NAME", "efb");

    final Path results;

    Testbed(Path results) {
        this.results = results;
    }

    /** Why the testbed cannot run here (not root, a tool missing), or null. */
    static String skipReason(List<String> tools) throws IOException {
        Process id = new ProcessBuilder("id", "-u").start();
        if (!new String(id.getInputStream().readAllBytes()).trim().equals("0")) {
            return "the testbed needs root (network namespaces, veth, tc)";
        }
        for (String tool : tools) {
            if (!Ranks.onPath(tool)) {
                return "no " + tool + " here (.ci/run installs iproute2, nftables, slurm-wlm, munge, openmpi-bin, libfabric-bin)";
            }
        }
        return null;
    }

    /** The shape of the one testbed every class shares: 4 nodes x 2 rails, Slurm on them where it is installed. */
    static final int NODES = 4;
    static final int RAILS = 2;
    private static final List<String> SLURM = List.of("slurmd", "slurmctld", "srun", "munged");
    /** Whether this JVM brought the shared testbed up (and {@link Shared} takes it down at the end). */
    private static boolean sharedUp;

    /**
     * The testbed for a class that needs {@code tools}: the one this test JVM shares, brought up by the
     * first class that asks (4 nodes x 2 rails, with Slurm where slurm-wlm and munge are here; about
     * 10 s), every NIC reshaped to {@code rate} for each class after it. A class mends what it broke
     * (links down, one NIC reshaped) before it ends; {@link Shared} takes the testbed down when every
     * test class has run. Returns why it cannot run here, or null.
     */
    static synchronized String shared(List<String> tools, String rate) throws Exception {
        String skip = skipReason(tools);
        if (skip != null) {
            return skip;
        }
        if (!sharedUp) {
            List<String> args = new ArrayList<>(List.of("testbed", "up", "--nodes", Integer.toString(NODES), "--rails",
                    Integer.toString(RAILS), "--rate", rate));
            if (SLURM.stream().allMatch(Ranks::onPath)) {
                args.add("--slurm");
            }
            String out = run(180, args.toArray(String[]::new));
            org.junit.jupiter.api.Assertions.assertTrue(out.contains("testbed: up:"), out);
            sharedUp = true;
        } else {
            String out = run(60, "testbed", "rate", rate);
            org.junit.jupiter.api.Assertions.assertTrue(out.contains("rate: every NIC at " + rate), out);
        }
        return null;
    }

    /**
     * Takes the shared testbed down once every test class of this JVM has run (JUnit closes the root
     * store's resources last), and fails the run if anything of it is left. Each class that uses
     * {@link #shared} registers it with {@code @ExtendWith(Testbed.Shared.class)}.
     */
    static final class Shared implements org.junit.jupiter.api.extension.BeforeAllCallback {
        @Override
        public void beforeAll(org.junit.jupiter.api.extension.ExtensionContext context) {
            context.getRoot().getStore(org.junit.jupiter.api.extension.ExtensionContext.Namespace.GLOBAL).getOrComputeIfAbsent(
                    Shared.class, k -> (org.junit.jupiter.api.extension.ExtensionContext.Store.CloseableResource) Testbed::downShared);
        }
    }

    private static synchronized void downShared() throws Exception {
        if (!sharedUp) {
            return;
        }
        sharedUp = false;
        String out = run(120, "testbed", "down");
        String left = new String(new ProcessBuilder("ip", "netns", "list").start().getInputStream().readAllBytes());
        if (!out.contains("nothing of the testbed is left")
                || java.util.regex.Pattern.compile("(?m)^" + TB + "-").matcher(left).results().findAny().isPresent()) {
            throw new AssertionError("the shared testbed did not come down whole:\n" + out + "\nnamespaces: " + left);
        }
    }

    /** Each rail's goodput in Gbps from {@code testbed links} output (a line per rail of the shared testbed, every one asserted). */
    static double[] railGoodputs(String links) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("rail(\\d+) .*: ([0-9.]+) Gbps").matcher(links);
        double[] goodput = new double[RAILS];
        int found = 0;
        while (m.find()) {
            goodput[Integer.parseInt(m.group(1))] = Double.parseDouble(m.group(2));
            found++;
        }
        org.junit.jupiter.api.Assertions.assertEquals(RAILS, found, links);
        return goodput;
    }

    /** {@code ./run-jmh.sh ARGS...} to its end, output returned; fails past {@code seconds}. */
    static String run(int seconds, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("bash", SCRIPT.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("still running after " + seconds + " s: " + cmd);
        }
        return new String(out);
    }

    /** {@code sh -c line} in node {@code node}'s namespaces (as root), output returned. */
    static String sh(String node, String line) throws Exception {
        return run(60, "testbed", "exec", node, "sh", "-c", line);
    }

    /** A command run on testbed node {@code node} ({@code efb-n1}, {@code efb-head}), output to {@code log}. */
    Process onNode(String node, Map<String, String> env, List<String> command, Path log) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("bash", SCRIPT.toString(), "testbed", "exec", node, "env"));
        env.forEach((k, v) -> cmd.add(k + "=" + v));
        cmd.addAll(command);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        Map<String, String> e = pb.environment();
        for (String v : List.of("RANK", "WORLD_SIZE", "SLURM_PROCID", "SLURM_JOB_ID", "OMPI_COMM_WORLD_RANK", "MASTER_PORT",
                "MASTER_ADDR", "FI_PROVIDER", "EFABENCH_NICS", "FABRIC_LINK_GBPS", "EFABENCH_LOOPBACK")) {
            e.remove(v);
        }
        e.put("EFABENCH_JAR", Ranks.JAR.toAbsolutePath().toString());
        e.put("EFABENCH_RESULTS", results.toString());
        return pb.start();
    }

    /** Ranks started on testbed nodes, rank r on {@code nodes[r]}; {@link #await} collects them. */
    record Job(String id, List<Process> processes, List<Path> logs) {}

    /**
     * Ranks started as a user with torchrun-style variables would, rank r on node {@code nodes[r]},
     * run folder {@code id}, EFABENCH_TIMEOUT_S {@code timeoutS}; {@code extraEnv} per rank.
     */
    Job start(String id, String[] nodes, int timeoutS, Map<Integer, Map<String, String>> extraEnv, List<String> jmh)
            throws Exception {
        int port = Ranks.freePort();
        Map<String, Integer> perNode = new TreeMap<>();
        for (String n : nodes) {
            perNode.merge(n, 1, Integer::sum);
        }
        Map<String, Integer> seen = new TreeMap<>();
        int[] localRank = new int[nodes.length];
        for (int r = 0; r < nodes.length; r++) {
            localRank[r] = seen.merge(nodes[r], 1, Integer::sum) - 1;
        }
        List<Process> ps = new ArrayList<>();
        List<Path> logs = new ArrayList<>();
        for (int r = nodes.length - 1; r >= 0; r--) {
            Map<String, String> env = new LinkedHashMap<>(Map.of("RANK", Integer.toString(r), "WORLD_SIZE",
                    Integer.toString(nodes.length), "LOCAL_RANK", Integer.toString(localRank[r]),
                    "LOCAL_WORLD_SIZE", Integer.toString(perNode.get(nodes[r])), "MASTER_ADDR", nodes[0], "MASTER_PORT",
                    Integer.toString(port), "EFABENCH_RUN_ID", id, "EFABENCH_TIMEOUT_S", Integer.toString(timeoutS)));
            env.putAll(extraEnv.getOrDefault(r, Map.of()));
            List<String> cmd = new ArrayList<>(List.of("bash", SCRIPT.toString()));
            cmd.addAll(jmh);
            Path log = results.resolve(id + "-rank" + r + ".out");
            logs.addFirst(log);
            ps.addFirst(onNode(nodes[r], env, cmd, log));
        }
        return new Job(id, ps, logs);
    }

    /** Every rank's exit status; a rank still running after {@code seconds} is killed and fails the test. */
    static int[] await(Job job, int seconds) throws Exception {
        int[] codes = new int[job.processes().size()];
        for (int r = 0; r < codes.length; r++) {
            codes[r] = Ranks.awaitExit(job.processes().get(r), job.logs().get(r), seconds);
        }
        return codes;
    }

    /** Start and await: every rank's exit status. */
    int[] torchrun(String id, String[] nodes, Map<Integer, Map<String, String>> extraEnv, List<String> jmh) throws Exception {
        return await(start(id, nodes, 30, extraEnv, jmh), 400);
    }

    /** The tail of every log of run {@code id}, for a failure message. */
    String logs(String id) throws IOException {
        StringBuilder b = new StringBuilder();
        try (Stream<Path> s = Files.list(results)) {
            for (Path p : s.filter(p -> p.getFileName().toString().startsWith(id) && p.toString().endsWith(".out")).sorted()
                    .toList()) {
                String text = Files.readString(p);
                b.append("== ").append(p.getFileName()).append('\n').append(text, Math.max(0, text.length() - 3000), text.length());
            }
        }
        return b.toString();
    }

    /** Rank 0's figures per "benchmark config [completion] [size of SendRecv] [routing of MoE]": metric -> score. */
    static Map<String, Map<String, Double>> figures(Path run) throws IOException {
        JsonArray json = JsonParser.parseString(Files.readString(run.resolve("jmh.json"))).getAsJsonArray();
        Map<String, Map<String, Double>> out = new LinkedHashMap<>();
        for (JsonElement e : json) {
            JsonObject o = e.getAsJsonObject();
            JsonObject params = o.getAsJsonObject("params");
            String bench = o.get("benchmark").getAsString().replaceAll(".*\\.(\\w+Benchmark)\\..*", "$1");
            String key = bench + " " + params.get("config").getAsString()
                    + (params.has("completion") ? " " + params.get("completion").getAsString() : "")
                    + (bench.equals("SendRecvBenchmark") ? " " + params.get("size").getAsString() : "")
                    + (params.has("routing") ? " " + params.get("routing").getAsString() : "");
            Map<String, Double> m = new TreeMap<>();
            for (Map.Entry<String, JsonElement> s : o.getAsJsonObject("secondaryMetrics").entrySet()) {
                m.put(s.getKey(), s.getValue().getAsJsonObject().get("score").getAsDouble());
            }
            out.put(key, m);
        }
        return out;
    }

    /**
     * The processes left in node {@code node}'s network namespace, the testbed's own slurmd aside
     * (empty when none).
     */
    static String processesOn(String node) throws Exception {
        Process p = new ProcessBuilder("ip", "netns", "pids", node).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes()).trim();
        p.waitFor();
        List<String> left = new ArrayList<>();
        for (String pid : out.split("\\s+")) {
            if (pid.isEmpty()) {
                continue;
            }
            String comm;
            try {
                comm = Files.readString(Path.of("/proc", pid, "comm")).strip();
            } catch (IOException gone) {
                continue; // exited between the listing and the read
            }
            if (!comm.equals("slurmd")) {
                left.add(pid + " (" + comm + ")");
            }
        }
        return String.join(" ", left);
    }
}

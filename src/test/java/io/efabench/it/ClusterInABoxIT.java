package io.efabench.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;

/**
 * The cluster on one machine ({@code ./run-jmh.sh testbed}): 4 emulated nodes with 2 rails each,
 * every NIC shaped to {@link #RATE}, Slurm on them. Each figure is held against what its links
 * carry: the rate (no figure above it), and each rail's own goodput measured here by a plain TCP
 * stream (the benchmarks near it). The launchers users have run across the nodes: torchrun-style
 * variables per node, Open MPI through the testbed's rsh agent, Slurm with one slurmd per node.
 * Skipped, saying why, where this is not root or the tools are missing (.ci/run installs them).
 */
class ClusterInABoxIT {
    private static final String TB = Testbed.TB;
    private static final String RATE = "400mbit";
    private static final double RATE_GBPS = 0.4;
    private static final int NODES = 4;
    private static final int RAILS = 2;
    /** Short trials: a 1M write window of 8 is 8 MiB, ~0.18 s at the rate. */
    private static final List<String> TIMING = List.of("-wi", "1", "-w", "1s", "-i", "2", "-r", "2s", "-f", "1");
    /** Each rail's goodput node 1 -> node 2, Gbps, measured once the testbed is up. */
    private static final double[] GOODPUT = new double[RAILS];
    private static String skip;
    /** The testbed table (docs/perf/journal/cluster-in-a-box.md): benchmark, config, rails, ours, link goodput, ratio; printed at the end. */
    private static final List<String> TABLE = new ArrayList<>();

    /** One row: {@code ours} against {@code rails} x the rail's own goodput. */
    private static synchronized void row(String benchmark, String config, int rails, double ours, double goodput, String rate) {
        TABLE.add(String.format(Locale.ROOT, "| %s | %s | %d x %s | %.4f | %.4f | %.3f |", benchmark, config, rails, rate, ours,
                rails * goodput, ours / (rails * goodput)));
    }

    @TempDir
    Path results;

    private Testbed bed() {
        return new Testbed(results);
    }

    private static String run(int seconds, String... args) throws Exception {
        return Testbed.run(seconds, args);
    }

    private Process onNode(String node, Map<String, String> env, List<String> command, Path log) throws IOException {
        return bed().onNode(node, env, command, log);
    }

    private int[] torchrun(String id, String[] nodes, Map<Integer, Map<String, String>> extraEnv, List<String> jmh)
            throws Exception {
        return bed().torchrun(id, nodes, extraEnv, jmh);
    }

    private String logs(String id) throws IOException {
        return bed().logs(id);
    }

    private static Map<String, Map<String, Double>> figures(Path run) throws IOException {
        return Testbed.figures(run);
    }

    @BeforeAll
    static void up() throws Exception {
        skip = Testbed.skipReason(List.of("ip", "tc", "nsenter", "slurmd", "slurmctld", "srun", "munged", "mpirun",
                "fi_pingpong"));
        if (skip != null) {
            return;
        }
        String out = run(120, "testbed", "up", "--nodes", Integer.toString(NODES), "--rails", Integer.toString(RAILS),
                "--rate", RATE, "--slurm");
        assertTrue(out.contains("testbed: up:"), out);
        double[] goodput = links();
        for (int k = 0; k < RAILS; k++) {
            GOODPUT[k] = goodput[k];
            // TCP over a 1500-byte MTU carries at most 1448/1514 of the L2 rate tbf shapes.
            assertTrue(goodput[k] > 0.7 * RATE_GBPS && goodput[k] <= CEILING_GBPS, "link goodput out of range: "
                    + java.util.Arrays.toString(goodput));
        }
    }

    @AfterAll
    static void down() throws Exception {
        if (skip != null) {
            return;
        }
        System.out.println("testbed table (Gbps; link = rails x each rail's TCP goodput, node 1 -> node 2):\n"
                + "| benchmark | config | rails | ours | link goodput | ratio |\n|---|---|---|---:|---:|---:|\n"
                + String.join("\n", TABLE));
        String out = run(120, "testbed", "down");
        String left = new String(new ProcessBuilder("ip", "netns", "list").start().getInputStream().readAllBytes());
        assertTrue(Pattern.compile("(?m)^" + TB + "-").matcher(left).results().findAny().isEmpty(), "namespaces left: " + left);
        assertTrue(out.contains("nothing of the testbed is left"), out);
    }

    private static void assumeUp() {
        Assumptions.assumeTrue(skip == null, skip);
    }

    private static List<String> args(String... jmh) {
        List<String> a = new ArrayList<>(List.of(jmh));
        a.addAll(TIMING);
        return a;
    }

    /**
     * What one NIC carries of payload, per direction: tbf shapes L2 frames, and TCP over a 1500-byte
     * MTU (timestamps on) puts 1448 payload bytes in a 1514-byte frame; libfabric's own headers
     * only lower it. The bucket (8 KiB) may pass on top once per idle spell: 0.5%.
     */
    private static double ceilingGbps(double rateGbps) {
        return rateGbps * 1448 / 1514 * 1.005;
    }

    private static final double CEILING_GBPS = ceilingGbps(RATE_GBPS);
    /** tbf's bucket on every NIC at 400 Mbit (testbed.sh: 100 us at the rate, at least 8 KiB). */
    private static final double BUCKET = 8192;

    /** No figure above what the links it used carry: {@link #CEILING_GBPS} x NICs. */
    private static void withinLinks(String what, double gbps, int nics, String context) {
        withinLinks(what, gbps, nics, RATE_GBPS, context);
    }

    private static void withinLinks(String what, double gbps, int nics, double rateGbps, String context) {
        double ceiling = ceilingGbps(rateGbps);
        assertTrue(gbps <= ceiling * nics, String.format(Locale.ROOT, "%s: %.4f Gbps over %d NIC(s) that carry %.4f Gbps"
                + " of TCP payload each: more than the links carry%n%s", what, gbps, nics, ceiling, context));
    }

    /** Each rail's goodput node 1 -> node 2 at the testbed's current rate. */
    private static double[] links() throws Exception {
        String links = run(120, "testbed", "links", "--seconds", "3");
        Matcher m = Pattern.compile("rail(\\d+) .*: ([0-9.]+) Gbps").matcher(links);
        double[] goodput = new double[RAILS];
        int found = 0;
        while (m.find()) {
            goodput[Integer.parseInt(m.group(1))] = Double.parseDouble(m.group(2));
            found++;
        }
        assertEquals(RAILS, found, links);
        System.out.println("testbed links:\n" + links);
        return goodput;
    }

    private static void atLeast(String what, double gbps, double floor, String basis, String context) {
        assertTrue(gbps >= floor, String.format(Locale.ROOT, "%s: %.4f Gbps, below %.4f (%s)%n%s", what, gbps, floor, basis,
                context));
    }

    /** Each rank's locality fragment of the run: rank -> {host, nics}. */
    private static Map<Integer, JsonObject> localities(Path run) throws IOException {
        Map<Integer, JsonObject> out = new TreeMap<>();
        try (Stream<Path> s = Files.list(run.resolve("provenance"))) {
            for (Path p : s.filter(p -> p.getFileName().toString().startsWith("locality-rank")).toList()) {
                JsonObject o = JsonParser.parseString(Files.readString(p)).getAsJsonObject();
                out.putIfAbsent(o.get("rank").getAsInt(), o);
            }
        }
        return out;
    }

    @Test
    void writeAndReadBetweenTwoNodesHoldToTheLinkAndStripeOverBothRails() throws Exception {
        assumeUp();
        String id = "tb-write-read";
        String[] nodes = {TB + "-n1", TB + "-n2"};
        int[] codes = torchrun(id, nodes, Map.of(), args("WriteBenchmark", "-p", "config=SinglePin,MultiPin", "-p", "size=1M",
                "-p", "window=8", "-p", "completion=remote,local"));
        String log = logs(id);
        assertEquals(0, codes[0] + codes[1], log);
        Path run = results.resolve(id);
        Map<String, Map<String, Double>> f = figures(run);
        String context = f + "\nlinks " + java.util.Arrays.toString(GOODPUT) + "\n" + log;
        double single = f.get("WriteBenchmark SinglePin remote").get("gbps");
        double multi = f.get("WriteBenchmark MultiPin remote").get("gbps");
        withinLinks("Write SinglePin", single, 1, context);
        withinLinks("Write MultiPin", multi, RAILS, context);
        atLeast("Write SinglePin", single, 0.85 * GOODPUT[0], "0.85 x rail 0's TCP goodput", context);
        atLeast("Write MultiPin", multi, 0.8 * RAILS * single, "0.8 x rails x SinglePin", context);
        row("Write 1M window 8, 2 nodes", "SinglePin remote", 1, single, GOODPUT[0], RATE);
        row("Write 1M window 8, 2 nodes", "MultiPin remote", RAILS, multi, GOODPUT[0], RATE);
        row("Write 1M window 8, 2 nodes", "SinglePin local", 1, f.get("WriteBenchmark SinglePin local").get("gbps"), GOODPUT[0], RATE);
        row("Write 1M window 8, 2 nodes", "MultiPin local", RAILS, f.get("WriteBenchmark MultiPin local").get("gbps"), GOODPUT[0],
                RATE);
        // Local completion over tcp is the kernel taking the bytes: still never above the link.
        double singleLocal = f.get("WriteBenchmark SinglePin local").get("gbps");
        withinLinks("Write SinglePin completion=local", singleLocal, 1, context);
        withinLinks("Write MultiPin completion=local", f.get("WriteBenchmark MultiPin local").get("gbps"), RAILS, context);
        atLeast("Write SinglePin completion=local", singleLocal, 0.85 * GOODPUT[0], "0.85 x rail 0's TCP goodput", context);
        // busbw_pct with the testbed's rate as the link: the fraction of the link the figure is.
        for (String k : List.of("WriteBenchmark SinglePin remote", "WriteBenchmark MultiPin remote")) {
            double gbps = f.get(k).get("gbps");
            int nics = k.contains("Multi") ? RAILS : 1;
            double pct = f.get(k).get("busbw_pct");
            double measured = 100 * gbps / (GOODPUT[0] * nics); // of what the links measurably carry
            assertTrue(Math.abs(pct - measured) <= 0.1 * measured, k + ": busbw_pct " + pct + " vs " + measured + "\n" + context);
        }
        String provenance = Files.readString(run.resolve("provenance.json"));
        assertTrue(provenance.contains("\"pairs_cross_node\": 1") && provenance.contains("\"pairs_same_node\": 0"),
                "rank 0's peer counted as on another node:\n" + provenance);
        Map<Integer, JsonObject> where = localities(run);
        assertEquals(TB + "-n2", where.get(1).get("host").getAsString(), where.toString());
        assertEquals("[\"rail0\",\"rail1\"]", where.get(1).get("nics").toString(), "rank 1's NICs by rail: " + where);

        String idRead = "tb-read";
        codes = torchrun(idRead, nodes, Map.of(), args("ReadBenchmark", "-p", "config=SinglePin,MultiPin", "-p", "size=1M", "-p",
                "window=8"));
        log = logs(idRead);
        assertEquals(0, codes[0] + codes[1], log);
        f = figures(results.resolve(idRead));
        context = f + "\nlinks " + java.util.Arrays.toString(GOODPUT) + "\n" + log;
        double readSingle = f.get("ReadBenchmark SinglePin").get("gbps");
        double readMulti = f.get("ReadBenchmark MultiPin").get("gbps");
        withinLinks("Read SinglePin", readSingle, 1, context);
        withinLinks("Read MultiPin", readMulti, RAILS, context);
        row("Read 1M window 8, 2 nodes", "SinglePin", 1, readSingle, GOODPUT[0], RATE);
        row("Read 1M window 8, 2 nodes", "MultiPin", RAILS, readMulti, GOODPUT[0], RATE);
        atLeast("Read SinglePin", readSingle, 0.85 * GOODPUT[0], "0.85 x rail 0's TCP goodput", context);
        atLeast("Read MultiPin", readMulti, 0.8 * RAILS * readSingle, "0.8 x rails x SinglePin", context);
    }

    @Test
    void roundRobinToTwoTargetsUsesBothRails() throws Exception {
        assumeUp();
        String id = "tb-roundrobin";
        int[] codes = torchrun(id, new String[] {TB + "-n1", TB + "-n2", TB + "-n3"}, Map.of(), args("WriteBenchmark", "-p",
                "config=SinglePin,RoundRobinPin", "-p", "size=1M", "-p", "window=8", "-p", "completion=remote"));
        String log = logs(id);
        assertEquals(0, codes[0] + codes[1] + codes[2], log);
        Map<String, Map<String, Double>> f = figures(results.resolve(id));
        String context = f + "\n" + log;
        double single = f.get("WriteBenchmark SinglePin remote").get("gbps");
        double rr = f.get("WriteBenchmark RoundRobinPin remote").get("gbps");
        withinLinks("Write SinglePin to 2 targets", single, 1, context);
        withinLinks("Write RoundRobinPin", rr, RAILS, context);
        row("Write 1M window 8, 3 nodes", "SinglePin remote", 1, single, GOODPUT[0], RATE);
        row("Write 1M window 8, 3 nodes", "RoundRobinPin remote", RAILS, rr, GOODPUT[0], RATE);
        atLeast("Write RoundRobinPin to 2 targets on 2 rails", rr, 0.8 * RAILS * single, "0.8 x rails x SinglePin", context);
    }

    /**
     * Slurm across the nodes, one task each: the all-to-all held against each rank's bottleneck. At
     * 150 Mbit: 4 nodes x 2 rails at 400 Mbit move ~2.8 Gbps through the kernel's veths, bridges and
     * tbf, what this 2-core machine's TCP carries at all, and MultiPin then read no more than
     * SinglePin (docs/perf/journal/cluster-in-a-box.md, "The cluster on one machine").
     */
    @Test
    void srunAllToAllAcrossFourNodesHoldsToEachRanksBottleneck() throws Exception {
        assumeUp();
        double rate = 0.15;
        run(60, "testbed", "rate", "150mbit");
        try {
            double[] goodput = links();
            Path log = results.resolve("srun-a2a.out");
            Process p = onNode(TB + "-head", Map.of("MASTER_PORT", Integer.toString(Ranks.freePort())), args("srun", "-N",
                    Integer.toString(NODES), "--ntasks-per-node=1", "bash", Testbed.SCRIPT.toString(), "AllToAllBenchmark", "-p",
                    "config=SinglePin,MultiPin", "-p", "size=1M", "-p", "window=4"), log);
            int code = Ranks.awaitExit(p, log, 400);
            String out = Files.readString(log);
            assertEquals(0, code, out);
            Path run = onlyRun("slurm-", out);
            Map<Integer, JsonObject> where = localities(run);
            assertEquals(NODES, where.values().stream().map(o -> o.get("host").getAsString()).distinct().count(),
                    "one task on each node: " + where);
            Map<String, Map<String, Double>> f = figures(run);
            String context = f + "\nlinks " + java.util.Arrays.toString(goodput) + "\n" + out;
            // Each rank sends (N-1) blocks a round, all through its own rail-0 NIC (SinglePin): that NIC
            // is its bottleneck, and every block it receives comes in through its rail-0 NIC too.
            double single = f.get("AllToAllBenchmark SinglePin").get("gbps");
            double multi = f.get("AllToAllBenchmark MultiPin").get("gbps");
            withinLinks("AllToAll SinglePin", single, 1, rate, context);
            withinLinks("AllToAll MultiPin", multi, RAILS, rate, context);
            withinLinks("AllToAll SinglePin slowest rank", f.get("AllToAllBenchmark SinglePin").get("slowest_rank_gbps"), 1, rate,
                    context);
            row("AllToAll 1M window 4, 4 nodes (srun)", "SinglePin", 1, single, goodput[0], "150mbit");
            row("AllToAll 1M window 4, 4 nodes (srun)", "MultiPin", RAILS, multi, goodput[0], "150mbit");
            atLeast("AllToAll SinglePin", single, 0.75 * goodput[0], "0.75 x a rank's one NIC", context);
            atLeast("AllToAll MultiPin", multi, 0.8 * RAILS * single, "0.8 x rails x SinglePin", context);
        } finally {
            run(60, "testbed", "rate", RATE);
        }
    }

    /** The README's command: srun -N 4 --ntasks-per-node=2; every node runs two ranks. */
    @Test
    void srunTwoTasksPerNodeRunsOnEveryNode() throws Exception {
        assumeUp();
        Path log = results.resolve("srun-8.out");
        Process p = onNode(TB + "-head", Map.of("MASTER_PORT", Integer.toString(Ranks.freePort())), List.of("srun", "-N",
                Integer.toString(NODES), "--ntasks-per-node=2", "--overcommit", "bash", Testbed.SCRIPT.toString(), "AllToAllBenchmark",
                "-p", "config=SinglePin", "-p", "size=64K", "-wi", "1", "-w", "500ms", "-i", "1", "-r", "1s", "-f", "1"), log);
        int code = Ranks.awaitExit(p, log, 400);
        String out = Files.readString(log);
        assertEquals(0, code, out);
        Map<Integer, JsonObject> where = localities(onlyRun("slurm-", out));
        assertEquals(2 * NODES, where.size(), where.toString());
        Map<String, Long> perHost = new TreeMap<>();
        where.values().forEach(o -> perHost.merge(o.get("host").getAsString(), 1L, Long::sum));
        assertEquals(Map.of(TB + "-n1", 2L, TB + "-n2", 2L, TB + "-n3", 2L, TB + "-n4", 2L), perHost, where.toString());
    }

    @Test
    void mpirunAcrossTwoNodesThroughTheRshAgent() throws Exception {
        assumeUp();
        Path log = results.resolve("mpirun.out");
        Process p = onNode(TB + "-head", Map.of(), List.of("mpirun", "-H", TB + "-n1:2," + TB + "-n2:2", "-n", "4", "--allow-run-as-root",
                "--mca", "plm_rsh_agent", Path.of("testbed/rsh-agent").toAbsolutePath().toString(), "--mca",
                "oob_tcp_if_include", "198.19.0.0/24", "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "198.19.0.0/24",
                "-x", "EFABENCH_JAR", "-x", "EFABENCH_RESULTS", "-x", "MASTER_ADDR=" + TB + "-n1", "-x", "MASTER_PORT="
                        + Ranks.freePort(), "bash", Testbed.SCRIPT.toString(), "WriteBenchmark", "-p", "config=SinglePin", "-p",
                "size=256K", "-p", "completion=remote", "-wi", "1", "-w", "500ms", "-i", "1", "-r", "1s", "-f", "1"), log);
        int code = Ranks.awaitExit(p, log, 300);
        String out = Files.readString(log);
        assertEquals(0, code, out);
        Map<Integer, JsonObject> where = localities(onlyRun("openmpi-", out));
        assertEquals(4, where.size(), where.toString());
        assertEquals(List.of(TB + "-n1", TB + "-n1", TB + "-n2", TB + "-n2"),
                where.values().stream().map(o -> o.get("host").getAsString()).toList(), where.toString());
    }

    /** fi_pingpong's one-way µs per transfer ("usec/xfer") at {@code size} bytes over rail 0, node 1 to node 2. */
    private double fiPingpong(int size, int iterations) throws Exception {
        List<String> pp = List.of("timeout", "120", "fi_pingpong", "-p", "tcp", "-e", "rdm", "-d", "rail0", "-S",
                Integer.toString(size), "-I", Integer.toString(iterations));
        Path serverLog = results.resolve("pingpong-server-" + size + ".out");
        Path clientLog = results.resolve("pingpong-client-" + size + ".out");
        Process server = onNode(TB + "-n2", Map.of(), pp, serverLog);
        Thread.sleep(1000);
        List<String> client = new ArrayList<>(pp);
        client.add("198.19.0.2");
        int code = Ranks.awaitExit(onNode(TB + "-n1", Map.of(), client, clientLog), clientLog, 150);
        Ranks.awaitExit(server, serverLog, 30);
        String out = Files.readString(clientLog);
        assertEquals(0, code, out + Files.readString(serverLog));
        // bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec
        Matcher m = Pattern.compile("(?m)^\\S+\\s+\\d+\\s+=\\d+\\s+\\S+\\s+\\S+s\\s+([0-9.]+)\\s+([0-9.]+)\\s").matcher(out);
        assertTrue(m.find(), out);
        return Double.parseDouble(m.group(2));
    }

    /**
     * SendRecv across the link next to libfabric's own ping-pong, same namespaces, NIC and sizes:
     * one-way time per message within 1.25x of fi_pingpong's.
     */
    @Test
    void sendRecvHoldsToFiPingpongOnTheSameLink() throws Exception {
        assumeUp();
        String id = "tb-sendrecv";
        int[] codes = torchrun(id, new String[] {TB + "-n1", TB + "-n2"}, Map.of(), args("SendRecvBenchmark", "-p",
                "config=SingleHost", "-p", "size=64K,1M"));
        String log = logs(id);
        assertEquals(0, codes[0] + codes[1], log);
        Map<String, Map<String, Double>> f = figures(results.resolve(id));
        for (int size : new int[] {64 << 10, 1 << 20}) {
            String label = size == (1 << 20) ? "1M" : "64K";
            double ours = f.get("SendRecvBenchmark SingleHost " + label).get("lat_us");
            double peer = fiPingpong(size, size == (1 << 20) ? 40 : 400);
            double gbps = f.get("SendRecvBenchmark SingleHost " + label).get("gbps");
            // One message after an idle spell: tbf lets its bucket (BUCKET bytes) through at once, the
            // rest at the rate. No one-way time below what that link carries.
            double floorUs = Math.max(0, size * 1514.0 / 1448 - BUCKET) * 8 / (RATE_GBPS * 1e3);
            assertTrue(ours >= floorUs, String.format(Locale.ROOT, "SendRecv %s: one-way %.1f us, below the %.1f us the link"
                    + " needs%n%s", label, ours, floorUs, log));
            // The row's "link" is fi_pingpong's one-way rate here: size x 8 / its usec/xfer.
            row("SendRecv " + label + ", 2 nodes (link: fi_pingpong)", "SingleHost", 1, gbps, size * 8 / peer / 1000, RATE);
            assertTrue(ours <= 1.25 * peer, String.format(Locale.ROOT, "SendRecv %s: one-way %.1f us, fi_pingpong %.1f us on the"
                    + " same link%n%s%n%s", label, ours, peer, f, log));
        }
    }

    /** Node 2 lists its rails the other way round: channel 0 would cross rails. One line, no hang. */
    @Test
    void aMisRailedPlanFailsInOneLine() throws Exception {
        assumeUp();
        String id = "tb-misrailed";
        long start = System.nanoTime();
        int[] codes = torchrun(id, new String[] {TB + "-n1", TB + "-n2"}, Map.of(1, Map.of("EFABENCH_NICS", "rail1,rail0")),
                args("WriteBenchmark", "-p", "config=SinglePin", "-p", "size=64K"));
        String log = logs(id);
        assertNotEquals(0, codes[0], log);
        assertNotEquals(0, codes[1], log);
        assertTrue(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start) < 120, log);
        assertTrue(Pattern.compile("mis-railed: rank \\d \\(node " + TB + "-n\\d\\) channel 0 is on NIC rail\\d").matcher(log).find(),
                "the line names the rank, node, channel and NIC:\n" + log);
    }

    private Path onlyRun(String prefix, String log) throws IOException {
        try (Stream<Path> s = Files.list(results)) {
            List<Path> runs = s.filter(p -> Files.isDirectory(p) && p.getFileName().toString().startsWith(prefix)).toList();
            assertEquals(1, runs.size(), "one run folder named " + prefix + "*: " + runs + "\n" + log);
            return runs.getFirst();
        }
    }
}

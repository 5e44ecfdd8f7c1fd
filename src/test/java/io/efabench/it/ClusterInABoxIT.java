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
 * The cluster on one machine ({@code ./run-jmh.sh testbed}, the shared one: 4 emulated nodes with
 * 2 rails each, Slurm on them), every NIC shaped to {@link #RATE}. Each figure is held against what
 * its links carry: the rate (no figure above it, exact, never retried) and each rail's own goodput
 * measured by a plain TCP stream in the same attempt, right after the benchmark (floors, see
 * {@link Floors}; 1 s streams, alone and all rails at once). The launchers users have run across the nodes: torchrun-style variables per
 * node, Open MPI through the testbed's rsh agent, Slurm with one slurmd per node.
 *
 * <p>Why 200 Mbit and not more: tbf's bucket (8 KiB, testbed.sh) passes at most a bucket per timer
 * wake-up, and on the 2-core VM one TCP stream read 0.316 Gbps at 400 Mbit (0.79 of the rate, the
 * CPU and the timer, not the link) while at 200 Mbit it reads 0.191, the link's TCP ceiling; the
 * floors then bound what the benchmark does with a link, not what this machine's timer does. The
 * four-node all-to-all runs at 50 Mbit for the same reason: 8 NICs busy both ways are more than 2
 * cores move at 150 Mbit (MultiPin read 0.98x SinglePin there) and still at 100 (0.64-0.75 of both
 * rails' goodput, SinglePin 0.78-0.86 of one's). Floors and the spreads they allow: the README's
 * testing section.
 * Skipped, saying why, where this is not root or the tools are missing (.ci/run installs them).
 */
@org.junit.jupiter.api.extension.ExtendWith(Testbed.Shared.class)
class ClusterInABoxIT {
    private static final String TB = Testbed.TB;
    private static final String RATE = "200mbit";
    private static final double RATE_GBPS = 0.2;
    private static final String A2A_RATE = "50mbit";
    private static final double A2A_RATE_GBPS = 0.05;
    private static final int NODES = Testbed.NODES;
    private static final int RAILS = Testbed.RAILS;
    /** Attempts a floor gets (each one measuring the figure and its ground truth again). */
    private static final int ATTEMPTS = 3;
    /**
     * MoE's uniform floors (0.8 of a rail's goodput, on {@code testbed tcp lossless}): with the ports
     * sending pure ACKs first, twelve runs in place on 2026-12-03 read 0.92-1.00 (SinglePin and
     * MultiPin); before that, with ACKs behind 200 ms of data, one run in two read 0.69-0.79
     * (docs/perf/journal/moe.md, "A fabric that queues").
     */
    private static final int MOE_ATTEMPTS = 3;
    /** Short trials: a 1M write window of 8 is 8 MiB, ~0.35 s at the rate. */
    private static final List<String> TIMING = List.of("-wi", "1", "-w", "1s", "-i", "2", "-r", "2s", "-f", "1");
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
        skip = Testbed.shared(List.of("ip", "tc", "nsenter", "slurmd", "slurmctld", "srun", "munged", "mpirun", "fi_pingpong"),
                RATE);
    }

    @AfterAll
    static void table() {
        if (skip == null) {
            System.out.println("testbed table (Gbps; link = rails x each rail's TCP goodput, node 1 -> node 2):\n"
                    + "| benchmark | config | rails | ours | link goodput | ratio |\n|---|---|---|---:|---:|---:|\n"
                    + String.join("\n", TABLE));
        }
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

    /** tbf's bucket on every NIC at 200 Mbit (testbed.sh: 100 us at the rate, at least 8 KiB). */
    private static final double BUCKET = 8192;

    /** No figure above what {@code nics} links at {@code rateGbps} carry: the TCP ceiling of each, exact. */
    private static void withinLinks(String what, double gbps, int nics, double rateGbps, String context) {
        double ceiling = ceilingGbps(rateGbps);
        assertTrue(gbps <= ceiling * nics, String.format(Locale.ROOT, "%s: %.4f Gbps over %d NIC(s) that carry %.4f Gbps"
                + " of TCP payload each: more than the links carry%n%s", what, gbps, nics, ceiling, context));
    }

    /**
     * Ground truth, node 1 -> node 2 at the testbed's current rate: each rail's goodput alone (one
     * after the other) and every rail's with all of them busy at once, Gbps. No link carries more
     * than its ceiling, and each carries more than 0.7 of its rate alone (else the testbed is broken).
     */
    record Links(double[] alone, double[] allAtOnce, String text) {
        /** Every rail's goodput with all of them busy at once, summed. */
        double together() {
            return java.util.Arrays.stream(allAtOnce).sum();
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "links: alone %s, together %s = %.4f Gbps", java.util.Arrays.toString(alone),
                    java.util.Arrays.toString(allAtOnce), together());
        }
    }

    private static Links links(double rateGbps) throws Exception {
        List<String> seen = new ArrayList<>();
        for (int attempt = 1; ; attempt++) {
            String alone = run(120, "testbed", "links", "--seconds", "1");
            String together = run(120, "testbed", "links", "--seconds", "1", "--together");
            double[] a = Testbed.railGoodputs(alone);
            double[] t = Testbed.railGoodputs(together);
            Links l = new Links(a, t, alone + together);
            boolean inRange = true;
            for (int k = 0; k < RAILS; k++) {
                // The ceiling is exact and never measured again: TCP over a 1500-byte MTU carries at most
                // 1448/1514 of the L2 rate tbf shapes.
                assertTrue(a[k] <= ceilingGbps(rateGbps) && t[k] <= ceilingGbps(rateGbps), "a TCP stream above its link's"
                        + " ceiling " + ceilingGbps(rateGbps) + ": " + l + "\n" + l.text());
                inRange &= a[k] > 0.7 * rateGbps;
            }
            // A stream alone under 0.7 of the rate is a broken testbed, or a second of the 2 cores
            // taken elsewhere (a CI run read 0.119 and 0.107 at 200 Mbit alone, 0.138 and 0.140
            // together, 2026-12-02): measured again, at most 3 times, every attempt printed.
            seen.add("links attempt " + attempt + "/3: " + l);
            System.out.println("floors: " + seen.getLast());
            if (inRange) {
                return l;
            }
            if (attempt == 3) {
                throw new AssertionError("link goodput under 0.7 x " + rateGbps + " Gbps alone in 3 attempts:\n"
                        + String.join("\n", seen) + "\n" + l.text());
            }
        }
    }

    /** Every rank exited 0 (a rank that never exited reads -1: no sum of codes may hide it). */
    private static void allExitedZero(int[] codes, String log) {
        assertEquals(0, java.util.Arrays.stream(codes).map(Math::abs).sum(), java.util.Arrays.toString(codes) + "\n" + log);
    }

    private static Floors.Floor floor(String what, double gbps, double fraction, double truth, String of) {
        return new Floors.Floor(what, gbps, fraction * truth, fraction + " x " + of);
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

    /**
     * busbw_pct is the figure over the link speed the testbed gives the ranks (FABRIC_LINK_GBPS, the
     * rate) times the NICs used: exact, whatever the machine's speed.
     */
    private static void busbwPctIsOverTheRate(Map<String, Double> f, String key, int nics, double rateGbps, String context) {
        double expected = 100 * f.get("gbps") / (rateGbps * nics);
        double pct = f.get("busbw_pct");
        assertTrue(Math.abs(pct - expected) <= 1e-6 * expected, key + ": busbw_pct " + pct + ", but gbps over " + nics + " x "
                + rateGbps + " Gbps is " + expected + "\n" + context);
    }

    /**
     * Write between two nodes, SinglePin and MultiPin, remote and local completion. Floors, each
     * against ground truth measured in the same attempt: SinglePin (either completion) >= 0.85 x
     * rail 0's goodput alone; MultiPin >= 0.85 x both rails' goodput at once (a MultiPin that stays on
     * one rail reads at most one rail's ceiling, 0.5 of it).
     */
    @Test
    void writeBetweenTwoNodesHoldsToTheLinkAndStripesOverBothRails() throws Exception {
        assumeUp();
        String[] nodes = {TB + "-n1", TB + "-n2"};
        Floors.hold("Write 1M window 8, 2 nodes", ATTEMPTS, attempt -> {
            String id = "tb-write-" + attempt;
            int[] codes = torchrun(id, nodes, Map.of(), args("WriteBenchmark", "-p", "config=SinglePin,MultiPin", "-p",
                    "size=1M", "-p", "window=8", "-p", "completion=remote,local"));
            String log = logs(id);
            allExitedZero(codes, log);
            Links links = links(RATE_GBPS);
            Path run = results.resolve(id);
            Map<String, Map<String, Double>> f = figures(run);
            String context = f + "\n" + links + "\n" + log;
            double single = f.get("WriteBenchmark SinglePin remote").get("gbps");
            double multi = f.get("WriteBenchmark MultiPin remote").get("gbps");
            double singleLocal = f.get("WriteBenchmark SinglePin local").get("gbps");
            double multiLocal = f.get("WriteBenchmark MultiPin local").get("gbps");
            withinLinks("Write SinglePin", single, 1, RATE_GBPS, context);
            withinLinks("Write MultiPin", multi, RAILS, RATE_GBPS, context);
            // Local completion over tcp is the kernel taking the bytes: still never above the link.
            withinLinks("Write SinglePin completion=local", singleLocal, 1, RATE_GBPS, context);
            withinLinks("Write MultiPin completion=local", multiLocal, RAILS, RATE_GBPS, context);
            for (String k : List.of("WriteBenchmark SinglePin remote", "WriteBenchmark MultiPin remote")) {
                busbwPctIsOverTheRate(f.get(k), k, k.contains("Multi") ? RAILS : 1, RATE_GBPS, context);
            }
            String provenance = Files.readString(run.resolve("provenance.json"));
            assertTrue(provenance.contains("\"pairs_cross_node\": 1") && provenance.contains("\"pairs_same_node\": 0"),
                    "rank 0's peer counted as on another node:\n" + provenance);
            Map<Integer, JsonObject> where = localities(run);
            assertEquals(TB + "-n2", where.get(1).get("host").getAsString(), where.toString());
            assertEquals("[\"rail0\",\"rail1\"]", where.get(1).get("nics").toString(), "rank 1's NICs by rail: " + where);
            row("Write 1M window 8, 2 nodes", "SinglePin remote", 1, single, links.alone()[0], RATE);
            row("Write 1M window 8, 2 nodes", "MultiPin remote", RAILS, multi, links.together() / RAILS, RATE);
            row("Write 1M window 8, 2 nodes", "SinglePin local", 1, singleLocal, links.alone()[0], RATE);
            row("Write 1M window 8, 2 nodes", "MultiPin local", RAILS, multiLocal, links.together() / RAILS, RATE);
            return new Floors.Measured(List.of(
                    floor("Write SinglePin", single, 0.85, links.alone()[0], "rail 0's goodput alone"),
                    floor("Write SinglePin completion=local", singleLocal, 0.85, links.alone()[0], "rail 0's goodput alone"),
                    floor("Write MultiPin", multi, 0.85, links.together(), "both rails' goodput at once")), context);
        });
    }

    /** Read between two nodes: the same floors as Write's (rank 0 reads; its NICs receive). */
    @Test
    void readBetweenTwoNodesHoldsToTheLinkAndStripesOverBothRails() throws Exception {
        assumeUp();
        Floors.hold("Read 1M window 8, 2 nodes", ATTEMPTS, attempt -> oneRailAndBoth("tb-read-" + attempt,
                new String[] {TB + "-n1", TB + "-n2"}, args("ReadBenchmark", "-p", "config=SinglePin,MultiPin", "-p", "size=1M",
                        "-p", "window=8"), "ReadBenchmark SinglePin", "ReadBenchmark MultiPin", "Read", "Read 1M window 8, 2 nodes"));
    }

    /**
     * Rank 0 writes to two targets, peer p on channel (p + rank) mod 2: RoundRobinPin puts one target
     * on each rail, so it reads >= 0.85 x both rails' goodput at once; one rail would cap it at 0.5.
     */
    @Test
    void roundRobinToTwoTargetsUsesBothRails() throws Exception {
        assumeUp();
        Floors.hold("Write RoundRobinPin 1M window 8, 3 nodes", ATTEMPTS, attempt -> oneRailAndBoth("tb-roundrobin-" + attempt,
                new String[] {TB + "-n1", TB + "-n2", TB + "-n3"}, args("WriteBenchmark", "-p", "config=SinglePin,RoundRobinPin",
                        "-p", "size=1M", "-p", "window=8", "-p", "completion=remote"), "WriteBenchmark SinglePin remote",
                "WriteBenchmark RoundRobinPin remote", "Write to 2 targets", "Write 1M window 8, 3 nodes"));
    }

    /**
     * One torchrun job of a config on rail 0 ({@code one}) and one over both rails ({@code both}),
     * then the links: each figure within the NICs it used, and its floors (0.85 x rail 0's goodput
     * alone, 0.85 x both rails' at once).
     */
    private Floors.Measured oneRailAndBoth(String id, String[] nodes, List<String> jmh, String one, String both, String what,
            String table) throws Exception {
        int[] codes = torchrun(id, nodes, Map.of(), jmh);
        String log = logs(id);
        allExitedZero(codes, log);
        Links links = links(RATE_GBPS);
        Map<String, Map<String, Double>> f = figures(results.resolve(id));
        String context = f + "\n" + links + "\n" + log;
        double single = f.get(one).get("gbps");
        double striped = f.get(both).get("gbps");
        withinLinks(one, single, 1, RATE_GBPS, context);
        withinLinks(both, striped, RAILS, RATE_GBPS, context);
        row(table, one.substring(one.indexOf(' ') + 1), 1, single, links.alone()[0], RATE);
        row(table, both.substring(both.indexOf(' ') + 1), RAILS, striped, links.together() / RAILS, RATE);
        return new Floors.Measured(List.of(
                floor(what + " " + one.substring(one.indexOf(' ') + 1), single, 0.85, links.alone()[0], "rail 0's goodput alone"),
                floor(what + " " + both.substring(both.indexOf(' ') + 1), striped, 0.85, links.together(),
                        "both rails' goodput at once")), context);
    }

    /**
     * Slurm across the nodes, one task each: the all-to-all held against each rank's bottleneck, at
     * {@link #A2A_RATE} (see the class comment). Each rank sends (N-1) blocks a round through its own
     * NIC(s) and receives as many; rounds end together, so the all-to-all keeps a rank's NIC busy less
     * of the time than a stream does (0.70-0.80 of it, measured; the README's testing section).
     */
    @Test
    void srunAllToAllAcrossFourNodesHoldsToEachRanksBottleneck() throws Exception {
        assumeUp();
        run(60, "testbed", "rate", A2A_RATE);
        try {
            Floors.hold("AllToAll 512K window 4, 4 nodes (srun)", ATTEMPTS, attempt -> {
                Path log = results.resolve("srun-a2a-" + attempt + ".out");
                Path folder = results.resolve("a2a-" + attempt);
                Files.createDirectories(folder);
                Process p = new Testbed(folder).onNode(TB + "-head", Map.of("MASTER_PORT", Integer.toString(Ranks.freePort())),
                        args("srun", "-N", Integer.toString(NODES), "--ntasks-per-node=1", "bash", Testbed.SCRIPT.toString(),
                                "AllToAllBenchmark", "-p", "config=SinglePin,MultiPin", "-p", "size=512K", "-p", "window=4"), log);
                int code = Ranks.awaitExit(p, log, 400);
                String out = Files.readString(log);
                assertEquals(0, code, out);
                Links links = links(A2A_RATE_GBPS);
                Path run = onlyRun(folder, "slurm-", out);
                Map<Integer, JsonObject> where = localities(run);
                assertEquals(NODES, where.values().stream().map(o -> o.get("host").getAsString()).distinct().count(),
                        "one task on each node: " + where);
                Map<String, Map<String, Double>> f = figures(run);
                String context = f + "\n" + links + "\n" + out;
                double single = f.get("AllToAllBenchmark SinglePin").get("gbps");
                double multi = f.get("AllToAllBenchmark MultiPin").get("gbps");
                withinLinks("AllToAll SinglePin", single, 1, A2A_RATE_GBPS, context);
                withinLinks("AllToAll MultiPin", multi, RAILS, A2A_RATE_GBPS, context);
                withinLinks("AllToAll SinglePin slowest rank", f.get("AllToAllBenchmark SinglePin").get("slowest_rank_gbps"), 1,
                        A2A_RATE_GBPS, context);
                row("AllToAll 512K window 4, 4 nodes (srun)", "SinglePin", 1, single, links.alone()[0], A2A_RATE);
                row("AllToAll 512K window 4, 4 nodes (srun)", "MultiPin", RAILS, multi, links.together() / RAILS, A2A_RATE);
                return new Floors.Measured(List.of(
                        floor("AllToAll SinglePin", single, 0.65, links.alone()[0], "rail 0's goodput alone"),
                        floor("AllToAll MultiPin", multi, 0.65, links.together(), "both rails' goodput at once")), context);
            });
        } finally {
            run(60, "testbed", "rate", RATE);
        }
    }

    /**
     * MoE across the 4 nodes (srun, one task each) at {@link #A2A_RATE}, held against the links: the
     * busiest NIC (its bytes of dispatch plus combine in its busier direction, over the rounds'
     * period) never above its TCP ceiling, exact; uniform routing >= 0.8 of the rail's goodput;
     * a hot rank (half of all deliveries) within 20% of its NIC's bound (>= 1/1.2 of the goodput).
     * Both configs' uniform floor is the issue's 0.8. The rails are {@code testbed tcp lossless}
     * (200 ms queues that send pure ACKs first, CUBIC): on the testbed's 20 ms tail-drop queues
     * each phase's incast drops packets and plain TCP sockets moving the same two-rail phases carry
     * 0.65-0.71 of the links (SinglePin's one rail 0.72-0.81), so no benchmark reaches 0.8 there; on
     * a fabric that queues instead, as EFA's does not drop on incast, the benchmark read 0.92-1.00
     * (docs/perf/journal/moe.md, "A fabric that queues").
     */
    @Test
    void srunMoeAcrossFourNodesHoldsToTheBusiestNic() throws Exception {
        assumeUp();
        run(60, "testbed", "rate", A2A_RATE);
        run(60, "testbed", "tcp", "lossless");
        try {
            for (String config : List.of("SinglePin", "MultiPin")) {
                Floors.hold("MoE " + config + " 64 tokens, 4 nodes (srun)", MOE_ATTEMPTS, attempt -> {
                    Path log = results.resolve("srun-moe-" + config + "-" + attempt + ".out");
                    Path folder = results.resolve("moe-" + config + "-" + attempt);
                    Files.createDirectories(folder);
                    Process p = new Testbed(folder).onNode(TB + "-head", Map.of("MASTER_PORT", Integer.toString(Ranks.freePort())),
                            args("srun", "-N", Integer.toString(NODES), "--ntasks-per-node=1", "bash", Testbed.SCRIPT.toString(),
                                    "MoeBenchmark", "-p", "config=" + config, "-p", "tokens=64", "-p", "dtype=BF16", "-p",
                                    "routing=uniform,hot:0.5"), log);
                    int code = Ranks.awaitExit(p, log, 400);
                    String out = Files.readString(log);
                    assertEquals(0, code, out);
                    Links links = links(A2A_RATE_GBPS);
                    Map<String, Map<String, Double>> f = figures(onlyRun(folder, "slurm-", out));
                    String context = f + "\n" + links + "\n" + out;
                    double perNic = config.equals("SinglePin") ? links.alone()[0] : links.together() / RAILS;
                    String of = config.equals("SinglePin") ? "rail 0's goodput alone" : "a rail's goodput, both at once";
                    List<Floors.Floor> floors = new ArrayList<>();
                    for (String routing : List.of("uniform", "hot:0.5")) {
                        Map<String, Double> m = f.get("MoeBenchmark " + config + " " + routing);
                        assertTrue(m.get("checked_rounds") >= 3, context);
                        double busiest = m.get("busiest_nic_gbps");
                        withinLinks("MoE " + config + " " + routing + " busiest NIC", busiest, 1, A2A_RATE_GBPS, context);
                        row("MoE 64 tokens, 4 nodes (srun)", config + " " + routing + " busiest NIC", 1, busiest, perNic, A2A_RATE);
                        floors.add(routing.equals("uniform") ? floor("MoE " + config + " uniform", busiest, 0.8, perNic, of)
                                : floor("MoE " + config + " hot rank", busiest, 1 / 1.2, perNic, of));
                    }
                    assertTrue(f.get("MoeBenchmark " + config + " hot:0.5").get("imbalance") > 1.8, context);
                    return new Floors.Measured(floors, context);
                });
            }
        } finally {
            run(60, "testbed", "tcp", "default");
            run(60, "testbed", "rate", RATE);
        }
    }

    /**
     * 16 ranks over the 4 nodes (srun, 4 tasks each), MoE's default shape and routings (128 tokens
     * of 7168 values, top-8 of 256 experts; uniform, lognormal:2.0, hot:0.25): they run and verify,
     * the skews land where asked (16 ranks reach lognormal's 2.0; the hot rank a quarter of all
     * deliveries, 4x the mean), and rank 0's set-up time and buffer bytes are in the provenance.
     */
    @Test
    void srunMoeSixteenRanksRunTheDefaults() throws Exception {
        assumeUp();
        Path log = results.resolve("srun-moe16.out");
        Path folder = results.resolve("moe16");
        Files.createDirectories(folder);
        Process p = new Testbed(folder).onNode(TB + "-head", Map.of("MASTER_PORT", Integer.toString(Ranks.freePort())),
                List.of("srun", "-N", Integer.toString(NODES), "--ntasks-per-node=4", "bash", Testbed.SCRIPT.toString(),
                        "MoeBenchmark", "-p", "config=MultiPin", "-p", "dtype=FP8", "-wi", "0", "-i", "1", "-r", "1s", "-f", "1"),
                log);
        int code = Ranks.awaitExit(p, log, 600);
        String out = Files.readString(log);
        assertEquals(0, code, out);
        Path run = onlyRun(folder, "slurm-", out);
        Map<String, Map<String, Double>> f = figures(run);
        for (String routing : List.of("uniform", "lognormal:2.0", "hot:0.25")) {
            Map<String, Double> m = f.get("MoeBenchmark MultiPin " + routing);
            assertTrue(m != null && m.get("checked_rounds") >= 1 && m.get("moe_gbs") > 0, routing + ": " + f + "\n" + out);
        }
        assertTrue(f.get("MoeBenchmark MultiPin uniform").get("imbalance") < 1.4, f.toString());
        assertEquals(2.0, f.get("MoeBenchmark MultiPin lognormal:2.0").get("imbalance"), 0.3, f.toString());
        assertEquals(4.0, f.get("MoeBenchmark MultiPin hot:0.25").get("imbalance"), 0.5, f.toString());
        String provenance = Files.readString(run.resolve("provenance.json"));
        assertTrue(provenance.contains("\"setup_s\"") && provenance.contains("\"buffer_bytes\""), provenance);
        assertEquals(NODES, localities(run).values().stream().map(o -> o.get("host").getAsString()).distinct().count());
    }

    /** MoE with torchrun's variables, one rank on each node: every routing verifies; lognormal:2.0 says it runs at what 4 ranks reach. */
    @Test
    void torchrunMoeAcrossFourNodesVerifiesEveryRouting() throws Exception {
        assumeUp();
        String[] nodes = {TB + "-n1", TB + "-n2", TB + "-n3", TB + "-n4"};
        String id = "tb-moe";
        int[] codes = torchrun(id, nodes, Map.of(), List.of("MoeBenchmark", "-p", "config=RoundRobinPin", "-p", "tokens=32",
                "-p", "routing=uniform,lognormal:2.0,hot:0.5", "-p", "dtype=FP8", "-wi", "0", "-i", "1", "-r", "1s", "-f", "1"));
        String log = logs(id);
        allExitedZero(codes, log);
        Map<String, Map<String, Double>> f = figures(results.resolve(id));
        String rank0 = Files.readString(results.resolve(id + "-rank0.out"));
        for (String routing : List.of("uniform", "lognormal:2.0", "hot:0.5")) {
            Map<String, Double> m = f.get("MoeBenchmark RoundRobinPin " + routing);
            assertTrue(m != null && m.get("checked_rounds") >= 1 && m.get("busiest_nic_gbps") > 0, routing + ": " + f + "\n" + log);
        }
        assertTrue(rank0.contains("lognormal:2.0: 256 experts over 4 ranks reach at most max/mean"), rank0);
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
        allExitedZero(codes, log);
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
        return onlyRun(results, prefix, log);
    }

    private static Path onlyRun(Path results, String prefix, String log) throws IOException {
        try (Stream<Path> s = Files.list(results)) {
            List<Path> runs = s.filter(p -> Files.isDirectory(p) && p.getFileName().toString().startsWith(prefix)).toList();
            assertEquals(1, runs.size(), "one run folder named " + prefix + "*: " + runs + "\n" + log);
            return runs.getFirst();
        }
    }
}

package io.efabench.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;

/**
 * {@code ./run-jmh.sh sweep} on the testbed (4 emulated nodes, 2 rails, 400 Mbit NICs), against
 * the faults it is for: nothing named on a clean fleet (4 runs of 4; {@link BareClusterIT}'s clean
 * fleet is a fifth), a lossy NIC named by its tail, two faults at once (a slow node and another
 * node's slow NIC) each named as what it is, one rail's link down named unreachable on that rail
 * with the other rail measured, a NIC cabled to another rail's switch named unreachable on its
 * rail, a node killed mid-sweep named within the deadline with the rest reported. One NIC at a
 * quarter of the rate alone is {@link BareClusterIT}'s. Each run's findings come from its sweep.json.
 */
@org.junit.jupiter.api.extension.ExtendWith(Testbed.Shared.class)
class SweepIT {
    private static final String TB = Testbed.TB;
    private static final int NODES = Testbed.NODES;
    private static final int TIMEOUT_S = 8;
    private static String skip;

    @TempDir
    Path results;

    @BeforeAll
    static void up() throws Exception {
        skip = Testbed.shared(List.of("ip", "tc", "nsenter", "nft"), "400mbit");
    }

    /** Every NIC back at the rate and up, and no rank left on any node. */
    @AfterEach
    void mend() throws Exception {
        if (skip != null) {
            return;
        }
        Testbed.run(60, "testbed", "rate", "400mbit");
        Testbed.sh(TB + "-n2", "nft delete table inet efbsweeploss 2>/dev/null; true");
        for (int i = 1; i <= NODES; i++) {
            for (int k = 0; k < Testbed.RAILS; k++) { // cabled to its own rail's switch, and up
                ip("-n", TB + "-sw", "link", "set", "n" + i + "r" + k, "master", "rail" + k);
                ip("-n", TB + "-sw", "link", "set", "n" + i + "r" + k, "up");
            }
            assertEquals("", Testbed.processesOn(TB + "-n" + i), "processes left on " + TB + "-n" + i);
        }
    }

    private static void ip(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("ip"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        assertEquals(0, p.waitFor(), "ip " + String.join(" ", args));
    }

    private static void assumeUp() {
        Assumptions.assumeTrue(skip == null, skip);
    }

    /** One sweep's exit status, output and findings. */
    record Sweep(int code, String out, List<JsonObject> findings, JsonObject json, double seconds) {
        String kinds() {
            return findings.stream().map(f -> f.get("kind").getAsString() + " " + (f.has("host") ? f.get("host").getAsString() : "-")
                    + " rail " + f.get("rail").getAsInt()).toList().toString();
        }
    }

    private Sweep sweep(String name, String... extra) throws Exception {
        return sweep(name, null, extra);
    }

    /** The sweep with short timed writes; {@code during}, if given, runs once the first pass is under way. */
    private Sweep sweep(String name, Runnable during, String... extra) throws Exception {
        Path out = results.resolve(name);
        List<String> cmd = new ArrayList<>(List.of("bash", Testbed.SCRIPT.toString(), "sweep", "--seconds", "0.5", "--timeout",
                Integer.toString(TIMEOUT_S), "--out", out.toString()));
        cmd.addAll(List.of(extra));
        Path log = results.resolve(name + ".out");
        long start = System.nanoTime();
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (during != null) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!Files.readString(log).contains("first pass step 2/") && System.nanoTime() < deadline && p.isAlive()) {
                Thread.sleep(200);
            }
            during.run();
        }
        if (!p.waitFor(600, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("sweep still running after 600 s:\n" + Files.readString(log));
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        String text = Files.readString(log);
        JsonObject root = report(out, text);
        return new Sweep(p.exitValue(), text, findings(root), root, seconds);
    }

    /** The sweep.json a sweep wrote to {@code out}; {@code context} says what happened where there is none. */
    static JsonObject report(Path out, String context) throws java.io.IOException {
        Path json = out.resolve("sweep.json");
        assertTrue(Files.exists(json), "no sweep.json:\n" + context);
        return JsonParser.parseString(Files.readString(json)).getAsJsonObject();
    }

    /** A sweep.json's findings, worst first. */
    static List<JsonObject> findings(JsonObject report) {
        List<JsonObject> findings = new ArrayList<>();
        for (JsonElement e : report.getAsJsonArray("findings")) {
            findings.add(e.getAsJsonObject());
        }
        return findings;
    }

    /** The sweep named exactly one thing, {@code kind} on {@code host}'s {@code rail} (-1: all), and exited 1. */
    private static JsonObject onlyFinding(Sweep s, String kind, String host, int rail) {
        assertEquals(1, s.findings().size(), s.kinds() + "\n" + s.out());
        JsonObject f = s.findings().get(0);
        assertEquals(kind, f.get("kind").getAsString(), s.out());
        assertEquals(host, f.get("host").getAsString(), s.out());
        assertEquals(rail, f.get("rail").getAsInt(), s.out());
        assertEquals(1, s.code(), s.out());
        return f;
    }

    /**
     * Four clean sweeps name nothing. Each is also an attempt at the probe's floor: every rail's
     * median Write figure at least 0.95 of that rail's TCP goodput (a plain stream, node 1 to node
     * 2, measured right after the sweep), so the sweep's floors judge links and not a probe that
     * idles them. The floor is asked of one attempt of the four (every attempt printed): a figure
     * falls under it by chance on 2 shared cores, a probe that waits on its link does in each.
     */
    @Test
    void aCleanFleetNamesNothingInFourRunsOfFourAndItsProbeReachesTheRailsGoodput() throws Exception {
        assumeUp();
        List<Double> walls = new ArrayList<>();
        List<String> attempts = new ArrayList<>();
        boolean probeHeld = false;
        for (int run = 1; run <= 4; run++) {
            Sweep s = sweep("clean" + run);
            assertEquals(List.of(), s.findings(), "run " + run + ": " + s.kinds() + "\n" + s.out());
            assertEquals(0, s.code(), s.out());
            assertTrue(s.out().contains("nothing flagged"), s.out());
            JsonArray links = s.json().getAsJsonArray("links");
            assertTrue(links.size() >= 12, "every pair on both rails: " + links);
            walls.add(s.json().get("wall_s").getAsDouble());
            if (!probeHeld) {
                List<Floors.Floor> floors = probeFloors(s);
                String line = "probe attempt " + run + "/4: " + floors;
                System.out.println("floors: " + line);
                attempts.add(line);
                probeHeld = floors.stream().allMatch(Floors.Floor::holds);
            }
        }
        assertTrue(probeHeld, "the probe under 0.95 of a rail's TCP goodput in each of 4 attempts:\n" + String.join("\n", attempts));
        Path heat = results.resolve("clean1").resolve("heatmap-rail1.png");
        assertTrue(Files.size(heat) > 1000, "heatmap " + heat);
        System.out.println("sweep wall times, 4 nodes x 2 rails, tournament, 0.5 s a direction: " + walls + " s");
    }

    /** Each rail's median Write figure in sweep {@code s} against 0.95 x its TCP goodput, node 1 to 2, measured now. */
    private static List<Floors.Floor> probeFloors(Sweep s) throws Exception {
        String text = Testbed.run(120, "testbed", "links", "--seconds", "1");
        double[] goodput = Testbed.railGoodputs(text);
        List<Floors.Floor> floors = new ArrayList<>();
        for (JsonElement e : s.json().getAsJsonArray("rail_medians")) {
            JsonObject r = e.getAsJsonObject();
            int k = r.get("rail").getAsInt();
            assertTrue(goodput[k] > 0, "rail " + k + "'s goodput:\n" + text);
            floors.add(new Floors.Floor("rail " + k + " median", r.get("median_gbps").getAsDouble(), 0.95 * goodput[k],
                    String.format(java.util.Locale.ROOT, "0.95 x rail %d's TCP goodput %.4f", k, goodput[k])));
        }
        assertEquals(Testbed.RAILS, floors.size(), s.json().toString());
        return floors;
    }

    /**
     * 2% of the packets through one NIC dropped both ways (nftables): its Write figures stay within
     * the spread, but every round trip through it waits out tcp's retransmission timeout at its
     * tail; named as that NIC by its p99, on shared CPUs, and nothing else.
     */
    @Test
    void aLossyNicIsNamedByItsTailAlone() throws Exception {
        assumeUp();
        Testbed.sh(TB + "-n2", "nft add table inet efbsweeploss && nft add chain inet efbsweeploss in '{ type filter hook input"
                + " priority 0; policy accept; }' && nft add chain inet efbsweeploss out '{ type filter hook output priority 0;"
                + " policy accept; }' && nft add rule inet efbsweeploss in iifname rail1 numgen random mod 100 '<' 2 counter drop"
                + " && nft add rule inet efbsweeploss out oifname rail1 numgen random mod 100 '<' 2 counter drop");
        Sweep s = sweep("lossy-nic");
        JsonObject f = onlyFinding(s, "NIC", TB + "-n2", 1);
        assertTrue(f.get("why").getAsString().contains("a lossy link"), f.toString());
        System.out.println("lossy NIC: " + f.get("why").getAsString() + "; dropped: "
                + Testbed.sh(TB + "-n2", "nft list table inet efbsweeploss | grep -o 'packets [0-9]*' | tr '\\n' ' '"));
    }

    /**
     * Two faults at once: every NIC of one node and one NIC of another at a quarter of the rate,
     * each named as what it is (the node, the NIC), not their partners. At half the rate (200
     * Mbit) a slow node's pairs read 0.57-0.59 of the rails' reference, at the shared-CPU floor
     * (0.6), and a CI run named two of its pairs instead of the node (2026-12-02): a limit of the
     * floor on shared CPUs, not a test to make faster.
     */
    @Test
    void aSlowNodeAndASlowNicAtOnceAreBothNamedNotTheirPartners() throws Exception {
        assumeUp();
        Testbed.run(60, "testbed", "shape", TB + "-n2", "0", "100mbit");
        Testbed.run(60, "testbed", "shape", TB + "-n2", "1", "100mbit");
        Testbed.run(60, "testbed", "shape", TB + "-n4", "1", "100mbit");
        Sweep s = sweep("slow-node-and-nic");
        List<String> named = s.findings().stream().map(f -> f.get("kind").getAsString() + " " + f.get("host").getAsString()
                + " rail " + f.get("rail").getAsInt()).sorted().toList();
        assertEquals(List.of("NIC " + TB + "-n4 rail 1", "NODE " + TB + "-n2 rail -1"), named, s.out());
        assertEquals(1, s.code(), s.out());
        s.findings().forEach(f -> System.out.println("slow node and NIC: " + f.get("kind").getAsString() + ": "
                + f.get("why").getAsString()));
    }

    /**
     * Node 3's rail-1 NIC cabled to rail 0's switch: on rail 1 it reaches no one (its rail's
     * subnet is not on that switch, and the nodes answer ARP only for a rail's own address), so it
     * is named unreachable on rail 1, and its rail 0 and everyone else are clean.
     */
    @Test
    void aNicCabledToAnotherRailsSwitchIsNamedUnreachableOnItsRail() throws Exception {
        assumeUp();
        ip("-n", TB + "-sw", "link", "set", "n3r1", "master", "rail0");
        Sweep s = sweep("mis-cabled");
        JsonObject f = onlyFinding(s, "NIC", TB + "-n3", 1);
        assertTrue(f.get("why").getAsString().startsWith("unreachable on rail 1"), f.toString());
        System.out.println("mis-cabled NIC: " + f.get("why").getAsString());
    }

    @Test
    void aRailLinkDownIsNamedUnreachableOnThatRailAndTheOtherRailIsMeasured() throws Exception {
        assumeUp();
        ip("-n", TB + "-sw", "link", "set", "n4r0", "down"); // the cable: the switch's end of node 4's rail 0
        Sweep s = sweep("rail-down");
        JsonObject f = onlyFinding(s, "NIC", TB + "-n4", 0);
        assertTrue(f.get("why").getAsString().startsWith("unreachable on rail 0"), f.toString());
        java.util.Set<Integer> rail1 = new java.util.TreeSet<>();
        for (JsonElement e : s.json().getAsJsonArray("links")) {
            JsonObject l = e.getAsJsonObject();
            if (l.get("rail").getAsInt() == 1 && (l.get("a").getAsInt() == 3 || l.get("b").getAsInt() == 3)) {
                assertTrue(!l.has("failure") || l.get("failure").isJsonNull(), "rail 1 of n4 measured: " + l);
                rail1.add(l.get("a").getAsInt() == 3 ? l.get("b").getAsInt() : l.get("a").getAsInt());
            }
        }
        assertEquals(java.util.Set.of(0, 1, 2), rail1, "n4 measured on rail 1 with every partner");
    }

    @Test
    void aNodeKilledMidSweepIsNamedWithinTheDeadlineAndTheRestReported() throws Exception {
        assumeUp();
        long[] killedAt = new long[1];
        Sweep s = sweep("killed", () -> {
            try {
                new ProcessBuilder("sh", "-c", "for p in $(ip netns pids " + TB + "-n3); do grep -q io.efabench.sweep.Sweep"
                        + " /proc/$p/cmdline 2>/dev/null && kill -9 $p; done; true").inheritIO().start().waitFor();
                killedAt[0] = System.nanoTime();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        double after = (System.nanoTime() - killedAt[0]) / 1e9;
        assertTrue(killedAt[0] > 0 && after < 3 * TIMEOUT_S + 10, "ended " + after + " s after the kill\n" + s.out());
        assertEquals(1, s.code(), s.out());
        assertTrue(s.findings().stream().anyMatch(f -> f.get("kind").getAsString().equals("DEAD")
                && f.get("host").getAsString().equals(TB + "-n3")), s.kinds() + "\n" + s.out());
        assertTrue(s.json().getAsJsonArray("links").size() > 0, "what was measured before is reported");
        assertTrue(s.out().contains("ended early"), s.out());
    }
}

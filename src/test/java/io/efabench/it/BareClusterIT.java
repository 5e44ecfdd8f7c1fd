package io.efabench.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.google.gson.JsonObject;

/**
 * {@code ./run-jmh.sh sweep} on a cluster the project did not make ({@code src/test/sh/bare-cluster.sh}:
 * 4 nodes as namespaces with host names that resolve nowhere, two rails on their own subnets with
 * the second subnet's NIC listed first, no management network, no EFABENCH_NICS), started as
 * torchrun starts ranks with {@code MASTER_ADDR} an address: a clean fleet exits 0 with its 2 rails
 * in subnet order and loopback none of them; one NIC at a quarter of the rate is named as that NIC,
 * node and rail, and nothing else is.
 */
class BareClusterIT {
    private static final Path CLUSTER = Path.of("src/test/sh/bare-cluster.sh").toAbsolutePath();
    private static final int NODES = 4;
    private static final String RATE = "400mbit";
    private static String skip;

    @TempDir
    Path results;

    @BeforeAll
    static void up() throws Exception {
        skip = Testbed.skipReason(List.of("ip", "tc", "nsenter", "unshare"));
        if (skip == null) {
            assertEquals(0, cluster(120, "up", Integer.toString(NODES), RATE), "bare-cluster.sh up");
        }
    }

    @AfterAll
    static void down() throws Exception {
        if (skip == null) {
            assertEquals(0, cluster(60, "down"), "bare-cluster.sh down");
            Process p = new ProcessBuilder("ip", "netns", "list").start();
            String left = new String(p.getInputStream().readAllBytes());
            assertFalse(left.contains("efbx-"), "namespaces left: " + left);
        }
    }

    private static int cluster(int seconds, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("bash", CLUSTER.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return -1;
        }
        return p.exitValue();
    }

    /** Rank 0's exit status and output, every rank's log, the findings of its sweep.json. */
    record Sweep(int code, String out, String logs, List<JsonObject> findings, JsonObject json) {
        String kinds() {
            return findings.stream().map(f -> f.get("kind").getAsString() + " " + (f.has("host") ? f.get("host").getAsString() : "-")
                    + " rail " + f.get("rail").getAsInt() + (f.has("nic") ? " " + f.get("nic").getAsString() : "")).toList().toString();
        }
    }

    /** One rank per node, each given only what torchrun gives (and the provider), the sweep's short figures. */
    private Sweep sweep(String name, String... extra) throws Exception {
        Path out = results.resolve(name);
        int port = 20000 + ThreadLocalRandom.current().nextInt(20000);
        List<Process> ranks = new ArrayList<>();
        List<Path> logs = new ArrayList<>();
        for (int r = 0; r < NODES; r++) {
            List<String> cmd = new ArrayList<>(List.of("bash", CLUSTER.toString(), "run", Integer.toString(r), "bash",
                    Testbed.SCRIPT.toString(), "sweep", "--seconds", "0.5", "--timeout", "8", "--out", out.toString()));
            cmd.addAll(List.of(extra));
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
            Map<String, String> env = pb.environment();
            env.keySet().removeIf(k -> k.startsWith("EFABENCH_") || k.startsWith("FI_") || k.startsWith("SLURM_")
                    || k.startsWith("OMPI_"));
            env.putAll(Map.of("RANK", Integer.toString(r), "WORLD_SIZE", Integer.toString(NODES), "LOCAL_RANK", "0",
                    "LOCAL_WORLD_SIZE", "1", "MASTER_ADDR", "198.19.200.10", "MASTER_PORT", Integer.toString(port),
                    "FI_PROVIDER", "tcp",
                    // Four nodes on this machine's cores: busy-polling ranks yield, as oversubscribed ones do.
                    "EFABENCH_YIELD", "1"));
            Path log = results.resolve(name + "-rank" + r + ".log");
            logs.add(log);
            ranks.add(pb.redirectOutput(log.toFile()).start());
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(420);
        for (Process p : ranks) {
            if (!p.waitFor(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                ranks.forEach(x -> {
                    x.descendants().forEach(ProcessHandle::destroyForcibly);
                    x.destroyForcibly();
                });
                break;
            }
        }
        StringBuilder all = new StringBuilder();
        for (int r = 0; r < NODES; r++) {
            all.append("== rank ").append(r).append(" (exit ").append(ranks.get(r).isAlive() ? "none" : ranks.get(r).exitValue())
                    .append(")\n").append(Files.readString(logs.get(r)));
        }
        String text = Files.readString(logs.get(0));
        System.out.println("== bare cluster, " + name + ":\n" + text);
        JsonObject root = SweepIT.report(out, all.toString());
        return new Sweep(ranks.get(0).exitValue(), text, all.toString(), SweepIT.findings(root), root);
    }

    private static void assumeUp() {
        Assumptions.assumeTrue(skip == null, skip);
    }

    @Test
    void aCleanFleetIsTwoRailsInSubnetOrderAndNamesNothing() throws Exception {
        assumeUp();
        // The shared-CPU default, one rail at a time. Both at once on these 2 cores, a fresh clone's
        // CI (49d3d43, 2026-12-02) named a clean pair at 0.54 of its rail's reference in both passes:
        // 8 busy rank-rails taking turns. Rails at once are measured where each node has its own
        // CPUs (the 4 x 4 testbed on 16 CPUs: docs/PERFORMANCE.md, "The sweep's step and plan").
        Sweep s = sweep("clean");
        assertTrue(s.out().contains("sweep: 4 nodes, 2 rails (tcp"), s.logs());
        assertTrue(s.out().contains("1 rail(s) at a time"), s.logs());
        // ens6 (rail 1's subnet) is listed first on every node; lo is on no other node's wire.
        assertTrue(s.out().contains("rail 0 (198.19.200.0/24): bare-node-0 ens7 198.19.200.10, bare-node-1 ens7 198.19.200.11"),
                s.logs());
        assertTrue(s.out().contains("rail 1 (198.19.201.0/24): bare-node-0 ens6 198.19.201.10"), s.logs());
        assertFalse(s.logs().contains("does not resolve"), s.logs());
        assertEquals(List.of(), s.findings(), s.kinds() + "\n" + s.logs());
        assertEquals(0, s.code(), s.logs());
        assertTrue(s.json().getAsJsonArray("links").size() >= 12, "6 pairs on 2 rails, each measured: " + s.logs());
    }

    @Test
    void aNicAtAQuarterOfTheRateIsNamedAsThatNicAlone() throws Exception {
        assumeUp();
        assertEquals(0, cluster(30, "shape", "2", "1", "100mbit"));
        try {
            Sweep s = sweep("slow-nic");
            assertEquals(1, s.findings().size(), s.kinds() + "\n" + s.logs());
            JsonObject f = s.findings().get(0);
            assertEquals("NIC", f.get("kind").getAsString(), s.kinds() + "\n" + s.logs());
            assertEquals("bare-node-2", f.get("host").getAsString(), s.logs());
            assertEquals(1, f.get("rail").getAsInt(), s.logs());
            assertEquals("ens6", f.get("nic").getAsString(), s.logs());
            assertEquals(1, s.code(), s.logs());
        } finally {
            assertEquals(0, cluster(30, "shape", "2", "1", RATE));
        }
    }
}

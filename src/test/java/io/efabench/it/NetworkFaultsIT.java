package io.efabench.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.google.gson.JsonParser;

/**
 * Real network faults on the testbed (nodes 1 and 2 of the shared one, two rails each, 400 Mbit NICs), as a
 * cluster user meets them: a NIC taken down mid-run, a node cut off, random loss on one link
 * (nftables), a rank killed on the remote node, the rendezvous host unreachable at start, a link
 * that flaps within the deadline. Every rank exits within EFABENCH_TIMEOUT_S + 10 s of the fault,
 * its line naming the peer, the peer's node and the NIC and rail that stopped; the trial that
 * finished before the fault stays in jmh.json; nothing is left running on the nodes.
 */
@org.junit.jupiter.api.extension.ExtendWith(Testbed.Shared.class)
class NetworkFaultsIT {
    private static final String TB = Testbed.TB;
    private static final String N1 = TB + "-n1";
    private static final String N2 = TB + "-n2";
    /** The ranks' deadline (EFABENCH_TIMEOUT_S); every rank is gone within it + 10 s of the fault. */
    private static final int TIMEOUT_S = 10;
    /** The flap's: the link is down 6 s, and TCP's retransmission backoff may wait as long again after it. */
    private static final int FLAP_TIMEOUT_S = 20;
    private static String skip;

    @TempDir
    Path results;

    @BeforeAll
    static void up() throws Exception {
        skip = Testbed.shared(List.of("ip", "tc", "nsenter", "nft"), "400mbit");
    }

    /** Whatever a test broke is mended for the next, and it left no process on the nodes. */
    @AfterEach
    void mend() throws Exception {
        if (skip != null) {
            return;
        }
        for (String nic : List.of("rail0", "rail1", "mgmt0")) {
            Testbed.sh(N1, "ip link set " + nic + " up");
            Testbed.sh(N2, "ip link set " + nic + " up");
        }
        Testbed.sh(N2, "nft delete table inet efbloss 2>/dev/null; true");
        assertEquals("", Testbed.processesOn(N1), "processes left on " + N1);
        assertEquals("", Testbed.processesOn(N2), "processes left on " + N2);
    }

    private static void assumeUp() {
        Assumptions.assumeTrue(skip == null, skip);
    }

    /** Two trials: SinglePin finishes before the fault, MultiPin (both rails) meets it. */
    private static List<String> twoTrials() {
        return List.of("WriteBenchmark", "-p", "config=SinglePin,MultiPin", "-p", "size=1M", "-p", "window=8", "-p",
                "completion=remote", "-wi", "1", "-w", "1s", "-i", "20", "-r", "300ms", "-f", "1");
    }

    /** What a run with a fault left: each rank's exit status and seconds from the fault to its exit, its log. */
    private record Outcome(int[] codes, double[] exitAfterFault, String[] logs, String all, int timeoutS) {
        /** The failure lines a rank printed ("efabench: ..."), joined. */
        String lines(int rank) {
            List<String> out = new ArrayList<>();
            for (String l : logs[rank].split("\n")) {
                if (l.strip().startsWith("efabench: ")) {
                    out.add(l.strip());
                }
            }
            return String.join("\n", out);
        }
    }

    /**
     * Starts rank 0 on node 1 and rank 1 on node 2; once rank 0's log shows {@code trigger} and
     * {@code settleMs} passed, runs {@code fault} (shell lines on the host, as root), then waits
     * for both ranks, timing each exit from the fault.
     */
    private Outcome withFault(String id, List<String> jmh, String trigger, long settleMs, String fault) throws Exception {
        return withFault(id, jmh, trigger, settleMs, fault, TIMEOUT_S);
    }

    private Outcome withFault(String id, List<String> jmh, String trigger, long settleMs, String fault, int timeoutS)
            throws Exception {
        Testbed bed = new Testbed(results);
        Testbed.Job job = bed.start(id, new String[] {N1, N2}, timeoutS, Map.of(), jmh);
        Path log0 = job.logs().get(0);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        while (!(Files.exists(log0) && Files.readString(log0).contains(trigger))) {
            assertTrue(System.nanoTime() < deadline, "no '" + trigger + "' in rank 0's log:\n" + bed.logs(id));
            assertTrue(job.processes().get(0).isAlive(), "rank 0 ended before the fault:\n" + bed.logs(id));
            Thread.sleep(100);
        }
        Thread.sleep(settleMs);
        long at = System.nanoTime();
        Process f = new ProcessBuilder("sh", "-c", fault).redirectErrorStream(true).start();
        int[] codes = new int[2];
        double[] after = new double[2];
        boolean[] done = new boolean[2];
        long hardStop = at + TimeUnit.SECONDS.toNanos(timeoutS + 10 + 60);
        while (!(done[0] && done[1]) && System.nanoTime() < hardStop) {
            for (int r = 0; r < 2; r++) {
                if (!done[r] && !job.processes().get(r).isAlive()) {
                    done[r] = true;
                    after[r] = (System.nanoTime() - at) / 1e9;
                    codes[r] = job.processes().get(r).exitValue();
                }
            }
            Thread.sleep(50);
        }
        f.waitFor(30, TimeUnit.SECONDS);
        for (int r = 0; r < 2; r++) {
            if (!done[r]) {
                job.processes().get(r).descendants().forEach(ProcessHandle::destroyForcibly);
                job.processes().get(r).destroyForcibly();
                after[r] = Double.POSITIVE_INFINITY;
                codes[r] = -1;
            }
        }
        String[] logs = {Files.readString(job.logs().get(0)), Files.readString(job.logs().get(1))};
        String all = "fault: " + fault + "\nexits after it (s): " + java.util.Arrays.toString(after) + "\n"
                + new String(f.getInputStream().readAllBytes()) + bed.logs(id);
        System.out.printf(Locale.ROOT, "fault %s: ranks exited %s s after it, status %s%n", id,
                java.util.Arrays.toString(after), java.util.Arrays.toString(codes));
        return new Outcome(codes, after, logs, all, timeoutS);
    }

    /** Both ranks failed (non-zero), each within the bar. */
    private static void allFailedInTime(Outcome o) {
        assertNotEquals(0, o.codes[0], o.all);
        assertNotEquals(0, o.codes[1], o.all);
        allExitedInTime(o);
    }

    private static void allExitedInTime(Outcome o) {
        for (int r = 0; r < 2; r++) {
            assertTrue(o.exitAfterFault[r] <= o.timeoutS + 10, String.format(Locale.ROOT,
                    "rank %d exited %.1f s after the fault; the bar is EFABENCH_TIMEOUT_S + 10 = %d s%n%s", r,
                    o.exitAfterFault[r], o.timeoutS + 10, o.all));
        }
    }

    /** Rank {@code r}'s failure lines say every one of {@code parts}. */
    private static void says(Outcome o, int r, String why, String... parts) {
        String lines = o.lines(r);
        for (String part : parts) {
            assertTrue(lines.contains(part), "rank " + r + "'s line " + why + " (no '" + part + "'):\n" + o.all);
        }
    }

    /** The SinglePin trial, finished before the fault, is in the run's jmh.json. */
    private void finishedTrialKept(String id, String context) throws Exception {
        trialsKept(id, "[SinglePin]", context);
    }

    private void trialsKept(String id, String expected, String context) throws Exception {
        Path json = results.resolve(id).resolve("jmh.json");
        assertTrue(Files.exists(json), "no jmh.json\n" + context);
        String configs = JsonParser.parseString(Files.readString(json)).getAsJsonArray().asList().stream()
                .map(e -> e.getAsJsonObject().getAsJsonObject("params").get("config").getAsString()).toList().toString();
        assertEquals(expected, configs, "the trials finished in jmh.json\n" + context);
    }

    /** The MultiPin trial has started its iterations on rank 0. */
    private static final String MULTI_RUNNING = "config = MultiPin";

    @Test
    void aNicDownMidRunIsNamedByEveryRank() throws Exception {
        assumeUp();
        String id = "fault-nic-down";
        Outcome o = withFault(id, twoTrials(), MULTI_RUNNING, 6000, "ip -n " + N2 + " link set rail1 down");
        allFailedInTime(o);
        // Each rank's line: the peer, the peer's node, and the NIC and rail that stopped.
        says(o, 0, "names rank 1, its node, the NIC and the rail", "rank 1 (node " + N2 + ")", "NIC rail1", "rail 1");
        says(o, 1, "names rank 0's node and its own NIC on rail 1", N1, "NIC rail1 on " + N2, "rail 1");
        assertTrue((o.lines(0) + o.lines(1)).contains("NIC rail1 on " + N2 + " is down"), "the NIC that went down, by name:\n"
                + o.all);
        finishedTrialKept(id, o.all);
    }

    @Test
    void aNodeCutOffIsNamedWithEveryRail() throws Exception {
        assumeUp();
        String id = "fault-node-cut";
        Outcome o = withFault(id, twoTrials(), MULTI_RUNNING, 6000,
                "for n in rail0 rail1 mgmt0; do ip -n " + N2 + " link set $n down; done");
        allFailedInTime(o);
        // Rank 0 names the channels it has work on (one or both, by where in a round the cut
        // fell): seen from node 1 only those are known; node 2's rank names both NICs down.
        says(o, 0, "names rank 1 on its node", "rank 1 (node " + N2 + ")");
        assertTrue(Pattern.compile("NIC rail[01] on " + N2).matcher(o.lines(0)).find(),
                "rank 0's line names a NIC on " + N2 + " it waits on:\n" + o.all);
        says(o, 1, "names its NICs that are down", "NIC rail0 on " + N2 + " is down", "NIC rail1 on " + N2 + " is down");
        finishedTrialKept(id, o.all);
    }

    @Test
    void aLinkThatFlapsWithinTheDeadlineRecoversAndSaysSo() throws Exception {
        assumeUp();
        String id = "fault-flap";
        Outcome o = withFault(id, twoTrials(), MULTI_RUNNING, 6000,
                "ip -n " + N2 + " link set rail1 down; sleep 6; ip -n " + N2 + " link set rail1 up", FLAP_TIMEOUT_S);
        if (o.codes[0] == 0 && o.codes[1] == 0) {
            Matcher m = Pattern.compile("resumed after ([0-9.]+) s .*during it: .*rail1").matcher(o.logs[0] + o.logs[1]);
            assertTrue(m.find(), "a recovered stall is said, naming rail1:\n" + o.all);
            trialsKept(id, "[SinglePin, MultiPin]", o.all);
        } else {
            // Failed after the link came back (TCP's backoff outlasting the deadline): the lines name
            // the NIC but not as down. A link that never came back reads "is down" and fails here.
            allExitedInTime(o);
            assertTrue(o.lines(0).contains("NIC rail1") && o.lines(1).contains("NIC rail1"), "a failed flap names the NIC:\n"
                    + o.all);
            assertFalse((o.lines(0) + o.lines(1)).contains("is down"), "the flap's link was up again at the deadline:\n"
                    + o.all);
        }
    }

    @Test
    void aLossyLinkCompletesVerifiedOrSaysWhy() throws Exception {
        assumeUp();
        String id = "fault-loss";
        // 3% of what node 2's rail 1 receives dropped, counted.
        Testbed.sh(N2, "nft add table inet efbloss && nft add chain inet efbloss in '{ type filter hook input priority 0;"
                + " policy accept; }' && nft add rule inet efbloss in iifname rail1 numgen random mod 100 '<' 3 counter drop");
        Outcome o = withFault(id, List.of("WriteBenchmark", "-p", "config=MultiPin", "-p", "size=1M", "-p", "window=8", "-wi",
                "1", "-w", "1s", "-i", "3", "-r", "1s", "-f", "1"), "config = MultiPin", 0, "true");
        String dropped = Testbed.sh(N2, "nft list table inet efbloss");
        Matcher m = Pattern.compile("counter packets (\\d+)").matcher(dropped);
        assertTrue(m.find() && Long.parseLong(m.group(1)) > 0, "the rule dropped nothing:\n" + dropped);
        if (o.codes[0] == 0) {
            assertEquals(0, o.codes[1], "rank 0 finished the lossy run and rank 1 did not:\n" + o.all);
            Map<String, Map<String, Double>> f = Testbed.figures(results.resolve(id));
            Map<String, Double> multi = f.values().iterator().next();
            assertTrue(multi.get("checked_rounds") > 0, "verified rounds: " + f + "\n" + o.all);
            assertTrue(multi.get("gbps") <= 2 * 0.4, "no figure above the links: " + f);
            System.out.println("lossy link (3% on one of two rails, " + m.group(1) + " packets dropped): " + multi);
        } else {
            // Each rank exited (a rank still running is -1, which a sum of the codes could cancel).
            allExitedInTime(o);
            assertTrue(o.lines(0).matches("(?s).*(corrupt|verif|check).*"), "a lossy run that fails says why:\n" + o.all);
        }
    }

    @Test
    void aRankKilledOnTheOtherNodeIsNamed() throws Exception {
        assumeUp();
        String id = "fault-kill";
        Outcome o = withFault(id, twoTrials(), MULTI_RUNNING, 4000, "for p in $(ip netns pids " + N2
                + "); do grep -q ForkedMain /proc/$p/cmdline 2>/dev/null && kill -9 $p; done");
        allFailedInTime(o);
        assertTrue(o.lines(0).contains("rank 1 (host " + N2), "rank 0 names rank 1 and its node:\n" + o.all);
        finishedTrialKept(id, o.all);
    }

    @Test
    void anUnreachableRendezvousFailsInOneLine() throws Exception {
        assumeUp();
        String id = "fault-rendezvous";
        Testbed.sh(N1, "ip link set mgmt0 down");
        // The fault is in place before the ranks start: time their exits from their start.
        Outcome o = withFault(id, List.of("WriteBenchmark", "-p", "config=SinglePin", "-p", "size=64K", "-wi", "1", "-w", "1s",
                "-i", "1", "-r", "1s", "-f", "1"), "run-jmh: rank 0", 0, "true");
        allFailedInTime(o);
        assertTrue(o.lines(1).contains("could not reach rank 0 at " + N1) && o.lines(1).contains("through NIC mgmt0"),
                "rank 1 names the rendezvous host and the NIC its route leaves by:\n" + o.all);
        assertTrue(o.lines(0).contains("ranks [1] did not join"), "rank 0 names the rank that never came:\n" + o.all);
    }
}

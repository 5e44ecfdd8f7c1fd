package io.efabench.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The checks of the checked round can fail: each test injects one fault through a test hook
 * (an environment variable read once at setup) into a real 3-rank run over shm and expects every
 * rank to exit non-zero with the one line naming what went wrong. Each would pass silently, and so
 * fail here, if its check were removed (see the report of the change that added them).
 */
class ChecksIT {

    @TempDir
    Path tmp;

    private static List<String> write(String config) {
        return Ranks.quick("WriteBenchmark", "-p", "size=64K", "-p", "channels=2", "-p", "completion=local",
                "-p", "window=64", "-p", "config=" + config);
    }

    /** Data meant for target 1 lands on target 2 and the other way round: the pattern names the receiver. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"SinglePin", "MultiPin", "RoundRobinPin"})
    void wrongTargetDeliveryFails(String config) throws Exception {
        Ranks r = Ranks.start(tmp, 3, "shm", write(config), (rank, cmd, env) -> {
            if (rank == 0) {
                env.put("EFABENCH_TEST_SWAP_TARGETS", "1");
            }
        });
        // The first word differs; its lowest byte has bit 0 set in every pattern, so 1 in 128 times it
        // matches and the first bad byte is 1, 2 or 3 (CI saw offset 1 once).
        assertAllFail(r, "rank [12]: corrupted byte at offset [0-3] of round \\d+ from rank 0");
    }

    /**
     * Small writes go out with fi_inject_writedata (no local completion): they still land at the
     * right target, verified (a clean run), and a swapped target is still caught.
     */
    @Test
    void injectedWritesVerifyAndAWrongTargetIsCaught() throws Exception {
        List<String> small = Ranks.quickInProcess("WriteBenchmark", "-p", "size=64,4K", "-p", "channels=1", "-p", "completion=local,remote",
                "-p", "window=64", "-p", "config=SinglePin,RoundRobinPin");
        com.google.gson.JsonArray clean = Ranks.start(tmp.resolve("clean"), 3, "shm", small, null).awaitClean(240);
        for (var e : clean) {
            var s = e.getAsJsonObject().getAsJsonObject("secondaryMetrics");
            assertTrue(s.getAsJsonObject("checked_rounds").get("score").getAsDouble() >= 1, e.toString());
        }
        Ranks r = Ranks.start(tmp.resolve("swapped"), 3, "shm", Ranks.quick("WriteBenchmark", "-p", "size=4K",
                "-p", "completion=local", "-p", "config=SinglePin"), (rank, cmd, env) -> {
                    if (rank == 0) {
                        env.put("EFABENCH_TEST_SWAP_TARGETS", "1");
                    }
                });
        assertAllFail(r, "rank [12]: corrupted byte at offset [0-3] of round \\d+ from rank 0");
    }

    /**
     * Targets skip the clear and the checked writes land only their first 64 bytes: the rest is stale data
     * from earlier rounds, and the check against this round's pattern must see it.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"SinglePin", "MultiPin", "RoundRobinPin"})
    void staleDataAfterASkippedClearFails(String config) throws Exception {
        Ranks r = Ranks.start(tmp, 3, "shm", write(config), (rank, cmd, env) -> env.put("EFABENCH_TEST_SKIP_CLEAR", "1"));
        assertAllFail(r, "rank [12]: corrupted byte at offset \\d+ of round \\d+ from rank 0");
    }

    /** The leader never posts one write of the checked round to rank 2: rank 2's deadline names rank, peer and round. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"SinglePin", "MultiPin", "RoundRobinPin"})
    void aDroppedWriteFailsAtTheDeadlineNamingRankPeerAndRound(String config) throws Exception {
        Ranks r = Ranks.start(tmp, 3, "shm", write(config), (rank, cmd, env) -> {
            env.put("EFABENCH_TIMEOUT_S", "5");
            if (rank == 0) {
                env.put("EFABENCH_TEST_DROP_WRITE", "2");
            }
        });
        assertAllFail(r, "rank 2: waiting for the writes of the checked round \\(round \\d+\\) with rank 0 \\(node [^)]+\\) did not"
                + " complete within 5 s \\(EFABENCH_TIMEOUT_S\\); \\d+ of the \\d+ planned writes arrived");
    }

    /**
     * A provider error written to rank 2's event queue (as efa writes its internal errors, instead of
     * abort()) shows in rank 2's one-line failure when the write it waits for never comes.
     */
    @Test
    void aProviderErrorOnTheEventQueueIsNamedInTheFailure() throws Exception {
        Ranks r = Ranks.start(tmp, 3, "shm", write("SinglePin"), (rank, cmd, env) -> {
            env.put("EFABENCH_TIMEOUT_S", "5");
            if (rank == 0) {
                env.put("EFABENCH_TEST_DROP_WRITE", "2");
            }
            if (rank == 2) {
                env.put("EFABENCH_TEST_EQ_ERROR", "1");
            }
        });
        assertAllFail(r, "rank 2: waiting for the writes of the checked round \\(round \\d+\\) with rank 0 \\(node [^)]+\\) did not"
                + " complete within 5 s .*; provider error on shm \\S+ \\(event queue\\): Input/output error \\(prov_errno 4102\\)");
    }

    /**
     * The checked pass runs pipelined, as timed rounds do: a write misdirected to the next slot, or
     * an immediate delivered with only 64 bytes of its payload, only while another write of the
     * same rank is in flight, fails naming rank, peer, round and slot. With one write in flight at a
     * time the fault's condition never holds and the run passes: a checked pass drained after every
     * write would pass at window 64 too.
     */
    @ParameterizedTest(name = "{0} {1}")
    @org.junit.jupiter.params.provider.CsvSource({"WriteBenchmark, misdirect", "WriteBenchmark, short",
        "AllToAllBenchmark, misdirect", "AllToAllBenchmark, short"})
    void aFaultOnlyWhileWritesAreInFlightFailsNamingRankPeerRoundAndSlot(String benchmark, String fault) throws Exception {
        boolean write = benchmark.startsWith("Write");
        List<String> deep = Ranks.quick(benchmark, "-p", "size=64K", "-p", "config=SinglePin", "-p",
                "window=" + (write ? 64 : 8));
        Ranks r = Ranks.start(tmp.resolve("deep"), 3, "shm", deep,
                (rank, cmd, env) -> env.put("EFABENCH_TEST_PIPELINE_FAULT", fault));
        assertAllFail(r, write ? "rank [12]: corrupted byte at offset \\d+ of round \\d+ from rank 0: .*\\(slot \\d+ of 64,"
                : "rank [01]: corrupted byte at offset \\d+ of round \\d+ from rank 2: .*block of rank 2, slot \\d+ of 8\\)");
        // One write in flight at a time: Write's targets in turn at window 1; all-to-all of two ranks at
        // window 1 (with three, a round's writes to both peers are in flight together).
        List<String> one = Ranks.quick(benchmark, "-p", "size=64K", "-p", "config=SinglePin", "-p", "window=1");
        Ranks.start(tmp.resolve("one"), write ? 3 : 2, "shm", one,
                (rank, cmd, env) -> env.put("EFABENCH_TEST_PIPELINE_FAULT", fault)).awaitClean(240);
    }

    /** Rank 2 flips one byte of its checked pong: the leader's check of the pong catches it. */
    @Test
    void aCorruptedPongFails() throws Exception {
        Ranks r = Ranks.start(tmp, 3, "shm", Ranks.quick("SendRecvBenchmark", "-p", "size=4K", "-p", "config=SingleHost"),
                (rank, cmd, env) -> {
                    if (rank == 2) {
                        env.put("EFABENCH_CORRUPT_OFFSET", "777");
                    }
                });
        assertAllFail(r, "rank 0: corrupted byte at offset 777 of round \\d+ from rank 2");
    }

    /**
     * nic_bytes_ratio reaches rank 0's results when its NICs have byte counters: a fixture sysfs
     * tree (EFABENCH_TEST_SYSFS_ROOT) gives every tcp NIC EFA-style counters that do not move, so
     * the ratio is 0; without counters the metric is absent. Fails if FabricTrial stops reading the
     * counters around an iteration or stops publishing the ratio.
     */
    @Test
    void nicBytesRatioIsReportedWhenTheNicsHaveCounters() throws Exception {
        Path sysfs = tmp.resolve("sysfs");
        try (io.efabench.fabric.Discovery d = io.efabench.fabric.Discovery.discover(false, "tcp")) {
            for (io.efabench.fabric.NicInfo nic : d.nics()) {
                Path port = sysfs.resolve("class/infiniband").resolve(nic.domainName()).resolve("ports/1/hw_counters");
                java.nio.file.Files.createDirectories(port);
                java.nio.file.Files.writeString(port.resolve("tx_bytes"), "1000\n");
                java.nio.file.Files.writeString(port.resolve("rx_bytes"), "2000\n");
            }
        }
        List<String> args = Ranks.quick("WriteBenchmark", "-p", "size=64K", "-p", "config=SinglePin", "-p", "completion=local");
        com.google.gson.JsonObject with = Ranks.start(tmp.resolve("with"), 2, "tcp", args,
                (rank, cmd, env) -> env.put("EFABENCH_TEST_SYSFS_ROOT", sysfs.toString())).awaitClean(180)
                .get(0).getAsJsonObject().getAsJsonObject("secondaryMetrics");
        assertTrue(with.has("nic_bytes_ratio"), "no nic_bytes_ratio with counters: " + with);
        double ratio = with.getAsJsonObject("nic_bytes_ratio").get("score").getAsDouble();
        assertTrue(ratio == 0.0, "fixture counters do not move, so the ratio is 0, not " + ratio);
        com.google.gson.JsonObject without = Ranks.start(tmp.resolve("without"), 2, "tcp", args, null).awaitClean(180)
                .get(0).getAsJsonObject().getAsJsonObject("secondaryMetrics");
        assertTrue(!without.has("nic_bytes_ratio"), "nic_bytes_ratio without counters: " + without);
    }

    private static void assertAllFail(Ranks r, String regex) throws Exception {
        r.assertAllFail(regex);
    }

}

package io.efabench.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;

/**
 * ReadBenchmark in real multi-process runs: every layout reads and verifies what it read, over
 * shm and tcp (whose targets serve reads only in their progress), and the leader's check of the
 * bytes it read catches a corrupted source and, with reads in flight, a read from the wrong slot
 * or a short one.
 */
class ReadIT {

    @TempDir
    Path tmp;

    @Test
    void everyLayoutReadsAndVerifiesOverShmAndTcp() throws Exception {
        List<String> shm = Ranks.quickInProcess("ReadBenchmark", "-p", "size=64K", "-p", "channels=2", "-p", "window=1,8",
                "-p", "config=SinglePin,MultiPin,RoundRobinPin");
        assertVerified(Ranks.start(tmp.resolve("shm"), 3, "shm", shm, null).awaitClean(300), 6);
        List<String> tcp = Ranks.quick("ReadBenchmark", "-p", "size=1M", "-p", "window=4", "-p", "config=SinglePin");
        assertVerified(Ranks.start(tmp.resolve("tcp"), 2, "tcp", tcp, null).awaitClean(180), 1);
    }

    private static void assertVerified(JsonArray results, int trials) {
        assertTrue(results.size() == trials, trials + " trials expected: " + results);
        for (var e : results) {
            JsonObject s = e.getAsJsonObject().getAsJsonObject("secondaryMetrics");
            assertTrue(s.getAsJsonObject("checked_rounds").get("score").getAsDouble() >= 1, e.toString());
            assertTrue(s.getAsJsonObject("gbps").get("score").getAsDouble() > 0, e.toString());
            boolean window1 = e.getAsJsonObject().getAsJsonObject("params").get("window").getAsString().equals("1");
            assertTrue(s.has("lat_us") == window1, "lat_us only where an invocation is one round: " + e);
        }
    }

    /** Rank 2 flips one byte of the slot the checked pass reads first: rank 0's check of what it read names it. */
    @Test
    void aCorruptedSourceFailsNamingReaderPeerAndSlot() throws Exception {
        Ranks r = Ranks.start(tmp, 3, "shm", Ranks.quick("ReadBenchmark", "-p", "size=4K", "-p", "window=4",
                "-p", "config=RoundRobinPin"), (rank, cmd, env) -> {
                    if (rank == 2) {
                        env.put("EFABENCH_CORRUPT_OFFSET", "777");
                    }
                });
        r.assertAllFail("rank 0: corrupted byte at offset 777 of round \\d+ from rank 2: .*\\(read from rank 2, slot \\d+ of 4,");
    }

    /**
     * The checked pass reads pipelined, as timed rounds do: a read from the next slot, or one that
     * brings only 64 bytes, while another read is in flight fails naming the peer, round and slot.
     * One read in flight at a time (window 1, targets in turn) never meets the fault's condition.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"misdirect", "short"})
    void aFaultOnlyWhileReadsAreInFlightFailsNamingPeerRoundAndSlot(String fault) throws Exception {
        List<String> deep = Ranks.quick("ReadBenchmark", "-p", "size=64K", "-p", "config=SinglePin", "-p", "window=8");
        Ranks r = Ranks.start(tmp.resolve("deep"), 3, "shm", deep,
                (rank, cmd, env) -> env.put("EFABENCH_TEST_PIPELINE_FAULT", fault));
        r.assertAllFail("rank 0: corrupted byte at offset \\d+ of round \\d+ from rank [12]: .*\\(read from rank [12], slot \\d+ of 8,");
        List<String> one = Ranks.quick("ReadBenchmark", "-p", "size=64K", "-p", "config=SinglePin", "-p", "window=1");
        Ranks.start(tmp.resolve("one"), 3, "shm", one,
                (rank, cmd, env) -> env.put("EFABENCH_TEST_PIPELINE_FAULT", fault)).awaitClean(240);
    }
}

package io.efabench.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;


/**
 * The proxy experiment for real: ranks sharing this machine's GPU over shm (a libfabric built
 * with CUDA), the producer kernel pushing into the ring in pinned host memory and the Java proxy
 * posting the writes; every iteration ends in a checked round verified on the GPU. Skipped, with
 * the reason, where there is no GPU or no FI_HMEM (CI runs FailuresIT's one-line failures instead).
 */
class ProxyIT {

    @TempDir
    Path tmp;

    @BeforeAll
    static void needsAGpuAndHmem() {
        Ranks.assumeGpuWithHmem("the proxy experiment");
    }

    @ParameterizedTest(name = "{0} ranks sharing one GPU over shm")
    @ValueSource(ints = {2, 3})
    void everyConfigRunsAndVerifies(int ranks) throws Exception {
        Path dir = tmp.resolve("proxy" + ranks);
        Ranks r = Ranks.start(dir, ranks, "shm", Ranks.quick("ProxyBenchmark", "-p", "size=64K,1M", "-p", "channels=2",
                "-p", "requests=1,7", "-p", "grid=1,4"), null);
        r.awaitClean(600);
        List<JsonElement> results = JsonParser.parseString(Files.readString(dir.resolve("rank0.json"))).getAsJsonArray().asList();
        assertEquals(4 * 2 * 2 * 2, results.size(), "4 configs x 2 sizes x 2 request counts x 2 grids");
        for (JsonElement e : results) {
            JsonObject s = e.getAsJsonObject().getAsJsonObject("secondaryMetrics");
            assertTrue(s.getAsJsonObject("checked_rounds").get("score").getAsDouble() >= 1, e.toString());
            assertTrue(s.getAsJsonObject("gbps").get("score").getAsDouble() > 0, e.toString());
        }
    }

    /** The Direct twins (the proxy thread makes the requests) run the same launches and verify. */
    @Test
    void theDirectTwinsRunAndVerify() throws Exception {
        Path dir = tmp.resolve("direct");
        Ranks r = Ranks.start(dir, 2, "shm", Ranks.quick("ProxyBenchmark", "-p",
                "config=DirectSingle,DirectMulti,DirectSingleNBI,DirectMultiNBI", "-p", "size=64K,1M", "-p", "channels=2",
                "-p", "requests=1,7", "-p", "rounds=4", "-p", "slots=2"), null);
        r.awaitClean(600);
        List<JsonElement> results = JsonParser.parseString(Files.readString(dir.resolve("rank0.json"))).getAsJsonArray().asList();
        assertEquals(4 * 2 * 2, results.size());
        for (JsonElement e : results) {
            JsonObject s = e.getAsJsonObject().getAsJsonObject("secondaryMetrics");
            assertTrue(s.getAsJsonObject("checked_rounds").get("score").getAsDouble() >= 1, e.toString());
        }
    }

    /** The kernel fills inside the timed round with -p fill=true, and the checked round still verifies. */
    @Test
    void fillInsideTheRoundVerifies() throws Exception {
        Ranks r = Ranks.start(tmp, 2, "shm", Ranks.quick("ProxyBenchmark", "-p", "size=1M", "-p", "channels=2",
                "-p", "fill=true", "-p", "grid=8"), null);
        r.awaitClean(300);
    }

    @ParameterizedTest(name = "wrong {0}")
    @CsvSource({"target, 'targets rank 2, which is no peer of rank 0'", "bytes, '-byte source or the'",
        "op, 'has op 7, neither put'"})
    void aWrongRequestFieldIsCaughtByTheProxy(String field, String expected) throws Exception {
        Ranks r = Ranks.start(tmp, 2, "shm", Ranks.quick("ProxyBenchmark", "-p", "size=64K", "-p", "config=ProxySingleNBI"),
                (rank, cmd, env) -> env.put("EFABENCH_TEST_PROXY_FIELD", field));
        String logs = r.awaitAllFailed(300);
        assertTrue(logs.contains("rank 0's proxy: request ") && logs.contains(expected), logs);
    }

    /**
     * Check what you time: the checked round is launched as the timed ones, so a write of it that
     * the proxy misdirects, or posts with its immediate but only 64 bytes of payload, only while
     * another write is in flight, fails the trial naming rank, peer, round and slot. NBI with 8
     * requests has them in flight together; blocking (quiet after every push) has one at a time,
     * so the same hook never fires and the trial passes.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"misdirect", "short"})
    void aFaultOnlyWhileWritesAreInFlightFailsNamingRankPeerRoundAndSlot(String fault) throws Exception {
        Ranks deep = Ranks.start(tmp.resolve("nbi"), 2, "shm", Ranks.quick("ProxyBenchmark", "-p", "size=64K", "-p",
                "requests=8", "-p", "config=ProxySingleNBI"), (rank, cmd, env) -> env.put("EFABENCH_TEST_PIPELINE_FAULT", fault));
        String logs = deep.awaitAllFailed(300);
        assertTrue(java.util.regex.Pattern.compile("rank 1: corrupted byte at offset \\d+ of round \\d+ from rank 0: .*\\(slot \\d+ of \\d+,")
                .matcher(logs).find(), logs);
        Ranks.start(tmp.resolve("blocking"), 2, "shm", Ranks.quick("ProxyBenchmark", "-p", "size=64K", "-p", "requests=8",
                "-p", "config=ProxySingle"), (rank, cmd, env) -> env.put("EFABENCH_TEST_PIPELINE_FAULT", fault)).awaitClean(300);
    }

    /**
     * A 64-cell ring under 4 x 256 producer threads: 2^20 requests wrap it 16384 times, and
     * nearly every producer waits on a full ring (back-pressure); every request gets through.
     */
    @Test
    void theQueueWrapsAndHoldsProducersBackWhenFull() throws Exception {
        Path dir = tmp.resolve("queue");
        Ranks r = Ranks.start(dir, 1, "shm", Ranks.quick("ProxyQueueBenchmark", "-p", "capacity=64,4096"), null);
        r.awaitClean(300);
        List<JsonElement> results = JsonParser.parseString(Files.readString(dir.resolve("rank0.json"))).getAsJsonArray().asList();
        assertEquals(3 * 2, results.size(), "flood, roundTrip and doorbell x 2 capacities");
        for (JsonElement e : results) {
            assertTrue(e.getAsJsonObject().getAsJsonObject("primaryMetric").get("score").getAsDouble() > 0, e.toString());
        }
        assertTrue(r.log(0).contains("GPU-side push -> completed round trip"), r.log(0));
    }
}

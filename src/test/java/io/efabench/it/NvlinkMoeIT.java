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
import org.junit.jupiter.params.provider.ValueSource;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;

/**
 * MoeBenchmark's NVLink paths (issue 55, the MoE benchmark's in-node part): dispatch and combine
 * between the GPUs of one node as kernel stores (path=nvlink) or copy-engine copies (nvlink-ce)
 * into the peers' buffers over CUDA IPC. Where fewer GPUs are visible than ranks, ranks share a
 * GPU (IPC within one device), so the path stays tested on a one-GPU machine. Every iteration ends
 * in a checked round through the same launches; a corrupted token and a killed peer are named.
 * Skipped, with the reason, without a GPU or a libfabric whose shm offers FI_HMEM (the trial's
 * fabric carries none of these rounds, but it opens on the device memory).
 */
class NvlinkMoeIT {

    @TempDir
    Path tmp;

    @BeforeAll
    static void needsAGpuAndHmem() {
        Ranks.assumeGpuWithHmem("MoE over NVLink");
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {2, 4})
    void everyRoutingRunsAndVerifiesOnBothMovers(int ranks) throws Exception {
        Path dir = tmp.resolve("run" + ranks);
        Ranks r = Ranks.start(dir, ranks, "shm", Ranks.quick("MoeBenchmark", "-p", "config=SingleDMA",
                "-p", "path=nvlink,nvlink-ce,nvlink-ce-memops", "-p", "tokens=64", "-p", "dtype=FP8", "-p", "ctas=8",
                "-p", "routing=uniform,lognormal:2.0,hot:0.5"), null);
        Integer[] codes = r.await(600);
        for (int k = 0; k < ranks; k++) {
            assertEquals(0, codes[k], "rank " + k + " failed:\n" + r.allLogs());
        }
        assertTrue(r.log(0).contains("MoE over NVLink (nvlink): SM stores"), r.log(0));
        assertTrue(r.log(0).contains("MoE over NVLink (nvlink-ce): copy engines"), r.log(0));
        List<JsonElement> results = JsonParser.parseString(Files.readString(dir.resolve("rank0.json"))).getAsJsonArray().asList();
        assertTrue(r.log(0).contains("MoE over NVLink (nvlink-ce-memops): copy engines"), r.log(0));
        assertEquals(3 * 3, results.size(), "3 paths x 3 routings");
        for (JsonElement e : results) {
            JsonObject s = e.getAsJsonObject().getAsJsonObject("secondaryMetrics");
            assertTrue(s.getAsJsonObject("checked_rounds").get("score").getAsDouble() >= 1, e.toString());
            assertTrue(s.getAsJsonObject("moe_gbs").get("score").getAsDouble() > 0, e.toString());
            assertTrue(s.getAsJsonObject("moe_dispatch_us").get("score").getAsDouble() > 0, e.toString());
            assertTrue(s.has("slowest_rank_p99_us") && s.has("imbalance"), e.toString());
        }
    }

    /** Rank 3 flips byte 20000 of the first token segment it dispatches: the receiver names token, expert and byte. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"nvlink", "nvlink-ce", "nvlink-ce-memops"})
    void aCorruptedTokenIsNamed(String path) throws Exception {
        Ranks r = Ranks.start(tmp, 4, "shm", Ranks.quick("MoeBenchmark", "-p", "config=SingleDMA", "-p", "path=" + path,
                "-p", "tokens=16", "-p", "dtype=BF16", "-p", "routing=uniform", "-p", "ctas=8"),
                (rank, cmd, env) -> env.put("EFABENCH_CORRUPT_OFFSET", "20000"));
        String logs = r.awaitAllFailed(300);
        assertTrue(logs.matches("(?s).*rank [0-2]: MoE dispatch of round \\d+: token \\d+ of rank 3 \\(for expert \\d+ on rank [0-2]\\)"
                + " corrupted at byte 5664 of its 14336: .*device memory.*"), logs);
    }

    /** A rank killed mid-run: the other ranks' kernels stop waiting for it and every rank exits naming it. */
    @Test
    void aKilledPeerIsNamed() throws Exception {
        Ranks r = Ranks.start(tmp, 3, "shm", List.of("MoeBenchmark", "-p", "config=SingleDMA", "-p", "path=nvlink",
                "-p", "tokens=128", "-p", "dtype=BF16", "-p", "routing=uniform", "-f", "1", "-wi", "0", "-i", "200",
                "-r", "1s", "-foe", "true"), null);
        try {
            Ranks.waitFor(r.logs.get(0), "Iteration   2:", 180);
            r.killAndExpectNamed(1, 60);
        } finally {
            r.killAll();
        }
    }
}

package io.efabench.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;


/**
 * Device memory over the fabric, for real: ranks sharing this machine's GPU over shm (a
 * libfabric built with CUDA, ../shared/gpu/build-libfabric-cuda.sh) run every SendRecv, Write
 * and Read config at small sizes, each iteration ending in a checked round verified on the GPU.
 * Skipped, with the reason, where there is no GPU or the libfabric's shm offers no FI_HMEM.
 */
class DeviceFabricIT {

    @TempDir
    Path tmp;

    @BeforeAll
    static void needsAGpuAndHmem() {
        Ranks.assumeGpuWithHmem("device memory");
    }

    @ParameterizedTest(name = "{0} ranks sharing one GPU over shm")
    @ValueSource(ints = {2, 3})
    void everyConfigRunsAndVerifies(int ranks) throws Exception {
        List<JsonElement> results = run(tmp.resolve("sendrecv"), ranks, Ranks.quick("SendRecvBenchmark",
                "-p", "config=SingleHost,SingleDevice", "-p", "size=4K,64K"));
        assertEquals(2 * 2, results.size(), "2 configs x 2 sizes");
        checkAll(results);
        results = run(tmp.resolve("write"), ranks, Ranks.quick("WriteBenchmark", "-p", "size=64K,1M", "-p", "channels=2"));
        assertEquals(6 * 2 * 2, results.size(), "6 configs x 2 completions x 2 sizes");
        checkAll(results);
        Set<String> configs = new HashSet<>();
        results.forEach(e -> configs.add(e.getAsJsonObject().getAsJsonObject("params").get("config").getAsString()));
        assertEquals(Set.of("SinglePin", "MultiPin", "RoundRobinPin", "SingleDMA", "MultiDMA", "RoundRobinDMA"), configs);
    }

    /** ReadBenchmark's device configs: rank 0 reads each peer's device memory and checks it on its GPU. */
    @org.junit.jupiter.api.Test
    void deviceReadsVerifyAndACorruptedSourceIsCaught() throws Exception {
        List<JsonElement> results = run(tmp.resolve("read"), 3, Ranks.quick("ReadBenchmark", "-p", "size=64K,1M",
                "-p", "channels=2", "-p", "window=1,8", "-p", "config=SingleDMA,MultiDMA,RoundRobinDMA"));
        assertEquals(3 * 2 * 2, results.size(), "3 configs x 2 sizes x 2 windows");
        checkAll(results);
        Ranks r = Ranks.start(tmp.resolve("corrupt"), 3, "shm", Ranks.quick("ReadBenchmark", "-p", "size=64K",
                "-p", "window=4", "-p", "config=SingleDMA"), (rank, cmd, env) -> {
                    if (rank == 2) {
                        env.put("EFABENCH_CORRUPT_OFFSET", "12345");
                    }
                });
        String logs = r.awaitAllFailed(300);
        assertTrue(logs.matches("(?s).*rank 0: corrupted byte at offset 12345 of round \\d+ from rank 2.*read from rank 2.*"), logs);
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"WriteBenchmark, SingleDMA", "WriteBenchmark, RoundRobinDMA", "SendRecvBenchmark, SingleDevice"})
    void aCorruptedDeviceByteIsReportedWithRankRoundAndOffset(String benchmark, String config) throws Exception {
        Ranks r = Ranks.start(tmp, 3, "shm", Ranks.quick(benchmark, "-p", "size=64K", "-p", "config=" + config),
                (rank, cmd, env) -> {
                    if (rank == 0) {
                        env.put("EFABENCH_CORRUPT_OFFSET", "12345");
                    }
                });
        String logs = r.awaitAllFailed(300);
        assertTrue(logs.matches("(?s).*rank [12]: corrupted byte at offset 12345 of round \\d+ from rank 0.*device memory.*"),
                logs);
    }

    /**
     * MoeBenchmark on device memory: every routing verifies every token of both phases on the GPU;
     * a token corrupted in device memory is named by rank, token and expert.
     */
    @org.junit.jupiter.api.Test
    void moeOnDeviceMemoryVerifiesAndACorruptedTokenIsNamed() throws Exception {
        List<JsonElement> results = run(tmp.resolve("moe"), 4, Ranks.quick("MoeBenchmark", "-p", "config=SingleDMA,MultiDMA",
                "-p", "tokens=64", "-p", "dtype=FP8", "-p", "routing=uniform,lognormal:2.0,hot:0.5"));
        assertEquals(2 * 3, results.size(), "2 configs x 3 routings");
        for (JsonElement e : results) {
            JsonObject s = e.getAsJsonObject().getAsJsonObject("secondaryMetrics");
            assertTrue(s.getAsJsonObject("checked_rounds").get("score").getAsDouble() >= 1, e.toString());
            assertTrue(s.getAsJsonObject("moe_gbs").get("score").getAsDouble() > 0, e.toString());
        }
        Ranks r = Ranks.start(tmp.resolve("moe-corrupt"), 4, "shm", Ranks.quick("MoeBenchmark", "-p", "config=SingleDMA",
                "-p", "tokens=16", "-p", "dtype=BF16", "-p", "routing=uniform"),
                (rank, cmd, env) -> env.put("EFABENCH_CORRUPT_OFFSET", "20000"));
        String logs = r.awaitAllFailed(300);
        assertTrue(logs.matches("(?s).*rank [0-2]: MoE dispatch of round \\d+: token \\d+ of rank 3 \\(for expert \\d+ on rank [0-2]\\)"
                + " corrupted at byte 5664 of its 14336: .*device memory.*"), logs);
    }

    private static List<JsonElement> run(Path dir, int ranks, List<String> args) throws Exception {
        Ranks r = Ranks.start(dir, ranks, "shm", args, null);
        Integer[] codes = r.await(600);
        for (int k = 0; k < ranks; k++) {
            assertEquals(0, codes[k], "rank " + k + " failed:\n" + r.allLogs());
        }
        assertTrue(r.log(0).contains("registered through "), "rank 0 says how device memory was registered:\n" + r.log(0));
        return JsonParser.parseString(Files.readString(dir.resolve("rank0.json"))).getAsJsonArray().asList();
    }

    private static void checkAll(List<JsonElement> results) {
        for (JsonElement e : results) {
            JsonObject s = e.getAsJsonObject().getAsJsonObject("secondaryMetrics");
            assertTrue(s.getAsJsonObject("checked_rounds").get("score").getAsDouble() >= 1, e.toString());
            assertTrue(s.getAsJsonObject("gbps").get("score").getAsDouble() > 0, e.toString());
        }
    }
}

package io.efabench.it;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Failures end every rank with a named reason and a non-zero exit, never a hang. */
class FailuresIT {

    @TempDir
    Path tmp;

    @Test
    void killingOneRankMakesTheOthersExitNamingIt() throws Exception {
        List<String> args = new ArrayList<>(List.of("WriteBenchmark", "-p", "size=64K", "-p", "config=SinglePin",
                "-p", "completion=remote", "-f", "1", "-wi", "0", "-i", "100", "-r", "1s", "-foe", "true"));
        Ranks r = Ranks.start(tmp, 3, "tcp", args, null);
        try {
            waitFor(r.logs.get(2), "Iteration   2", 120);
            long killedAt = System.nanoTime();
            Process victim = r.processes.get(2);
            victim.descendants().forEach(ProcessHandle::destroyForcibly);
            victim.destroyForcibly();
            for (int k = 0; k < 2; k++) {
                Process p = r.processes.get(k);
                long left = 60_000 - (System.nanoTime() - killedAt) / 1_000_000;
                assertTrue(p.waitFor(Math.max(1, left), java.util.concurrent.TimeUnit.MILLISECONDS),
                        "rank " + k + " still runs 60 s after rank 2 died:\n" + r.log(k));
                assertNotEquals(0, p.exitValue(), r.log(k));
                assertTrue(r.log(k).contains("rank 2"), "rank " + k + " names the dead rank:\n" + r.log(k));
            }
        } finally {
            r.killAll();
        }
    }

    @Test
    void aRankWithAnotherSizeListIsRefusedNamingBoth() throws Exception {
        Ranks r = Ranks.start(tmp, 2, "tcp", Ranks.quick("SendRecvBenchmark", "-p", "size=4K,8K"),
                (rank, cmd, env) -> {
                    if (rank == 1) {
                        cmd.set(cmd.indexOf("size=4K,8K"), "size=4K,16K");
                    }
                });
        Integer[] codes = r.await(180);
        String logs = r.allLogs();
        for (Integer c : codes) {
            assertNotNull(c, "a rank hung:\n" + logs);
            assertNotEquals(0, c, logs);
        }
        assertTrue(logs.contains("size=16K") && logs.contains("size=8K"), "the mismatch names both keys:\n" + logs);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "size=12Q        | size '12Q'",
        "channels=0      | channels=0",
    })
    void badParamsGiveAOneLineError(String param, String expected) throws Exception {
        Ranks r = Ranks.start(tmp, 2, "tcp", Ranks.quick("WriteBenchmark", "-p", param, "-p", "config=SinglePin"), null);
        assertFailsWith(r, expected);
    }

    @Test
    void worldSizeOneForATwoRankBenchmark() throws Exception {
        Ranks r = Ranks.start(tmp, 1, "tcp", Ranks.quick("SendRecvBenchmark", "-p", "size=4K"), null);
        assertFailsWith(r, "needs at least 2 ranks");
    }

    @Test
    void unknownProvider() throws Exception {
        Ranks r = Ranks.start(tmp, 2, "nosuch", Ranks.quick("SendRecvBenchmark", "-p", "size=4K"), null);
        assertFailsWith(r, "nosuch");
    }

    @Test
    void takenMasterPort() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            Ranks r = Ranks.start(tmp, 2, "tcp", Ranks.quick("SendRecvBenchmark", "-p", "size=4K"),
                    (rank, cmd, env) -> env.put("MASTER_PORT", Integer.toString(taken.getLocalPort())));
            Integer[] codes = r.await(120);
            assertNotNull(codes[0], r.allLogs());
            assertNotEquals(0, codes[0]);
            assertTrue(r.log(0).contains("efabench: ") && r.log(0).contains(Integer.toString(taken.getLocalPort())),
                    r.log(0));
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"WriteBenchmark", "SendRecvBenchmark"})
    void aCorruptedByteIsReportedWithRankRoundAndOffset(String benchmark) throws Exception {
        Ranks r = Ranks.start(tmp, 2, "tcp", Ranks.quick(benchmark, "-p", "size=64K", "-p", "config="
                + (benchmark.startsWith("Write") ? "SinglePin" : "SingleHost")),
                (rank, cmd, env) -> {
                    if (rank == 0) {
                        env.put("EFABENCH_CORRUPT_OFFSET", "12345");
                    }
                });
        Integer[] codes = r.await(180);
        String logs = r.allLogs();
        for (Integer c : codes) {
            assertNotNull(c, "a rank hung:\n" + logs);
            assertNotEquals(0, c, logs);
        }
        assertTrue(logs.matches("(?s).*rank 1: corrupted byte at offset 12345 of round \\d+ from rank 0.*"), logs);
    }

    /**
     * Every config that moves GPU memory fails with one line saying why (no GPU, or no FI_HMEM
     * in this libfabric), non-zero, without a stack trace. Runs where there is no GPU (CI); a GPU
     * machine runs these configs for real instead (docs/PERFORMANCE.md).
     */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"WriteBenchmark, SingleDMA", "WriteBenchmark, MultiDMA", "WriteBenchmark, RoundRobinDMA",
        "SendRecvBenchmark, SingleDevice"})
    void deviceConfigsWithoutAGpuFailWithOneLine(String benchmark, String config) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse(io.efabench.harness.TrialGpu.present(),
                "a GPU is visible here: the device configs run for real on it");
        Ranks r = Ranks.start(tmp, 2, "tcp", Ranks.quick(benchmark, "-p", "size=64K", "-p", "config=" + config), null);
        assertFailsWith(r, benchmark + " config=" + config + " moves GPU memory");
        for (int k = 0; k < 2; k++) {
            String log = r.log(k);
            assertTrue(log.contains("has no usable GPU") || log.contains("offers no FI_HMEM"), log);
            assertFalse(log.contains("\tat io.efabench"), "no stack trace:\n" + log);
        }
    }

    private static void assertFailsWith(Ranks r, String expected) throws Exception {
        Integer[] codes = r.await(120);
        String logs = r.allLogs();
        for (Integer c : codes) {
            assertNotNull(c, "a rank hung:\n" + logs);
            assertNotEquals(0, c, logs);
        }
        assertTrue(logs.contains("efabench: ") && logs.contains(expected), "expected '" + expected + "':\n" + logs);
    }

    private static void waitFor(Path log, String text, int seconds) throws Exception {
        long end = System.currentTimeMillis() + seconds * 1000L;
        while (System.currentTimeMillis() < end) {
            if (Files.exists(log) && Files.readString(log).contains(text)) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("'" + text + "' did not appear in " + log + ":\n" + Files.readString(log));
    }
}

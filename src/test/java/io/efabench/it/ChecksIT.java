package io.efabench.it;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
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
        assertAllFail(r, "rank [12]: corrupted byte at offset 0 of round \\d+ from rank 0");
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
        assertAllFail(r, "rank 2: waiting for the writes of the checked round \\(round \\d+\\) with rank 0 did not"
                + " complete within 5 s \\(EFABENCH_TIMEOUT_S\\); \\d+ of the \\d+ planned writes arrived");
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

    private static void assertAllFail(Ranks r, String regex) throws Exception {
        Integer[] codes = r.await(240);
        String logs = r.allLogs();
        for (Integer c : codes) {
            assertNotNull(c, "a rank hung:\n" + logs);
            assertNotEquals(0, c, logs);
        }
        assertTrue(java.util.regex.Pattern.compile(regex).matcher(logs).find(), "expected /" + regex + "/:\n" + logs);
    }

}

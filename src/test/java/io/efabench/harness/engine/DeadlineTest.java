package io.efabench.harness.engine;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.efabench.harness.BenchmarkSetupException;

class DeadlineTest {

    /** A spent budget fails the wait in one line naming the operation, the round and the peer. */
    @Test
    void aSpentBudgetNamesTheWaitAndItsPeer() {
        Deadline one = Deadline.alone(Duration.ofMillis(1)).start();
        BenchmarkSetupException e = assertThrows(BenchmarkSetupException.class, () -> {
            while (one.check("write to rank 3", 3, 17)) {
                Thread.onSpinWait();
            }
        });
        assertTrue(e.getMessage().contains("write to rank 3 (round 17) with rank 3 did not complete within"), e.getMessage());
    }

    /** A wait on several peers at once (peer -1, the NVLink all-to-all's kernels) says so instead of naming rank -1. */
    @Test
    void aWaitOnSeveralPeersSaysSo() {
        Deadline all = Deadline.alone(Duration.ofMillis(1)).start();
        BenchmarkSetupException e = assertThrows(BenchmarkSetupException.class, () -> {
            while (all.check("all-to-all over NVLink", -1, 40)) {
                Thread.onSpinWait();
            }
        });
        assertTrue(e.getMessage().contains("all-to-all over NVLink (round 40) with its peers did not complete"), e.getMessage());
    }
}

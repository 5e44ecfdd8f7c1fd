package io.efabench.harness.pingpong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import io.efabench.harness.fake.FakeFabric;

/** SendRecv's round logic (rank 0 pings each target in turn, END, the checked round both ways) on a fake fabric. No process. */
class PingPongRoundsTest {
    @Test
    void pingsAndPongsVerifyWithEveryTarget() throws Exception {
        FakeFabric f = FakeFabric.threaded(3, 1);
        Throwable[] failed = f.run(t -> new PingPongRounds(t, 4096), 2, 50);
        FakeFabric.assertAllPassed(failed);
        assertEquals(2, f.metrics.checkedRounds());
    }

    @Test
    void aCorruptedPongFailsEveryRank() throws Exception {
        FakeFabric f = FakeFabric.threaded(3, 1);
        f.flipBytesTo = 0;
        Throwable[] failed = f.run(t -> new PingPongRounds(t, 256), 1, 5);
        for (int r = 0; r < f.ranks; r++) {
            assertNotNull(failed[r], "rank " + r + " passed a corrupted round");
            assertEquals(failed[0].getMessage(), failed[r].getMessage());
        }
        assertTrue(failed[0].getMessage().contains("rank 0"), failed[0].getMessage());
    }
}

package io.efabench.harness.pingpong;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import io.efabench.harness.fake.FakeFabric;

/** SendRecv's round logic (rank 0 pings each target in turn, END, the checked round both ways) on a fake fabric. No process. */
class PingPongRoundsTest {
    @Test
    void pingsAndPongsVerifyWithEveryTarget() throws Exception {
        FakeFabric.threaded(3, 1).runChecked(t -> new PingPongRounds(t, 4096), 2, 50);
    }

    @Test
    void aCorruptedPongFailsEveryRank() throws Exception {
        FakeFabric f = FakeFabric.threaded(3, 1);
        f.flipBytesTo = 0;
        String line = f.runFailing(t -> new PingPongRounds(t, 256), 1, 5);
        assertTrue(line.contains("rank 0"), line);
    }
}

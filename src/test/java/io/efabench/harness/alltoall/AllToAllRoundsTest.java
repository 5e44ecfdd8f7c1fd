package io.efabench.harness.alltoall;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.efabench.harness.Layout;
import io.efabench.harness.fake.FakeFabric;

/** All-to-all's round logic (every rank a sender and a receiver, END, the checked pass) on a fake fabric. No process. */
class AllToAllRoundsTest {
    @ParameterizedTest(name = "{0} window={1}")
    @CsvSource({"SINGLE, 1", "SINGLE, 8", "MULTI, 1", "MULTI, 4", "ROUND_ROBIN, 4"})
    void everyRankVerifiesEveryPeersBlock(Layout layout, int window) throws Exception {
        FakeFabric.threaded(3, 2).runChecked(t -> new AllToAllRounds(t, layout, 2048, window, "auto"), 2, 25);
    }

    @Test
    void aCorruptedBlockFailsEveryRankWithTheReceiversLine() throws Exception {
        FakeFabric f = FakeFabric.threaded(3, 1);
        f.flipBytesTo = 1;
        String line = f.runFailing(t -> new AllToAllRounds(t, Layout.SINGLE, 1024, 4, "auto"), 1, 10);
        assertTrue(line.contains("rank 1"), line);
    }
}

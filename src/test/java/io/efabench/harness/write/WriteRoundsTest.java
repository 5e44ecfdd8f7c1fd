package io.efabench.harness.write;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.efabench.harness.Layout;
import io.efabench.harness.fake.FakeFabric;

/**
 * Write's own round logic (leader, targets, credits, END, the checked pass) on a fake fabric:
 * ranks as threads of one JVM, every byte moved, every checked round verified. No process.
 */
class WriteRoundsTest {
    @ParameterizedTest(name = "{0} remote={1} window={2}")
    @CsvSource({
        "SINGLE, false, 1", "SINGLE, true, 1", "SINGLE, false, 8", "SINGLE, true, 8",
        "MULTI, false, 1", "MULTI, true, 4", "ROUND_ROBIN, false, 1", "ROUND_ROBIN, true, 4",
    })
    void everyCheckedRoundVerifiesOnEveryTarget(Layout layout, boolean remote, int window) throws Exception {
        FakeFabric.threaded(3, 2).runChecked(t -> new WriteRounds(t, layout, remote, 4096, window, true, "auto"), 2, 25);
    }

    /** A write that lands wrong fails every rank with the target's one line, naming it and the slot. */
    @Test
    void aCorruptedWriteFailsEveryRankWithTheTargetsLine() throws Exception {
        FakeFabric f = FakeFabric.threaded(3, 1);
        f.flipBytesTo = 2;
        String line = f.runFailing(t -> new WriteRounds(t, Layout.SINGLE, false, 1024, 4, true, "auto"), 1, 10);
        assertTrue(line.contains("rank 2") && line.contains("slot"), line);
        assertEquals(0, f.metrics.checkedRounds());
    }

    /**
     * The leader runs at most {@code credits} rounds ahead of a slow target's acks (LOCAL, window
     * 1: 16), so the target never holds more than credits + 1 rounds unread.
     */
    @Test
    void creditsHoldTheLeaderBackFromASlowTarget() throws Exception {
        FakeFabric f = FakeFabric.threaded(2, 1);
        f.sites[1].pollPauseMicros = 200;
        f.runChecked(t -> new WriteRounds(t, Layout.SINGLE, false, 64, 1, true, "auto"), 1, 200);
        int bound = WriteRounds.LOCAL_CREDITS + 1;
        assertTrue(f.mostUnread[1] <= bound, "target held " + f.mostUnread[1] + " writes unread, bound " + bound);
        assertTrue(f.mostUnread[1] > 1, "the leader never got ahead: the test shows nothing");
    }
}

package io.efabench.harness.engine;

import io.efabench.harness.fake.FakeFabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.efabench.fabric.RemoteRegion;
import io.efabench.harness.BenchmarkSetupException;

/** The write engine over a fake fabric: contexts, pacing, retries, acks and what a stall line names. */
class WriteEngineTest {
    private static final RemoteRegion DST = new RemoteRegion(0, 1 << 20, 7);

    /** Counts what the CQ loop hands the workload. */
    private static final class Counting implements WriteEngine.Sink {
        int done;
        int arrived;
        int ackedFrom = -1;
        long ackedRound = -1;

        @Override
        public void rmaDone(int tag) {
            done++;
        }

        @Override
        public void arrived(long data) {
            arrived++;
        }

        @Override
        public void acked(int from, long round) {
            ackedFrom = from;
            ackedRound = round;
        }
    }

    @Test
    void moreWritesThanContextsArePacedNotRefused() {
        FakeFabric f = new FakeFabric(2, 1);
        Counting sink = new Counting();
        WriteEngine e = new WriteEngine(f.sites[0], new int[] {600}, false, new long[] {1}, 1, sink);
        assertEquals(600, f.sites[0].pacedWanted);
        assertEquals(WriteEngine.MAX_CONTEXTS, f.sites[0].pacedHeld);
        for (int i = 0; i < 600; i++) {
            e.write(0, null, 0, 64, 1, DST, 0, Immediate.encode(Immediate.DATA, 0, 1), i, 1);
        }
        while (e.progress()) {
            // reap the rest
        }
        assertEquals(600, sink.done, "every write completed once");
        assertEquals(600, f.sites[0].lanes[0].posted);
    }

    @Test
    void aRefusedPostIsRetriedUntilTheProviderTakesItAndPostedOnce() {
        FakeFabric f = new FakeFabric(2, 1);
        Counting sink = new Counting();
        WriteEngine e = new WriteEngine(f.sites[0], new int[] {4}, false, new long[] {1}, 1, sink);
        f.sites[0].lanes[0].refuse = 3;
        e.write(0, null, 0, 64, 1, DST, 0, Immediate.encode(Immediate.DATA, 0, 1), 9, 1);
        assertEquals(1, f.sites[0].lanes[0].posted);
        assertEquals(-1, f.sites[0].pacedWanted, "four contexts: no pacing");
    }

    @Test
    void aProviderThatNeverTakesTheWriteFailsTheWaitNamingIt() {
        FakeFabric f = new FakeFabric(2, 1);
        f.sites[0].timeout = Duration.ofMillis(50);
        WriteEngine e = new WriteEngine(f.sites[0], new int[] {4}, false, new long[] {1}, 1, new Counting());
        f.sites[0].lanes[0].refuse = Integer.MAX_VALUE;
        BenchmarkSetupException x = assertThrows(BenchmarkSetupException.class,
                () -> e.write(0, null, 0, 64, 1, DST, 0, 0, 0, 3));
        assertTrue(x.getMessage().contains("posting a write"), x.getMessage());
    }

    @Test
    void anAckReachesTheLeaderWithItsRound() {
        FakeFabric f = new FakeFabric(2, 1);
        Counting leader = new Counting();
        WriteEngine l = new WriteEngine(f.sites[0], new int[] {4}, true, new long[] {1}, 1, leader);
        WriteEngine t = new WriteEngine(f.sites[1], new int[] {1}, true, new long[] {1}, 1, new Counting());
        t.ack(5);
        while (l.progress()) {
            // the ack's receive
        }
        assertEquals(1, leader.ackedFrom);
        assertEquals(5, leader.ackedRound);
    }

    @Test
    void writesInFlightAreNamedPerChannelAndPeer() {
        FakeFabric f = new FakeFabric(3, 2);
        WriteEngine e = new WriteEngine(f.sites[0], new int[] {4, 4}, false, new long[] {1, 1}, 1, new Counting());
        e.write(1, null, 0, 64, 2, DST, 0, 0, 0, 1);
        e.write(1, null, 0, 64, 2, DST, 0, 0, 0, 1);
        String line = f.sites[0].witness.stalled(2, (c, p) -> "channel " + c + " to " + p);
        assertEquals("; channel 1 to 2: 2 operations to rank 2 posted and not completed", line);
        assertEquals("", f.sites[0].witness.stalled(1, (c, p) -> "x"), "nothing outstanding with rank 1");
        e.progress();
        assertEquals("", f.sites[0].witness.stalled(2, (c, p) -> "x"), "completed: nothing left to name");
    }
}

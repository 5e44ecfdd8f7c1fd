package io.efabench.harness.engine;

import io.efabench.harness.fake.FakeFabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.efabench.fabric.RemoteRegion;
import io.efabench.harness.BenchmarkSetupException;

/**
 * The follower's side of the round protocol over a fake fabric, driven by hand from rank 0's
 * engine in one thread: a round is served when all its planned writes arrived, acks are
 * cumulative every ackEvery rounds or when the leader asks, END stops the serve loop, and a
 * missing write fails the wait naming what did not arrive.
 */
class FollowerTest {
    private static final RemoteRegion DST = new RemoteRegion(0, 1 << 20, 7);

    private static final class Acks implements WriteEngine.Sink {
        long acked;

        @Override
        public void rmaDone(int tag) {}

        @Override
        public void arrived(long data) {}

        @Override
        public void acked(int from, long round) {
            acked = Math.max(acked, round);
        }
    }

    private final FakeFabric f = new FakeFabric(2, 2);
    private final Acks leaderSide = new Acks();
    private final WriteEngine leader = new WriteEngine(f.sites[0], new int[] {64, 64}, true, new long[] {64, 64}, 1,
            leaderSide);

    /** Rank 0 writes round {@code r} to rank 1: {@code perChannel} writes on each channel. */
    private void writeRound(long r, int perChannel, int kind) {
        for (int c = 0; c < 2; c++) {
            for (int k = 0; k < perChannel; k++) {
                leader.write(c, null, 0, 64, 1, DST, 0, Immediate.encode(kind, 0, r), 0, r);
            }
        }
        leader.progress();
    }

    private long leaderHears() {
        while (leader.progress()) {
            // reap acks
        }
        return leaderSide.acked;
    }

    @Test
    void aRoundIsServedWhenEveryPlannedWriteArrivedAndAckedEveryAckEveryRounds() {
        Follower follower = new Follower(f.sites[1], 4, 8, 3, new long[] {64, 64});
        for (long r = 1; r <= 2; r++) {
            writeRound(r, 2, Immediate.DATA);
            follower.serve("round", false);
        }
        assertEquals(0, leaderHears(), "two rounds served, ackEvery 3: no ack yet");
        writeRound(3, 2, Immediate.DATA);
        follower.serve("round", false);
        assertEquals(3, leaderHears(), "the third round acks all three at once");
    }

    @Test
    void theLeaderAsksForAnAckAndGetsItAtOnce() {
        Follower follower = new Follower(f.sites[1], 4, 8, 100, new long[] {64, 64});
        writeRound(1, 2, Immediate.ACK_ME);
        follower.serve("round", false);
        assertEquals(1, leaderHears());
    }

    @Test
    void endStopsTheServeLoopWithoutARound() {
        Follower follower = new Follower(f.sites[1], 4, 8, 1, new long[] {64, 64});
        writeRound(1, 2, Immediate.DATA);
        follower.serve("round", true);
        f.sites[1].ended = 1;
        assertTimeoutIsNotNeeded(() -> follower.serve("round", true));
        assertEquals(1, follower.serveToEnd());
        assertEquals(1, leaderHears());
    }

    private static void assertTimeoutIsNotNeeded(Runnable r) {
        long t0 = System.nanoTime();
        r.run();
        assertTrue(System.nanoTime() - t0 < 1_000_000_000L, "returned at END, not at a deadline");
    }

    @Test
    void aMissingWriteFailsTheWaitNamingTheChannelAndWhatDidNotArrive() {
        f.sites[1].timeout = Duration.ofMillis(100);
        Follower follower = new Follower(f.sites[1], 4, 8, 1, new long[] {64, 64});
        follower.expectOnChannels(new int[] {2, 2});
        leader.write(0, null, 0, 64, 1, DST, 0, Immediate.encode(Immediate.DATA, 0, 1), 0, 1);
        leader.write(0, null, 0, 64, 1, DST, 0, Immediate.encode(Immediate.DATA, 0, 1), 0, 1);
        leader.write(1, null, 0, 64, 1, DST, 0, Immediate.encode(Immediate.DATA, 0, 1), 0, 1);
        BenchmarkSetupException x = assertThrows(BenchmarkSetupException.class, () -> follower.serve("the round", false));
        assertTrue(x.getMessage().contains("the round"), x.getMessage());
        String stalled = f.sites[1].witness.stalled(0, (c, p) -> "channel " + c);
        assertEquals("; channel 1: 1 of rank 0's writes through round 1 not arrived", stalled);
    }
}

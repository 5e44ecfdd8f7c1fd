package io.efabench.harness.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import io.efabench.harness.BenchmarkSetupException;


class ArrivalCounterTest {
    private static long write(int sender, long round) {
        return Immediate.encode(Immediate.DATA, sender, round);
    }

    @Test
    void aRoundIsServedOnceEverySendersPlannedWritesArrivedInAnyOrder() {
        // rank 1 of 3: rank 0 sends it 2 writes per round, rank 2 sends 1
        ArrivalCounter a = new ArrivalCounter(1, new int[] {2, 0, 1}, 4);
        a.arrived(write(2, 2)); // round 2 before round 1: unordered
        a.arrived(write(0, 1));
        assertEquals(0, a.served());
        assertEquals(0, a.firstMissing(), "rank 0's second write of round 1 is missing");
        assertTrue(a.missing().contains("1 of the 2 planned writes arrived from rank 0"), a.missing());
        a.arrived(write(2, 1));
        a.arrived(write(0, 1));
        assertEquals(1, a.served());
        a.arrived(write(0, 2));
        a.arrived(write(0, 2));
        assertEquals(2, a.served(), "round 2 was complete once its last write came");
    }

    @Test
    void writesBeyondThePlanFromAStrangerOrOutsideTheRingFailNamingRankSenderAndRound() {
        ArrivalCounter a = new ArrivalCounter(1, new int[] {1, 0, 0}, 4);
        BenchmarkSetupException stranger = assertThrows(BenchmarkSetupException.class, () -> a.arrived(write(2, 1)));
        assertTrue(stranger.getMessage().startsWith("rank 1: a write with immediate data names sender rank 2"), stranger.getMessage());
        BenchmarkSetupException far = assertThrows(BenchmarkSetupException.class, () -> a.arrived(write(0, 20)));
        assertTrue(far.getMessage().contains("round 20 (mod 2^20) from rank 0 arrived after this rank served round 0"),
                far.getMessage());
        ArrivalCounter b = new ArrivalCounter(1, new int[] {1, 0, 0}, 4);
        b.arrived(write(0, 2));
        BenchmarkSetupException twice = assertThrows(BenchmarkSetupException.class, () -> b.arrived(write(0, 2)));
        assertTrue(twice.getMessage().startsWith("rank 1: round 2 from rank 0 brought 2 writes with immediate data, but"
                + " rank 0's plan has 1"), twice.getMessage());
    }

    @Test
    void roundsPastTheTwentyBitWrapAreCountedInOrder() {
        ArrivalCounter a = new ArrivalCounter(0, new int[] {0, 1}, 2);
        long round = 1;
        for (; round < (1L << 20) + 5; round++) {
            a.arrived(write(1, round));
        }
        assertEquals(round - 1, a.served());
    }
}

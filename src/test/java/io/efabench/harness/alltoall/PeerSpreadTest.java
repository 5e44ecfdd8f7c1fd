package io.efabench.harness.alltoall;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;
import io.efabench.harness.Metrics;

/** The spread's summaries: min/p50/max over pairs, and the slowest rank as the max per invocation. */
class PeerSpreadTest {
    @Test
    void pairsGiveTheirMinMedianAndMax() {
        assertArrayEquals(new double[] {1, 3, 9}, PeerSpread.spread(List.of(9.0, 1.0, 3.0, 4.0, 2.0)));
        assertArrayEquals(new double[] {1, 1, 2}, PeerSpread.spread(List.of(2.0, 1.0)));
        assertTrue(Double.isNaN(PeerSpread.spread(List.of())[0]));
    }

    /**
     * Rank 1 is slow in invocation 0, rank 2 in invocation 1: the slowest rank's time is 10 ms in
     * both, so 1 MB per invocation is 0.8 Gbps; a mean over ranks of each rank's mean time (~6.7 ms)
     * would have said 1.2.
     */
    @Test
    void theSlowestRankIsTheMaxOfEachInvocation() {
        long[][] times = {{1_000_000, 1_000_000}, {10_000_000, 1_000_000}, {1_000_000, 10_000_000, 5}};
        assertEquals(Metrics.gbps(1_000_000, 10e-3), PeerSpread.slowestRankGbps(times, 2, 1_000_000), 1e-12);
        assertTrue(Double.isNaN(PeerSpread.slowestRankGbps(times, 0, 1)));
    }
}

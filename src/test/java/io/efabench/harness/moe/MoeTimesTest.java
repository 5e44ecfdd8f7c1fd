package io.efabench.harness.moe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import io.efabench.harness.IterationFigure;

/** The figures come from the rounds every rank timed, the slowest rank per round, and the rounds' period. */
class MoeTimesTest {
    /** A rank's part as encode() writes it: token counts per routing, then first round, count, (dispatch, round) ns. */
    private static byte[] part(int taken, int fromOthers, int toOthers, long first, long[][] rounds) {
        ByteBuffer b = ByteBuffer.allocate(4 * 3 * MoePlan.ROUNDS + 12 + 16 * rounds.length);
        for (int p = 0; p < MoePlan.ROUNDS; p++) {
            b.putInt(taken).putInt(fromOthers).putInt(toOthers);
        }
        b.putLong(first).putInt(rounds.length);
        for (long[] r : rounds) {
            b.putLong(r[0]).putLong(r[1]);
        }
        return b.array();
    }

    @Test
    void overTheRoundsEveryRankTimed() {
        MoePlan plan = new MoePlan(new MoeShape(8, 500, 2, 4, Dtype.BF16), Routing.parse("uniform"), 1, 2, 0);
        // Rank 0 timed rounds 5..7, rank 1 rounds 6..8: rounds 6 and 7 count. 1000 B a token both ways.
        byte[] r0 = part(10, 6, 6, 5, new long[][] {{999, 999}, {1_000_000, 3_000_000}, {1_000_000, 3_000_000}});
        byte[] r1 = part(10, 6, 6, 6, new long[][] {{2_000_000, 5_000_000}, {1_000_000, 3_000_000}, {7, 7}});
        long[] busiest = new long[MoePlan.ROUNDS];
        java.util.Arrays.fill(busiest, 10_000);
        Map<String, Double> f = MoeTimes.figures(List.of(r0, r1), plan, busiest, 0).stream()
                .collect(Collectors.toMap(IterationFigure::name, IterationFigure::value));
        assertEquals(2, f.get("moe_rounds"));
        // slowest rank: round 6 5 ms (rank 1), round 7 3 ms
        assertEquals(4000, f.get("slowest_rank_us"), 1e-9);
        assertEquals(1500, f.get("moe_dispatch_us"), 1e-9);
        assertEquals(2500, f.get("moe_combine_us"), 1e-9);
        // rank 0: 2 x 10 tokens x 2000 B over 6 ms; rank 1 the same over 8 ms; mean of the two rates
        double r0gbs = 40_000 / 6e-3 / 1e9;
        double r1gbs = 40_000 / 8e-3 / 1e9;
        assertEquals((r0gbs + r1gbs) / 2, f.get("moe_gbs"), 1e-12);
        assertTrue(f.get("moe_wire_gbs") < f.get("moe_gbs"));
        // busiest NIC: 2 x 10000 B over the period (mean of 6 and 8 ms)
        assertEquals(20_000 * 8 / 7e-3 / 1e9, f.get("busiest_nic_gbps"), 1e-12);
        assertTrue(!f.containsKey("moe_link_bound_us"), "no link speed, no bound");
    }

    @Test
    void noRoundInCommonNoFigures() {
        MoePlan plan = new MoePlan(new MoeShape(8, 500, 2, 4, Dtype.BF16), Routing.parse("uniform"), 1, 2, 0);
        byte[] r0 = part(1, 1, 1, 5, new long[][] {{1, 2}});
        byte[] r1 = part(1, 1, 1, 9, new long[][] {{1, 2}});
        assertTrue(MoeTimes.figures(List.of(r0, r1), plan, new long[MoePlan.ROUNDS], 0).isEmpty());
    }

    /** Ranks of one host (shm, the NVLink path): no NIC carried a byte, so there is no NIC figure, not a 0. */
    @Test
    void noNicBytesNoNicFigure() {
        MoePlan plan = new MoePlan(new MoeShape(8, 500, 2, 4, Dtype.BF16), Routing.parse("uniform"), 1, 2, 0);
        byte[] r0 = part(10, 6, 6, 5, new long[][] {{1_000_000, 3_000_000}});
        byte[] r1 = part(10, 6, 6, 5, new long[][] {{1_000_000, 3_000_000}});
        Map<String, Double> f = MoeTimes.figures(List.of(r0, r1), plan, new long[MoePlan.ROUNDS], 100).stream()
                .collect(Collectors.toMap(IterationFigure::name, IterationFigure::value));
        assertTrue(f.containsKey("moe_gbs") && f.containsKey("moe_rounds"), f.toString());
        assertTrue(!f.containsKey("busiest_nic_gbps") && !f.containsKey("moe_link_bound_us"), f.toString());
    }
}

package io.efabench.harness.moe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.Layout;

/** The routing every rank computes alike: counts that add up, layouts that meet, targets reached. */
class MoePlanTest {
    private static final MoeShape V3 = new MoeShape(128, 7168, 8, 256, Dtype.BF16);

    private static MoePlan[] all(MoeShape shape, String routing, int ranks) {
        MoePlan[] p = new MoePlan[ranks];
        for (int r = 0; r < ranks; r++) {
            p[r] = new MoePlan(shape, Routing.parse(routing), 7, ranks, r);
        }
        return p;
    }

    @ParameterizedTest(name = "{0} over {1} ranks")
    @CsvSource({"uniform, 16", "lognormal:2.0, 16", "hot:0.25, 16", "uniform, 3", "hot:0.5, 5", "uniform, 40"})
    void everyRankAgreesOnWhatItSendsAndWhereItLands(String routing, int ranks) {
        MoePlan[] p = all(V3, routing, ranks);
        for (int k = 0; k < MoePlan.ROUNDS; k++) {
            for (int s = 0; s < ranks; s++) {
                int tokensOut = 0;
                for (int d = 0; d < ranks; d++) {
                    assertEquals(p[s].sendCount[k][d], p[d].recvCount[k][s], "tokens " + s + " -> " + d);
                    if (d != s) {
                        assertEquals(p[d].recvStart[k][s], p[s].landAt[k][d], "where " + s + "'s tokens land at " + d);
                        assertEquals(p[s].sendStart[k][d], p[d].returnAt[k][s], "where " + d + "'s returns land at " + s);
                    }
                    tokensOut += p[s].sendCount[k][d];
                    assertArrayEquals(p[0].load[k], p[d].load[k]);
                }
                // A token goes to 1..topk ranks.
                assertTrue(tokensOut >= V3.tokens() && tokensOut <= V3.tokens() * V3.topk(), "tokens out " + tokensOut);
            }
        }
        // Token lists regenerate the counts (failure lines name tokens by them).
        int[] to = p[0].tokensTo(3, 1, 2 % ranks);
        assertEquals(p[1].sendCount[3][2 % ranks], to.length);
        for (int tok : to) {
            assertTrue(p[0].expertOf(3, 1, tok, 2 % ranks) >= 0);
        }
    }

    @Test
    void routingsDifferByRoundAndRepeatBySeed() {
        MoePlan a = new MoePlan(V3, Routing.parse("uniform"), 1, 16, 0);
        MoePlan b = new MoePlan(V3, Routing.parse("uniform"), 1, 16, 0);
        MoePlan c = new MoePlan(V3, Routing.parse("uniform"), 2, 16, 0);
        assertArrayEquals(a.sendCount[5], b.sendCount[5]);
        assertTrue(!java.util.Arrays.equals(a.sendCount[5], a.sendCount[6]), "round 5 and 6 alike");
        assertTrue(!java.util.Arrays.deepEquals(a.sendCount, c.sendCount), "seeds 1 and 2 alike");
        assertEquals(5, MoePlan.routingOf(5 + MoePlan.ROUNDS));
    }

    /** The realized load follows the target: uniform near 1, lognormal:2.0 near 2, hot:0.25 a quarter of the deliveries. */
    @Test
    void skewReachesItsTarget() {
        MoeShape big = new MoeShape(4096, 7168, 8, 256, Dtype.BF16);
        double uniform = mean(new MoePlan(big, Routing.parse("uniform"), 3, 16, 0));
        double lognormal = mean(new MoePlan(big, Routing.parse("lognormal:2.0"), 3, 16, 0));
        assertTrue(uniform < 1.1, "uniform " + uniform);
        assertTrue(Math.abs(lognormal - 2.0) < 0.2, "lognormal:2.0 " + lognormal);
        MoePlan hot = new MoePlan(big, Routing.parse("hot:0.25"), 3, 16, 0);
        long toHot = 0;
        long all = 0;
        for (int k = 0; k < MoePlan.ROUNDS; k++) {
            for (int q = 0; q < 16; q++) {
                all += hot.load[k][q];
            }
            toHot += hot.load[k][hot.hotRank()];
        }
        assertEquals(15, hot.hotRank());
        assertEquals(0.25, (double) toHot / all, 0.02);
        assertNull(hot.clamped());
    }

    private static double mean(MoePlan p) {
        double s = 0;
        for (int k = 0; k < MoePlan.ROUNDS; k++) {
            s += p.imbalance(k);
        }
        return s / MoePlan.ROUNDS;
    }

    @Test
    void anUnreachableTargetRunsAtTheMostItCanAndSaysSo() {
        MoePlan two = new MoePlan(V3, Routing.parse("lognormal:2.0"), 1, 2, 0);
        assertNotNull(two.clamped());
        assertTrue(two.clamped().contains("at most"), two.clamped());
    }

    @Test
    void badInputIsOneLine() {
        assertThrows(BenchmarkSetupException.class, () -> Routing.parse("zipf"));
        assertThrows(BenchmarkSetupException.class, () -> Routing.parse("hot:1.5"));
        assertThrows(BenchmarkSetupException.class, () -> Routing.parse("lognormal:0.5"));
        assertThrows(BenchmarkSetupException.class, () -> new MoeShape(128, 7168, 9, 8, Dtype.FP8));
        assertThrows(BenchmarkSetupException.class, () -> new MoePlan(V3, Routing.parse("uniform"), 1, 1, 0));
    }

    @Test
    void tokenBytesAreDeepEps() {
        assertEquals(14336, V3.dispatchTokenBytes());
        assertEquals(7168 + 224, new MoeShape(1, 7168, 1, 1, Dtype.FP8).dispatchTokenBytes());
        assertEquals(14336, new MoeShape(1, 7168, 1, 1, Dtype.FP8).combineTokenBytes());
    }

    /** The busiest NIC: 4 ranks on 2 hosts, one rail; only what crosses hosts counts. */
    @Test
    void theLinkBoundCountsOnlyWhatCrossesHosts() {
        int[][] n = {{9, 1, 2, 0}, {1, 9, 0, 3}, {4, 0, 9, 1}, {0, 0, 1, 9}};
        long[] b = MoeLinks.busiest(new int[][][] {n}, List.of("a", "a", "b", "b"), Layout.SINGLE, 1, 10, 100);
        // dispatch: a sends 2 + 3 = 5 tokens, receives 4; combine reverses: a sends 4, receives 5.
        assertEquals(5 * 10 + 5 * 100, b[0]);
        long[] striped = MoeLinks.busiest(new int[][][] {n}, List.of("a", "a", "b", "b"), Layout.MULTI, 2, 10, 100);
        assertEquals(25 + 250, striped[0]);
    }
}

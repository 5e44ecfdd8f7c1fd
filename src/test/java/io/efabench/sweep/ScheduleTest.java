package io.efabench.sweep;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

class ScheduleTest {
    @Test
    void theTournamentCoversEveryPairOnceInRoundsOfDisjointPairs() {
        for (int n = 2; n <= 17; n++) {
            List<Schedule.Round> rounds = Schedule.tournament(n);
            assertEquals(n % 2 == 0 ? n - 1 : n, rounds.size(), "rounds for " + n + " nodes");
            Set<Schedule.Pair> seen = new HashSet<>();
            Set<Integer> satOut = new HashSet<>();
            for (Schedule.Round r : rounds) {
                Set<Integer> busy = new HashSet<>();
                for (Schedule.Pair p : r.pairs()) {
                    assertTrue(busy.add(p.a()) && busy.add(p.b()), "a node twice in one round: " + r);
                    assertTrue(seen.add(p), "pair twice: " + p);
                }
                assertEquals(n / 2, r.pairs().size());
                if (n % 2 == 1) {
                    assertTrue(r.sitsOut() >= 0 && !busy.contains(r.sitsOut()));
                    assertTrue(satOut.add(r.sitsOut()), "a node sat out twice");
                } else {
                    assertEquals(-1, r.sitsOut());
                }
            }
            assertEquals(n * (n - 1) / 2, seen.size(), "every pair of " + n);
        }
    }

    @Test
    void quickMatchingsArePerfectAndTheSameOnEveryRank() {
        List<Schedule.Round> a = Schedule.quick(9, 3, 42);
        assertEquals(a, Schedule.quick(9, 3, 42));
        for (Schedule.Round r : a) {
            Set<Integer> busy = new HashSet<>();
            for (Schedule.Pair p : r.pairs()) {
                assertTrue(busy.add(p.a()) && busy.add(p.b()));
            }
            assertEquals(8, busy.size());
            assertTrue(!busy.contains(r.sitsOut()));
        }
    }

    @Test
    void fewerThanTwoNodesIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> Schedule.tournament(1));
        assertThrows(IllegalArgumentException.class, () -> Schedule.quick(1, 1, 0));
    }
}

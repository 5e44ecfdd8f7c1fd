package io.efabench.sweep;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * Which nodes measure each other in which round: a round is a set of disjoint pairs, measured at
 * the same time, so a sweep's wall time grows with its rounds, not its pairs.
 *
 * <p>{@link #tournament}: the round-robin tournament (circle method): n - 1 rounds of n / 2 pairs
 * cover every pair once (n rounded up to even; the node paired with the missing one sits out
 * that round). {@link #quick}: a few random perfect matchings, O(1) rounds whatever n is, the
 * cheap screen whose suspects the second pass re-measures against known-good partners.
 */
public final class Schedule {
    /** Nodes {@code a < b} measure each other. */
    public record Pair(int a, int b) {
        public Pair {
            if (a < 0 || b <= a) {
                throw new IllegalArgumentException("pair " + a + "-" + b + ": want 0 <= a < b");
            }
        }

        static Pair of(int x, int y) {
            return new Pair(Math.min(x, y), Math.max(x, y));
        }

        public boolean has(int node) {
            return a == node || b == node;
        }

        public int partnerOf(int node) {
            return node == a ? b : a;
        }
    }

    /** One round: its disjoint pairs, and the node sitting it out (-1 when none). */
    public record Round(List<Pair> pairs, int sitsOut) {
        /** The partner of {@code node} in this round, or -1 where it sits out. */
        public int partnerOf(int node) {
            for (Pair p : pairs) {
                if (p.has(node)) {
                    return p.partnerOf(node);
                }
            }
            return -1;
        }
    }

    private Schedule() {}

    /** Every pair of {@code nodes} (at least 2) once, in n - 1 rounds (n rounded up to even). */
    public static List<Round> tournament(int nodes) {
        requireNodes(nodes);
        int n = nodes + (nodes & 1);
        int[] seat = new int[n];
        for (int i = 0; i < n; i++) {
            seat[i] = i < nodes ? i : -1;
        }
        List<Round> rounds = new ArrayList<>();
        for (int r = 0; r < n - 1; r++) {
            List<Pair> pairs = new ArrayList<>();
            int out = -1;
            for (int i = 0; i < n / 2; i++) {
                int x = seat[i];
                int y = seat[n - 1 - i];
                if (x < 0 || y < 0) {
                    out = Math.max(x, y);
                } else {
                    pairs.add(Pair.of(x, y));
                }
            }
            rounds.add(new Round(List.copyOf(pairs), out));
            // Seat 0 stays, the others turn one place.
            int last = seat[n - 1];
            System.arraycopy(seat, 1, seat, 2, n - 2);
            seat[1] = last;
        }
        return rounds;
    }

    /**
     * {@code matchings} random perfect matchings of {@code nodes} from {@code seed} (every rank
     * computes the same ones); with an odd count a different node sits out each time where it can.
     */
    public static List<Round> quick(int nodes, int matchings, long seed) {
        requireNodes(nodes);
        if (matchings < 1) {
            throw new IllegalArgumentException("quick: at least one matching, not " + matchings);
        }
        Random random = new Random(seed);
        List<Round> rounds = new ArrayList<>();
        for (int m = 0; m < matchings; m++) {
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < nodes; i++) {
                order.add(i);
            }
            Collections.shuffle(order, random);
            int out = -1;
            if ((nodes & 1) == 1) {
                out = (m * 7919) % nodes; // each matching another sitter, spread over the nodes
                order.remove(Integer.valueOf(out));
            }
            List<Pair> pairs = new ArrayList<>();
            for (int i = 0; i + 1 < order.size(); i += 2) {
                pairs.add(Pair.of(order.get(i), order.get(i + 1)));
            }
            rounds.add(new Round(List.copyOf(pairs), out));
        }
        return rounds;
    }

    private static void requireNodes(int nodes) {
        if (nodes < 2) {
            throw new IllegalArgumentException("a sweep needs at least 2 nodes, not " + nodes);
        }
    }
}

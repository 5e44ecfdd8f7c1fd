package io.efabench.sweep;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import io.efabench.sweep.FleetSimulator.Fault;

/** The faults the fleet simulator injects, each with what the sweep must name for it. */
final class FleetScenarios {
    private FleetScenarios() {}

    /** One drawn fleet's fault and the findings it calls for ("KIND node rail", as {@link FleetSimulator#label}). */
    record Case(Fault fault, List<String> expected) {}

    /** Where a fault strikes in a fleet of {@code nodes} x {@code rails}, drawn from {@code pick}. */
    interface Drawer {
        Case draw(int nodes, int rails, Random pick);
    }

    /** A kind of fault, named, and how one fleet's is drawn. */
    record Scenario(String name, Drawer drawer) {
        Case draw(int nodes, int rails, Random pick) {
            return drawer.draw(nodes, rails, pick);
        }
    }

    private static Scenario of(String name, Drawer d) {
        return new Scenario(name, d);
    }

    static Scenario clean() {
        return of("clean", (n, r, pick) -> new Case(Fault.NONE, List.of()));
    }

    /** One NIC at {@code f} of its figures (0: unreachable). */
    static Scenario nic(double f) {
        return of(f == 0 ? "one NIC unreachable" : "one NIC at " + f, (n, r, pick) -> {
            int i = pick.nextInt(n);
            int k = pick.nextInt(r);
            return new Case((node, rail, pass) -> node == i && rail == k ? f : 1, List.of("NIC " + i + " rail " + k));
        });
    }

    /** Every NIC of one node at {@code f}. */
    static Scenario node(double f) {
        return of("one node at " + f, (n, r, pick) -> {
            int i = pick.nextInt(n);
            return new Case((node, rail, pass) -> node == i ? f : 1, List.of(r >= 2 ? "NODE " + i : "NIC " + i + " rail 0"));
        });
    }

    /** Every NIC of one rail at {@code f}. */
    static Scenario rail(double f) {
        return of("one rail at " + f, (n, r, pick) -> {
            int k = pick.nextInt(r);
            return new Case((node, rail, pass) -> rail == k ? f : 1, List.of("RAIL " + k));
        });
    }

    /** Two NICs of one rail, on two nodes, at {@code f}. */
    static Scenario twoNicsOneRail(double f) {
        return of("two NICs of one rail at " + f, (n, r, pick) -> {
            int i = pick.nextInt(n);
            int j = (i + 1 + pick.nextInt(n - 1)) % n;
            int k = pick.nextInt(r);
            List<String> want = new ArrayList<>(List.of("NIC " + i + " rail " + k, "NIC " + j + " rail " + k));
            want.sort(null);
            return new Case((node, rail, pass) -> (node == i || node == j) && rail == k ? f : 1, List.copyOf(want));
        });
    }

    /** Two faults at once: one NIC at {@code f} and, on another node, every NIC at {@code f}. */
    static Scenario nicAndNode(double f) {
        return of("one NIC and another node at " + f, (n, r, pick) -> {
            int i = pick.nextInt(n);
            int j = (i + 1 + pick.nextInt(n - 1)) % n;
            int k = pick.nextInt(r);
            List<String> want = new ArrayList<>(List.of("NIC " + i + " rail " + k, "NODE " + j));
            want.sort(null);
            return new Case((node, rail, pass) -> node == j || (node == i && rail == k) ? f : 1, List.copyOf(want));
        });
    }

    /** Every NIC at {@code f}: only a known line rate can tell; every rail is named. */
    static Scenario uniform(double f) {
        return of("every NIC at " + f, (n, r, pick) -> {
            List<String> want = new ArrayList<>();
            for (int k = 0; k < r; k++) {
                want.add("RAIL " + k);
            }
            want.sort(null);
            return new Case((node, rail, pass) -> f, List.copyOf(want));
        });
    }

    /** One NIC at {@code f} in a pass with probability one half, sound in the other passes. */
    static Scenario flaky(double f) {
        return of("one NIC at " + f + " in one pass of two", (n, r, pick) -> {
            int i = pick.nextInt(n);
            int k = pick.nextInt(r);
            boolean[] slowIn = {pick.nextBoolean(), pick.nextBoolean()};
            return new Case((node, rail, pass) -> node == i && rail == k && slowIn[pass] ? f : 1, List.of("NIC " + i + " rail " + k));
        });
    }

    /** One NIC's round trips {@code times} longer, its bandwidth sound. */
    static Scenario slowRoundTrips(double times) {
        return of("one NIC's round trip x" + times, (n, r, pick) -> {
            int i = pick.nextInt(n);
            int k = pick.nextInt(r);
            Fault f = new Fault() {
                @Override
                public double bandwidth(int node, int rail, int pass) {
                    return 1;
                }

                @Override
                public double latency(int node, int rail) {
                    return node == i && rail == k ? times : 1;
                }
            };
            return new Case(f, List.of("NIC " + i + " rail " + k));
        });
    }
}

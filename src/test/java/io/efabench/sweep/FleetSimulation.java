package io.efabench.sweep;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.IntStream;

import io.efabench.sweep.FleetScenarios.Case;
import io.efabench.sweep.FleetScenarios.Scenario;
import io.efabench.sweep.FleetSimulator.Model;
import io.efabench.sweep.FleetSimulator.Outcome;
import io.efabench.sweep.FleetSimulator.Plan;

/**
 * Many simulated fleets per scenario, tallied: named exactly as the fault calls for, named with
 * something else beside it, or missed. {@link #main} prints the table docs/PERFORMANCE.md keeps
 * ("The sweep's judgement on simulated fleets").
 */
final class FleetSimulation {
    private FleetSimulation() {}

    /** One scenario's fleets: how many were named exactly, with extras, or missed, and an example of each miss. */
    record Tally(String scenario, int nodes, int rails, Plan plan, Model model, boolean lineKnown, int fleets, int exact,
            int extra, int missed, double measurements, List<String> examples) {
        String row() {
            return String.format(Locale.ROOT, "| %s | %d x %d | %s | %.0f%% | %s | %d | %.1f%% | %.1f%% | %.1f%% | %.0f |", scenario,
                    nodes, rails, plan, 100 * model.spread(), lineKnown ? String.format(Locale.ROOT, "%.2f of %.0f",
                            model.level(), model.lineGbps()) : "unknown", fleets, 100.0 * exact / fleets,
                    100.0 * extra / fleets, 100.0 * missed / fleets, measurements);
        }
    }

    static final String HEADER = "| fault | nodes x rails | first pass | spread | line rate | fleets | named exactly | with extras"
            + " | missed | measurements a fleet |\n|---|---|---|---|---|---|---|---|---|---|";

    /** {@code fleets} fleets of {@code scenario}, seeds {@code seed0} on; in parallel. */
    static Tally run(Scenario scenario, int nodes, int rails, Plan plan, Model model, boolean lineKnown, int fleets,
            long seed0) {
        Thresholds th = Thresholds.defaults(lineKnown ? model.lineGbps() : 0);
        FleetSimulator sim = new FleetSimulator(nodes, rails, model, plan, th);
        record One(int verdict, int measurements, String example) {}
        List<One> all = IntStream.range(0, fleets).parallel().mapToObj(f -> {
            long seed = seed0 + f;
            Case c = scenario.draw(nodes, rails, FleetSimulator.picks(seed));
            Outcome o = sim.sweep(c.fault(), seed);
            List<String> named = o.named();
            int verdict = named.equals(c.expected()) ? 0 : named.containsAll(c.expected()) ? 1 : 2;
            return new One(verdict, o.firstPass() + o.secondPass(), verdict == 0 ? null
                    : "seed " + seed + ": wanted " + c.expected() + ", named " + shortList(named));
        }).toList();
        int[] count = new int[3];
        List<String> examples = new ArrayList<>();
        double measurements = 0;
        for (One o : all) {
            count[o.verdict()]++;
            measurements += o.measurements();
            if (o.example() != null && examples.size() < 3) {
                examples.add(o.example());
            }
        }
        return new Tally(scenario.name(), nodes, rails, plan, model, lineKnown, fleets, count[0], count[1], count[2],
                measurements / fleets, examples);
    }

    private static String shortList(List<String> named) {
        return named.size() <= 6 ? named.toString() : named.subList(0, 6) + " and " + (named.size() - 6) + " more";
    }

    /**
     * The table: {@code java ... FleetSimulation [fleets] [big-fleets]}; fleets per scenario at
     * 4 x 2 and 128 x 32 (default 1000; a fifth for the faults beyond the goals' at 128 x 32 every
     * pair), and at 1024 x 32 (quick only; default 100).
     */
    public static void main(String[] args) {
        int fleets = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int bigFleets = args.length > 1 ? Integer.parseInt(args[1]) : 100;
        long start = System.nanoTime();
        System.out.println(HEADER);
        List<Scenario> faults = List.of(FleetScenarios.clean(), FleetScenarios.nic(0), FleetScenarios.nic(0.5),
                FleetScenarios.nic(0.6), FleetScenarios.nic(0.7), FleetScenarios.nic(0.8), FleetScenarios.node(0.5),
                FleetScenarios.rail(0.5), FleetScenarios.twoNicsOneRail(0.6), FleetScenarios.nicAndNode(0.5), FleetScenarios.flaky(0.5),
                FleetScenarios.slowRoundTrips(3));
        for (double spread : new double[] {0.03, 0.08}) {
            Model noLine = new Model(100, 1.0, spread, 20);
            for (int[] shape : new int[][] {{4, 2}, {128, 32}}) {
                for (Plan plan : shape[0] >= 16 ? List.of(Plan.TOURNAMENT, Plan.quick(3)) : List.of(Plan.TOURNAMENT)) {
                    for (Scenario s : faults) {
                        // Every pair of 128 nodes on 32 rails is 260,000 measurements a fleet: the
                        // goals' rows (clean, a NIC at 0.7) get every fleet, the others a fifth.
                        boolean goal = s.name().equals("clean") || s.name().equals("one NIC at 0.7");
                        int n = shape[0] >= 128 && plan.quick() == 0 && !goal ? Math.max(1, fleets / 5) : fleets;
                        print(run(s, shape[0], shape[1], plan, noLine, false, n, 1));
                    }
                }
            }
            for (Scenario s : faults) {
                print(run(s, 1024, 32, Plan.quick(3), noLine, false, bigFleets, 1));
            }
            Model efa = new Model(100, 0.97, spread, 20);
            for (Scenario s : List.of(FleetScenarios.clean(), FleetScenarios.uniform(0.8), FleetScenarios.nic(0.8),
                    FleetScenarios.nic(0.7))) {
                print(run(s, 128, 32, Plan.quick(3), efa, true, fleets, 1));
            }
        }
        System.out.printf(Locale.ROOT, "%n%.0f s%n", (System.nanoTime() - start) / 1e9);
    }

    private static void print(Tally t) {
        System.out.println(t.row());
        for (String e : t.examples()) {
            System.err.println("  " + t.scenario() + ", " + t.nodes() + " x " + t.rails() + ", " + t.plan() + ": " + e);
        }
    }
}

package io.efabench.sweep;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SplittableRandom;

/**
 * Simulated fleets judged as the sweep judges a real one, without processes: the {@link Schedule}'s
 * first pass, the {@link Judge}'s second pass (its retests measured), then the Judge's findings.
 * Each NIC's speed and each measurement are drawn around the line rate with a relative spread; a
 * {@link Fault} scales chosen NICs' figures (0: unreachable). A pair's direction reads the slower
 * of its two NICs, as a real link does.
 */
final class FleetSimulator {
    /** The first pass: every pair ({@link Schedule#tournament}) or {@code quick} random matchings. */
    record Plan(int quick) {
        static final Plan TOURNAMENT = new Plan(0);

        static Plan quick(int matchings) {
            return new Plan(matchings);
        }

        List<Schedule.Round> rounds(int nodes, long seed) {
            return quick > 0 ? Schedule.quick(nodes, quick, seed) : Schedule.tournament(nodes);
        }

        @Override
        public String toString() {
            return quick > 0 ? "quick " + quick : "tournament";
        }
    }

    /**
     * What scales a NIC's figures in a pass (0: the first, 1: the second): 1 for a sound NIC, below
     * 1 for a slow one, 0 for one that cannot be reached. {@link #latency} scales its round trip.
     */
    interface Fault {
        double bandwidth(int node, int rail, int pass);

        default double latency(int node, int rail) {
            return 1;
        }

        Fault NONE = (n, k, p) -> 1;
    }

    /**
     * @param lineGbps every NIC's nominal rate
     * @param level    a clean figure's mean, a fraction of the line rate (what the probe reaches)
     * @param spread   the relative standard deviation of a clean figure: half of its variance is
     *                 the NIC's own (the same in every pair), half the measurement's
     * @param p50us    a clean round trip's p50
     */
    record Model(double lineGbps, double level, double spread, double p50us) {}

    private final int nodes;
    private final int rails;
    private final Model model;
    private final Plan plan;
    private final Thresholds thresholds;

    FleetSimulator(int nodes, int rails, Model model, Plan plan, Thresholds thresholds) {
        this.nodes = nodes;
        this.rails = rails;
        this.model = model;
        this.plan = plan;
        this.thresholds = thresholds;
    }

    /** One fleet, drawn from {@code seed}, swept and judged. */
    Outcome sweep(Fault fault, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        double part = model.spread() / Math.sqrt(2);
        double[][] nic = new double[nodes][rails];
        for (int i = 0; i < nodes; i++) {
            for (int k = 0; k < rails; k++) {
                nic[i][k] = Math.max(0.05, 1 + part * random.nextGaussian());
            }
        }
        List<LinkResult> links = new ArrayList<>();
        for (Schedule.Round r : plan.rounds(nodes, seed)) {
            for (Schedule.Pair p : r.pairs()) {
                for (int k = 0; k < rails; k++) {
                    links.add(measure(p.a(), p.b(), k, 0, nic, fault, random, part));
                }
            }
        }
        int firstPass = links.size();
        for (List<Judge.Retest> round : new Judge(nodes, rails, thresholds, links, Map.of()).retests()) {
            for (Judge.Retest t : round) {
                links.add(measure(t.node(), t.partner(), t.rail(), 1, nic, fault, random, part));
            }
        }
        return new Outcome(new Judge(nodes, rails, thresholds, links, Map.of()).findings(), firstPass, links.size() - firstPass);
    }

    private LinkResult measure(int a, int b, int k, int pass, double[][] nic, Fault fault, SplittableRandom random,
            double part) {
        double f = Math.min(fault.bandwidth(a, k, pass), fault.bandwidth(b, k, pass));
        boolean retest = pass > 0;
        if (f <= 0) {
            return LinkResult.failed(a, b, k, "simulated: unreachable", retest);
        }
        double both = model.lineGbps() * model.level() * Math.min(nic[a][k], nic[b][k]) * f;
        double ab = both * Math.max(0.05, 1 + part * random.nextGaussian());
        double ba = both * Math.max(0.05, 1 + part * random.nextGaussian());
        double slowerRtt = Math.max(fault.latency(a, k), fault.latency(b, k));
        double p50 = model.p50us() * slowerRtt * Math.max(0.05, 1 + part * random.nextGaussian());
        return new LinkResult(a, b, k, ab, ba, p50, 1.5 * p50, null, retest);
    }


    /** What one swept fleet named, and how many measurements each pass took. */
    record Outcome(List<Finding> findings, int firstPass, int secondPass) {
        /** Findings as "KIND node rail" strings (node or rail -1 where the kind has none). */
        List<String> named() {
            return findings.stream().map(FleetSimulator::label).sorted().toList();
        }
    }

    static String label(Finding f) {
        return switch (f.kind()) {
            case NIC -> "NIC " + f.node() + " rail " + f.rail();
            case NODE -> "NODE " + f.node();
            case RAIL -> "RAIL " + f.rail();
            case PAIR -> "PAIR " + f.node() + "-" + f.partner() + " rail " + f.rail();
            case DEAD -> "DEAD " + f.node();
        };
    }

    /** A fleet's random choices for a scenario (which NIC, node or rail is faulty), from its seed. */
    static Random picks(long seed) {
        return new Random(seed * 0x9E3779B97F4A7C15L);
    }
}

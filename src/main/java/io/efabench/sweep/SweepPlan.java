package io.efabench.sweep;

import java.util.List;
import java.util.Locale;

/**
 * {@code ./run-jmh.sh sweep --plan --nodes N --rails M [--quick [K]] [--seconds S] [--step-seconds X]}:
 * the schedule's rounds and steps for a fleet and the wall time to expect, without a fleet. A step
 * is a round on every rail at once: its timed part is {@link #TIMED_SECONDS_PER_SECOND} x
 * {@code --seconds} (each direction's Write a quarter warm-up and the timed writes, then a
 * ping-pong of a quarter), and the rest (three trials opened per rail, their rendezvous, the
 * group's barrier and allgather) is {@code --step-seconds} minus that, by default what
 * {@link #MEASURED_OVERHEAD_S} says was measured ({@code measuredStep}). The plan is for nodes of their own CPUs, every
 * rail at once.
 */
record SweepPlan(int nodes, int rails, int quick, long seed, double seconds, double stepSeconds, boolean measuredStep) {
    /** A step's timed seconds per second of {@code --seconds}: 2 x (1/4 + 1) for the Writes, 1/4 for the ping-pong. */
    static final double TIMED_SECONDS_PER_SECOND = 2.75;
    /**
     * A step's seconds beyond its timed part where every rail's threads have cores of their own
     * (a p5 node has 192): one rail's, as measured on the testbed at 2 nodes, a core each, one
     * rail at a time, {@code --quick 6}: 1.4 s at {@code --seconds 0.5}, 1.85 s at 1 (2026-12-02,
     * results page, "The sweep's step"). Two rails at once on one core a node took 4.4 s: the
     * core's turns, not the fleet's.
     */
    static final double MEASURED_OVERHEAD_S = 1.6;
    /** Second-pass steps a fleet with a fault or two takes (its suspects and their known-good partners, packed). */
    static final int SECOND_PASS_STEPS = 2;

    static final String USAGE = "usage: ./run-jmh.sh sweep --plan --nodes N --rails M [--quick [K]] [--seed S] [--seconds S]"
            + " [--step-seconds X]";

    static boolean asked(String[] args) {
        return List.of(args).contains("--plan");
    }

    static SweepPlan parse(String[] args) {
        int nodes = 0;
        int rails = 0;
        int quick = 0;
        long seed = 1;
        double seconds = 1;
        double step = Double.NaN;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--plan" -> { }
                case "--nodes" -> nodes = whole(a, SweepOptions.value(args, ++i, a), 2, 1 << 20);
                case "--rails" -> rails = whole(a, SweepOptions.value(args, ++i, a), 1, 1024);
                case "--quick" -> {
                    quick = 3;
                    if (i + 1 < args.length && args[i + 1].matches("\\d+")) {
                        quick = whole(a, args[++i], 1, 1000);
                    }
                }
                case "--seed" -> seed = whole(a, SweepOptions.value(args, ++i, a), 1, Integer.MAX_VALUE);
                case "--seconds" -> seconds = SweepOptions.number(a, SweepOptions.value(args, ++i, a), 0.05, 3600);
                case "--step-seconds" -> step = SweepOptions.number(a, SweepOptions.value(args, ++i, a), 0.01, 86400);
                default -> throw new IllegalArgumentException("--plan: unknown option '" + a + "'\n" + USAGE);
            }
        }
        if (nodes == 0 || rails == 0) {
            throw new IllegalArgumentException("--plan wants --nodes and --rails\n" + USAGE);
        }
        boolean measured = Double.isNaN(step);
        return new SweepPlan(nodes, rails, quick, seed, seconds,
                measured ? TIMED_SECONDS_PER_SECOND * seconds + MEASURED_OVERHEAD_S : step, measured);
    }

    /** First-pass steps: one per round, every rail at once. */
    int firstPassSteps() {
        return (quick > 0 ? Schedule.quick(nodes, quick, seed) : Schedule.tournament(nodes)).size();
    }

    /** Expected wall seconds: the first pass, and the second pass a fault or two would add. */
    double expectedSeconds() {
        return (firstPassSteps() + SECOND_PASS_STEPS) * stepSeconds;
    }

    List<String> describe() {
        int steps = firstPassSteps();
        long pairs = quick > 0 ? (long) steps * (nodes / 2) : (long) nodes * (nodes - 1) / 2;
        return List.of(
                String.format(Locale.ROOT, "sweep plan: %d nodes x %d rails, %s: %d rounds, a step each (every rail at once),"
                        + " %d pairs x %d rails = %d pair-rails", nodes, rails, quick > 0 ? quick + " random matchings"
                                : "every pair", steps, pairs, rails, pairs * rails),
                String.format(Locale.ROOT, "  a step: %.2f s (%.2f s timed at --seconds %.2f, the rest set-up and waits%s)",
                        stepSeconds, TIMED_SECONDS_PER_SECOND * seconds, seconds,
                        measuredStep ? String.format(Locale.ROOT, ", %.2f s as measured on the testbed", MEASURED_OVERHEAD_S) : ""),
                String.format(Locale.ROOT, "  first pass: %d steps, %.1f min; second pass, a fault or two: %d steps, %.1f min",
                        steps, steps * stepSeconds / 60, SECOND_PASS_STEPS, SECOND_PASS_STEPS * stepSeconds / 60),
                String.format(Locale.ROOT, "  expected wall time: %.1f min", expectedSeconds() / 60));
    }

    private static int whole(String option, String v, int min, int max) {
        if (!v.matches("\\d{1,9}")) {
            throw new IllegalArgumentException("--plan: " + option + " " + v + ": must be a whole number from " + min
                    + " to " + max);
        }
        return (int) SweepOptions.number(option, v, min, max);
    }
}

package io.efabench.launch;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * What run-jmh.sh does to the user's JMH arguments: hides the test helper, tells a listing from a
 * run, refuses what the launcher sets itself, and adds the fixed arguments every rank runs with.
 */
final class JmhArgs {
    static final String METRICS_PROFILER = "io.efabench.harness.MetricsProfiler";
    /** JMH invocations that list or explain rather than run. */
    private static final Set<String> INFO_ONLY = Set.of("-l", "-lp", "-lprof", "-lrf", "-h", "-help", "--help");

    private JmhArgs() {}

    /** LauncherProbeBenchmark is a test helper (LauncherIT): kept out of -l and of runs by regex unless named. */
    static List<String> hideTestHelpers(List<String> args) {
        if (args.isEmpty() || args.stream().anyMatch(a -> a.contains("LauncherProbe"))) {
            return args;
        }
        List<String> out = new ArrayList<>(args);
        out.addAll(List.of("-e", "LauncherProbeBenchmark"));
        return out;
    }

    static boolean infoOnly(List<String> args) {
        return args.stream().anyMatch(INFO_ONLY::contains);
    }

    /**
     * Refuses, in one line, what the launcher sets itself (-rf, -rff: rank 0's JSON goes to the
     * run folder) and a {@code -p config=} value the selected benchmarks do not take.
     */
    static void check(List<String> args) {
        for (String a : args) {
            String name = a.contains("=") ? a.substring(0, a.indexOf('=')) : a;
            if (name.equals("-rf") || name.equals("-rff")) {
                throw new IllegalArgumentException(name + " is set by the launcher (rank 0's JSON goes to results/<run>/jmh.json);"
                        + " leave it out");
            }
        }
        JmhSelection.checkParams(args.toArray(String[]::new));
    }

    /**
     * A rank's arguments: {@code args}, then fail-on-error unless the user set -foe, the metrics
     * profiler unless {@code metrics} is false (EFABENCH_NO_METRICS=1), and JSON results into {@code resultFile}.
     */
    static List<String> rankArgs(List<String> args, List<String> userArgs, Path resultFile, boolean metrics) {
        List<String> out = new ArrayList<>(args);
        if (!userArgs.contains("-foe")) {
            out.addAll(List.of("-foe", "true"));
        }
        if (metrics) {
            out.addAll(List.of("-prof", METRICS_PROFILER));
        }
        out.addAll(List.of("-rf", "json", "-rff", resultFile.toString()));
        return out;
    }
}

package io.efabench.launch;

import java.util.ArrayList;
import java.util.List;

/**
 * The JMH runs one {@code ./run-jmh.sh} command makes, so the script only runs them. The user's
 * arguments are one run; where no GPU is visible and they name no config, with the selected
 * benchmarks' host configs ({@link Launch#hostConfigs}), the device ones named as skipped. No
 * arguments: the quick suite, and where no GPU is visible its host configs as two runs (SendRecv's
 * and Write's configs have different names, and JMH's {@code -p} applies to every benchmark of a
 * run) whose results join the first one's run folder ({@link RunFolder#merge}).
 *
 * <p>A suite's TAG is empty for the first run of the command, else the run folder suffix of a
 * later one (e.g. {@code write}); {@link Plan} hands the suites to the script.
 */
final class Suites {
    /** The quick suite's options: a few minutes on a 2-core laptop. */
    static final List<String> QUICK_OPTIONS = List.of("-p", "size=4K,64K,1M,16M", "-wi", "1", "-w", "1s", "-i", "3", "-r", "1s",
            "-f", "1");
    static final List<String> QUICK_BENCHMARKS = List.of("SendRecvBenchmark", "WriteBenchmark");
    /** The quick suite where no GPU is visible: each benchmark with its host configs. */
    static final List<List<String>> QUICK_HOST = List.of(List.of("SendRecvBenchmark", "-p", "config=SingleHost"),
            List.of("WriteBenchmark", "-p", "config=SinglePin,MultiPin,RoundRobinPin"));

    record Suite(String tag, List<String> jmhArgs) {}

    record Plan(List<String> notes, List<Suite> suites) {}

    private Suites() {}

    static Plan plan(List<String> jmhArgs, boolean gpuVisible) {
        List<String> notes = new ArrayList<>();
        List<Suite> suites = new ArrayList<>();
        if (!jmhArgs.isEmpty()) {
            List<String> args = new ArrayList<>(jmhArgs);
            JmhSelection.HostConfigs h = gpuVisible ? null : JmhSelection.hostConfigs(jmhArgs.toArray(String[]::new));
            if (h != null) {
                notes.add("no GPU visible here: skipping the device configs (" + String.join(", ", h.skipped())
                        + "); running -p config=" + String.join(",", h.host()));
                args.addAll(List.of("-p", "config=" + String.join(",", h.host())));
            }
            suites.add(new Suite("", args));
        } else if (gpuVisible) {
            List<String> args = new ArrayList<>(QUICK_BENCHMARKS);
            args.addAll(QUICK_OPTIONS);
            suites.add(new Suite("", args));
        } else {
            notes.add("no GPU visible here: the quick suite runs the host configs, " + String.join(" and ", QUICK_BENCHMARKS)
                    + " one after the other, into one run folder");
            for (List<String> host : QUICK_HOST) {
                List<String> args = new ArrayList<>(host);
                args.addAll(QUICK_OPTIONS);
                String name = host.getFirst().toLowerCase(java.util.Locale.ROOT).replaceFirst("benchmark$", "");
                suites.add(new Suite(suites.isEmpty() ? "" : name, args));
            }
        }
        return new Plan(notes, suites);
    }
}

package io.efabench.launch;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Rank 0's JMH arguments under {@code ./run-jmh.sh --profile}: the user's, with async-profiler
 * (unpacked by {@code mvn package} beside the jar) writing flame graphs into the run folder, and
 * the JVM flags that make its frames exact. JMH splits a lone {@code -jvmArgsAppend} value at
 * spaces but not repeated ones, so every flag gets its own. Perf events off
 * ({@code kernel.perf_event_paranoid} above 2) and no {@code EFABENCH_PROFILE_EVENT}: itimer
 * sampling, said in one line.
 */
final class ProfileArgs {
    private ProfileArgs() {}

    /**
     * @param jarDir   the jar's folder (async-profiler/ARCH/libasyncProfiler.so below it)
     * @param runDir   the run folder (flame graphs go to its profile/)
     * @param arch     {@code os.arch}
     * @param event    EFABENCH_PROFILE_EVENT, or null
     * @param paranoid kernel.perf_event_paranoid, or null where unreadable
     * @param notes    where the one-line notes go
     */
    static List<String> leaderArgs(List<String> jmhArgs, Path jarDir, Path runDir, String arch, String event, String paranoid,
            java.util.function.Consumer<String> notes) {
        String dir = switch (arch) {
            case "amd64", "x86_64" -> "linux-x64";
            case "aarch64", "arm64" -> "linux-arm64";
            default -> throw new IllegalArgumentException("--profile: async-profiler has no library for " + arch);
        };
        Path lib = jarDir.resolve("async-profiler").resolve(dir).resolve("libasyncProfiler.so");
        if (!Files.isRegularFile(lib)) {
            throw new IllegalArgumentException("--profile: no " + lib + " (mvn package unpacks tools.profiler:async-profiler there)");
        }
        if (event == null || event.isBlank()) {
            event = null;
            int level = 4;
            try {
                level = paranoid == null ? 4 : Integer.parseInt(paranoid.strip());
            } catch (NumberFormatException ignored) {
                // unreadable: as if perf events were off
            }
            if (level > 2) {
                event = "itimer";
                notes.accept("--profile: perf events are off (kernel.perf_event_paranoid=" + (paranoid == null ? "?" : paranoid.strip())
                        + "); sampling with itimer");
            }
        }
        List<String> rest = new ArrayList<>();
        List<String> flags = new ArrayList<>();
        for (int i = 0; i < jmhArgs.size(); i++) {
            if (jmhArgs.get(i).equals("-jvmArgsAppend") && i + 1 < jmhArgs.size()) {
                for (String f : jmhArgs.get(++i).strip().split("\\s+")) {
                    if (!f.isEmpty()) {
                        flags.add(f);
                    }
                }
            } else {
                rest.add(jmhArgs.get(i));
            }
        }
        flags.add("-XX:+UnlockDiagnosticVMOptions");
        flags.add("-XX:+DebugNonSafepoints");
        rest.add("-prof");
        rest.add("async:libPath=" + lib + ";output=flamegraph" + (event != null ? ";event=" + event : "") + ";dir="
                + runDir.resolve("profile"));
        for (String f : flags) {
            rest.add("-jvmArgsAppend");
            rest.add(f);
        }
        return rest;
    }
}

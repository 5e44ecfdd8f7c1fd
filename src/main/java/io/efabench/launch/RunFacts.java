package io.efabench.launch;

import java.io.IOException;
import java.util.ArrayList;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** The launcher's provenance facts of a run: mode, ranks, hosts, JVM, git commit, CPU, time. */
final class RunFacts {
    private RunFacts() {}

    static Map<String, Object> facts(String mode, int ranks, String provider, List<String> hosts, List<String> jmhArgs,
            String commandLine, Path root) {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("timestamp", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
        String commit = git(root, "rev-parse", "HEAD");
        f.put("git_commit", commit == null ? "unknown" : commit.trim());
        String status = commit == null ? null : git(root, "status", "--porcelain", "--untracked-files=no");
        f.put("git_dirty", status != null && !status.isBlank());
        f.put("command_line", commandLine);
        f.put("jmh_args", jmhArgs);
        f.put("mode", mode);
        f.put("ranks", ranks);
        f.put("provider", provider);
        f.put("hosts", hosts);
        f.put("java", System.getProperty("java.vendor") + " " + Runtime.version());
        f.put("java_home", System.getProperty("java.home"));
        f.put("kernel", System.getProperty("os.version"));
        f.put("cpu_model", cpuModel());
        f.put("cpus", Runtime.getRuntime().availableProcessors());
        return f;
    }

    /** The output of git in {@code root}, or null (no git, not a checkout, or it failed). */
    private static String git(Path root, String... args) {
        List<String> cmd = new ArrayList<>(List.of("git", "-C", root.toString()));
        cmd.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return null;
            }
            return p.exitValue() == 0 ? out : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name") || line.startsWith("Model")) {
                    int colon = line.indexOf(':');
                    if (colon > 0) {
                        return line.substring(colon + 1).trim();
                    }
                }
            }
        } catch (IOException ignored) {
            // not Linux: the architecture below
        }
        return System.getProperty("os.arch");
    }
}

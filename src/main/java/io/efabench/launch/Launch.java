package io.efabench.launch;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.efabench.harness.MemoryConfig;
import io.efabench.harness.MemoryKind;
import io.efabench.rank.RankException;
import io.efabench.report.ReportException;

/**
 * What run-jmh.sh asks Java instead of working it out in bash, so there is one source of truth:
 * bash starts, watches and stops processes. Commands (exit 0; a refusal is one line on stderr and
 * exit 2, or 1 where a run folder could not be made or finished):
 * <ul>
 *   <li>{@code plan local|cluster ARGS...}: what the command does ({@link Plan}: the launcher's
 *       options, the rank as {@code RankEnv} reads it, the JMH runs), in NUL-ended tokens.</li>
 *   <li>{@code start ...}, {@code merge ...}, {@code finish ...}: a run folder before and after its
 *       ranks ({@link RunFolder}: name, provenance and each rank's JMH arguments; one folder for a
 *       command's suites; flame graphs and the report).</li>
 * </ul>
 */
public final class Launch {
    /** A refusal with its exit status. */
    static final class Failed extends RuntimeException {
        final int status;

        Failed(int status, String message) {
            super(message);
            this.status = status;
        }
    }

    private Launch() {}

    public static void main(String[] args) {
        try {
            System.exit(run(args));
        } catch (Failed e) {
            System.err.println("run-jmh: " + e.getMessage());
            System.exit(e.status);
        } catch (RankException | IllegalArgumentException | ReportException e) {
            System.err.println("run-jmh: " + e.getMessage());
            System.exit(2);
        }
    }

    static int run(String[] args) {
        if (args.length == 0) {
            throw new IllegalArgumentException("usage: Launch plan|start|merge|finish ...");
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        switch (args[0]) {
            case "plan" -> out.print(tokens(Plan.answer(rest)));
            case "start" -> out.print(tokens(RunFolder.start(rest, System.getenv())));
            case "merge" -> {
                if (rest.length < 3 || rest.length > 4) {
                    throw new IllegalArgumentException("usage: Launch merge INTO FROM TAG [keep]");
                }
                RunFolder.merge(Path.of(rest[0]), Path.of(rest[1]), rest[2], rest.length == 4, System.out);
            }
            case "finish" -> {
                if (rest.length != 3) {
                    throw new IllegalArgumentException("usage: Launch finish RUN_DIR PROFILE REPORT");
                }
                return RunFolder.finish(Path.of(rest[0]), rest[1].equals("yes"), rest[2].equals("yes"), System.out);
            }
            default -> throw new IllegalArgumentException("unknown command '" + args[0] + "' (plan, start, merge, finish)");
        }
        out.flush();
        return 0;
    }

    /** Each token ended by a NUL byte, as bash's {@code mapfile -d ''} reads them. */
    static String tokens(List<String> tokens) {
        StringBuilder s = new StringBuilder();
        tokens.forEach(t -> s.append(t).append('\0'));
        return s.toString();
    }

    /**
     * Forks JMH runs for {@code jmhArgs}: per matching benchmark, the modes (-bm, else its own;
     * "all" is four), times the param combinations (-p overrides, else the benchmark's values),
     * times its forks plus warm-up forks (options, else annotations, else JMH's defaults 5 and 0;
     * -f 0 still runs each trial once).
     */
    static long forks(String[] jmhArgs) {
        var o = options(jmhArgs);
        long total = 0;
        for (var e : selected(o)) {
            long modes = !o.getBenchModes().isEmpty() ? o.getBenchModes().size()
                    : e.getMode() == org.openjdk.jmh.annotations.Mode.All ? 4 : 1;
            long combos = 1;
            if (e.getParams().hasValue()) {
                for (var p : e.getParams().get().entrySet()) {
                    var override = o.getParameter(p.getKey());
                    combos *= override.hasValue() ? override.get().size() : p.getValue().length;
                }
            }
            int forks = o.getForkCount().orElse(e.getForks().orElse(5));
            int warmups = o.getWarmupForkCount().orElse(e.getWarmupForks().orElse(0));
            total += modes * combos * (Math.max(1, forks) + warmups);
        }
        return total;
    }

    /**
     * Refuses, in one line, a {@code -p name=value} whose value the matching benchmarks cannot take
     * as an enum {@code @Param} (configs): JMH would fail every trial with a raw
     * IllegalArgumentException that does not list the names it takes. Values of other types are
     * the benchmarks' own to check.
     */
    static void checkParams(String[] jmhArgs) {
        var o = options(jmhArgs);
        for (var e : selected(o)) {
            if (!e.getParams().hasValue()) {
                continue;
            }
            for (String name : e.getParams().get().keySet()) {
                var override = o.getParameter(name);
                if (!override.hasValue()) {
                    continue;
                }
                Class<?> type = paramType(e.getUserClassQName(), name);
                if (type == null || !type.isEnum()) {
                    continue;
                }
                List<String> names = Arrays.stream(type.getEnumConstants()).map(c -> ((Enum<?>) c).name()).toList();
                for (String v : override.get()) {
                    if (!names.contains(v)) {
                        throw new IllegalArgumentException("-p " + name + "=" + v + ": " + simpleName(e) + " takes "
                                + String.join(", ", names));
                    }
                }
            }
        }
    }

    /** The host configs to run instead of the benchmarks' defaults, and the device configs that are skipped. */
    record HostConfigs(List<String> host, List<String> skipped) {}

    /**
     * Where no GPU is visible: the selected benchmarks' default configs without the device ones
     * (an enum config that is a {@link MemoryConfig} of DEVICE memory needs CUDA and fails its trial, which ends
     * the run). Null when the user named configs ({@code -p config=}: theirs to choose) or no
     * default config needs a GPU. JMH's {@code -p} applies to every selected benchmark, so
     * benchmarks whose host configs differ cannot share one run: refused in one line.
     */
    static HostConfigs hostConfigs(String[] jmhArgs) {
        var o = options(jmhArgs);
        if (o.getParameter("config").hasValue()) {
            return null;
        }
        java.util.Map<String, List<String>> hostBy = new java.util.TreeMap<>();
        java.util.Set<String> skipped = new java.util.LinkedHashSet<>();
        for (var e : selected(o)) {
            if (!e.getParams().hasValue() || !e.getParams().get().containsKey("config")) {
                continue;
            }
            Class<?> type = paramType(e.getUserClassQName(), "config");
            if (type == null || !type.isEnum()) {
                continue;
            }
            List<String> host = new ArrayList<>();
            for (String v : e.getParams().get().get("config")) {
                if (needsGpu(type, v)) {
                    skipped.add(v);
                } else {
                    host.add(v);
                }
            }
            hostBy.put(simpleName(e), host);
        }
        if (skipped.isEmpty()) {
            return null;
        }
        var lists = new java.util.HashSet<>(hostBy.values());
        if (lists.size() > 1) {
            throw new IllegalArgumentException("no GPU visible here, and " + String.join(", ", hostBy.keySet())
                    + " have different host configs, which one -p config= cannot name: run them one at a time,"
                    + " or name configs with -p config=");
        }
        List<String> host = lists.iterator().next();
        if (host.isEmpty()) {
            throw new IllegalArgumentException("no GPU visible here, and " + String.join(", ", hostBy.keySet())
                    + " has only device configs (" + String.join(", ", skipped) + ")");
        }
        return new HostConfigs(host, List.copyOf(skipped));
    }

    /** True when the enum constant {@code name} of {@code type} is a {@link MemoryConfig} of device memory. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static boolean needsGpu(Class<?> type, String name) {
        if (!MemoryConfig.class.isAssignableFrom(type)) {
            return false;
        }
        try {
            return ((MemoryConfig) Enum.valueOf((Class) type, name)).memory() == MemoryKind.DEVICE;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** The benchmark class's simple name, as users write it ({@code WriteBenchmark}). */
    private static String simpleName(org.openjdk.jmh.runner.BenchmarkListEntry e) {
        return e.getUserClassQName().substring(e.getUserClassQName().lastIndexOf('.') + 1);
    }

    /** The declared type of the public field {@code name} of class {@code className} (or a superclass), or null. */
    private static Class<?> paramType(String className, String name) {
        try {
            return Class.forName(className, false, Launch.class.getClassLoader()).getField(name).getType();
        } catch (ReflectiveOperationException | LinkageError e) {
            return null;
        }
    }

    /** JMH's own reading of {@code jmhArgs}; a one-line error when it refuses them. */
    private static org.openjdk.jmh.runner.options.CommandLineOptions options(String[] jmhArgs) {
        try {
            return new org.openjdk.jmh.runner.options.CommandLineOptions(jmhArgs);
        } catch (org.openjdk.jmh.runner.options.CommandLineOptionException e) {
            throw new IllegalArgumentException("JMH arguments: " + e.getMessage());
        }
    }

    /** The benchmarks of this jar that {@code o}'s includes (all when none) and excludes select, as JMH selects them. */
    private static java.util.Set<org.openjdk.jmh.runner.BenchmarkListEntry> selected(
            org.openjdk.jmh.runner.options.CommandLineOptions o) {
        List<String> includes = o.getIncludes().isEmpty() ? List.of(".*") : o.getIncludes();
        return org.openjdk.jmh.runner.BenchmarkList.defaultList()
                .find(org.openjdk.jmh.runner.format.OutputFormatFactory.createFormatInstance(
                        new java.io.PrintStream(java.io.OutputStream.nullOutputStream()),
                        org.openjdk.jmh.runner.options.VerboseMode.SILENT), includes, o.getExcludes());
    }

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

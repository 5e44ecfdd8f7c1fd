package io.efabench.launch;

import java.io.IOException;
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

import io.efabench.rank.RankEnv;
import io.efabench.rank.RankException;
import io.efabench.report.Provenance;

/**
 * What run-jmh.sh asks Java instead of working it out in bash, so there is one source of truth:
 * bash starts, watches and stops processes. Commands (exit 0, or 2 with one line on stderr):
 * <ul>
 *   <li>{@code rank}: "SOURCE RANK WORLD LOCAL_RANK LOCAL_WORLD" as {@link RankEnv} reads the
 *       environment (SOURCE: torchrun, openmpi, slurm, or single outside any launcher), the same
 *       reading every rank's benchmark does when it joins the group.</li>
 *   <li>{@code provenance RUN_DIR MODE RANKS PROVIDER HOST... [-- JMH_ARGS...]}: writes the
 *       launcher's provenance fragment ({@code provenance/launcher.json}) through
 *       {@link Provenance}; PROVIDER "-" for none; the command line comes from
 *       {@code EFABENCH_COMMAND_LINE}, the checkout from {@code EFABENCH_ROOT}.</li>
 *   <li>{@code check JMH_ARGS...}: refuses a {@code -p config=} value the benchmarks do not take.</li>
 *   <li>{@code runid local|cluster RESULTS [SUFFIX]}: the run folder's name ({@link RunIds}).</li>
 *   <li>{@code profileargs JAR_DIR RUN_DIR JMH_ARGS...}: rank 0's arguments under {@code --profile}
 *       ({@link ProfileArgs}), each ended by a NUL byte.</li>
 *   <li>{@code merge INTO_JSON FROM_JSON}: appends FROM's JMH results to INTO's, for the suites
 *       of one command that end in one run folder.</li>
 * </ul>
 */
public final class Launch {
    private Launch() {}

    public static void main(String[] args) {
        try {
            System.exit(run(args));
        } catch (RankException | IllegalArgumentException e) {
            System.err.println("run-jmh: " + e.getMessage());
            System.exit(2);
        }
    }

    static int run(String[] args) {
        if (args.length == 0) {
            throw new IllegalArgumentException("usage: Launch rank | provenance RUN_DIR MODE RANKS PROVIDER HOST... [-- JMH_ARGS...]");
        }
        switch (args[0]) {
            case "rank" -> System.out.println(describe(RankEnv.fromEnvironment()));
            case "provenance" -> provenance(Arrays.copyOfRange(args, 1, args.length));
            case "check" -> checkParams(Arrays.copyOfRange(args, 1, args.length));
            case "runid" -> System.out.println(RunIds.answer(Arrays.copyOfRange(args, 1, args.length)));
            case "profileargs" -> {
                try {
                    ProfileArgs.print(Arrays.copyOfRange(args, 1, args.length));
                } catch (IOException e) {
                    throw new IllegalArgumentException("--profile: " + e.getMessage());
                }
            }
            case "merge" -> {
                if (args.length != 3) {
                    throw new IllegalArgumentException("usage: Launch merge INTO_JSON FROM_JSON");
                }
                mergeResults(Path.of(args[1]), Path.of(args[2]));
            }
            default -> throw new IllegalArgumentException("unknown command '" + args[0]
                    + "' (rank, provenance, check, runid, profileargs, merge)");
        }
        return 0;
    }

    /**
     * Appends the JMH results in {@code from} to those in {@code into} (JSON arrays; a missing or
     * empty file holds none): the suites of one command, run one after the other, end in one run
     * folder. Written to a temporary file and moved over {@code into}, so a failure leaves it whole.
     */
    static void mergeResults(Path into, Path from) {
        try {
            com.google.gson.JsonArray all = readResults(into);
            all.addAll(readResults(from));
            Path tmp = into.resolveSibling(into.getFileName() + ".merging");
            Files.writeString(tmp, new com.google.gson.GsonBuilder().setPrettyPrinting().create().toJson(all) + "\n");
            Files.move(tmp, into, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | com.google.gson.JsonParseException | IllegalStateException e) {
            throw new IllegalArgumentException("cannot merge " + from + " into " + into + ": " + e.getMessage());
        }
    }

    private static com.google.gson.JsonArray readResults(Path json) throws IOException {
        if (!Files.exists(json) || Files.size(json) == 0) {
            return new com.google.gson.JsonArray();
        }
        return com.google.gson.JsonParser.parseString(Files.readString(json)).getAsJsonArray();
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
     * (an enum config whose {@code memory} is DEVICE needs CUDA and fails its trial, which ends
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

    /** True when the enum constant {@code name} of {@code type} has {@code memory} DEVICE (false without such a field). */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static boolean needsGpu(Class<?> type, String name) {
        try {
            return type.getField("memory").get(Enum.valueOf((Class) type, name)) == io.efabench.harness.MemoryKind.DEVICE;
        } catch (ReflectiveOperationException | IllegalArgumentException e) {
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

    static String describe(RankEnv env) {
        return env.source() + " " + env.rank() + " " + env.worldSize() + " " + env.localRank() + " " + env.localWorldSize();
    }

    private static void provenance(String[] args) {
        int dash = Arrays.asList(args).indexOf("--");
        List<String> head = Arrays.asList(dash < 0 ? args : Arrays.copyOfRange(args, 0, dash));
        List<String> jmhArgs = dash < 0 ? List.of() : Arrays.asList(Arrays.copyOfRange(args, dash + 1, args.length));
        if (head.size() < 5) {
            throw new IllegalArgumentException("provenance needs RUN_DIR MODE RANKS PROVIDER HOST...");
        }
        int ranks;
        try {
            ranks = Integer.parseInt(head.get(2));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("provenance: RANKS '" + head.get(2) + "' is not a number");
        }
        Provenance.writeFragment(Path.of(head.get(0)), Provenance.LAUNCHER,
                facts(head.get(1), ranks, head.get(3).equals("-") ? null : head.get(3), head.subList(4, head.size()), jmhArgs,
                        System.getenv().getOrDefault("EFABENCH_COMMAND_LINE", ""),
                        Path.of(System.getenv().getOrDefault("EFABENCH_ROOT", "."))));
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

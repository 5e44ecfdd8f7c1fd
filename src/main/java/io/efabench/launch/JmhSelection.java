package io.efabench.launch;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.efabench.harness.MemoryConfig;
import io.efabench.harness.MemoryKind;

/**
 * What the launcher reads from JMH's own benchmark list and option parser for the benchmarks a
 * command selects: how many forks it runs, whether its -p values are ones the benchmarks take,
 * and which default configs need a GPU.
 */
final class JmhSelection {
    private JmhSelection() {}

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
            return Class.forName(className, false, JmhSelection.class.getClassLoader()).getField(name).getType();
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
}

package io.efabench.report;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The results of one benchmark method in one mode, laid out like a seed table: rows are sizes,
 * column groups are the configs (plus any other param that varies: channels, completion,
 * grid x block).
 *
 * @param benchmark fully qualified benchmark method
 * @param mode      JMH mode
 * @param stem      file name stem for its CSV and plots, e.g. "write", "sendrecv", "ipc"
 * @param groups    column group names: by config as JMH ran them, then numeric params ascending
 * @param sizes     sizes in bytes, ascending (-1 for a benchmark without a size param)
 * @param cells     group -> size -> result
 * @param fixed     params that are the same in every entry and do not name a group (size excluded)
 */
public record Experiment(String benchmark, String mode, String stem, List<String> groups, List<Long> sizes,
                         Map<String, Map<Long, JmhResult>> cells, Map<String, String> fixed) {
    /** The proxy experiment's timed benchmark, as shortName() spells it. */
    static final String PROXY = "ProxyBenchmark.put";


    /** The result of {@code group} at {@code size}, or null. */
    public JmhResult cell(String group, long size) {
        Map<Long, JmhResult> bySize = cells.get(group);
        return bySize == null ? null : bySize.get(size);
    }

    /** "WriteBenchmark.write". */
    public String shortName() {
        return cells.values().iterator().next().values().iterator().next().shortName();
    }

    /** True for a grid x block sweep (the IPC benchmark). */
    public boolean isGridBlockSweep() {
        return cells.values().stream().flatMap(m -> m.values().stream())
                .anyMatch(r -> r.params().containsKey("grid") && r.params().containsKey("block"));
    }

    /** Splits results into experiments, one per (benchmark, mode), in file order. */
    public static List<Experiment> of(List<JmhResult> results) {
        Map<String, List<JmhResult>> byBenchmarkMode = new LinkedHashMap<>();
        Map<String, Set<String>> methodsByClass = new LinkedHashMap<>();
        Map<String, Set<String>> modesByBenchmark = new LinkedHashMap<>();
        for (JmhResult r : results) {
            byBenchmarkMode.computeIfAbsent(r.benchmark() + " " + r.mode(), k -> new ArrayList<>()).add(r);
            methodsByClass.computeIfAbsent(className(r.benchmark()), k -> new LinkedHashSet<>()).add(r.benchmark());
            modesByBenchmark.computeIfAbsent(r.benchmark(), k -> new LinkedHashSet<>()).add(r.mode());
        }
        List<Experiment> experiments = new ArrayList<>();
        for (List<JmhResult> rs : byBenchmarkMode.values()) {
            JmhResult first = rs.getFirst();
            String stem = stem(first.benchmark());
            if (methodsByClass.get(className(first.benchmark())).size() > 1) stem += "-" + method(first.benchmark());
            if (modesByBenchmark.get(first.benchmark()).size() > 1) stem += "-" + first.mode();
            experiments.add(build(first.benchmark(), first.mode(), stem, rs));
        }
        return experiments;
    }

    private static Experiment build(String benchmark, String mode, String stem, List<JmhResult> rs) {
        Set<String> keys = new LinkedHashSet<>();
        rs.forEach(r -> keys.addAll(r.params().keySet()));
        // Every value of every param, in order of first appearance (JMH's order of the @Param values).
        Map<String, List<String>> values = new LinkedHashMap<>();
        for (JmhResult r : rs) {
            for (String key : keys) {
                List<String> seen = values.computeIfAbsent(key, k -> new ArrayList<>());
                String v = r.params().getOrDefault(key, "");
                if (!seen.contains(v)) seen.add(v);
            }
        }
        List<String> varying = new ArrayList<>();
        Map<String, String> fixed = new LinkedHashMap<>();
        for (var e : values.entrySet()) {
            if (e.getKey().equals("size")) continue;
            if (e.getValue().size() > 1) varying.add(e.getKey());
            else fixed.put(e.getKey(), e.getValue().getFirst());
        }
        // grid and block read as one "128x256" label as soon as either varies.
        boolean gridBlock = values.containsKey("grid") && values.containsKey("block")
                && (varying.contains("grid") || varying.contains("block"));
        if (gridBlock) {
            varying.removeAll(List.of("grid", "block"));
            varying.addFirst("grid");
            fixed.remove("grid");
            fixed.remove("block");
        }
        // The config names the column group when it varies, or when nothing else does (seed style).
        if (values.containsKey("config") && (varying.remove("config") || varying.isEmpty())) {
            varying.addFirst("config");
            fixed.remove("config");
        }
        List<JmhResult> ordered = new ArrayList<>(rs);
        ordered.sort(groupOrder(varying, values));
        Map<String, Map<Long, JmhResult>> cells = new LinkedHashMap<>();
        Set<Long> sizes = new TreeSet<>();
        for (JmhResult r : ordered) {
            long size = r.sizeBytes();
            sizes.add(size);
            cells.computeIfAbsent(groupName(r, varying, method(benchmark)), g -> new LinkedHashMap<>()).putIfAbsent(size, r);
        }
        return new Experiment(benchmark, mode, stem, List.copyOf(cells.keySet()), List.copyOf(sizes), cells, fixed);
    }

    /** Groups sorted key by key: numbers numerically (1x256 before 1x1024 before 16x256), words in file order. */
    private static Comparator<JmhResult> groupOrder(List<String> varying, Map<String, List<String>> values) {
        Comparator<JmhResult> order = (a, b) -> 0;
        for (String key : varying) {
            List<String> sortKeys = key.equals("grid") ? List.of("grid", "block") : List.of(key);
            for (String k : sortKeys) {
                List<String> seen = values.get(k);
                order = order.thenComparing((a, b) -> {
                    String x = a.params().getOrDefault(k, ""), y = b.params().getOrDefault(k, "");
                    if (isNumber(x) && isNumber(y)) return Long.compare(Long.parseLong(x), Long.parseLong(y));
                    return Integer.compare(seen.indexOf(x), seen.indexOf(y));
                });
            }
        }
        return order;
    }

    /** "SinglePin", "SinglePin/remote", "MultiPin/channels=4", "128x256", "CopyEngine". */
    static String groupName(JmhResult r, List<String> varying, String fallback) {
        List<String> parts = new ArrayList<>();
        for (String key : varying) {
            String value = r.params().getOrDefault(key, "");
            if (key.equals("grid") && r.params().containsKey("block")) {
                String block = r.params().get("block");
                // A launch shape means nothing for a config that launches no kernel (grid or block 0).
                // Grids may be SM multiples ("2sm"), so only a literal 0 means "no launch".
                if (!value.isEmpty() && !block.isEmpty() && !value.equals("0") && !block.equals("0")) {
                    parts.add(value + "x" + block);
                }
            } else if (key.equals("config")) {
                parts.add(value);
            } else {
                parts.add(isNumber(value) ? key + "=" + value : value);
            }
        }
        return parts.isEmpty() ? fallback : String.join("/", parts);
    }

    private static boolean isNumber(String s) {
        return !s.isEmpty() && s.length() <= 18 && s.chars().allMatch(Character::isDigit);
    }

    private static String className(String benchmark) {
        return benchmark.substring(0, Math.max(benchmark.lastIndexOf('.'), 0));
    }

    private static String method(String benchmark) {
        return benchmark.substring(benchmark.lastIndexOf('.') + 1);
    }

    /** io.efabench.bench.SendRecvBenchmark.pingPong -> "sendrecv". */
    private static String stem(String benchmark) {
        String cls = className(benchmark);
        String simple = cls.substring(cls.lastIndexOf('.') + 1);
        if (simple.endsWith("Benchmark") && simple.length() > "Benchmark".length()) {
            simple = simple.substring(0, simple.length() - "Benchmark".length());
        }
        return simple.isEmpty() ? method(benchmark).toLowerCase(java.util.Locale.ROOT) : simple.toLowerCase(java.util.Locale.ROOT);
    }
}

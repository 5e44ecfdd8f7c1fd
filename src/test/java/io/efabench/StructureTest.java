package io.efabench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.constantpool.PoolEntry;
import java.lang.classfile.constantpool.Utf8Entry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The layering of docs/DESIGN.md, held against the code: who uses whom is read from the compiled
 * classes (every io/efabench name in a class's constant pool: types, descriptors, generic
 * signatures) and from the sources' imports (a compile-time constant leaves no trace in the
 * bytecode). Each file is the top-level class it declares; nested classes count as their file.
 * Generated bindings (jextract's) are left out: they use nothing of efabench.
 */
class StructureTest {
    private static final Pattern NAME = Pattern.compile("io/efabench/[A-Za-z0-9_/$]+");
    private static final Pattern IMPORT = Pattern.compile("(?m)^import\\s+(?:static\\s+)?(io\\.efabench\\.[\\w.]+?)\\.([A-Z]\\w*)");
    private static final Pattern PACKAGE = Pattern.compile("(?m)^package\\s+([\\w.]+);");

    /** The harness's workloads: none uses another (DESIGN, "Layers"). */
    private static final List<String> WORKLOADS = List.of("io.efabench.harness.write", "io.efabench.harness.alltoall",
            "io.efabench.harness.moe", "io.efabench.harness.pingpong", "io.efabench.harness.proxy", "io.efabench.harness.ipc");

    /** file (top-level class name) -> the files it uses; every file of main and the benchmarks. */
    static Map<String, Set<String>> fileGraph() throws IOException {
        Map<String, Set<String>> uses = new TreeMap<>();
        Path classes = Path.of(System.getProperty("efabench.classes", "target/classes"));
        if (!Files.isDirectory(classes.resolve("io/efabench"))) {
            classes = Path.of(StructureTest.class.getProtectionDomain().getCodeSource().getLocation().getPath())
                    .resolveSibling("classes");
        }
        try (Stream<Path> files = Files.walk(classes.resolve("io/efabench"))) {
            for (Path p : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                var model = ClassFile.of().parse(Files.readAllBytes(p));
                String from = file(model.thisClass().asInternalName());
                Set<String> to = uses.computeIfAbsent(from, k -> new TreeSet<>());
                for (PoolEntry e : model.constantPool()) {
                    if (e instanceof Utf8Entry u) {
                        Matcher m = NAME.matcher(u.stringValue());
                        while (m.find()) {
                            to.add(file(m.group()));
                        }
                    }
                }
            }
        }
        for (String root : List.of("src/main/java", "src/jmh/java")) {
            try (Stream<Path> files = Files.walk(Path.of(root))) {
                for (Path p : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                    String text = Files.readString(p);
                    Matcher pkg = PACKAGE.matcher(text);
                    if (!pkg.find()) {
                        continue;
                    }
                    String name = p.getFileName().toString().replace(".java", "");
                    Set<String> to = uses.computeIfAbsent(pkg.group(1) + "." + name, k -> new TreeSet<>());
                    Matcher m = IMPORT.matcher(text);
                    while (m.find()) {
                        to.add(m.group(1) + "." + m.group(2));
                    }
                }
            }
        }
        uses.forEach((f, to) -> to.remove(f));
        return uses;
    }

    /** The top-level class of an internal name: io/efabench/a/B$C -> io.efabench.a.B. */
    private static String file(String internalName) {
        String n = internalName.replace('/', '.');
        int nested = n.indexOf('$');
        return nested < 0 ? n : n.substring(0, nested);
    }

    static String packageOf(String file) {
        return file.substring(0, file.lastIndexOf('.'));
    }

    static Map<String, Set<String>> packageGraph(Map<String, Set<String>> files) {
        Map<String, Set<String>> uses = new TreeMap<>();
        files.forEach((f, to) -> {
            Set<String> mine = uses.computeIfAbsent(packageOf(f), k -> new TreeSet<>());
            for (String t : to) {
                if (!packageOf(t).equals(packageOf(f))) {
                    mine.add(packageOf(t));
                }
            }
        });
        return uses;
    }

    /** Strongly connected components of more than one node (Tarjan, iterative). */
    static List<List<String>> circles(Map<String, Set<String>> g) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new TreeSet<>();
        List<List<String>> out = new ArrayList<>();
        int[] next = {0};
        for (String start : g.keySet()) {
            if (index.containsKey(start)) {
                continue;
            }
            Deque<Map.Entry<String, ArrayDeque<String>>> work = new ArrayDeque<>();
            index.put(start, next[0]);
            low.put(start, next[0]++);
            stack.push(start);
            onStack.add(start);
            work.push(Map.entry(start, new ArrayDeque<>(g.getOrDefault(start, Set.of()))));
            while (!work.isEmpty()) {
                var top = work.peek();
                String v = top.getKey();
                String w = top.getValue().poll();
                if (w != null) {
                    if (!index.containsKey(w)) {
                        index.put(w, next[0]);
                        low.put(w, next[0]++);
                        stack.push(w);
                        onStack.add(w);
                        work.push(Map.entry(w, new ArrayDeque<>(g.getOrDefault(w, Set.of()))));
                    } else if (onStack.contains(w)) {
                        low.put(v, Math.min(low.get(v), index.get(w)));
                    }
                    continue;
                }
                work.pop();
                if (!work.isEmpty()) {
                    String parent = work.peek().getKey();
                    low.put(parent, Math.min(low.get(parent), low.get(v)));
                }
                if (low.get(v).equals(index.get(v))) {
                    List<String> scc = new ArrayList<>();
                    String x;
                    do {
                        x = stack.pop();
                        onStack.remove(x);
                        scc.add(x);
                    } while (!x.equals(v));
                    if (scc.size() > 1) {
                        scc.sort(null);
                        out.add(scc);
                    }
                }
            }
        }
        return out;
    }

    /** Each circle with the uses that close it, for the failure message. */
    private static String describe(List<List<String>> circles, Map<String, Set<String>> g) {
        StringBuilder b = new StringBuilder();
        for (List<String> c : circles) {
            b.append("\n  circle:");
            for (String v : c) {
                for (String w : g.getOrDefault(v, Set.of())) {
                    if (c.contains(w)) {
                        b.append("\n    ").append(v).append(" -> ").append(w);
                    }
                }
            }
        }
        return b.toString();
    }

    @Test
    void noPackageUsesAPackageThatUsesItBack() throws IOException {
        Map<String, Set<String>> packages = packageGraph(fileGraph());
        List<List<String>> circles = circles(packages);
        assertTrue(circles.isEmpty(), "package cycles:" + describe(circles, packages));
    }

    @Test
    void noFileCircleInMain() throws IOException {
        Map<String, Set<String>> files = new TreeMap<>();
        fileGraph().forEach((f, to) -> {
            if (!f.contains(".generated.")) {
                files.put(f, new TreeSet<>(to.stream().filter(t -> !t.contains(".generated.")).toList()));
            }
        });
        List<List<String>> circles = circles(files);
        assertTrue(circles.isEmpty(), "file circles:" + describe(circles, files));
    }

    @Test
    void noWorkloadUsesAnother() throws IOException {
        Map<String, Set<String>> packages = packageGraph(fileGraph());
        List<String> offending = new ArrayList<>();
        for (String w : WORKLOADS) {
            for (String used : packages.getOrDefault(w, Set.of())) {
                if (WORKLOADS.contains(used)) {
                    offending.add(w + " -> " + used);
                }
            }
        }
        assertEquals(List.of(), offending);
    }

    /**
     * Benchmarks are thin: a benchmark uses the harness and its own package only, so a protocol,
     * a kernel's arguments or a ring never grow back into a {@code @State} (issue 55).
     */
    @Test
    void benchmarksUseOnlyTheHarness() throws IOException {
        assertEquals(List.of(), beyondTheHarness(fileGraph()));
    }

    @Test
    void theBenchmarkCheckSeesAWrapper() {
        Map<String, Set<String>> g = Map.of("io.efabench.bench.A", Set.of("io.efabench.harness.ipc.IpcRig", "io.efabench.cuda.Kernel"),
                "io.efabench.bench.B", Set.of("io.efabench.bench.A", "io.efabench.harness.Sizes"),
                "io.efabench.bench.jmh_generated.A_jmhTest", Set.of("io.efabench.rank.RankGroup"));
        assertEquals(List.of("io.efabench.bench.A -> io.efabench.cuda.Kernel"), beyondTheHarness(g));
    }

    /** Each benchmark's use of a file outside the harness and its own package ("bench.A -> cuda.Kernel"). */
    static List<String> beyondTheHarness(Map<String, Set<String>> files) {
        List<String> offending = new ArrayList<>();
        new TreeMap<>(files).forEach((f, to) -> {
            if (packageOf(f).equals("io.efabench.bench")) {
                for (String used : to) {
                    if (!used.startsWith("io.efabench.harness.") && !packageOf(used).equals("io.efabench.bench")) {
                        offending.add(f + " -> " + used);
                    }
                }
            }
        });
        return offending;
    }

    @Test
    void theCheckSeesACircle() {
        Map<String, Set<String>> g = new TreeMap<>(Map.of("a", Set.of("b"), "b", Set.of("c"), "c", Set.of("a"), "d",
                Set.of("a")));
        assertEquals(List.of(List.of("a", "b", "c")), circles(g));
        assertEquals(List.of(), circles(Map.of("a", Set.of("b"), "b", Set.of())));
    }
}

package io.efabench.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;

import io.efabench.topology.InstanceType;
import io.efabench.topology.Sysfs;

/**
 * {@code ./run-jmh.sh doctor}: is this node set up right, and does the write path work. Java
 * answers, run-jmh.sh starts the processes, in three steps that share a state file:
 * <ol>
 *   <li>{@code checks STATE [--libfabric DIR] [--quiet]}: one line per check (PASS, WARN or FAIL,
 *       with the fix on every other line), written to STATE too; exit 1 on any FAIL.</li>
 *   <li>{@code smoke STATE}: what the smoke run is, for run-jmh.sh: the provider, then one line of
 *       JMH arguments per benchmark (Write and SendRecv at 1M, about 20 s in all, on the memory
 *       and path a real run takes: device memory where a GPU and FI_HMEM are there, path=nic).</li>
 *   <li>{@code finish STATE [--json] [RUN_DIR|failed:LOG ...]}: the smoke runs' figures (their
 *       fraction of link where the link speed counts), then, with --json, the whole report as one
 *       JSON object instead of lines; exit 1 on any FAIL.</li>
 * </ol>
 * EFABENCH_TEST_SYSFS_ROOT reads another sysfs tree (placement, instance type), for tests.
 */
public final class Doctor {
    private static final Gson GSON = new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create();
    static final String SMOKE_SIZE = "1M";
    static final String SMOKE_TIMES = "-wi 1 -w 2s -i 2 -r 3s -f 1";

    private Doctor() {}

    public static void main(String[] args) {
        try {
            System.exit(run(args));
        } catch (IllegalArgumentException | UncheckedIOException e) {
            System.err.println("run-jmh: doctor: " + e.getMessage());
            System.exit(2);
        }
    }

    static int run(String[] args) {
        if (args.length < 2) {
            throw new IllegalArgumentException("usage: Doctor checks|smoke|finish STATE ...");
        }
        Path state = Path.of(args[1]);
        List<String> rest = List.of(args).subList(2, args.length);
        return switch (args[0]) {
            case "checks" -> {
                int lib = rest.indexOf("--libfabric");
                JsonObject s = checks(lib >= 0 && lib + 1 < rest.size() ? rest.get(lib + 1) : null, Sysfs.fromEnvironment(), Path.of("/proc"),
                        Path.of("/dev/shm"));
                write(state, s);
                if (!rest.contains("--quiet")) {
                    lines(s.getAsJsonArray("checks")).forEach(System.out::println);
                }
                yield failed(s) ? 1 : 0;
            }
            case "smoke" -> {
                smokeLines(read(state)).forEach(System.out::println);
                yield 0;
            }
            case "finish" -> {
                JsonObject s = read(state);
                JsonArray smoke = new JsonArray();
                for (String r : rest) {
                    if (!r.equals("--json")) {
                        smoke.add(GSON.toJsonTree(SmokeResult.of(r, s)));
                    }
                }
                s.getAsJsonArray("checks").addAll(smoke);
                if (rest.contains("--json")) {
                    System.out.println(GSON.toJson(s));
                } else {
                    lines(smoke).forEach(System.out::println);
                }
                yield failed(s) ? 1 : 0;
            }
            default -> throw new IllegalArgumentException("unknown step '" + args[0] + "' (checks, smoke, finish)");
        };
    }

    /** Every check, in the order a reader needs them; the state the later steps read. */
    static JsonObject checks(String libfabricDir, Sysfs sysfs, Path proc, Path devShm) {
        InstanceType instance = InstanceType.of(sysfs);
        FabricChecks fabric = new FabricChecks(instance);
        HostChecks host = new HostChecks(sysfs, proc, devShm);
        List<DoctorCheck> out = new ArrayList<>();
        out.add(DoctorCheck.pass("node", (instance.known() ? instance.name() : "unknown instance type") + ", Java "
                + Runtime.version() + ", " + Runtime.getRuntime().availableProcessors() + " CPUs"));
        DoctorCheck lib = fabric.library(libfabricDir);
        out.add(lib);
        if (lib.status() != DoctorCheck.Status.FAIL) {
            out.addAll(fabric.providers());
        }
        out.add(host.placement());
        boolean fabricUp = fabric.provider != null;
        if (fabricUp) {
            out.add(fabric.deviceMemory());
            out.add(fabric.writeEmulation());
            out.add(fabric.links());
            out.add(fabric.memlock(host.nicsPerRank));
        }
        out.add(host.libjsig());
        if (fabricUp && (fabric.provider.equals("shm") || fabric.provider.equals("efa"))) {
            out.add(host.ptraceScope());
        }
        out.add(host.devShm());
        out.add(host.hugePages(fabric.provider));
        out.add(host.leftovers());
        JsonObject s = new JsonObject();
        s.add("checks", GSON.toJsonTree(out));
        if (fabricUp) {
            s.addProperty("provider", fabric.provider);
            s.addProperty("device", fabric.deviceMemoryRegistered);
        }
        return s;
    }

    /** The smoke run for run-jmh.sh: provider, then JMH arguments per benchmark. */
    static List<String> smokeLines(JsonObject s) {
        boolean device = s.has("device") && s.get("device").getAsBoolean();
        String common = "-p size=" + SMOKE_SIZE + " " + SMOKE_TIMES;
        return List.of(s.get("provider").getAsString(),
                "WriteBenchmark -p config=" + (device ? "SingleDMA" : "SinglePin") + " " + common,
                "SendRecvBenchmark -p config=" + (device ? "SingleDevice" : "SingleHost") + " " + common);
    }

    /** One smoke run's line: its figures, or why it failed. */
    record SmokeResult(String name, DoctorCheck.Status status, String detail, String fix, List<String> rows) {
        static SmokeResult of(String arg, JsonObject state) {
            String fix = "see the run's logs; ./run-jmh.sh doctor --no-run shows the checks alone";
            if (arg.startsWith("failed:")) {
                return new SmokeResult("smoke", DoctorCheck.Status.FAIL, "a smoke run failed: " + arg.substring(7), fix, List.of());
            }
            Path json = Path.of(arg, "jmh.json");
            JsonArray results;
            try {
                results = JsonParser.parseString(Files.readString(json)).getAsJsonArray();
            } catch (IOException | RuntimeException e) {
                return new SmokeResult("smoke", DoctorCheck.Status.FAIL, "no results in " + json, fix, List.of());
            }
            if (results.isEmpty()) {
                return new SmokeResult("smoke", DoctorCheck.Status.FAIL, "no results in " + json, fix, List.of());
            }
            JsonObject r = results.get(0).getAsJsonObject();
            String bench = r.get("benchmark").getAsString().replaceAll(".*\\.(\\w+)\\.\\w+$", "$1");
            Map<String, JsonElement> params = r.getAsJsonObject("params").asMap();
            JsonObject m = r.getAsJsonObject("secondaryMetrics");
            double gbps = score(m, "gbps");
            double pct = score(m, "busbw_pct");
            String detail = bench + " " + params.get("config").getAsString() + " " + params.get("size").getAsString()
                    + " over " + (state.has("provider") ? state.get("provider").getAsString() : "?") + ": " + String.format("%.2f Gbps", gbps)
                    + (m.has("lat_us") ? String.format(", %.1f us", score(m, "lat_us")) : "")
                    + (Double.isNaN(pct) ? " (link speed not counted: no fraction of link)" : String.format(" = %.0f%% of link", pct))
                    + "; results " + arg;
            return new SmokeResult("smoke-" + bench.replace("Benchmark", "").toLowerCase(java.util.Locale.ROOT),
                    DoctorCheck.Status.PASS, detail, null, List.of());
        }

        private static double score(JsonObject m, String key) {
            return m.has(key) ? m.getAsJsonObject(key).get("score").getAsDouble() : Double.NaN;
        }
    }

    static List<String> lines(JsonArray checks) {
        List<String> out = new ArrayList<>();
        for (JsonElement e : checks) {
            JsonObject c = e.getAsJsonObject();
            out.add(new DoctorCheck(c.get("name").getAsString(), DoctorCheck.Status.valueOf(c.get("status").getAsString()),
                    c.get("detail").getAsString(), c.has("fix") ? c.get("fix").getAsString() : null, List.of()).line());
            if (c.has("rows")) {
                c.getAsJsonArray("rows").forEach(row -> out.add("      " + row.getAsString()));
            }
        }
        return out;
    }

    static boolean failed(JsonObject s) {
        for (JsonElement e : s.getAsJsonArray("checks")) {
            if (e.getAsJsonObject().get("status").getAsString().equals("FAIL")) {
                return true;
            }
        }
        return false;
    }

    private static JsonObject read(Path f) {
        try {
            return JsonParser.parseString(Files.readString(f)).getAsJsonObject();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + f, e);
        }
    }

    private static void write(Path f, JsonObject s) {
        try {
            Files.writeString(f, GSON.toJson(s));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + f, e);
        }
    }
}

package io.efabench.launch;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import io.efabench.fabric.ShmLeftovers;
import io.efabench.provenance.ProvenanceFragments;
import io.efabench.report.Report;

/**
 * A run folder's life around the ranks, for run-jmh.sh:
 * <ul>
 *   <li>{@code start MODE RESULTS SUFFIX RANK WORLD PROVIDER PROFILE HOST N ARGV... -- JMH_ARGS...}
 *       (MODE local or the cluster launcher; ARGV the script's command line, N words): checks the arguments ({@link JmhArgs#check}, exit 2), names
 *       and makes the folder ({@link RunIds}), writes the launcher's provenance (local, or rank 0),
 *       and answers in NUL-ended tokens: the folder, the rendezvous port and the grace period
 *       (local; else empty), two lines to show (empty on a cluster's other ranks), then per rank to
 *       start (local: WORLD-1 down to 0; cluster: RANK) N and its N JMH arguments (rank 0's with
 *       {@link ProfileArgs} under PROFILE yes).</li>
 *   <li>{@code merge INTO FROM TAG [keep]}: a later suite of one command joins the first one's
 *       folder: rank 0's results appended, every other file moved over under its name, or with
 *       -TAG where the name is taken; FROM removed unless {@code keep} (a cluster's other ranks
 *       logged there).</li>
 *   <li>{@code finish RUN_DIR PROFILE REPORT}: the flame graphs' paths, then the report.</li>
 * </ul>
 * {@code results/latest} points only at a folder whose rank 0 wrote results, so a failed run
 * never hides the last good one.
 */
final class RunFolder {
    private RunFolder() {}

    /** {@code start}'s positional arguments, as run-jmh.sh passes them, by name. */
    private record StartArgs(String mode, Path results, String suffix, int rank, int world, String provider, boolean profile,
            String host, String commandLine, List<String> jmh) {
        static StartArgs parse(String[] a) {
            int words = a.length > 8 && a[8].matches("[0-9]+") ? Integer.parseInt(a[8]) : -1;
            if (words < 0 || a.length < 10 + words || !a[9 + words].equals("--")) {
                throw new IllegalArgumentException("usage: Launch start MODE RESULTS SUFFIX RANK WORLD PROVIDER PROFILE HOST N ARGV... -- JMH_ARGS...");
            }
            return new StartArgs(a[0], Path.of(a[1]), a[2], Integer.parseInt(a[3]), Integer.parseInt(a[4]), a[5], a[6].equals("yes"),
                    a[7], shellWords(List.of(a).subList(9, 9 + words)), List.of(a).subList(10 + words, a.length));
        }

        boolean local() {
            return mode.equals("local");
        }
    }

    static List<String> start(String[] args, Map<String, String> env) {
        StartArgs a = StartArgs.parse(args);
        JmhArgs.check(a.jmh());
        boolean local = a.local();
        String grace = local ? grace(env) : "";
        String port = local ? port(env) : "";
        String id = local ? RunIds.local(a.results(), a.suffix(), LocalDateTime.now()) : RunIds.cluster(env, a.suffix(), LocalDateTime.now());
        Path dir = a.results().resolve(id);
        try {
            for (String sub : List.of("logs", "followers", "provenance")) {
                Files.createDirectories(dir.resolve(sub));
            }
        } catch (IOException e) {
            throw new LaunchRefusal(1, "cannot create " + dir);
        }
        if (local || a.rank() == 0) {
            String slurmHosts = env.getOrDefault("SLURM_JOB_NODELIST", "");
            List<String> hosts = List.of(local || slurmHosts.isEmpty() ? a.host() : slurmHosts);
            try {
                ProvenanceFragments.writeFragment(dir, ProvenanceFragments.LAUNCHER, RunFacts.facts(a.mode(), a.world(),
                        a.provider().isEmpty() ? null : a.provider(), hosts, a.jmh(), a.commandLine(),
                        Path.of(env.getOrDefault("EFABENCH_ROOT", "."))));
            } catch (RuntimeException e) {
                System.err.println("run-jmh: " + e.getMessage());
                throw new LaunchRefusal(1, "cannot write the launcher's provenance in " + rel(dir));
            }
        }
        boolean metrics = !"1".equals(env.get("EFABENCH_NO_METRICS"));
        List<String> out = new ArrayList<>(List.of(dir.toString(), port, grace));
        out.addAll(notes(local, a.rank(), a.world(), port, a.mode(), a.provider(), a.host(), dir));
        // Ranks to start: every local one, WORLD-1 down to 0; under a cluster launcher this one.
        List<String> jmh = a.jmh();
        for (int k = local ? a.world() - 1 : a.rank(); k >= (local ? 0 : a.rank()); k--) {
            List<String> r = k == 0 ? JmhArgs.rankArgs(leaderArgs(jmh, dir, a.profile(), env), jmh, dir.resolve("jmh.json"), metrics)
                    : JmhArgs.rankArgs(jmh, jmh, dir.resolve("followers/rank" + k + ".json"), metrics);
            out.add(Integer.toString(r.size()));
            out.addAll(r);
        }
        return out;
    }

    /** The two lines the launcher shows before the ranks start (none on a cluster's other ranks). */
    private static List<String> notes(boolean local, int rank, int world, String port, String source, String provider, String host,
            Path dir) {
        String logs = rel(dir) + "/logs/";
        if (local) {
            String followers = world == 2 ? "; rank 1's output goes to " + logs + "rank1.log (its JMH numbers only mirror rank 0)"
                    : world > 1 ? "; followers' output goes to " + logs + "rank{1.." + (world - 1) + "}.log (their JMH numbers only mirror rank 0)"
                    : "";
            return List.of(world + (world == 1 ? " rank" : " ranks") + " on 127.0.0.1:" + port + " over FI_PROVIDER=" + provider
                    + "; run folder " + rel(dir), "rank 0's output follows (also in " + logs + "rank0.log)" + followers);
        }
        if (rank != 0) {
            return List.of("", "");
        }
        return List.of("rank 0 of " + world + " (" + source + ") on " + host + ", FI_PROVIDER=" + (provider.isEmpty() ? "<default>" : provider)
                + "; run folder " + rel(dir), "rank 0's output follows (also in " + logs + "rank0.log); the other ranks log to " + logs
                + "rank<k>.log on their hosts (their JMH numbers only mirror rank 0)");
    }

    /**
     * How long the other ranks may take to exit after one ended: EFABENCH_GRACE_S, else 60 s or
     * EFABENCH_TIMEOUT_S + 10 when that is larger.
     */
    static String grace(Map<String, String> env) {
        String g = env.getOrDefault("EFABENCH_GRACE_S", "");
        if (!g.isEmpty()) {
            if (!g.matches("[0-9]+")) {
                throw new IllegalArgumentException("EFABENCH_GRACE_S=" + g + " is not a number of seconds");
            }
            return g;
        }
        String t = env.getOrDefault("EFABENCH_TIMEOUT_S", "");
        try {
            return Long.toString(t.matches("[0-9]+") ? Math.max(60, Long.parseLong(t) + 10) : 60);
        } catch (NumberFormatException e) {
            return "60";
        }
    }

    /** MASTER_PORT, else a port nobody listens on at 127.0.0.1, below the kernel's ephemeral range. */
    static String port(Map<String, String> env) {
        String given = env.getOrDefault("MASTER_PORT", "");
        if (!given.isEmpty()) {
            return given;
        }
        var random = java.util.concurrent.ThreadLocalRandom.current();
        for (int i = 0; i < 100; i++) {
            int p = 20000 + random.nextInt(12000);
            try (var socket = new java.net.Socket()) {
                socket.connect(new java.net.InetSocketAddress("127.0.0.1", p), 1000);
            } catch (IOException refused) {
                return Integer.toString(p);
            }
        }
        throw new LaunchRefusal(1, "found no free TCP port on 127.0.0.1 for the rendezvous");
    }

    /** Rank 0's arguments: the user's, with async-profiler under --profile (exit 1 where it cannot run). */
    private static List<String> leaderArgs(List<String> jmh, Path dir, boolean profile, Map<String, String> env) {
        if (!profile) {
            return jmh;
        }
        String paranoid = null;
        try {
            paranoid = Files.readString(Path.of("/proc/sys/kernel/perf_event_paranoid"));
        } catch (IOException ignored) {
            // no such file: treated as off
        }
        try {
            Path jarDir = Path.of(RunFolder.class.getProtectionDomain().getCodeSource().getLocation().toURI()).getParent();
            List<String> a = ProfileArgs.leaderArgs(jmh, jarDir, dir, System.getProperty("os.arch"), env.get("EFABENCH_PROFILE_EVENT"),
                    paranoid, line -> System.err.println("run-jmh: " + line));
            Files.createDirectories(dir.resolve("profile"));
            return a;
        } catch (IllegalArgumentException e) {
            throw new LaunchRefusal(1, e.getMessage());
        } catch (IOException | java.net.URISyntaxException e) {
            throw new LaunchRefusal(1, "--profile: " + e.getMessage());
        }
    }

    static void merge(Path into, Path from, String tag, boolean keep, PrintStream out) {
        try {
            mergeResults(into.resolve("jmh.json"), from.resolve("jmh.json"));
        } catch (IllegalArgumentException e) {
            System.err.println("run-jmh: " + e.getMessage());
            throw new LaunchRefusal(1, "could not merge " + rel(from) + " into " + rel(into) + "; both are kept");
        }
        try (Stream<Path> subs = Files.list(from)) {
            for (Path sub : subs.filter(p -> Files.isDirectory(p) && !hidden(p)).sorted().toList()) {
                try (Stream<Path> files = Files.list(sub)) {
                    for (Path f : files.filter(p -> Files.isRegularFile(p) && !hidden(p)).sorted().toList()) {
                        Path target = into.resolve(sub.getFileName().toString());
                        Files.createDirectories(target);
                        String base = f.getFileName().toString();
                        if (Files.exists(target.resolve(base))) {
                            int dot = base.lastIndexOf('.');
                            base = (dot < 0 ? base : base.substring(0, dot)) + "-" + tag + "." + base.substring(dot + 1);
                        }
                        Files.move(f, target.resolve(base), StandardCopyOption.REPLACE_EXISTING);
                    }
                }
            }
            if (!keep) {
                try (Stream<Path> all = Files.walk(from)) {
                    for (Path p : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
                        Files.delete(p);
                    }
                }
            }
            pointLatest(into);
        } catch (IOException e) {
            throw new LaunchRefusal(1, "could not move " + rel(from) + "'s files into " + rel(into) + ": " + e.getMessage());
        }
        out.println("run-jmh: " + rel(from) + "'s results joined " + rel(into));
    }

    /** Appends the JMH results in {@code from} to those in {@code into} (JSON arrays; a missing or empty file holds none), atomically. */
    static void mergeResults(Path into, Path from) {
        try {
            com.google.gson.JsonArray all = readResults(into);
            all.addAll(readResults(from));
            Path tmp = into.resolveSibling(into.getFileName() + ".merging");
            Files.writeString(tmp, new com.google.gson.GsonBuilder().setPrettyPrinting().create().toJson(all) + "\n");
            Files.move(tmp, into, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
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

    /** results/latest (a relative link beside the folder) to {@code dir} where its rank 0 wrote results. */
    static void pointLatest(Path dir) throws IOException {
        Path json = dir.resolve("jmh.json");
        if (!Files.isRegularFile(json) || Files.size(json) == 0) {
            return;
        }
        Path tmp = dir.resolveSibling(".latest." + ProcessHandle.current().pid());
        Files.deleteIfExists(tmp);
        Files.createSymbolicLink(tmp, dir.getFileName());
        Files.move(tmp, dir.resolveSibling("latest"), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /**
     * After one JMH run of a command, on every node: results/latest to {@code dir} (the leader,
     * where it wrote results: a failed run never hides the last good one), this user's shm regions
     * and call boards of processes gone since {@code marker}, then on the leader of a run that did
     * not fail the flame graphs and the report ({@link #finish}): its status.
     */
    static int after(Path dir, Path marker, boolean profile, boolean report, boolean failed, boolean leader, PrintStream out) {
        if (leader) {
            try {
                pointLatest(dir);
            } catch (IOException e) {
                System.err.println("run-jmh: could not point " + rel(dir.resolveSibling("latest")) + " at " + rel(dir) + ": "
                        + e.getMessage());
            }
        }
        ShmLeftovers.removeDeadOwnSince(Path.of("/dev/shm"), marker);
        if (failed || !leader || !(profile || report)) {
            return 0;
        }
        return finish(dir, profile, report, out);
    }

    /** The flame graphs' paths (under PROFILE yes), then the report (under REPORT yes): its status. */
    static int finish(Path dir, boolean profile, boolean report, PrintStream out) {
        if (profile) {
            List<Path> found = List.of();
            try (Stream<Path> all = Files.walk(dir.resolve("profile"))) {
                found = all.filter(p -> p.getFileName().toString().endsWith(".html")).sorted().toList();
            } catch (IOException | java.io.UncheckedIOException ignored) {
                // no profile folder: none found
            }
            if (found.isEmpty()) {
                System.err.println("run-jmh: --profile: no flame graph was written to " + rel(dir) + "/profile");
            } else {
                out.println("run-jmh: flame graphs:");
                found.forEach(f -> out.println("  " + rel(f)));
            }
        }
        if (!report) {
            return 0;
        }
        System.setProperty("java.awt.headless", "true");
        return Report.run(new String[] {"all", dir.toString()}, out, System.err);
    }

    /** The command line as one would type it: words quoted only where needed. */
    static String shellWords(List<String> argv) {
        return String.join(" ", argv.stream().map(a -> a.matches("[A-Za-z0-9_./=:,+@%-]+") ? a : "'" + a.replace("'", "'\\''") + "'")
                .toList());
    }

    private static boolean hidden(Path p) {
        return p.getFileName().toString().startsWith(".");
    }

    /** {@code p} relative to the shell's current folder where it lies below it, as the script shows paths. */
    static String rel(Path p) {
        String pwd = System.getenv().getOrDefault("PWD", System.getProperty("user.dir"));
        String s = p.toString();
        return s.startsWith(pwd + "/") ? s.substring(pwd.length() + 1) : s;
    }
}

package io.efabench.sweep;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.efabench.harness.BenchmarkSetupException;
import io.efabench.rank.RankEnv;
import io.efabench.rank.RankException;
import io.efabench.rank.RankGroup;

/**
 * {@code ./run-jmh.sh sweep}: one rank per node, every rank running this. The ranks form one group
 * (the launcher's variables), tell each other their NICs ({@link Fleet}), then go through the
 * {@link Schedule}'s rounds in step, one rail at a time: in a step every pair measures on that rail
 * ({@link PairProbe}) while the group waits at a barrier, and rank 0 collects what both ends saw.
 * Then the {@link Judge}'s second pass re-measures the suspects against known-good partners, and
 * rank 0 writes what it names ({@link SweepReport}). A node that dies ends the sweep within the
 * deadline: rank 0 reports what was measured and names it.
 */
public final class Sweep {
    private final RankGroup world;
    private final Fleet fleet;
    private final SweepOptions o;
    /** How many rails a pair measures together ({@link SweepOptions#railsAtOnce(int, boolean)}). */
    private final int railsAtOnce;
    /** Steps in a first-pass round: its rails in groups of {@link #railsAtOnce}. */
    private final int stepsPerRound;

    /** A round's tasks as steps, a step per group of {@link #railsAtOnce} rails (groups without a task left out). */
    private List<List<Task>> byRailGroup(List<Task> round) {
        List<List<Task>> steps = new ArrayList<>();
        for (int g = 0; g < stepsPerRound; g++) {
            int group = g;
            List<Task> step = round.stream().filter(t -> t.rail() / railsAtOnce == group).toList();
            if (!step.isEmpty()) {
                steps.add(step);
            }
        }
        return steps;
    }

    /** One probe per rail (each has its own round-trip buffer): a node measures its rails at once. */
    private final PairProbe[] probes;
    private final int me;
    /** This node's probes' memory: host, or each rail's nearest GPU. */
    private final RailMemory memory;
    /** Rank 0: every pair's result so far. */
    private final List<LinkResult> links = new ArrayList<>();
    private final Duration stepBudget;
    private int stepIndex;
    private final long startNanos = System.nanoTime();
    private final double knownLineGbps;
    private final boolean sharedCpus = sharedCpus();

    private Sweep(RankGroup world, Fleet fleet, SweepOptions o) {
        this.world = world;
        this.fleet = fleet;
        this.o = o;
        this.railsAtOnce = o.railsAtOnce(fleet.rails(), sharedCpus);
        this.stepsPerRound = (fleet.rails() + railsAtOnce - 1) / railsAtOnce;
        this.me = world.rank();
        this.memory = RailMemory.of(o.memory(), fleet, me);
        this.probes = new PairProbe[fleet.rails()];
        for (int k = 0; k < probes.length; k++) {
            probes[k] = new PairProbe(o, memory.kind(), memory.gpuOfRail()[k]);
        }
        // A step: two trials' rendezvous and waits, each bounded by the timeout, and the timed writes.
        this.stepBudget = o.timeout().multipliedBy(5).plus(o.seconds().multipliedBy(4));
        this.knownLineGbps = fleet.lineGbps();
    }

    /** One pair measuring on one rail in a step. */
    record Task(int a, int b, int rail) {}

    public static void main(String[] args) {
        int code;
        try {
            code = run(args);
        } catch (IllegalArgumentException | BenchmarkSetupException | RankException e) {
            System.err.println("sweep: " + e.getMessage().replaceFirst("^sweep: ", ""));
            code = 2;
        }
        System.out.flush();
        System.exit(code);
    }

    static int run(String[] args) {
        if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"))) {
            System.out.println(SweepOptions.USAGE);
            return 0;
        }
        if (SweepPlan.asked(args)) {
            SweepPlan.parse(args).describe().forEach(System.out::println);
            return 0;
        }
        SweepOptions o = SweepOptions.parse(args);
        RankEnv env = RankEnv.fromEnvironment();
        if (env.worldSize() < 2) {
            throw new IllegalArgumentException("fewer than 2 nodes (" + env.worldSize() + " rank, from " + env.source()
                    + "): run one rank per node under srun/mpirun/torchrun, or bring up the testbed (./run-jmh.sh testbed up)");
        }
        try (RankGroup world = RankGroup.join(env, o.key(), o.timeout())) {
            Fleet fleet = Fleet.gather(world, o.timeout());
            return new Sweep(world, fleet, o).execute();
        }
    }

    private int execute() {
        int n = fleet.nodes();
        List<Schedule.Round> plan = o.quick() > 0 ? Schedule.quick(n, o.quick(), o.seed()) : Schedule.tournament(n);
        // A step is a round on a group of rails at once (all by default): each pair measures them
        // together, as training traffic uses them, and the wall time grows with the rounds, not the rails.
        List<List<Task>> steps = new ArrayList<>();
        for (Schedule.Round r : plan) {
            List<Task> round = new ArrayList<>();
            for (Schedule.Pair p : r.pairs()) {
                for (int k = 0; k < fleet.rails(); k++) {
                    round.add(new Task(p.a(), p.b(), k));
                }
            }
            steps.addAll(byRailGroup(round));
        }
        if (me == 0) {
            System.out.printf("sweep: %d nodes, %d rails (%s), %s: %d rounds, %s; %s writes, window %d, %d ms each way%n",
                    n, fleet.rails(), fleet.provider(), o.quick() > 0 ? o.quick() + " random matchings" : "every pair",
                    plan.size(), railsAtOnce == fleet.rails() ? "every rail at once"
                            : railsAtOnce + " rail(s) at a time, " + steps.size() / plan.size() + " steps a round",
                    io.efabench.harness.Sizes.label(o.size()), o.window(), o.seconds().toMillis());
            fleet.railMap().forEach(s -> System.out.println("sweep: " + s));
            fleet.notes().forEach(s -> System.out.println("sweep: " + s));
            System.out.println("sweep: " + fleet.hosts().get(me) + ": " + memory.said());
            if (sharedCpus) {
                System.out.println("sweep: EFABENCH_YIELD=1 (the ranks share CPUs): round trips are reported, not judged");
            }
        }
        try {
            runSteps(steps, false);
            List<List<Task>> again = retests();
            if (!again.isEmpty() && me == 0) {
                System.out.println("sweep: second pass: " + again.stream().mapToInt(List::size).sum()
                        + " suspects re-measured against known-good partners");
            }
            runSteps(again, true);
        } catch (RankException | BenchmarkSetupException e) {
            return ended(e);
        }
        return finish(Map.of());
    }

    private void runSteps(List<List<Task>> steps, boolean retest) {
        for (int s = 0; s < steps.size(); s++) {
            List<Task> step = steps.get(s);
            world.barrier("sweep step " + stepIndex, stepBudget);
            List<Task> mine = new ArrayList<>();
            for (Task t : step) {
                if (t.a() == me || t.b() == me) {
                    mine.add(t);
                }
            }
            String told = String.join("\n", measure(mine).stream().map(Sweep::encode).toList());
            List<byte[]> all = world.allgather("sweep results of step " + stepIndex, told.getBytes(UTF_8), stepBudget);
            stepIndex++;
            List<LinkResult> results = new ArrayList<>(step.size());
            for (Task t : step) {
                results.add(merge(t, view(all.get(t.a()), t.b(), t.rail()), view(all.get(t.b()), t.a(), t.rail()), retest));
            }
            if (!retest && s < stepsPerRound) { // every rank: each must end alike when the first round measured nothing
                firstRound.note(results);
                if (s == stepsPerRound - 1) {
                    firstRound.requireSomethingMeasured(fleet);
                }
            }
            if (me == 0) {
                links.addAll(results);
                progress(s + 1, steps.size(), retest);
            }
        }
    }

    /**
     * This node's part in a step: its tasks (one partner, on one or several rails) measured at
     * once, a thread per rail, each with its rail's probe and ports. A measurement still running
     * at the step's budget is reported failed (its thread, a daemon, ends at its own deadline).
     */
    private List<PairProbe.View> measure(List<Task> mine) {
        int port0 = pairPort(world.env().masterPort(), stepIndex, fleet.rails());
        PairProbe.View[] views = new PairProbe.View[mine.size()];
        Thread[] threads = new Thread[mine.size()];
        for (int i = 0; i < mine.size(); i++) {
            Task t = mine.get(i);
            int slot = i;
            Runnable r = () -> views[slot] = measure(t, port0 + PORTS_PER_RAIL * t.rail());
            if (mine.size() == 1) {
                r.run();
            } else {
                threads[i] = Thread.ofPlatform().daemon().name("sweep-rail" + t.rail()).start(r);
            }
        }
        long deadline = System.nanoTime() + stepBudget.toNanos();
        for (int i = 0; i < threads.length; i++) {
            if (threads[i] != null) {
                try {
                    threads[i].join(java.time.Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (views[i] == null) {
                Task t = mine.get(i);
                views[i] = PairProbe.View.failed(t.a() == me ? t.b() : t.a(), t.rail(), "rail " + t.rail()
                        + " still measuring after the step's budget of " + stepBudget.toSeconds() + " s");
            }
        }
        return List.of(views);
    }

    /** One task of this node's, on its rail's ports from {@code port}. */
    private PairProbe.View measure(Task t, int port) {
        int partner = t.a() == me ? t.b() : t.a();
        int without = fleet.domain(me, t.rail()) == null ? me : fleet.domain(partner, t.rail()) == null ? partner : -1;
        if (without >= 0) {
            // Both ends know it from the fleet: neither opens a trial the other would wait out.
            return PairProbe.View.failed(partner, t.rail(), fleet.hosts().get(without) + " has no NIC on rail " + t.rail()
                    + " (" + fleet.railKeys().get(t.rail()) + "; its provider does not list it)");
        }
        return probes[t.rail()].measure(me, partner, t.rail(), fleet.domain(me, t.rail()), fleet.meetingAddress(t.a()),
                fleet.meetingAddress(t.b()), port, o.key() + " step " + stepIndex + " rail " + t.rail());
    }

    /** What node told of its measurement with {@code partner} on {@code rail} in a step, null where it told nothing. */
    private static PairProbe.View view(byte[] told, int partner, int rail) {
        if (told.length == 0) {
            return null;
        }
        for (String line : new String(told, UTF_8).split("\n")) {
            PairProbe.View v = decode(line);
            if (v.partner() == partner && v.rail() == rail) {
                return v;
            }
        }
        return null;
    }

    /**
     * What the first step (the first round, every rail) measured, known to every rank from the steps'
     * allgathers: where no pair-rail could be measured, what is wrong is wrong for everyone (a
     * port range blocked, a provider failing, a rendezvous address unreachable), and one line
     * saying so beats a report naming every node.
     */
    private final FirstRound firstRound = new FirstRound();

    private static final class FirstRound {
        private int tried;
        private int measured;
        private String firstFailure;

        void note(List<LinkResult> results) {
            for (LinkResult r : results) {
                tried++;
                if (r.measured()) {
                    measured++;
                } else if (firstFailure == null) {
                    firstFailure = r.failure();
                }
            }
        }

        void requireSomethingMeasured(Fleet fleet) {
            if (tried > 0 && measured == 0) {
                throw new IllegalArgumentException("no pair could be measured on any rail in the first round (" + tried
                        + " pair-rails of " + fleet.nodes() + " nodes): a cause common to every node, not a finding;"
                        + " the first: " + firstFailure);
            }
        }
    }

    /** The rendezvous ports one rail's pair trials use in a step: a Write each way and the ping-pong. */
    static final int PORTS_PER_RAIL = 3;

    /**
     * The first of the rendezvous ports the pair trials of step {@code step} use, rail k's from
     * {@link #PORTS_PER_RAIL} x k on: past the sweep's own, fresh ones each step (a port just
     * closed may linger), wrapped so that the last stays within 1024..65535.
     */
    static int pairPort(int masterPort, int step, int rails) {
        int used = PORTS_PER_RAIL * rails;
        int span = 65536 - 1024 - used;
        return 1024 + (int) Math.floorMod(masterPort - 1024 + 1 + (long) used * step, (long) span);
    }

    /** The pair's result from what each end saw: a's Write, b's Write, a's round trips; the first failure. */
    private static LinkResult merge(Task t, PairProbe.View a, PairProbe.View b, boolean retest) {
        String failure = a == null ? "node " + t.a() + " reported nothing" : a.failure();
        if (failure == null) {
            failure = b == null ? "node " + t.b() + " reported nothing" : b.failure();
        }
        if (failure != null) {
            return LinkResult.failed(t.a(), t.b(), t.rail(), failure, retest);
        }
        return new LinkResult(t.a(), t.b(), t.rail(), a.gbps(), b.gbps(), a.p50us(), a.p99us(), null, retest);
    }

    private void progress(int done, int total, boolean retest) {
        double elapsed = (System.nanoTime() - startNanos) / 1e9;
        String eta = retest ? "" : String.format(", ETA %.0f s", elapsed / (stepIndex) * (total - done));
        long failed = links.stream().filter(l -> !l.measured()).count();
        System.out.printf("sweep: %s step %d/%d: %d pair-rails measured, %d could not be; %.0f s%s%n",
                retest ? "second pass" : "first pass", done, total, links.size() - failed, failed, elapsed, eta);
    }

    private Judge judge(Map<Integer, String> dead) {
        return new Judge(fleet.nodes(), fleet.rails(), o.thresholds(knownLineGbps, sharedCpus), links, dead);
    }

    /**
     * The nodes share CPUs (EFABENCH_YIELD=1: the testbed's namespaces, or ranks oversubscribing a
     * host): pairs measuring at once take turns on them, and a round trip then measures the
     * scheduler (60-430 us against 17 at 8 testbed nodes on 2 cores), so round trips are reported
     * but not judged.
     */
    private static boolean sharedCpus() {
        return "1".equals(System.getenv("EFABENCH_YIELD"));
    }

    /** Rank 0 decides the second pass; every rank learns it. */
    private List<List<Task>> retests() {
        String plan = "";
        if (me == 0) {
            StringBuilder b = new StringBuilder();
            // A round of disjoint pairs is a step per group of rails, as in the first pass.
            for (List<Judge.Retest> round : judge(Map.of()).retests()) {
                for (List<Task> step : byRailGroup(round.stream().map(r -> new Task(r.node(), r.partner(), r.rail())).toList())) {
                    for (Task t : step) {
                        b.append(t.a()).append(',').append(t.b()).append(',').append(t.rail()).append(' ');
                    }
                    b.append('\n');
                }
            }
            plan = b.toString();
        }
        String told = new String(world.allgather("sweep second pass", plan.getBytes(UTF_8), stepBudget).get(0), UTF_8);
        List<List<Task>> steps = new ArrayList<>();
        for (String line : told.split("\n")) {
            List<Task> step = new ArrayList<>();
            for (String t : line.trim().split(" ")) {
                if (!t.isEmpty()) {
                    String[] f = t.split(",");
                    step.add(new Task(Integer.parseInt(f[0]), Integer.parseInt(f[1]), Integer.parseInt(f[2])));
                }
            }
            if (!step.isEmpty()) {
                steps.add(step);
            }
        }
        return steps;
    }

    /** The group failed (a node died or stopped answering): rank 0 reports what it has and names the dead. */
    private int ended(RuntimeException e) {
        Map<Integer, String> dead = new LinkedHashMap<>();
        for (int r : world.deadRanks()) {
            dead.put(r, fleet.hosts().get(r) + " (rank " + r + ") stopped taking part in step " + stepIndex + ": "
                    + PairProbe.oneLine(e));
        }
        if (me != 0) {
            System.err.println("sweep: rank " + me + ": " + PairProbe.oneLine(e));
            return 1;
        }
        if (dead.isEmpty()) {
            dead.put(-1, "the group failed in step " + stepIndex + ": " + PairProbe.oneLine(e));
        }
        System.out.println("sweep: ended early: " + String.join("; ", dead.values()));
        return finish(dead);
    }

    private int finish(Map<Integer, String> dead) {
        int code = 0;
        if (me == 0) {
            Map<Integer, String> named = new LinkedHashMap<>(dead);
            named.remove(-1);
            Judge j = judge(named);
            List<Finding> findings = j.findings();
            Path dir = o.out() != null ? o.out()
                    : Path.of(System.getenv().getOrDefault("EFABENCH_RESULTS", "results"),
                            "sweep-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
            double wall = (System.nanoTime() - startNanos) / 1e9;
            SweepReport.write(dir, fleet, links, j, findings, dead, o, wall, System.out);
            code = findings.isEmpty() && dead.isEmpty() ? 0 : 1;
        }
        if (dead.isEmpty()) {
            byte[] said = world.allgather("sweep verdict", new byte[] {(byte) code}, stepBudget).get(0);
            code = said[0];
        }
        return code;
    }

    private static String encode(PairProbe.View v) {
        return v.partner() + "\t" + v.rail() + "\t" + v.gbps() + "\t" + v.p50us() + "\t" + v.p99us() + "\t" + v.nicBytesRatio()
                + "\t" + (v.failure() == null ? "" : v.failure().replace('\t', ' ').replace('\n', ' '));
    }

    private static PairProbe.View decode(String line) {
        String[] f = line.split("\t", -1);
        return new PairProbe.View(Integer.parseInt(f[0]), Integer.parseInt(f[1]), Double.parseDouble(f[2]),
                Double.parseDouble(f[3]), Double.parseDouble(f[4]), Double.parseDouble(f[5]), f[6].isEmpty() ? null : f[6]);
    }
}

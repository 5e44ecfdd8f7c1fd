package io.efabench.launch;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import io.efabench.rank.RankEnv;
import io.efabench.harness.memory.TrialGpu;

/**
 * {@code Launch plan local|cluster ARGS...}: what one {@code ./run-jmh.sh ARGS...} (or
 * {@code ./run-jmh.sh seed ...}) does, so the script only runs it. NUL-ended tokens, one of:
 * <ul>
 *   <li>{@code usage}: print the usage and exit 0;</li>
 *   <li>{@code exec} and JMH's arguments: a listing or JMH's help, run as it is;</li>
 *   <li>{@code run, SOURCE, RANK, WORLD, PROVIDER, PROFILE, AFTER}, then {@code note, TEXT}
 *       and {@code suite, TAG, N} with N JMH arguments ({@link Suites}). SOURCE is empty outside a
 *       cluster launcher (RANK 0 of WORLD local ranks, PROVIDER resolved), else the
 *       launcher as {@link RankEnv} reads it (PROVIDER empty: the environment's). PROFILE is yes
 *       or no; AFTER says what follows the suites: {@code report} (each run reports itself),
 *       {@code merged} (one report of the first run folder) or {@code seed:EXP} (the seed's table).</li>
 * </ul>
 */
final class Plan {
    static final int DEFAULT_RANKS = 2;

    private Plan() {}

    /**
     * @param cluster    whether a cluster launcher's variables are set
     * @param env        the environment (FI_PROVIDER)
     * @param rankEnv    this rank as the launcher's variables say (read only under a launcher)
     * @param gpuPresent whether a GPU is visible, asked only where the plan depends on it
     * @param gpus       how many, asked only by the seed
     */
    static List<String> plan(boolean cluster, List<String> args, Map<String, String> env, Supplier<RankEnv> rankEnv,
            Supplier<Boolean> gpuPresent, Supplier<Integer> gpus) {
        boolean seed = !args.isEmpty() && args.getFirst().equals("seed");
        LaunchOptions.SeedRun s = seed ? LaunchOptions.seed(args.subList(1, args.size())) : null;
        LaunchOptions.Run o = seed ? null : LaunchOptions.run(args);
        if (o != null && o.help()) {
            return List.of("usage");
        }
        RankEnv where = cluster ? rankEnv.get() : null;
        if (where != null && o != null && o.ranks() != null) {
            throw new IllegalArgumentException("--ranks is not allowed under " + where.source() + ": the job launcher starts the ranks");
        }
        List<String> items = new ArrayList<>();
        String after = "report";
        Integer ranks;
        if (seed) {
            List<String> p = Seed.plan(Seed.Experiment.named(s.experiment()), gpus.get(), s.sizes(), s.jmhArgs());
            ranks = Integer.valueOf(p.getFirst());
            for (String line : p.subList(2, p.size())) {
                items.addAll(List.of("note", "seed " + s.experiment() + ": " + line.replaceFirst("^note: ", "")));
            }
            if (where == null) {
                items.addAll(List.of("note", "seed " + s.experiment() + ": " + ranks + " local ranks on this host stand for the seed's "
                        + ranks + " nodes: same work, not the same network"));
            }
            // The seed's arguments come as one line, split at blanks (as the script always read them).
            List<String> jmh = List.of(p.get(1).strip().split("[ \t\n]+"));
            items.addAll(List.of("suite", "", Integer.toString(jmh.size())));
            items.addAll(jmh);
            after = "seed:" + s.experiment();
        } else {
            ranks = o.ranks();
            List<String> jmh = JmhArgs.hideTestHelpers(o.jmhArgs());
            if (JmhArgs.infoOnly(jmh)) {
                List<String> out = new ArrayList<>(List.of("exec"));
                out.addAll(jmh);
                return out;
            }
            Suites.Plan p = Suites.plan(jmh, gpuPresent.get());
            p.notes().forEach(n -> items.addAll(List.of("note", n)));
            for (Suites.Suite suite : p.suites()) {
                items.addAll(List.of("suite", suite.tag(), Integer.toString(suite.jmhArgs().size())));
                items.addAll(suite.jmhArgs());
            }
            if (p.suites().size() > 1) {
                after = "merged";
            }
        }
        String provider = seed ? s.provider() : o.provider();
        List<String> out = new ArrayList<>(List.of("run"));
        if (where == null) {
            String n = Integer.toString(ranks == null ? DEFAULT_RANKS : ranks);
            String fi = env.getOrDefault("FI_PROVIDER", "");
            out.addAll(List.of("", "0", n, provider != null && !provider.isEmpty() ? provider : fi.isEmpty() ? "tcp" : fi));
        } else {
            out.addAll(List.of(where.source(), Integer.toString(where.rank()), Integer.toString(where.worldSize()),
                    provider == null ? "" : provider));
        }
        out.addAll(List.of(!seed && o.profile() ? "yes" : "no", after));
        out.addAll(items);
        return out;
    }

    /** {@code Launch plan local|cluster ARGS...}. */
    static List<String> answer(String[] args) {
        if (args.length < 1 || !(args[0].equals("local") || args[0].equals("cluster"))) {
            throw new IllegalArgumentException("usage: Launch plan local|cluster ARGS...");
        }
        return plan(args[0].equals("cluster"), List.of(args).subList(1, args.length), System.getenv(), RankEnv::fromEnvironment,
                TrialGpu::present, Seed::visibleGpus);
    }
}

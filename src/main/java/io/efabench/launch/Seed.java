package io.efabench.launch;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

import io.efabench.report.JmhResults;
import io.efabench.report.ReportException;
import io.efabench.report.SeedComparison;
import io.efabench.report.SeedTables;
import io.efabench.harness.Sizes;
import io.efabench.harness.BenchmarkSetupException;

/**
 * {@code ./run-jmh.sh seed write|sendrecv|all2all|proxy|ipc}: the seed's experiment with its
 * configs, sizes, rank layout and semantics ({@link #plan}, which {@link Plan} hands to
 * run-jmh.sh), then {@code Seed table EXP RUN_DIR}: our table beside the seed's p5 figures.
 */
public final class Seed {
    /** JMH timing unless the user passes their own after {@code --}. */
    static final String TIMES = "-wi 1 -w 1s -i 3 -r 1s -f 1";

    /** One of the seed's experiments, with the semantics its table was measured with. */
    enum Experiment {
        WRITE("write", "WriteBenchmark", 4, List.of("SinglePin"), "-p window=1 -p completion=local",
                "the seed: p5.48xlarge, 4 nodes x 1 rank, rank 0 writes each size to ranks 1-3 in turn (window 1, local completion)"),
        SENDRECV("sendrecv", "SendRecvBenchmark", 2, List.of("SingleHost"), "",
                "the seed: p5.48xlarge, 2 nodes x 1 rank, one EFA channel, ping-pong"),
        ALL2ALL("all2all", "AllToAllBenchmark", 4, List.of("SinglePin", "MultiPin"), "-p window=1",
                "the seed: p5.48xlarge, 4 nodes x 1 rank, one all-to-all round at a time"),
        PROXY("proxy", "ProxyBenchmark", 4, List.of(), "-p requests=1", "the seed: p5.48xlarge, 4 nodes x 1 rank, one request of the whole buffer per target"),
        IPC("ipc", "IpcBenchmark", 2, List.of(), "",
                "the seed gives no IPC table, only ~350 (grid 1x256) and ~2971 (grid 128x256) in its text, in a unit it"
                        + " calls GB/s next to a 3600 Gbps peak");

        final String name;
        final String benchmark;
        final int ranks;
        /** The seed's configs that run on host memory; the rest of its table's configs need a GPU. */
        final List<String> hostConfigs;
        final String semantics;
        final String setup;

        Experiment(String name, String benchmark, int ranks, List<String> hostConfigs, String semantics, String setup) {
            this.name = name;
            this.benchmark = benchmark;
            this.ranks = ranks;
            this.hostConfigs = hostConfigs;
            this.semantics = semantics;
            this.setup = setup;
        }

        /** The seed table's other configs, in its column order: they move device memory. */
        List<String> deviceConfigs() {
            return SeedTables.configs(name).stream().filter(c -> !hostConfigs.contains(c)).toList();
        }

        static Experiment named(String n) {
            return Arrays.stream(values()).filter(e -> e.name.equals(n)).findFirst().orElseThrow(() ->
                    new IllegalArgumentException("seed: unknown experiment '" + n + "' (write, sendrecv, all2all, proxy, ipc)"));
        }
    }

    private Seed() {}

    public static void main(String[] args) {
        try {
            System.out.print(run(args));
            System.exit(0);
        } catch (IllegalArgumentException | ReportException | BenchmarkSetupException e) {
            System.err.println("run-jmh: " + e.getMessage());
            System.exit(2);
        }
    }

    static String run(String[] args) {
        if (args.length != 3 || !args[0].equals("table")) {
            throw new IllegalArgumentException("usage: Seed table EXP RUN_DIR");
        }
        Experiment exp = Experiment.named(args[1]);
        return SeedComparison.render(exp.name, JmhResults.read(Path.of(args[2])), exp.setup);
    }

    /**
     * Rank count, JMH arguments, then notes: the seed's experiment as it can run here. The
     * user's {@code jmh} arguments come last; {@link #TIMES} only where they set no timing.
     */
    static List<String> plan(Experiment exp, int gpus, String sizesOption, List<String> jmh) {
        boolean gpu = gpus > 0;
        boolean timed = jmh.stream().anyMatch(a -> List.of("-wi", "-w", "-i", "-r", "-f", "-bm").contains(a));
        String tail = (timed ? "" : " " + TIMES) + (jmh.isEmpty() ? "" : " " + String.join(" ", jmh));
        List<String> configs = new ArrayList<>(exp.hostConfigs);
        if (gpu) {
            configs.addAll(exp.deviceConfigs());
        }
        if (exp == Experiment.IPC) {
            if (gpus < 2) {
                throw new IllegalArgumentException("seed ipc needs 2 or more GPUs with NVLink (CUDA IPC), one per rank; "
                        + (gpu ? gpus + " is" : "none is") + " visible here");
            }
            return List.of(Integer.toString(exp.ranks), exp.benchmark + tail, "note: " + exp.setup);
        }
        if (configs.isEmpty()) {
            throw new IllegalArgumentException("seed " + exp.name + " needs a GPU and a libfabric whose provider offers FI_HMEM"
                    + " (its configs " + String.join(", ", exp.deviceConfigs()) + " use device memory); none is visible here");
        }
        List<Long> sizes = sizes(exp.name, sizesOption);
        List<String> out = new ArrayList<>();
        out.add(Integer.toString(exp.ranks));
        out.add(exp.benchmark + " -p config=" + String.join(",", configs) + " -p size="
                + sizes.stream().map(Sizes::label).collect(Collectors.joining(",")) + (exp.semantics.isEmpty() ? "" : " " + exp.semantics)
                + tail);
        out.add("note: " + exp.setup);
        if (!gpu && !exp.deviceConfigs().isEmpty()) {
            out.add("note: no GPU visible here: the device configs (" + String.join(", ", exp.deviceConfigs()) + ") are skipped");
        }
        if (!sizesOption.equals("all")) {
            out.add("note: sizes " + sizes.stream().map(Sizes::label).collect(Collectors.joining(", ")) + " of the seed's "
                    + SeedTables.sizes(exp.name).stream().map(Sizes::label).collect(Collectors.joining(", ")));
        }
        return out;
    }

    /**
     * The seed's sizes for {@code experiment}: "all", "quick" (its two smallest: a first look
     * on a laptop) or a comma-separated subset of them.
     */
    static List<Long> sizes(String experiment, String option) {
        List<Long> seed = SeedTables.sizes(experiment);
        if (option.equals("all")) {
            return seed;
        }
        if (option.equals("quick")) {
            return seed.subList(0, Math.min(2, seed.size()));
        }
        List<Long> out = new ArrayList<>();
        for (String s : option.split(",")) {
            long b = Sizes.parse(s.trim());
            if (!seed.contains(b)) {
                throw new IllegalArgumentException("seed " + experiment + ": --sizes " + s.trim() + " is not in the seed's table ("
                        + seed.stream().map(Sizes::label).collect(Collectors.joining(",")) + ")");
            }
            out.add(b);
        }
        return out;
    }

    /** GPUs CUDA sees here (CUDA_VISIBLE_DEVICES honoured); 0 without a driver or a GPU. */
    static int visibleGpus() {
        if (!io.efabench.harness.memory.TrialGpu.present()) {
            return 0;
        }
        return io.efabench.cuda.CudaDevice.visibleCount();
    }
}

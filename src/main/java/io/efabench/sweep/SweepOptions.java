package io.efabench.sweep;

import java.nio.file.Path;
import java.time.Duration;

import io.efabench.harness.Sizes;
import io.efabench.rank.RankGroup;

/**
 * The sweep's command line ({@code ./run-jmh.sh sweep --help}); every rank parses the same one.
 *
 * @param quick    0: the round-robin tournament (every pair); N: N random perfect matchings
 * @param seed     the matchings' seed (every rank draws the same)
 * @param size     each write's bytes
 * @param window   writes in flight (Write's window)
 * @param seconds  each direction's timed Write (a quarter of it more to warm up; the ping-pong a quarter)
 * @param timeout  every wait's deadline (--timeout, else EFABENCH_TIMEOUT_S, else {@value #DEFAULT_TIMEOUT_S} s: a
 *                 sweep waits on many pairs, and a dead link should cost seconds, not a benchmark's minute)
 * @param lineGbps one NIC's line rate (0: what {@link Fleet#knownLineGbps} knows, often nothing)
 * @param referenceFraction --reference-fraction; NaN where not given ({@link #thresholds} picks the default)
 * @param out      where rank 0 writes the findings, matrix and heatmaps (null: results/sweep-TIME)
 * @param railsAtOnce how many rails a pair measures together (0: not given; {@link #railsAtOnce(int, boolean)} decides)
 * @param memory   where the probes' buffers live: "host", "device" (each rail on the GPU nearest its NIC), or
 *                 "auto" (device where this node has a GPU, as training traffic moves GPU memory; host elsewhere)
 */
public record SweepOptions(int quick, long seed, long size, int window, Duration seconds, Duration timeout, double lineGbps,
        double lineFraction, double referenceFraction, double zLimit, double latencyFactor, Path out, int railsAtOnce,
        String memory) {
    /** Below this share of the written bytes on the NIC's own counters, the writes took another way (efa: shm). */
    static final double MIN_NIC_BYTES_RATIO = 0.95;
    static final int DEFAULT_TIMEOUT_S = 20;
    static final String USAGE = """
            usage: ./run-jmh.sh sweep [--quick [N]] [--seed S] [--size SIZE] [--window W] [--seconds S]
                                      [--timeout S] [--line-gbps G] [--line-fraction F] [--reference-fraction F] [--z Z]
                                      [--latency-factor X] [--rails-at-once N] [--memory auto|host|device] [--out DIR]
              --quick [N]          N random perfect matchings (default 3) instead of every pair
              --size SIZE          each write (default 1M); --window W writes in flight (default 8)
              --seconds S          each direction's timed writes (default 1)
              --timeout S          every wait's deadline (default EFABENCH_TIMEOUT_S, else 20)
              --line-gbps G        one NIC's line rate: below --line-fraction of it (default 0.9) is flagged
              --reference-fraction F  below F of the rail's reference, the upper quartile of its NICs'
                                   best figures (default 0.75; 0.6 where the ranks share CPUs,
                                   EFABENCH_YIELD=1), is flagged, with --z
              --z Z                robust z-score beyond Z (default 3.5; asked from 8 NICs a rail)
              --latency-factor X   a round trip's p50 above X times the rail's median (default 2)
              --rails-at-once N    rails a pair measures together (default all; 1 where the ranks share
                                   CPUs, EFABENCH_YIELD=1: there more at once only take turns on the cores)
              --memory M           the probes' buffers: device (each rail's on the GPU nearest its NIC),
                                   host, or auto (default: device where the node has a GPU, else host)
            ./run-jmh.sh sweep --plan --nodes N --rails M [--quick [K]] [--seconds S] [--step-seconds X]
                                   the rounds and steps for such a fleet and the wall time to expect; no fleet needed
            exit status: 0 nothing flagged, 1 something named, 2 bad input""";

    public static SweepOptions parse(String[] args) {
        int quick = 0;
        long seed = 1;
        long size = 1 << 20;
        int window = 8;
        double seconds = 1;
        double line = 0;
        double lineFraction = Thresholds.LINE_FRACTION;
        double referenceFraction = Double.NaN; // not given: the default for the CPUs (thresholds)
        double z = Thresholds.Z_LIMIT;
        double latency = Thresholds.LATENCY_FACTOR;
        Path out = null;
        int railsAtOnce = 0;
        String memory = "auto";
        String env = System.getenv("EFABENCH_TIMEOUT_S");
        double timeout = env == null || env.isBlank() ? DEFAULT_TIMEOUT_S : RankGroup.defaultTimeout().toMillis() / 1e3;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--quick" -> {
                    quick = 3;
                    if (i + 1 < args.length && args[i + 1].matches("\\d+")) {
                        quick = positive(a, args[++i]);
                    }
                }
                case "--seed" -> seed = positive(a, value(args, ++i, a));
                case "--size" -> size = sizeOf(value(args, ++i, a));
                case "--window" -> window = positive(a, value(args, ++i, a));
                case "--seconds" -> seconds = number(a, value(args, ++i, a), 0.05, 3600);
                case "--line-gbps" -> line = number(a, value(args, ++i, a), 0, 1e6);
                case "--line-fraction" -> lineFraction = number(a, value(args, ++i, a), 0, 1);
                case "--reference-fraction" -> referenceFraction = number(a, value(args, ++i, a), 0, 1);
                case "--median-fraction" -> throw new IllegalArgumentException("sweep: --median-fraction is now"
                        + " --reference-fraction: the floor is a fraction of the rail's reference, the upper quartile of its"
                        + " NICs' best figures, no longer of their median");
                case "--z" -> z = number(a, value(args, ++i, a), 0, 100);
                case "--latency-factor" -> latency = number(a, value(args, ++i, a), 1, 1000);
                case "--out" -> out = Path.of(value(args, ++i, a));
                case "--rails-at-once" -> railsAtOnce = positive(a, value(args, ++i, a));
                case "--timeout" -> timeout = number(a, value(args, ++i, a), 1, 86400);
                case "--memory" -> {
                    memory = value(args, ++i, a);
                    if (!memory.matches("auto|host|device")) {
                        throw new IllegalArgumentException("sweep: --memory " + memory + ": auto, host or device");
                    }
                }
                default -> throw new IllegalArgumentException("sweep: unknown option '" + a + "'\n" + USAGE);
            }
        }
        return new SweepOptions(quick, seed, size, window, Duration.ofMillis((long) (seconds * 1000)),
                Duration.ofMillis((long) (timeout * 1000)),
                line, lineFraction, referenceFraction, z, latency, out, railsAtOnce, memory);
    }

    /**
     * The thresholds the judgement applies: {@code knownLineGbps} where no --line-gbps was given;
     * with {@code sharedCpus} round trips are not judged (an infinite latency factor) and, where
     * no --reference-fraction was given, the relative floor is
     * {@link Thresholds#SHARED_CPUS_REFERENCE_FRACTION}.
     */
    Thresholds thresholds(double knownLineGbps, boolean sharedCpus) {
        double reference = !Double.isNaN(referenceFraction) ? referenceFraction
                : sharedCpus ? Thresholds.SHARED_CPUS_REFERENCE_FRACTION : Thresholds.REFERENCE_FRACTION;
        return new Thresholds(lineGbps > 0 ? lineGbps : knownLineGbps, lineFraction, reference, zLimit,
                sharedCpus ? Double.POSITIVE_INFINITY : latencyFactor);
    }

    /**
     * How many of a fleet's {@code rails} a pair measures together: --rails-at-once where given,
     * else all of them, or one where the ranks share CPUs (on the testbed's 2 cores a 4 x 2 sweep
     * with both rails at once took 40-49 s against 27-43 s one rail at a time, the cores taking
     * turns, and its clean runs re-measured more suspects).
     */
    int railsAtOnce(int rails, boolean sharedCpus) {
        return Math.min(rails, railsAtOnce > 0 ? railsAtOnce : sharedCpus ? 1 : rails);
    }

    /** What every rank must agree on: the rendezvous refuses ranks started with other options. */
    String key() {
        return "sweep quick=" + quick + " seed=" + seed + " size=" + size + " window=" + window + " seconds=" + seconds.toMillis()
                + " rails-at-once=" + railsAtOnce + " memory=" + memory;
    }

    private static long sizeOf(String v) {
        try {
            return Sizes.parse(v);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("sweep: --size: " + e.getMessage());
        }
    }

    static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            throw new IllegalArgumentException("sweep: " + option + " wants a value");
        }
        return args[i];
    }

    private static int positive(String option, String v) {
        try {
            int n = Integer.parseInt(v);
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // one line below
        }
        throw new IllegalArgumentException("sweep: " + option + " " + v + ": must be a positive whole number");
    }

    static double number(String option, String v, double min, double max) {
        try {
            double d = Double.parseDouble(v);
            if (d >= min && d <= max) {
                return d;
            }
        } catch (NumberFormatException ignored) {
            // one line below
        }
        throw new IllegalArgumentException("sweep: " + option + " " + v + ": must be a number from " + min + " to " + max);
    }
}

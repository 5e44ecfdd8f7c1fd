package io.efabench.sweep;

/**
 * When a figure of the sweep is flagged (README, "Find the bad node: sweep"). A rail's write
 * bandwidth is flagged below {@code lineFraction} of its line rate where the rate is known, or
 * below {@code referenceFraction} of the rail's reference (the upper quartile of its NICs' best
 * figures) when its robust z-score (0.6745 (x - median) / MAD) is also below -{@code zLimit}; a
 * round trip's p50 above {@code latencyFactor} times the rail's median p50 with z above
 * {@code zLimit} (the z-score only where a rail has at least {@value #Z_MIN_FIGURES} NICs: below
 * that a MAD means little). A rail whose reference is below {@code referenceFraction} of the
 * median of all rails' references is flagged as a rail.
 *
 * @param lineGbps          line rate of one NIC in Gbps; 0 where unknown (then only the relative floor holds)
 * @param lineFraction      absolute floor, a fraction of {@code lineGbps}
 * @param referenceFraction relative floor, a fraction of the rail's reference (and, for a rail's reference, of the rails' median reference)
 * @param zLimit            how many robust standard deviations a flagged figure lies from the median
 * @param latencyFactor  how many times the rail's median p50 a flagged round trip takes
 */
public record Thresholds(double lineGbps, double lineFraction, double referenceFraction, double zLimit, double latencyFactor) {
    public static final double LINE_FRACTION = 0.90;
    public static final double REFERENCE_FRACTION = 0.75;
    /**
     * The relative floor where the nodes share CPUs (EFABENCH_YIELD=1, the testbed): pairs
     * measuring at once take turns on the cores, and a clean testbed pair read 0.737 of its rail's
     * reference in both passes (a CI's SweepIT, 2026-12-02); the faults it injects read 0.25.
     */
    public static final double SHARED_CPUS_REFERENCE_FRACTION = 0.6;
    public static final double Z_LIMIT = 3.5;
    public static final double LATENCY_FACTOR = 2.0;
    /**
     * How much further than the z limit a figure below the line rate's floor (but not below the
     * relative one) must lie: the line floor cuts through the spread of a probe near the line.
     */
    public static final double LINE_Z_MARGIN = 1.0;
    /**
     * A round trip's p99 at or above this (microseconds) and {@link #LOSS_TAIL_FACTOR} times its
     * rail's reference tail is a lost packet's wait: tcp retransmits a lone message after its
     * retransmission timeout, 200 ms at least on Linux, and 2% loss on one testbed NIC read ~200
     * ms at p99 on every pair through it against 0.1-16 ms elsewhere, shared CPUs included (the
     * scheduler's turns stay far below it). Judged wherever the round trips are not, too. Not
     * efa's: SRD retransmits within the NIC in microseconds, and only its counters would tell.
     */
    public static final double LOSS_TAIL_US = 100_000;
    /** How many times the rail's reference tail a lossy link's p99 is, at least. */
    public static final double LOSS_TAIL_FACTOR = 10;
    /** Below this many NICs on a rail the z-score is not asked: the relative floor judges alone. */
    public static final int Z_MIN_FIGURES = 8;

    public Thresholds {
        check("line rate", lineGbps, 0, Double.MAX_VALUE);
        check("line fraction", lineFraction, 0, 1);
        check("reference fraction", referenceFraction, 0, 1);
        check("z limit", zLimit, 0, 100);
        check("latency factor", latencyFactor, 1, Double.POSITIVE_INFINITY); // infinite: round trips not judged
    }

    /** The documented defaults, with {@code lineGbps} (0: unknown). */
    public static Thresholds defaults(double lineGbps) {
        return new Thresholds(lineGbps, LINE_FRACTION, REFERENCE_FRACTION, Z_LIMIT, LATENCY_FACTOR);
    }

    private static void check(String what, double v, double min, double max) {
        if (!(v >= min && v <= max)) {
            throw new IllegalArgumentException(what + " " + v + ": must be from " + min + " to " + max);
        }
    }
}

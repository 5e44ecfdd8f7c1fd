package io.efabench.sweep;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The sweep's judgement (README, "Find the bad node: sweep"): flags each pair's figures against
 * the line rate and its rail's median ({@link Thresholds}; the median over the rail's NICs of each
 * one's best figure, which one bad NIC cannot pull down), then names what the flags follow. A
 * NIC is named when it failed with every partner it was measured with, two at least (a bad NIC
 * fails with all of them; each of its partners only with it); a node when all its rails' NICs
 * are; a rail when its median is far below the other rails' or most of its NICs are named. A
 * failing pair that follows neither end is named as a pair. Pure: no I/O, the same answer on every
 * rank.
 */
public final class Judge {
    private final int nodes;
    private final int rails;
    private final Thresholds th;
    /** Each rail's links, in the order given: every per-rail question scans only its rail's. */
    private final List<List<LinkResult>> byRail;
    private final Map<Integer, String> dead;
    private final RobustStats[] bandwidth;
    /** Each rail's reference: the upper quartile of its NICs' best figures. */
    private final double[] reference;
    private final RobustStats[] latency;
    /** Each rail's reference tail: the median over its NICs of each one's lowest round-trip p99. */
    private final double[] tail;
    /**
     * Each rail's link figures (every direction) and round trips, the first pass's: what a z-score
     * is taken against. Not the NICs' best figures: a best of n draws is narrower than one draw, and
     * single links held against it read as outliers (a clean 16 x 4 fleet at 8% spread had a
     * finding in 90% of simulated sweeps).
     */
    private final RobustStats[] linkBandwidth;
    private final RobustStats[] linkLatency;
    private final boolean[] slowRail;
    /** The median of the rails' references: what a slow rail's reference is held against. */
    private final double railsMedian;
    /** Each rail's failing links, once asked ({@link #failingLinks}). */
    private final Map<Integer, List<LinkResult>> failing = new HashMap<>();
    /** Each rail's distinct partners per node over all its links, once asked ({@link #partnerCounts}). */
    private final Map<Integer, int[]> partnersAll = new HashMap<>();

    /**
     * @param dead nodes that stopped taking part, with the line that says so: their links are
     *             explained by it and judge no one else
     */
    public Judge(int nodes, int rails, Thresholds th, List<LinkResult> links, Map<Integer, String> dead) {
        this.nodes = nodes;
        this.rails = rails;
        this.th = th;
        this.dead = Map.copyOf(dead);
        List<List<LinkResult>> split = new ArrayList<>();
        for (int k = 0; k < rails; k++) {
            split.add(new ArrayList<>());
        }
        for (LinkResult l : links) {
            if (l.rail() < rails) {
                split.get(l.rail()).add(l);
            }
        }
        byRail = split;
        bandwidth = new RobustStats[rails];
        reference = new double[rails];
        latency = new RobustStats[rails];
        tail = new double[rails];
        linkBandwidth = new RobustStats[rails];
        linkLatency = new RobustStats[rails];
        double[] medians = new double[rails];
        int withData = 0;
        // The reference is the first pass's: the second pass confirms or clears its flags, it
        // does not move the bar under flags it never re-measured.
        boolean firstPassOnly = links.stream().anyMatch(l -> !l.retest());
        for (int k = 0; k < rails; k++) {
            // The reference is each NIC's best figure, not every link's: a bad NIC is in 2/n of the
            // links (half of them at 4 nodes), but in only one of n best figures.
            double[] best = new double[nodes];
            double[] fastest = new double[nodes];
            double[] shortestTail = new double[nodes];
            java.util.Arrays.fill(best, Double.NaN);
            java.util.Arrays.fill(fastest, Double.NaN);
            java.util.Arrays.fill(shortestTail, Double.NaN);
            double[] directions = new double[2 * byRail.get(k).size()];
            double[] trips = new double[byRail.get(k).size()];
            int d = 0;
            int t = 0;
            for (LinkResult l : byRail.get(k)) {
                if (l.measured() && !touchesDead(l) && !(firstPassOnly && l.retest())) {
                    directions[d++] = l.gbpsAtoB();
                    directions[d++] = l.gbpsBtoA();
                    trips[t++] = l.p50us();
                    double g = Math.max(l.gbpsAtoB(), l.gbpsBtoA());
                    for (int end : new int[] {l.a(), l.b()}) {
                        if (end < nodes) {
                            best[end] = Double.isNaN(best[end]) ? g : Math.max(best[end], g);
                            fastest[end] = Double.isNaN(fastest[end]) ? l.p50us() : Math.min(fastest[end], l.p50us());
                            shortestTail[end] = Double.isNaN(shortestTail[end]) ? l.p99us() : Math.min(shortestTail[end], l.p99us());
                        }
                    }
                }
            }
            double[] bests = java.util.Arrays.stream(best).filter(v -> !Double.isNaN(v)).toArray();
            bandwidth[k] = RobustStats.of(bests);
            // The upper quartile, not the median: two slow NICs of four (0.6 of the rest) put the
            // median at 0.8 and their own links at its 75% floor, flagged or not by noise; the
            // quartile stays with the sound NICs until three of four are slow.
            reference[k] = RobustStats.quantile(bests, 0.75);
            latency[k] = RobustStats.of(java.util.Arrays.stream(fastest).filter(v -> !Double.isNaN(v)).toArray());
            // Each NIC's lowest p99, as the bandwidth's best: a lossy NIC is in half the links at 4
            // nodes, but its own lowest tail is still a retransmission's while the others' are not.
            double[] tails = java.util.Arrays.stream(shortestTail).filter(v -> !Double.isNaN(v)).toArray();
            tail[k] = tails.length > 0 ? RobustStats.median(tails) : Double.NaN;
            linkBandwidth[k] = RobustStats.of(java.util.Arrays.copyOf(directions, d));
            linkLatency[k] = RobustStats.of(java.util.Arrays.copyOf(trips, t));
            if (!Double.isNaN(reference[k])) {
                medians[withData++] = reference[k];
            }
        }
        railsMedian = withData > 0 ? RobustStats.median(java.util.Arrays.copyOf(medians, withData)) : Double.NaN;
        slowRail = new boolean[rails];
        for (int k = 0; k < rails && withData >= 2; k++) {
            // Three NICs at least: at two nodes a rail is one link, and a slow link is a pair. The
            // rail's reference, not its median: with two slow NICs of four the median of the best
            // figures is halfway between slow and sound, and beside another node's slow NIC on the
            // other rail it fell under the bar by noise (a RAIL named in 7% of simulated 4 x 2
            // fleets); the upper quartile stays with the sound NICs until most are slow.
            slowRail[k] = bandwidth[k].count >= 3 && reference[k] < th.referenceFraction() * railsMedian;
        }
    }

    private boolean touchesDead(LinkResult l) {
        return dead.containsKey(l.a()) || dead.containsKey(l.b());
    }

    /** The thresholds this judgement applies. */
    public Thresholds thresholds() {
        return th;
    }

    /** Rail {@code k}'s median write bandwidth (Gbps): the median over its NICs of each one's best figure. */
    public double railMedianGbps(int k) {
        return bandwidth[k].median;
    }

    /**
     * Rail {@code k}'s reference write bandwidth (Gbps), what a direction's relative floor is a
     * fraction of: the upper quartile over its NICs of each one's best figure.
     */
    public double railReferenceGbps(int k) {
        return reference[k];
    }

    /** Rail {@code k}'s reference tail (microseconds): the median over its NICs of each one's lowest round-trip p99. */
    public double railTailUs(int k) {
        return tail[k];
    }

    /** Rail {@code k}'s reference round trip (microseconds): the median over its NICs of each one's fastest p50. */
    public double railMedianP50us(int k) {
        return latency[k].median;
    }

    /** Why link {@code l} is flagged, or null when it passes. */
    public String flag(LinkResult l) {
        if (!l.measured()) {
            return "unreachable: " + l.failure();
        }
        int k = l.rail();
        // A lossy link is often slow too: both are said, the tail after the bandwidth.
        String lossy = lossyTail(l)
                ? String.format("round trip p99 %.1f ms >= %.0f ms and %.0f x the rail's %.2f ms: a retransmission's wait"
                        + " (a lossy link)", l.p99us() / 1e3, Thresholds.LOSS_TAIL_US / 1e3, Thresholds.LOSS_TAIL_FACTOR,
                        tail[k] / 1e3)
                : null;
        String ab = flagBandwidth(l.gbpsAtoB(), k);
        String ba = ab == null ? flagBandwidth(l.gbpsBtoA(), k) : null;
        String slow = ab != null ? l.a() + "->" + l.b() + " " + ab : ba != null ? l.b() + "->" + l.a() + " " + ba : null;
        if (slow != null || lossy != null) {
            return slow == null ? lossy : lossy == null ? slow : slow + "; " + lossy;
        }
        RobustStats s = latency[k];
        if (l.p50us() > th.latencyFactor() * s.median && zHolds(k, linkLatency[k].z(l.p50us()), th.zLimit())) {
            return String.format("round trip p50 %.1f us > %.1f x the rail's median %.1f us", l.p50us(), th.latencyFactor(), s.median);
        }
        return null;
    }

    /** Whether measured link {@code l}'s round-trip p99 is a lost packet's wait ({@link Thresholds#LOSS_TAIL_US}). */
    private boolean lossyTail(LinkResult l) {
        return l.measured() && l.p99us() >= Thresholds.LOSS_TAIL_US && l.p99us() >= Thresholds.LOSS_TAIL_FACTOR * tail[l.rail()];
    }

    /**
     * Whether a figure {@code z} robust deviations (of rail {@code k}'s link figures) on the bad
     * side is beyond {@code limit}; with fewer than {@link Thresholds#Z_MIN_FIGURES} NICs on the
     * rail a MAD means little (a quick pass at 4 nodes has two NICs of a slow pair among four), and
     * the floors judge alone.
     */
    private boolean zHolds(int k, double z, double limit) {
        return bandwidth[k].count < Thresholds.Z_MIN_FIGURES || z > limit;
    }

    /**
     * Below the line rate's floor where the rate is known: when the rail's reference is below it
     * too (every NIC slow: a rail-wide cause), or the figure is also an outlier of its rail by a
     * robust deviation more than the z limit ({@link Thresholds#LINE_Z_MARGIN}). A probe near the
     * line spreads across the floor: at 0.97 of the line and 3% spread, a clean 128 x 32 fleet had
     * some 50 findings a sweep on the floor alone, and at the z limit itself one in four clean
     * fleets still had a pair named, a tail draw among 12,000 directions (the fleet simulator).
     */
    private String flagBandwidth(double gbps, int k) {
        double lineFloor = th.lineFraction() * th.lineGbps();
        if (th.lineGbps() > 0 && !slowRail[k] && gbps < lineFloor && (reference[k] < lineFloor
                || zHolds(k, -linkBandwidth[k].z(gbps), th.zLimit() + Thresholds.LINE_Z_MARGIN))) {
            return String.format("%.3f Gbps < %.0f%% of the %.3f Gbps line rate", gbps, 100 * th.lineFraction(), th.lineGbps());
        }
        if (gbps < th.referenceFraction() * reference[k] && zHolds(k, -linkBandwidth[k].z(gbps), th.zLimit())) {
            return String.format("%.3f Gbps < %.0f%% of the rail's reference %.3f Gbps", gbps, 100 * th.referenceFraction(),
                    reference[k]);
        }
        return null;
    }

    /** The worst figure of a link: its lower bandwidth, NaN where unmeasured. */
    private static double worst(LinkResult l) {
        return l.measured() ? Math.min(l.gbpsAtoB(), l.gbpsBtoA()) : Double.NaN;
    }

    /** Everything named, worst first. */
    public List<Finding> findings() {
        List<Finding> out = new ArrayList<>();
        for (Map.Entry<Integer, String> d : new java.util.TreeMap<>(dead).entrySet()) {
            out.add(new Finding(Finding.Kind.DEAD, d.getKey(), -1, -1, Double.NaN, Double.NaN, d.getValue()));
        }
        Map<Integer, List<Finding>> nicsOfNode = new HashMap<>();
        for (int k = 0; k < rails; k++) {
            List<Finding> nics = new ArrayList<>();
            List<LinkResult> unexplained = new ArrayList<>(failingLinks(k));
            List<Finding> pairs = new ArrayList<>();
            attribute(k, unexplained, nics, pairs);
            // By count: most of the rail's NICs, three at least. Two of four is two NICs (the
            // simulator named a RAIL beside them in 45% of such fleets when half was enough).
            boolean byCount = nodes > 2 && nics.size() >= 3 && 2 * nics.size() > nodes;
            if (slowRail[k] || byCount) {
                // What failed on a named rail is the rail's: its NICs are not named again, nor
                // added up into nodes (every NIC below a known line rate is every rail, not every node).
                out.add(new Finding(Finding.Kind.RAIL, -1, k, -1, slowRail[k] ? reference[k] : bandwidth[k].median,
                        slowRail[k] ? railsMedian : bandwidth[k].median,
                        slowRail[k] ? String.format("rail %d's reference %.3f Gbps < %.0f%% of the rails' median reference %.3f Gbps",
                                k, reference[k], 100 * th.referenceFraction(), railsMedian)
                                : nics.size() + " of " + nodes + " NICs on rail " + k + " failed"));
            } else {
                for (Finding f : nics) {
                    nicsOfNode.computeIfAbsent(f.node(), n -> new ArrayList<>()).add(f);
                }
                out.addAll(pairs);
            }
        }
        for (Map.Entry<Integer, List<Finding>> e : nicsOfNode.entrySet()) {
            List<Finding> nics = e.getValue();
            if (rails >= 2 && nics.size() == rails) {
                Finding worst = nics.stream().min(Comparator.comparingDouble(Finding::severity)).orElseThrow();
                out.add(new Finding(Finding.Kind.NODE, e.getKey(), -1, -1, worst.figure(), worst.reference(),
                        "every rail failed; worst: rail " + worst.rail() + ", " + worst.why()));
            } else {
                out.addAll(nics);
            }
        }
        out.sort(Comparator.comparingDouble(Finding::severity).thenComparingInt(Finding::node).thenComparingInt(Finding::rail));
        return out;
    }

    /**
     * Rail {@code k}'s flagged links. A flag must repeat: a pair measured again (the second
     * pass) fails only when every measurement of it was flagged, so a transient dip names no one.
     */
    private List<LinkResult> failingLinks(int k) {
        return failing.computeIfAbsent(k, rail -> {
            List<LinkResult> on = byRail.get(rail);
            String[] flags = new String[on.size()];
            Set<Long> passed = new HashSet<>();
            for (int i = 0; i < flags.length; i++) {
                flags[i] = flag(on.get(i));
                if (flags[i] == null) {
                    passed.add(pairKey(on.get(i).a(), on.get(i).b()));
                }
            }
            List<LinkResult> out = new ArrayList<>();
            for (int i = 0; i < flags.length; i++) {
                LinkResult l = on.get(i);
                if (flags[i] != null && !touchesDead(l) && !passed.contains(pairKey(l.a(), l.b()))) {
                    out.add(l);
                }
            }
            return List.copyOf(out);
        });
    }

    private static long pairKey(int a, int b) {
        return ((long) a << 32) | b;
    }

    /** Per node (index < nodes), how many distinct partners it has among {@code among}. */
    private int[] distinctPartners(List<LinkResult> among) {
        int[] count = new int[nodes];
        Set<Long> seen = new HashSet<>();
        for (LinkResult l : among) {
            if (seen.add(pairKey(l.a(), l.b()))) {
                for (int end : new int[] {l.a(), l.b()}) {
                    if (end < nodes) {
                        count[end]++;
                    }
                }
            }
        }
        return count;
    }

    /** Rail {@code k}'s distinct partners per node over every link measured on it. */
    private int[] partnerCounts(int k) {
        return partnersAll.computeIfAbsent(k, rail -> distinctPartners(byRail.get(rail)));
    }

    /**
     * A NIC that failed with {@code failedWith} of its {@code partners} distinct partners is to
     * blame: two at least, and all of them or most. Most, not only all: a NIC at 0.8 of the rest
     * sits at the 75% floor, and noise flags some of its links and not others; among 128 partners
     * it was named as some 70 pairs that "follow neither end" (the fleet simulator). A sound NIC
     * fails only with bad partners, one or two of many.
     */
    private static boolean blamed(int failedWith, int partners) {
        return failedWith >= 2 && (failedWith == partners || 2 * failedWith > partners);
    }

    /**
     * Names, greedily, the NIC on rail {@code k} with the most unexplained failing partners, while
     * one is to blame ({@link #blamed}); what is left is named as pairs.
     */
    private void attribute(int k, List<LinkResult> unexplained, List<Finding> nics, List<Finding> pairs) {
        int[] all = partnerCounts(k);
        int[] failedWith = distinctPartners(failingLinks(k));
        while (!unexplained.isEmpty()) {
            int[] open = distinctPartners(unexplained);
            int best = -1;
            int bestFails = 0;
            for (int i = 0; i < nodes; i++) {
                if (open[i] > bestFails && blamed(failedWith[i], all[i])) {
                    best = i;
                    bestFails = open[i];
                }
            }
            if (best < 0) {
                break;
            }
            LinkResult worst = null;
            for (LinkResult l : unexplained) {
                if (l.has(best) && (worst == null || !(worst(l) >= worst(worst)))) {
                    worst = l;
                }
            }
            int node = best;
            boolean unreachable = unexplained.stream().filter(l -> l.has(node)).allMatch(l -> !l.measured());
            // A lossy NIC's slowest link may have had no loss in its short ping-pong while others
            // did: the tail is said wherever one of its links showed it (the cause, beside the figure).
            String worstFlag = flag(worst);
            long lossy = unexplained.stream().filter(l -> l.has(node) && lossyTail(l)).count();
            String tailNote = lossy > 0 && !worstFlag.contains("(a lossy link)")
                    ? "; " + lossy + " of its failing links wait out a retransmission at p99 (a lossy link)" : "";
            nics.add(new Finding(Finding.Kind.NIC, best, k, -1, worst(worst), reference[k],
                    (unreachable ? "unreachable on rail " + k + " from " : "failed with ")
                            + failedWith[best] + " of " + all[best] + " partners; worst: " + worstFlag + tailNote));
            unexplained.removeIf(l -> l.has(node));
        }
        Set<Long> named = new HashSet<>();
        for (LinkResult l : unexplained) {
            if (!named.add(pairKey(l.a(), l.b()))) {
                continue; // measured twice, failed twice: one finding
            }
            pairs.add(new Finding(Finding.Kind.PAIR, l.a(), k, l.b(), worst(l), reference[k],
                    "pair " + l.a() + "-" + l.b() + ": " + flag(l) + " (follows neither end)"));
        }
    }

    /**
     * The second pass: each end of a failing pair that is not named yet against a known-good
     * partner on the same rail (a NIC with no failing link), packed into rounds of disjoint pairs
     * (the same pair on several rails may share a round).
     */
    public List<List<Retest>> retests() {
        Set<Retest> wanted = new java.util.LinkedHashSet<>();
        for (int k = 0; k < rails; k++) {
            List<LinkResult> failingHere = failingLinks(k);
            if (failingHere.isEmpty()) {
                continue;
            }
            int[] failedWith = distinctPartners(failingHere);
            List<Integer> good = new ArrayList<>();
            for (int i = 0; i < nodes; i++) {
                if (!dead.containsKey(i) && failedWith[i] == 0) {
                    good.add(i);
                }
            }
            Map<Integer, Set<Integer>> tried = new HashMap<>();
            for (LinkResult l : failingHere) {
                if (l.retest()) {
                    continue; // measured twice already: judged as it stands
                }
                wanted.add(new Retest(l.a(), l.b(), k));
                for (int end : new int[] {l.a(), l.b()}) {
                    Set<Integer> triedBy = tried.computeIfAbsent(end, n -> partnersOn(n, byRail.get(l.rail())));
                    Integer partner = knownGood(end, good, triedBy);
                    if (partner != null) {
                        wanted.add(new Retest(Math.min(end, partner), Math.max(end, partner), k));
                    }
                }
            }
        }
        List<List<Retest>> rounds = new ArrayList<>();
        List<Map<Integer, Long>> busy = new ArrayList<>(); // per round: node -> the pair it is in
        for (Retest r : wanted) {
            long key = pairKey(r.node(), r.partner());
            int into = -1;
            for (int i = 0; i < rounds.size() && into < 0; i++) {
                Long n = busy.get(i).get(r.node());
                Long p = busy.get(i).get(r.partner());
                if ((n == null || n == key) && (p == null || p == key)) {
                    into = i;
                }
            }
            if (into < 0) {
                rounds.add(new ArrayList<>());
                busy.add(new HashMap<>());
                into = rounds.size() - 1;
            }
            rounds.get(into).add(r);
            busy.get(into).put(r.node(), key);
            busy.get(into).put(r.partner(), key);
        }
        return rounds;
    }

    private static Set<Integer> partnersOn(int node, List<LinkResult> among) {
        Set<Integer> s = new HashSet<>();
        for (LinkResult l : among) {
            if (l.has(node)) {
                s.add(l.partnerOf(node));
            }
        }
        return s;
    }

    /** A known-good partner of {@code node} it was not yet measured with, else any known-good one, else null. */
    private static Integer knownGood(int node, List<Integer> good, Set<Integer> tried) {
        Integer any = null;
        for (int g : good) {
            if (g == node) {
                continue;
            }
            if (!tried.contains(g)) {
                return g;
            }
            if (any == null) {
                any = g;
            }
        }
        return any;
    }

    /** Nodes {@code node < partner} measured again on {@code rail}: a suspect pair, or a suspect with a known-good partner. */
    public record Retest(int node, int partner, int rail) {
        boolean touches(int n) {
            return node == n || partner == n;
        }

        boolean samePair(Retest o) {
            return node == o.node && partner == o.partner;
        }
    }
}

package io.efabench.sweep;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

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
    private final List<LinkResult> links;
    private final Map<Integer, String> dead;
    private final RobustStats[] bandwidth;
    private final RobustStats[] latency;
    private final boolean[] slowRail;
    private final double railsMedian;
    /** Each rail's failing links, once asked ({@link #failingLinks}). */
    private final Map<Integer, List<LinkResult>> failing = new HashMap<>();

    /**
     * @param dead nodes that stopped taking part, with the line that says so: their links are
     *             explained by it and judge no one else
     */
    public Judge(int nodes, int rails, Thresholds th, List<LinkResult> links, Map<Integer, String> dead) {
        this.nodes = nodes;
        this.rails = rails;
        this.th = th;
        this.links = List.copyOf(links);
        this.dead = Map.copyOf(dead);
        bandwidth = new RobustStats[rails];
        latency = new RobustStats[rails];
        double[] medians = new double[rails];
        int withData = 0;
        for (int k = 0; k < rails; k++) {
            // The reference is each NIC's best figure, not every link's: a bad NIC is in 2/n of the
            // links (half of them at 4 nodes), but in only one of n best figures.
            List<Double> bw = new ArrayList<>();
            List<Double> lat = new ArrayList<>();
            boolean firstPassOnly = this.links.stream().anyMatch(l -> !l.retest());
            for (int i = 0; i < nodes; i++) {
                double best = Double.NaN;
                double fastest = Double.NaN;
                for (LinkResult l : this.links) {
                    // The reference is the first pass's: the second pass confirms or clears its flags, it
                    // does not move the bar under flags it never re-measured.
                    if (l.rail() == k && l.has(i) && l.measured() && !touchesDead(l) && !(firstPassOnly && l.retest())) {
                        double g = Math.max(l.gbpsAtoB(), l.gbpsBtoA());
                        best = Double.isNaN(best) ? g : Math.max(best, g);
                        fastest = Double.isNaN(fastest) ? l.p50us() : Math.min(fastest, l.p50us());
                    }
                }
                if (!Double.isNaN(best)) {
                    bw.add(best);
                    lat.add(fastest);
                }
            }
            bandwidth[k] = RobustStats.of(bw.stream().mapToDouble(Double::doubleValue).toArray());
            latency[k] = RobustStats.of(lat.stream().mapToDouble(Double::doubleValue).toArray());
            if (!Double.isNaN(bandwidth[k].median)) {
                medians[withData++] = bandwidth[k].median;
            }
        }
        railsMedian = withData > 0 ? RobustStats.median(java.util.Arrays.copyOf(medians, withData)) : Double.NaN;
        slowRail = new boolean[rails];
        for (int k = 0; k < rails && withData >= 2; k++) {
            slowRail[k] = bandwidth[k].median < th.medianFraction() * railsMedian;
        }
    }

    private boolean touchesDead(LinkResult l) {
        return dead.containsKey(l.a()) || dead.containsKey(l.b());
    }

    /** The thresholds this judgement applies. */
    public Thresholds thresholds() {
        return th;
    }

    /** Rail {@code k}'s reference write bandwidth (Gbps): the median over its NICs of each one's best figure. */
    public double railMedianGbps(int k) {
        return bandwidth[k].median;
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
        String ab = flagBandwidth(l.gbpsAtoB(), k);
        if (ab != null) {
            return l.a() + "->" + l.b() + " " + ab;
        }
        String ba = flagBandwidth(l.gbpsBtoA(), k);
        if (ba != null) {
            return l.b() + "->" + l.a() + " " + ba;
        }
        RobustStats s = latency[k];
        if (l.p50us() > th.latencyFactor() * s.median && zHolds(s, s.z(l.p50us()))) {
            return String.format("round trip p50 %.1f us > %.1f x the rail's median %.1f us", l.p50us(), th.latencyFactor(), s.median);
        }
        return null;
    }

    /**
     * Whether a figure {@code z} robust deviations on the bad side is beyond the limit; with fewer
     * than {@link Thresholds#Z_MIN_FIGURES} NICs on the rail a MAD means little (a quick pass at 4
     * nodes has two NICs of a slow pair among four), and the relative floor judges alone.
     */
    private boolean zHolds(RobustStats s, double z) {
        return s.count < Thresholds.Z_MIN_FIGURES || z > th.zLimit();
    }

    private String flagBandwidth(double gbps, int k) {
        if (th.lineGbps() > 0 && !slowRail[k] && gbps < th.lineFraction() * th.lineGbps()) {
            return String.format("%.3f Gbps < %.0f%% of the %.3f Gbps line rate", gbps, 100 * th.lineFraction(), th.lineGbps());
        }
        RobustStats s = bandwidth[k];
        if (gbps < th.medianFraction() * s.median && zHolds(s, -s.z(gbps))) {
            return String.format("%.3f Gbps < %.0f%% of the rail's median %.3f Gbps", gbps, 100 * th.medianFraction(), s.median);
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
            boolean railNamed = slowRail[k] || (nics.size() >= Math.max(2, (nodes + 1) / 2) && nodes > 2);
            if (railNamed) {
                out.add(new Finding(Finding.Kind.RAIL, -1, k, -1, bandwidth[k].median, slowRail[k] ? railsMedian : bandwidth[k].median,
                        slowRail[k] ? String.format("rail %d's median %.3f Gbps < %.0f%% of the rails' median %.3f Gbps", k,
                                bandwidth[k].median, 100 * th.medianFraction(), railsMedian)
                                : nics.size() + " of " + nodes + " NICs on rail " + k + " failed"));
            }
            if (!railNamed || !slowRail[k]) {
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
                out.add(new Finding(Finding.Kind.NODE, e.getKey(), -1, -1, worst.figure(), worst.median(),
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
            java.util.Set<String> passed = new java.util.HashSet<>();
            for (LinkResult l : links) {
                if (l.rail() == rail && flag(l) == null) {
                    passed.add(l.a() + "-" + l.b());
                }
            }
            List<LinkResult> out = new ArrayList<>();
            for (LinkResult l : links) {
                if (l.rail() == rail && !touchesDead(l) && !passed.contains(l.a() + "-" + l.b()) && flag(l) != null) {
                    out.add(l);
                }
            }
            return List.copyOf(out);
        });
    }

    /**
     * Names, greedily, the NIC on rail {@code k} with the most unexplained failing partners, while
     * one failed with every partner it had and two at least; what is left is named as pairs.
     */
    private void attribute(int k, List<LinkResult> unexplained, List<Finding> nics, List<Finding> pairs) {
        while (!unexplained.isEmpty()) {
            int best = -1;
            int bestFails = 0;
            for (int i = 0; i < nodes; i++) {
                int fails = partners(i, k, unexplained).size();
                Set<Integer> all = partners(i, k, links);
                Set<Integer> failedWith = partners(i, k, failingLinks(k));
                if (fails > bestFails && failedWith.size() >= 2 && failedWith.size() == all.size()) {
                    best = i;
                    bestFails = fails;
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
            nics.add(new Finding(Finding.Kind.NIC, best, k, -1, worst(worst), bandwidth[k].median,
                    (unreachable ? "unreachable on rail " + k + " from " : "failed with ")
                            + partners(best, k, failingLinks(k)).size() + " of " + partners(best, k, links).size()
                            + " partners; worst: " + flag(worst)));
            unexplained.removeIf(l -> l.has(node));
        }
        java.util.Set<String> named = new java.util.HashSet<>();
        for (LinkResult l : unexplained) {
            if (!named.add(l.a() + "-" + l.b())) {
                continue; // measured twice, failed twice: one finding
            }
            pairs.add(new Finding(Finding.Kind.PAIR, l.a(), k, l.b(), worst(l), bandwidth[k].median,
                    "pair " + l.a() + "-" + l.b() + ": " + flag(l) + " (follows neither end)"));
        }
    }

    private static Set<Integer> partners(int node, int k, List<LinkResult> among) {
        Set<Integer> s = new TreeSet<>();
        for (LinkResult l : among) {
            if (l.rail() == k && l.has(node)) {
                s.add(l.partnerOf(node));
            }
        }
        return s;
    }

    /**
     * The second pass: each end of a failing pair that is not named yet against a known-good
     * partner on the same rail (a NIC with no failing link), packed into rounds of disjoint pairs.
     */
    public List<List<Retest>> retests() {
        List<Retest> wanted = new ArrayList<>();
        for (int k = 0; k < rails; k++) {
            List<LinkResult> failing = failingLinks(k);
            Set<Integer> good = new TreeSet<>();
            for (int i = 0; i < nodes; i++) {
                if (!dead.containsKey(i) && partners(i, k, failing).isEmpty()) {
                    good.add(i);
                }
            }
            for (LinkResult l : failing) {
                if (l.retest()) {
                    continue; // measured twice already: judged as it stands
                }
                wanted.add(new Retest(l.a(), l.b(), k));
                for (int end : new int[] {l.a(), l.b()}) {
                    Integer partner = knownGood(end, k, good);
                    if (partner != null && wanted.stream().noneMatch(r -> r.rail() == l.rail() && r.touches(end) && r.touches(partner))) {
                        wanted.add(new Retest(Math.min(end, partner), Math.max(end, partner), k));
                    }
                }
            }
        }
        List<List<Retest>> rounds = new ArrayList<>();
        for (Retest r : wanted) {
            List<Retest> into = null;
            if (wanted.subList(0, wanted.indexOf(r)).contains(r)) {
                continue;
            }
            for (List<Retest> round : rounds) {
                if (round.stream().noneMatch(o -> !o.samePair(r) && (o.touches(r.node()) || o.touches(r.partner())))) {
                    into = round;
                    break;
                }
            }
            if (into == null) {
                into = new ArrayList<>();
                rounds.add(into);
            }
            into.add(r);
        }
        return rounds;
    }

    /** A known-good partner of {@code node} on rail {@code k} it was not yet measured with, else any known-good one, else null. */
    private Integer knownGood(int node, int k, Set<Integer> good) {
        Set<Integer> tried = partners(node, k, links);
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

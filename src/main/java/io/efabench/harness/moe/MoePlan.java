package io.efabench.harness.moe;

import java.util.Arrays;
import java.util.SplittableRandom;

import io.efabench.harness.BenchmarkSetupException;

/**
 * Which tokens go where, for {@link #ROUNDS} rounds that a trial cycles through (round r uses
 * routing r mod ROUNDS): every rank computes the same routing from the seed, so no plan is
 * exchanged. Owner o's tokens of routing p come from one random stream of (seed, p, o); a token
 * picks {@code topk} distinct experts by their weights and goes once to each rank holding one of
 * them (its own rank included: those stay in place, as DeepEP's own-rank share does not cross a
 * link). This rank keeps only what its rounds need: per routing how many tokens it sends each
 * rank and receives from each, where its segments lie in its buffers and land in the peers', and
 * every rank's load; a failure line regenerates the token ids ({@link #tokensTo}).
 *
 * <p>Buffers are laid out per routing: this rank's dispatch source holds one segment per other
 * rank, in rank order, its tokens for that rank in token order; its dispatch destination one
 * segment per sender in rank order. Combine returns each token to its owner in the reverse
 * layout: the expert rank's combine source is laid out as its dispatch destination, the owner's
 * combine destination as its dispatch source.
 */
public final class MoePlan {
    /** Distinct routings a trial cycles through. */
    public static final int ROUNDS = 16;

    final MoeShape shape;
    final Routing routing;
    final long seed;
    final int ranks;
    final int me;
    /** The rank whose experts {@code hot} routing favours: the last expert's. */
    final int hotRank;
    /** Draws a token's experts by their weights. */
    private final Picker picker;
    /** Where the calibration landed on its sample: max/mean load (uniform, lognormal), the hot rank's share (hot). */
    final double calibrated;
    /** The target could not be reached with this many ranks and experts: what was run instead, else null. */
    final String clamped;

    /** Per routing p: tokens this rank sends rank d ([p][me]: its own tokens that stay), and segment starts in tokens. */
    final int[][] sendCount;
    final int[][] sendStart;
    /** Per routing p: tokens rank s sends this rank, and where s's segment starts in this rank's dispatch destination. */
    final int[][] recvCount;
    final int[][] recvStart;
    /** Per routing p: where this rank's segment starts in rank d's dispatch destination (d's recvStart[me]). */
    final int[][] landAt;
    /** Per routing p: where this rank's returns start in owner o's combine destination (o's sendStart[me]). */
    final int[][] returnAt;
    /** Per routing p: tokens rank q's experts take, its own included (rank load). */
    final int[][] load;
    /** Most tokens this rank sends others, and receives from others, in any routing. */
    final int maxSent;
    final int maxReceived;
    /** The token matrices n[o][d] of every routing, kept until {@link MoeLinks} has read them, then dropped. */
    private int[][][] matrices = new int[ROUNDS][][];

    public MoePlan(MoeShape shape, Routing routing, long seed, int ranks, int me) {
        if (ranks < 2) {
            throw new BenchmarkSetupException("MoE dispatch and combine need at least 2 ranks, not " + ranks);
        }
        this.shape = shape;
        this.routing = routing;
        this.seed = seed;
        this.ranks = ranks;
        this.me = me;
        this.hotRank = shape.rankOf(shape.experts() - 1, ranks);
        Calibration c = calibrate(shape, routing, seed, ranks, hotRank);
        this.picker = new Picker(c.weights);
        this.calibrated = c.reached;
        this.clamped = c.clamped;
        sendCount = new int[ROUNDS][];
        sendStart = new int[ROUNDS][];
        recvCount = new int[ROUNDS][];
        recvStart = new int[ROUNDS][];
        landAt = new int[ROUNDS][];
        returnAt = new int[ROUNDS][];
        load = new int[ROUNDS][];
        int sent = 0;
        int received = 0;
        for (int p = 0; p < ROUNDS; p++) {
            int[][] n = matrix(p);
            sendCount[p] = n[me].clone();
            recvCount[p] = new int[ranks];
            load[p] = new int[ranks];
            for (int s = 0; s < ranks; s++) {
                recvCount[p][s] = n[s][me];
                for (int d = 0; d < ranks; d++) {
                    load[p][d] += n[s][d];
                }
            }
            sendStart[p] = starts(n[me], me);
            recvStart[p] = starts(recvCount[p], me);
            landAt[p] = new int[ranks];
            returnAt[p] = new int[ranks];
            for (int d = 0; d < ranks; d++) {
                if (d != me) {
                    landAt[p][d] = startOf(column(n, d), d, me);
                    returnAt[p][d] = startOf(n[d], d, me);
                }
            }
            sent = Math.max(sent, total(sendCount[p], me));
            received = Math.max(received, total(recvCount[p], me));
            matrices[p] = n;
        }
        maxSent = sent;
        maxReceived = received;
    }

    /** Routing p's matrix n[o][d] (tokens o sends d), once, for the link bound; null afterwards. */
    int[][][] takeMatrices() {
        int[][][] m = matrices;
        matrices = null;
        return m;
    }

    /**
     * Every routing's token matrix n[o][d] (tokens rank o sends rank d, its own in n[o][o]) as
     * every rank computes it: what a peer tool needs to run the same split sizes
     * ({@code io.efabench.launch.MoeSplits}, docs/perf/moe-vs-nccl.sh).
     */
    public static int[][][] matrices(MoeShape shape, Routing routing, long seed, int ranks) {
        return new MoePlan(shape, routing, seed, ranks, 0).takeMatrices();
    }

    /** The routing round {@code round} uses. */
    public static int routingOf(long round) {
        return (int) Math.floorMod(round, (long) ROUNDS);
    }

    private static int total(int[] count, int skip) {
        int t = 0;
        for (int r = 0; r < count.length; r++) {
            t += r == skip ? 0 : count[r];
        }
        return t;
    }

    /** Segment starts of counts laid out in rank order, rank {@code skip} left out. */
    private static int[] starts(int[] count, int skip) {
        int[] s = new int[count.length];
        int at = 0;
        for (int r = 0; r < count.length; r++) {
            s[r] = at;
            at += r == skip ? 0 : count[r];
        }
        return s;
    }

    private static int startOf(int[] count, int skip, int of) {
        return starts(count, skip)[of];
    }

    private static int[] column(int[][] n, int d) {
        int[] c = new int[n.length];
        for (int s = 0; s < n.length; s++) {
            c[s] = n[s][d];
        }
        return c;
    }

    /** n[o][d]: tokens owner o sends rank d in routing p. */
    private int[][] matrix(int p) {
        int[][] n = new int[ranks][ranks];
        for (int o = 0; o < ranks; o++) {
            route(shape, picker, stream(p, o), shape.tokens(), n[o]);
        }
        return n;
    }

    /**
     * Routes {@code tokens} tokens drawn from {@code rnd}: each adds 1 to {@code perRank[d]} for
     * every rank d holding one of its experts, once however many of them d holds.
     */
    private static void route(MoeShape shape, Picker picker, SplittableRandom rnd, int tokens, int[] perRank) {
        int[] picked = new int[shape.topk()];
        int[] stamp = new int[perRank.length];
        Arrays.fill(stamp, -1);
        for (int t = 0; t < tokens; t++) {
            picker.pick(rnd, picked);
            for (int e : picked) {
                int d = shape.rankOf(e, perRank.length);
                if (stamp[d] != t) {
                    stamp[d] = t;
                    perRank[d]++;
                }
            }
        }
    }

    /** Owner {@code owner}'s tokens that go to rank {@code dest} in routing {@code p}, in token order (failure lines). */
    public int[] tokensTo(int p, int owner, int dest) {
        int[] out = new int[shape.tokens()];
        int k = 0;
        int[] picked = new int[shape.topk()];
        SplittableRandom rnd = stream(p, owner);
        for (int t = 0; t < shape.tokens(); t++) {
            picker.pick(rnd, picked);
            for (int e : picked) {
                if (shape.rankOf(e, ranks) == dest) {
                    out[k++] = t;
                    break;
                }
            }
        }
        return Arrays.copyOf(out, k);
    }

    /** The lowest expert on rank {@code dest} that owner's token {@code token} picked in routing p, or -1. */
    public int expertOf(int p, int owner, int token, int dest) {
        int[] picked = new int[shape.topk()];
        SplittableRandom rnd = stream(p, owner);
        for (int t = 0; t <= token; t++) {
            picker.pick(rnd, picked);
        }
        int best = -1;
        for (int e : picked) {
            if (shape.rankOf(e, ranks) == dest && (best < 0 || e < best)) {
                best = e;
            }
        }
        return best;
    }

    private SplittableRandom stream(int p, int owner) {
        return new SplittableRandom(mix(seed, p, owner));
    }

    private static long mix(long seed, long a, long b) {
        long z = seed * 0x9E3779B97F4A7C15L + (a + 1) * 0xBF58476D1CE4E5B9L + (b + 1) * 0x94D049BB133111EBL;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        return z ^ (z >>> 31);
    }

    /**
     * {@code topk} distinct experts by weight: draws with the cumulative weights, a repeat drawn
     * again; where repeats dominate (topk near the experts, or a few heavy ones) the exact
     * weighted choice without replacement (Efraimidis-Spirakis keys) decides the token instead.
     */
    private static final class Picker {
        private final double[] weights;
        private final double[] cumulative;

        Picker(double[] weights) {
            this.weights = weights;
            this.cumulative = new double[weights.length];
            double sum = 0;
            for (int e = 0; e < weights.length; e++) {
                sum += weights[e];
                cumulative[e] = sum;
            }
        }

        void pick(SplittableRandom rnd, int[] picked) {
            int k = picked.length;
            double total = cumulative[cumulative.length - 1];
            int got = 0;
            int tries = 0;
            int limit = 16 * k;
            if (2 * k <= cumulative.length) {
                while (got < k && tries++ < limit) {
                    int e = Arrays.binarySearch(cumulative, rnd.nextDouble() * total);
                    e = Math.min(e >= 0 ? e + 1 : -e - 1, cumulative.length - 1);
                    if (!contains(picked, got, e)) {
                        picked[got++] = e;
                    }
                }
            }
            if (got < k) {
                exact(rnd, picked);
            }
        }

        private static boolean contains(int[] a, int n, int v) {
            for (int i = 0; i < n; i++) {
                if (a[i] == v) {
                    return true;
                }
            }
            return false;
        }

        /** The k experts with the smallest keys -ln(u)/w (Efraimidis-Spirakis), in key order. */
        private void exact(SplittableRandom rnd, int[] picked) {
            int k = picked.length;
            double[] key = new double[k];
            int n = 0;
            for (int e = 0; e < weights.length; e++) {
                double x = -Math.log(1 - rnd.nextDouble()) / weights[e];
                if (n < k || x < key[k - 1]) {
                    int i = n < k ? n++ : k - 1;
                    while (i > 0 && key[i - 1] > x) {
                        key[i] = key[i - 1];
                        picked[i] = picked[i - 1];
                        i--;
                    }
                    key[i] = x;
                    picked[i] = e;
                }
            }
        }
    }

    // ---- calibration -------------------------------------------------------------------------

    private record Calibration(double[] weights, double reached, String clamped) {}

    /** Tokens the calibration routes (one stream of the seed's own), enough that their loads are the expected ones within ~1%. */
    static final int CALIBRATION_TOKENS = 4096;

    /**
     * Expert weights for the routing, searched by routing a sample of tokens as the rounds will:
     * lognormal's spread until the ranks' max/mean load is the one asked, hot's boost until the
     * hot rank takes the share asked (sampling without replacement caps both well below what the
     * weights alone suggest: one heavy expert is picked once a token). The realized figure of
     * every round is what the results report ({@code imbalance}).
     */
    static Calibration calibrate(MoeShape shape, Routing routing, long seed, int ranks, int hotRank) {
        int e = shape.experts();
        switch (routing.kind()) {
            case UNIFORM -> {
                double[] w = new double[e];
                Arrays.fill(w, 1);
                return new Calibration(w, sampled(shape, w, ranks, seed, -1), null);
            }
            case LOGNORMAL -> {
                SplittableRandom rnd = new SplittableRandom(mix(seed, -1, -1));
                double[] z = new double[e];
                for (int i = 0; i < e; i++) {
                    z[i] = gaussian(rnd);
                }
                return search(routing, 8, sigma -> lognormal(z, sigma), w -> sampled(shape, w, ranks, seed, -1),
                        String.format(java.util.Locale.ROOT, "%d experts over %d ranks reach at most max/mean", e, ranks));
            }
            case HOT -> {
                return search(routing, 40, b -> boosted(shape, ranks, hotRank, b), w -> sampled(shape, w, ranks, seed, hotRank),
                        "rank " + hotRank + "'s experts reach at most a share of");
            }
            default -> throw new IllegalStateException(routing.toString());
        }
    }

    /** Bisects the knob in [0, top] until {@code measure} of the weights reaches the routing's amount. */
    private static Calibration search(Routing routing, double top, java.util.function.DoubleFunction<double[]> weights,
            java.util.function.ToDoubleFunction<double[]> measure, String most) {
        double[] w = weights.apply(top);
        double reached = measure.applyAsDouble(w);
        if (reached < routing.amount()) {
            return new Calibration(w, reached, String.format(java.util.Locale.ROOT, "%s: %s %.3f; running at that", routing,
                    most, reached));
        }
        double lo = 0;
        double hi = top;
        for (int i = 0; i < 30; i++) {
            double mid = (lo + hi) / 2;
            if (measure.applyAsDouble(weights.apply(mid)) < routing.amount()) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        w = weights.apply(hi);
        return new Calibration(w, measure.applyAsDouble(w), null);
    }

    /**
     * Routes {@link #CALIBRATION_TOKENS} tokens with these weights (one fixed stream, so the search
     * sees a smooth function): the ranks' max/mean load, or where {@code hot} >= 0 that rank's share.
     */
    private static double sampled(MoeShape shape, double[] w, int ranks, long seed, int hot) {
        int[] load = new int[ranks];
        route(shape, new Picker(w), new SplittableRandom(mix(seed, -2, -2)), CALIBRATION_TOKENS, load);
        if (hot < 0) {
            return io.efabench.harness.Metrics.maxOverMean(load);
        }
        long sum = 0;
        for (int x : load) {
            sum += x;
        }
        return (double) load[hot] / sum;
    }

    private static double gaussian(SplittableRandom rnd) {
        double u = 1 - rnd.nextDouble();
        double v = rnd.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    }

    private static double[] lognormal(double[] z, double sigma) {
        double[] w = new double[z.length];
        for (int i = 0; i < z.length; i++) {
            w[i] = Math.exp(sigma * z[i]);
        }
        return w;
    }

    private static double[] boosted(MoeShape shape, int ranks, int hot, double logBoost) {
        double[] w = new double[shape.experts()];
        for (int e = 0; e < w.length; e++) {
            w[e] = shape.rankOf(e, ranks) == hot ? Math.exp(logBoost) : 1;
        }
        return w;
    }

    /** Routing p's realized max/mean load over the ranks (own tokens included). */
    public double imbalance(int p) {
        return io.efabench.harness.Metrics.maxOverMean(load[p]);
    }

    /** Tokens this rank's experts take in routing p, its own included (DeepEP's received tokens). */
    public int received(int p) {
        return load[p][me];
    }

    /** Tokens this rank receives from other ranks in routing p (what crosses a link in dispatch). */
    public int receivedFromOthers(int p) {
        return load[p][me] - sendCount[p][me];
    }

    /** Tokens this rank sends other ranks in routing p. */
    public int sentToOthers(int p) {
        return total(sendCount[p], me);
    }

    public MoeShape shape() {
        return shape;
    }

    public Routing routing() {
        return routing;
    }

    /** What the calibration reached (see {@link #calibrate}). */
    public double calibrated() {
        return calibrated;
    }

    /** Where the routing's target was out of reach, the line saying what ran instead; else null. */
    public String clamped() {
        return clamped;
    }

    public int hotRank() {
        return hotRank;
    }
}

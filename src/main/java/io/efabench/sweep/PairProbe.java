package io.efabench.sweep;

import java.time.Duration;

import io.efabench.harness.Layout;
import io.efabench.harness.MemoryKind;
import io.efabench.harness.Metrics;
import io.efabench.harness.pingpong.PingPongRounds;
import io.efabench.harness.trial.FabricTrial;
import io.efabench.harness.trial.Side;
import io.efabench.harness.trial.TrialIdentity;
import io.efabench.harness.trial.TrialSpec;
import io.efabench.harness.write.WriteRounds;
import io.efabench.rank.RankEnv;
import io.efabench.topology.NicCounters;

/**
 * One node's part in measuring one pair on one rail, on NIC {@code rail} of both nodes
 * ({@link TrialSpec#nic}), from and to host memory or the GPU nearest that NIC ({@link RailMemory}): the lower node's Write (SINGLE,
 * remote completion, the workload's own checked pass) to the higher, the higher's to the lower,
 * then a 64 B ping-pong the lower leads, every round trip timed. Three trials of two ranks, each
 * formed in this process: two workloads on one channel would take each other's receives, and
 * each trial's endpoints close with it, so a rail that fails leaves nothing behind for the next
 * pair. A failure is this side's one line, not an exception: the sweep goes on.
 */
final class PairProbe {
    /** The ping-pong's message: a small one, as the round-trip latency of the seed's SendRecv at its smallest. */
    static final long PING_BYTES = 64;
    /** Most round trips one ping-pong times; the rest of its time is not sampled. */
    private static final int MAX_SAMPLES = 1 << 16;

    /** What this side saw: its own Write's Gbps (as leader), the round trips (lower node only), or why it failed. */
    record View(int partner, int rail, double gbps, double p50us, double p99us, double nicBytesRatio, String failure) {
        static View failed(int partner, int rail, String why) {
            return new View(partner, rail, Double.NaN, Double.NaN, Double.NaN, Double.NaN, why);
        }
    }

    private final SweepOptions o;
    /** The buffers' memory and GPU (-1: none, or the local rank's), this rail's ({@link RailMemory}). */
    private final MemoryKind memory;
    private final int gpu;
    private final long[] rtt = new long[MAX_SAMPLES];

    PairProbe(SweepOptions o, MemoryKind memory, int gpu) {
        this.o = o;
        this.memory = memory;
        this.gpu = gpu;
    }

    /**
     * Measures with {@code partner} on {@code rail}, this node's NIC {@code nic} (its domain);
     * {@code me} and {@code partner} are node indices, {@code lowerHost} and {@code higherHost} the
     * addresses the pair's nodes meet at (no name is resolved), the trials' rendezvous on {@code port}
     * .. {@code port + 2} of the leading node's.
     */
    View measure(int me, int partner, int rail, String nic, String lowerHost, String higherHost, int port, String key) {
        boolean lower = me < partner;
        double gbps = Double.NaN;
        double p50 = Double.NaN;
        double p99 = Double.NaN;
        double ratio = Double.NaN;
        try {
            // One trial per measurement: two workloads on one channel would take each other's receives.
            double[] mine = write(lower, lowerHost, port, key + " write from " + Math.min(me, partner), nic, rail);
            double[] theirs = write(!lower, higherHost, port + 1, key + " write from " + Math.max(me, partner), nic, rail);
            double[] w = mine != null ? mine : theirs;
            gbps = w[0];
            ratio = w[1];
            try (FabricTrial t = open(lower ? 0 : 1, lowerHost, port + 2, key + " ping-pong", nic, rail)) {
                if (lower) {
                    double[] r = leadPingPong(t);
                    p50 = r[0];
                    p99 = r[1];
                } else {
                    followPingPong(t);
                }
            }
        } catch (RuntimeException e) {
            return View.failed(partner, rail, oneLine(e));
        }
        String failure = null;
        if (ratio < SweepOptions.MIN_NIC_BYTES_RATIO) {
            failure = String.format("the NIC's counters carried %.2f of the bytes written: the writes took another way", ratio);
        }
        return new View(partner, rail, gbps, p50, p99, ratio, failure);
    }

    /** One Write trial, led by this node when {@code leading}: {gbps, NIC bytes ratio} as its leader, else null. */
    private double[] write(boolean leading, String leaderHost, int port, String key, String nic, int rail) {
        try (FabricTrial t = open(leading ? 0 : 1, leaderHost, port, key, nic, rail)) {
            if (leading) {
                return leadWrite(t);
            }
            followWrite(t);
            return null;
        }
    }

    private FabricTrial open(int rank, String leaderHost, int port, String key, String nic, int rail) {
        RankEnv env = new RankEnv(rank, 2, 0, 1, leaderHost, port, "sweep");
        return FabricTrial.open(TrialIdentity.outsideJmh("sweep", key, env, o.timeout()),
                TrialSpec.of(memory).nic(nic, rail).gpu(gpu));
    }

    /** Rank 0 of a Write: warm, then timed rounds for the option's seconds; {gbps, NIC bytes ratio}. */
    private double[] leadWrite(FabricTrial t) {
        WriteRounds w = new WriteRounds(t, Layout.SINGLE, true, o.size(), o.window(), true, "auto");
        Side side = w.side();
        t.startIteration(o.seconds());
        side.warmRound();
        long warmEnd = System.nanoTime() + o.seconds().toNanos() / 4;
        while (System.nanoTime() < warmEnd) {
            side.round();
        }
        NicCounters nic = t.nicCounters();
        long nicStart = nic != null ? nic.bytes() : -1;
        long start = System.nanoTime();
        long end = start + o.seconds().toNanos();
        long rounds = 0;
        long now;
        do {
            side.round();
            rounds++;
            now = System.nanoTime();
        } while (now < end);
        double bytes = (double) rounds * w.bytesPerInvocation();
        double ratio = Double.NaN;
        if (nicStart >= 0) {
            long nicEnd = nic.bytes();
            ratio = nicEnd >= 0 ? Metrics.nicBytesRatio(nicEnd - nicStart, (long) bytes) : Double.NaN;
        }
        side.endIteration();
        return new double[] {Metrics.gbps(bytes, (now - start) / 1e9), ratio};
    }

    private void followWrite(FabricTrial t) {
        Side side = new WriteRounds(t, Layout.SINGLE, true, o.size(), o.window(), true, "auto").side();
        t.startIteration(o.seconds());
        side.warmRound();
        side.endIteration(); // serves every round up to the leader's END, then the checked pass
    }

    /** Rank 0 of a ping-pong: every round trip timed for a quarter of the option's seconds; {p50, p99} in us. */
    private double[] leadPingPong(FabricTrial t) {
        Side side = new PingPongRounds(t, PING_BYTES).side();
        Duration length = o.seconds().dividedBy(4);
        t.startIteration(length);
        side.warmRound();
        long end = System.nanoTime() + length.toNanos();
        int n = 0;
        long now = System.nanoTime();
        while (now < end && n < rtt.length) {
            long before = now;
            side.round();
            now = System.nanoTime();
            rtt[n++] = now - before;
        }
        side.endIteration();
        return new double[] {Metrics.percentileUs(rtt, n, 0.50), Metrics.percentileUs(rtt, n, 0.99)};
    }

    private void followPingPong(FabricTrial t) {
        Side side = new PingPongRounds(t, PING_BYTES).side();
        t.startIteration(o.seconds().dividedBy(4));
        side.warmRound();
        side.endIteration();
    }

    /** The failure's first line, as the benchmarks' one-line failures read. */
    static String oneLine(Throwable e) {
        String m = e.getMessage() != null ? e.getMessage() : e.toString();
        int nl = m.indexOf('\n');
        return nl >= 0 ? m.substring(0, nl) : m;
    }
}

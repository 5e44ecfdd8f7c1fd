package io.efabench.harness;


/**
 * Every metric formula of the suite, in one place (documented in README.md, "Metrics").
 *
 * <ul>
 *   <li>{@code gbps}: algorithm bandwidth, payload bits delivered per second, 1 Gbps = 1e9 bit/s.
 *       Payload only: headers, acks and immediate data are not counted.</li>
 *   <li>{@code busbw_pct}: gbps as a percentage of the link speed of the channels the transfer
 *       actually used (sum of their {@code fi_info->nic->link_attr->speed}, or
 *       {@code FABRIC_LINK_GBPS} per channel). Unknown link speed: no value, never a guess.</li>
 *   <li>{@code lat_us}: time of one transfer in microseconds. For ping-pong this is half the
 *       round trip (one direction), like fabtests' usec/xfer and OSU's latency.</li>
 *   <li>{@code lat_p50_us} ... {@code lat_p999_us} ({@code -bm sample} only): percentiles of the
 *       sampled invocation times divided by the transfers per invocation, in microseconds.</li>
 *   <li>All-to-all (every rank writes {@code size} bytes to each of the N-1 others per round),
 *       rank 0's figures: {@code gbps} = size x (N-1) x 8 / round time, the bytes this rank sent
 *       to other ranks (nccl-tests' busbw for alltoall); {@code algbw_gbps} = size x N x 8 /
 *       round time (nccl-tests' algbw); {@code busbw_pct} = gbps over the link speed of the
 *       channels this rank wrote on; {@code min_peer_gbps} / {@code p50_peer_gbps} /
 *       {@code max_peer_gbps}: per pair, size x 8 / the mean time from the receiver's start of a
 *       round to the arrival of the sender's last write of it (PeerSpread), lowest, median and
 *       highest over all pairs; {@code slowest_rank_gbps}: an invocation's bytes over the mean of
 *       each invocation's slowest rank time (a collective is as slow as its slowest rank). The seed's all2all
 *       figure is one peer's bytes over the round: ours divided by N-1; {@code nccl_algbw_gbs} and
 *       {@code nccl_busbw_gbs}: nccl-tests' alltoall_perf figures in GB/s ({@link #ncclAlgbwGBs},
 *       {@link #ncclAlltoallBusbwGBs}).</li>
 *   <li>The sweep ({@code ./run-jmh.sh sweep}): per pair and rail, {@code gbps} of each direction
 *       is a Write's (SINGLE, remote completion) payload over the leader's timed rounds;
 *       {@code rtt_p50_us} and {@code rtt_p99_us} are nearest-rank percentiles of the round
 *       trips of a 64 B ping-pong ({@link #percentileUs}), whole round trips, not halves.</li>
 *   <li>MoE dispatch and combine ({@code MoeBenchmark}), rank 0 over every rank's timed rounds
 *       (the rounds every rank timed): per rank, bytes over that rank's summed time, then the
 *       mean over ranks ({@link #meanRankGBs}), in GB/s: {@code moe_gbs} counts DeepEP's way
 *       (tokens a rank's experts take, its own included, x (dispatch + combine bytes a token)
 *       over its round time), {@code moe_dispatch_gbs} and {@code moe_combine_gbs} the same over
 *       each phase's time, {@code moe_wire_gbs} only what came from other ranks (dispatched
 *       tokens from others, returns of its tokens from others) over the round time,
 *       {@code nccl_busbw_gbs} what a rank sent other ranks over the round time (nccl-tests'
 *       alltoall busbw: a rank's egress); {@code imbalance} = max/mean tokens per rank
 *       ({@link #maxOverMean}), mean over the rounds; {@code slowest_rank_us} and its
 *       {@code _p50_us} / {@code _p99_us} = per round the slowest rank's time, mean and
 *       nearest-rank percentiles; {@code moe_dispatch_us} / {@code moe_combine_us} = per round
 *       the slowest rank's phase time, mean; {@code busiest_nic_gbps} = the bytes the busiest
 *       NIC carries a round in its busier direction (dispatch plus combine) x 8 over the rounds'
 *       period (the mean over ranks of their summed round times: at window 1 the ranks run in
 *       lockstep), which no link may exceed; {@code moe_link_bound_us} = those bytes
 *       over the NIC's link speed, where known.</li>
 *   <li>{@code rtt_us} (SendRecv: one ping-pong round trip) and {@code round_us} (all-to-all at
 *       window 1: one round): the seed's units of time, from which the seed-style tables compute
 *       the seed's Gbps and Lat ({@link #seedGbps}, {@link #seedBusbwPct}).</li>
 * </ul>
 * Every time-based figure starts from {@link #secondsPerInvocation}: JMH's operation is a whole
 * batch ({@code -bs}) in every mode, so the batch size is divided out here, once.
 * The seed's inconsistencies fixed here: ping-pong bandwidth is per direction over one-way
 * time (the seed divided one size by the whole round trip), concurrent transfers count all
 * bytes moved (the seed's all2all ignored N-1 peers), and the %-of-link denominator counts
 * only the channels used (the seed divided RoundRobin with 2 ranks by 4 NICs).
 */
public final class Metrics {
    private Metrics() {}

    /** Payload bandwidth in Gbps (1e9 bit/s). */
    public static double gbps(double bytes, double seconds) {
        return bytes * 8.0 / seconds / 1e9;
    }

    /**
     * The nearest-rank {@code q}-quantile (0 < q <= 1) of the first {@code n} of {@code nanos}, in
     * microseconds; sorts them in place. NaN where n is 0.
     */
    public static double percentileUs(long[] nanos, int n, double q) {
        if (n == 0) {
            return Double.NaN;
        }
        java.util.Arrays.sort(nanos, 0, n);
        int rank = (int) Math.ceil(q * n);
        return nanos[Math.max(0, Math.min(n - 1, rank - 1))] / 1e3;
    }

    /** Payload bandwidth in GB/s (1e9 byte/s), the unit NVLink figures are usually quoted in. */
    public static double gbytesPerSec(double bytes, double seconds) {
        return bytes / seconds / 1e9;
    }

    /** Mean over ranks of bytes[q] / seconds[q], in GB/s (1e9 byte/s); ranks without time are left out, NaN if none. */
    public static double meanRankGBs(double[] bytes, double[] seconds) {
        double sum = 0;
        int n = 0;
        for (int q = 0; q < bytes.length; q++) {
            if (seconds[q] > 0) {
                sum += gbytesPerSec(bytes[q], seconds[q]);
                n++;
            }
        }
        return n > 0 ? sum / n : Double.NaN;
    }

    /** The largest of {@code load} over their mean (1 for an even load, N when one rank takes all); 1 where all are 0. */
    public static double maxOverMean(int[] load) {
        long sum = 0;
        int max = 0;
        for (int x : load) {
            sum += x;
            max = Math.max(max, x);
        }
        return sum > 0 ? max / ((double) sum / load.length) : 1;
    }

    /** Percent of the link speed, or NaN when the link speed is unknown (zero or negative). */
    public static double busbwPct(double gbps, double linkGbps) {
        return linkGbps > 0 ? 100.0 * gbps / linkGbps : Double.NaN;
    }

    /**
     * {@code nic_bytes_ratio}: bytes rank 0's NICs counted (sent + received, sysfs) over the
     * payload bytes the benchmark moved through them in the same iteration; NaN when nothing moved.
     * Headers, acks and retransmissions make it a little above 1; same-node traffic that bypassed
     * the NIC (shm) makes it fall towards 0.
     */
    public static double nicBytesRatio(long nicBytes, long payloadBytes) {
        return payloadBytes > 0 ? (double) nicBytes / payloadBytes : Double.NaN;
    }

    /**
     * nccl-tests' algbw for alltoall in GB/s (1e9 B/s): alltoall_perf's size, the whole send
     * buffer of a rank (our per-peer {@code size} x N), over the time of one all-to-all.
     */
    public static double ncclAlgbwGBs(double sizeTimesRanks, double seconds) {
        return gbytesPerSec(sizeTimesRanks, seconds);
    }

    /** nccl-tests' busbw for alltoall in GB/s: algbw x (N-1) / N (alltoall.cu, AlltoAllGetBw). */
    public static double ncclAlltoallBusbwGBs(double algbwGBs, int ranks) {
        return algbwGBs * (ranks - 1) / ranks;
    }

    /**
     * The seed's Gbps: {@code size} bytes (one message, one peer's block) x 8 over one of the
     * seed's time units (a ping-pong round trip, an all-to-all round), given in microseconds.
     */
    public static double seedGbps(long size, double micros) {
        return gbps(size, micros / 1e6);
    }

    /**
     * The seed's BusBW(%) next to one of our results: {@code seedGbps} over the same link speed
     * our {@code busbw_pct} divided by (gbps x 100 / busbw_pct); NaN where the link is unknown.
     */
    public static double seedBusbwPct(double seedGbps, double gbps, double busbwPct) {
        return Double.isFinite(busbwPct) && busbwPct > 0 ? busbwPct(seedGbps, gbps * 100 / busbwPct) : Double.NaN;
    }

    /** Seconds to microseconds. */
    public static double latUs(double seconds) {
        return seconds * 1e6;
    }

    /**
     * Seconds one {@code @Benchmark} invocation took, from JMH's seconds per operation. In every
     * JMH mode an operation is a batch of {@code batchSize} invocations ({@code -bs}, or
     * {@code -wbs} in warm-up iterations) divided into {@code opsPerInvocation} operations each:
     * thrpt and avgt count invocations × opsPerInvocation / batchSize operations, sample records
     * one batch's time / opsPerInvocation, single-shot times one batch as opsPerInvocation
     * operations. So: seconds per op × opsPerInvocation / batchSize.
     */
    public static double secondsPerInvocation(double secondsPerOp, int opsPerInvocation, int batchSize) {
        return secondsPerOp * opsPerInvocation / Math.max(1, batchSize);
    }

    /** Latency of one transfer in microseconds: the invocation's time over its transfers in sequence. */
    public static double transferLatUs(double secondsPerInvocation, int transfersPerInvocation) {
        return latUs(secondsPerInvocation / transfersPerInvocation);
    }
}

package io.efabench.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.openjdk.jmh.results.AverageTimeResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ResultRole;
import org.openjdk.jmh.results.SampleTimeResult;
import org.openjdk.jmh.results.SingleShotResult;
import org.openjdk.jmh.results.ThroughputResult;
import org.openjdk.jmh.util.SampleBuffer;

/**
 * The conversion from JMH's primary result to seconds per invocation, with the results built
 * the way JMH 1.37's generated code builds them (jmh_generated/*_jmhTest.java): with {@code -bs B}
 * and {@code opsPerInvocation P}, thrpt and avgt count invocations × P / B operations, sample
 * records a batch's time / P per sample, single-shot times one batch as P operations.
 */
class MetricsProfilerTest {
    private static final long INVOCATION_NS = 25_000; // every invocation takes 25 us
    private static final long ITERATION_NS = 1_000_000_000L;

    private static double perInvocationUs(Result<?> r, int ops, int batch) {
        return MetricsProfiler.secondsPerInvocation(r.getScore(), r.getScoreUnit(), ops, batch) * 1e6;
    }

    @Test
    void everyModeDividesTheBatchOut() {
        for (int batch : new int[] {1, 4, 7}) {
            for (int ops : new int[] {1, 3}) {
                long invocations = ITERATION_NS / INVOCATION_NS;
                double measuredOps = (double) invocations * ops / batch;
                Result<?> thrpt = new ThroughputResult(ResultRole.PRIMARY, "x", measuredOps, ITERATION_NS, TimeUnit.SECONDS);
                Result<?> avgt = new AverageTimeResult(ResultRole.PRIMARY, "x", measuredOps, ITERATION_NS,
                        TimeUnit.MICROSECONDS);
                SampleBuffer samples = new SampleBuffer();
                for (int i = 0; i < 1000; i++) {
                    samples.add(batch * INVOCATION_NS / ops);
                }
                Result<?> sample = new SampleTimeResult(ResultRole.PRIMARY, "x", samples, TimeUnit.MICROSECONDS);
                Result<?> ss = new SingleShotResult(ResultRole.PRIMARY, "x", batch * INVOCATION_NS, ops,
                        TimeUnit.MICROSECONDS);
                String at = "batch " + batch + ", ops " + ops;
                assertEquals(25.0, perInvocationUs(thrpt, ops, batch), 0.01, "thrpt, " + at);
                assertEquals(25.0, perInvocationUs(avgt, ops, batch), 0.01, "avgt, " + at);
                assertEquals(25.0, perInvocationUs(sample, ops, batch), 0.05, "sample, " + at);
                assertEquals(25.0, perInvocationUs(ss, ops, batch), 0.01, "ss, " + at);
                double sampleMeanNs = MetricsProfiler.invocationNanos(sample, ops, batch).getStatistics(1).getMean();
                assertEquals(INVOCATION_NS, sampleMeanNs, INVOCATION_NS * 0.002, "sample buffer, " + at);
            }
        }
    }

    @Test
    void batchOfFourIsNotFourTimesTheLatency() {
        // The reported case: SendRecv 4K avgt -bs 4 scored 122 us/op = 4 invocations of 30.5 us.
        Traffic t = new Traffic(2 * 4096, 2, 0, 0, true);
        double seconds = MetricsProfiler.secondsPerInvocation(122.0, "us/op", 1, 4);
        assertEquals(15.25, Metrics.transferLatUs(seconds, t.transfersPerInvocation()), 1e-9);
    }

    @Test
    void sampleModeMetricsPoolEverySampleLikeThePrimary() {
        Traffic t = new Traffic(1 << 20, 2, 100, 0, true);
        SampleBuffer fast = new SampleBuffer(); // an iteration of 1000 fast rounds
        for (int i = 0; i < 1000; i++) {
            fast.add(10_000);
        }
        SampleBuffer slow = new SampleBuffer(); // a stalled iteration: few samples, all slow
        for (int i = 0; i < 10; i++) {
            slow.add(1_000_000);
        }
        Map<String, Double> pooled = merged(t, true, fast, slow);
        double meanNs = (1000 * 10_000.0 + 10 * 1_000_000.0) / 1010; // what JMH's pooled primary says
        assertEquals(meanNs / 2 / 1e3, pooled.get("lat_us"), meanNs / 2 / 1e3 * 0.002, pooled.toString());
        assertEquals(Metrics.gbps(1 << 20, meanNs / 1e9), pooled.get("gbps"), pooled.get("gbps") * 0.002, pooled.toString());
        assertEquals(Metrics.busbwPct(pooled.get("gbps"), 100), pooled.get("busbw_pct"), 1e-9);
        assertEquals(5.0, pooled.get("lat_p50_us"), 0.01, pooled.toString());
        assertEquals(5.0, pooled.get("lat_p90_us"), 0.01, pooled.toString());
        assertEquals(500.0, pooled.get("lat_p999_us"), 1.0, pooled.toString());
        // A mean of the two iteration means would have said (5 + 500) / 2 = 252.5 us.
        assertTrue(pooled.get("lat_us") < 20, pooled.toString());
    }

    @Test
    void noPercentilesWhereASampleIsNotOneLatency() {
        SampleBuffer b = new SampleBuffer();
        b.add(10_000);
        Map<String, Double> m = merged(new Traffic(4096, 1, 0, 0, true), false, b);
        assertEquals(Map.of("gbps", m.get("gbps"), "lat_us", m.get("lat_us")), m, "no busbw_pct either: link unknown");
        assertFalse(m.containsKey("lat_p99_us"));
    }

    @Test
    void noLatencyAtAllWherePipelinedRoundsOverlap() {
        SampleBuffer b = new SampleBuffer();
        b.add(10_000);
        Map<String, Double> m = merged(new Traffic(4096, 1, 100, 0, false), true, b);
        assertEquals(java.util.Set.of("gbps", "busbw_pct"), m.keySet(), "a pipelined round's time is not a latency");
    }

    @Test
    void pooledResultsSurviveTheTripFromTheFork() throws Exception {
        SampleBuffer b = new SampleBuffer();
        b.add(12_000);
        b.add(14_000);
        PooledMetric p = MetricsProfiler.pooled(sink(new Traffic(4096, 2, 0, 0, true)), b, true).get(1);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(p);
        }
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            PooledMetric back = (PooledMetric) in.readObject();
            assertEquals(p.getLabel(), back.getLabel());
            assertEquals(p.getScore(), back.getScore(), 0);
            assertEquals(2, PooledMetric.merge(List.of(back, back)).getSampleCount() / 2);
        }
    }

    /** Each buffer is one iteration; the metrics as JMH aggregates them over the iterations. */
    /**
     * Issue 20: the seed's unit (SendRecv's round trip, all-to-all's round) and nccl-tests'
     * alltoall figures come out of the same invocation times: rtt_us = invocation / targets;
     * nccl_algbw_gbs = size x N / round in GB/s, nccl_busbw_gbs = that x (N-1)/N.
     */
    @Test
    void seedUnitAndNcclFiguresFollowTheirFormulas() {
        long size = 1 << 20;
        int n = 4;
        MetricsSink sink = sink(new Traffic(size * (n - 1), 1, 0, 0, true));
        sink.collective(size * n, n);
        sink.seedRound(new SeedRound("round_us", 1));
        SampleBuffer b = new SampleBuffer();
        b.add(2_000_000); // 2 ms rounds
        Map<String, Double> m = merged(sink, false, b);
        double round = m.get("round_us"); // SampleBuffer keeps ~0.1% of precision
        assertEquals(2000.0, round, 2000 * 0.002, m.toString());
        assertEquals(size * n / (round * 1e-6) / 1e9, m.get("nccl_algbw_gbs"), 1e-9, m.toString());
        assertEquals(m.get("nccl_algbw_gbs") * 3 / 4, m.get("nccl_busbw_gbs"), 1e-9, m.toString());
        MetricsSink pingPong = sink(new Traffic(2 * 4096, 2, 0, 0, true)); // SendRecv, one target: two transfers, one round trip
        pingPong.seedRound(new SeedRound("rtt_us", 1));
        Map<String, Double> pp = merged(pingPong, false, b);
        assertEquals(2000.0, pp.get("rtt_us"), 2000 * 0.002, pp.toString());
        assertEquals(pp.get("rtt_us") / 2, pp.get("lat_us"), 1e-9, pp.toString());
        assertFalse(pp.containsKey("nccl_algbw_gbs"), "not a collective");
    }

    /**
     * Issue 20, rates as bytes over time: in thrpt/avgt/ss iterations add their invocations and
     * their time. One iteration of 1000 invocations of 10 us (10 ms) and one of 100 invocations of
     * 1 ms (100 ms: single-shot batches, or an iteration overrun by long invocations) moved 1100
     * invocations in 110 ms: 100 us each, and gbps is the bytes over those 110 ms. A mean of the two
     * iterations' rates (as JMH's AVG policy would take) says 5x more.
     */
    @Test
    void timeBasedIterationsAddTheirBytesAndTheirTime() {
        MetricsSink t = sink(new Traffic(1 << 20, 2, 0, 0, true));
        Map<String, List<OverTime>> byLabel = new TreeMap<>();
        for (double[] it : new double[][] {{10e-6, 1000}, {1e-3, 100}}) {
            for (Figure f : MetricsProfiler.figures(t)) {
                byLabel.computeIfAbsent(f.label(), k -> new java.util.ArrayList<>()).add(new OverTime(f, it[0], it[1]));
            }
        }
        double mean = 110e-3 / 1100;
        double gbps = OverTime.merge(byLabel.get("gbps")).getScore();
        double lat = OverTime.merge(byLabel.get("lat_us")).getScore();
        assertEquals(Metrics.gbps(1100.0 * (1 << 20), 110e-3), gbps, gbps * 1e-12);
        assertEquals(mean / 2 * 1e6, lat, lat * 1e-12);
        assertEquals(Metrics.gbps(1 << 20, lat * 2 / 1e6), gbps, gbps * 1e-12, "rate and time agree");
        double meanOfRates = (Metrics.gbps(1 << 20, 10e-6) + Metrics.gbps(1 << 20, 1e-3)) / 2;
        assertTrue(meanOfRates > 4 * gbps, "not a mean of the iterations' rates: " + meanOfRates + " vs " + gbps);
    }

    @Test
    void invocationsComeFromJmhsMeasuredOperations() {
        org.openjdk.jmh.results.IterationResult ir = new org.openjdk.jmh.results.IterationResult(null, null,
                new org.openjdk.jmh.results.IterationResultMetaData(130, 120));
        assertEquals(120 * 4 / 3.0, MetricsProfiler.invocations(ir, 3, 4), 1e-9, "ops x batch / opsPerInvocation");
        org.openjdk.jmh.results.IterationResult none = new org.openjdk.jmh.results.IterationResult(null, null,
                new org.openjdk.jmh.results.IterationResultMetaData(0, 0));
        assertEquals(1, MetricsProfiler.invocations(none, 1, 1));
    }

    private static MetricsSink sink(Traffic t) {
        MetricsSink s = MetricsSink.open();
        s.traffic(t);
        return s;
    }

    private static Map<String, Double> merged(Traffic t, boolean percentiles, SampleBuffer... iterations) {
        return merged(sink(t), percentiles, iterations);
    }

    private static Map<String, Double> merged(MetricsSink t, boolean percentiles, SampleBuffer... iterations) {
        Map<String, List<PooledMetric>> byLabel = new TreeMap<>();
        for (SampleBuffer it : iterations) {
            for (PooledMetric p : MetricsProfiler.pooled(t, it, percentiles)) {
                byLabel.computeIfAbsent(p.getLabel(), k -> new java.util.ArrayList<>()).add(p);
            }
        }
        Map<String, Double> out = new TreeMap<>();
        byLabel.forEach((label, list) -> out.put(label, PooledMetric.merge(list).getScore()));
        return out;
    }
}

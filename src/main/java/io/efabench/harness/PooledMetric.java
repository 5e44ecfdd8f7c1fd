package io.efabench.harness;

import java.util.Collection;

import org.openjdk.jmh.util.SampleBuffer;
import org.openjdk.jmh.util.Statistics;

/**
 * A sample-mode metric over pooled invocation times: iterations (and threads) merge their
 * samples, like JMH's own sample-mode score, and the figure is computed once over all of
 * them through {@link Metrics}. The score error is the 99.9% half-width of the mean carried
 * over to the metric (relative for gbps and busbw_pct); percentiles have none.
 */
public final class PooledMetric extends FigureResult<PooledMetric> {
    private static final long serialVersionUID = 1L;

    private final Figure figure;
    /** NaN for a mean-based figure, else the percentile of the invocation times it takes. */
    private final double percentile;
    private final SampleBuffer invocationNanos;
    private final long samples;
    private final double error;

    PooledMetric(Figure figure, double percentile, SampleBuffer invocationNanos) {
        this(figure, percentile, invocationNanos, invocationNanos.getStatistics(1e-9));
    }

    private PooledMetric(Figure figure, double percentile, SampleBuffer invocationNanos, Statistics seconds) {
        super(figure, value(figure, percentile, seconds));
        this.figure = figure;
        this.percentile = percentile;
        this.invocationNanos = invocationNanos;
        this.samples = seconds.getN();
        double relative = seconds.getN() > 2 ? seconds.getMeanErrorAt(0.999) / seconds.getMean() : Double.NaN;
        this.error = Double.isNaN(percentile) ? Math.abs(getScore() * relative) : Double.NaN;
    }

    private static double value(Figure figure, double percentile, Statistics seconds) {
        if (seconds.getN() == 0) {
            return Double.NaN;
        }
        return figure.of(Double.isNaN(percentile) ? seconds.getMean() : seconds.getPercentile(percentile));
    }

    @Override
    public double getScoreError() {
        return error;
    }

    @Override
    public long getSampleCount() {
        return samples;
    }

    @Override
    PooledMetric merged(Collection<PooledMetric> results) {
        return merge(results);
    }

    /** Pools the samples of several iterations (or threads) of one metric. */
    static PooledMetric merge(Collection<PooledMetric> results) {
        SampleBuffer all = new SampleBuffer();
        PooledMetric first = null;
        for (PooledMetric r : results) {
            all.addAll(r.invocationNanos);
            if (first == null) {
                first = r;
            }
        }
        if (first == null) {
            throw new IllegalArgumentException("nothing to merge");
        }
        return new PooledMetric(first.figure, first.percentile, all);
    }
}

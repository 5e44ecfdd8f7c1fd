package io.efabench.harness;

import java.util.Collection;

import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.Aggregator;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ResultRole;
import org.openjdk.jmh.util.ListStatistics;

/**
 * What {@link OverTime} and {@link PooledMetric} share as JMH results: a secondary metric of one
 * {@link Figure} with one value, a confidence interval of score +- error (none
 * where the error is NaN), and iterations and threads aggregated by the subclass's own merge.
 */
abstract class FigureResult<T extends FigureResult<T>> extends Result<T> {
    private static final long serialVersionUID = 1L;

    FigureResult(Figure figure, double value) {
        super(ResultRole.SECONDARY, figure.label(), single(value), figure.unit(), AggregationPolicy.AVG);
    }

    private static ListStatistics single(double v) {
        ListStatistics s = new ListStatistics();
        s.addValue(v);
        return s;
    }

    /** Several iterations (or threads) of this metric as one result. */
    abstract T merged(Collection<T> results);

    @Override
    public double[] getScoreConfidence() {
        double score = getScore();
        double error = getScoreError();
        return Double.isNaN(error) ? new double[] {score, score} : new double[] {score - error, score + error};
    }

    @Override
    protected Aggregator<T> getThreadAggregator() {
        return this::merged;
    }

    @Override
    protected Aggregator<T> getIterationAggregator() {
        return this::merged;
    }
}

package io.efabench.harness;

import java.util.Arrays;
import java.util.Collection;

import org.openjdk.jmh.util.ListStatistics;

/**
 * A metric of the time-based and single-shot modes over the trial's total time: the bytes of
 * every measured invocation over the time they all took, and a time as that total time over the
 * invocations (sum / sum), never a mean of per-iteration figures. Iterations merge by adding
 * their seconds and invocations, so an iteration that ran longer or held more invocations weighs
 * as much as it moved; rate and time then agree (gbps = bytes x 8 / the same mean time) whatever
 * the iterations did. The score error is the 99.9% half-width over the per-iteration figures.
 */
public final class OverTime extends FigureResult<OverTime> {
    private static final long serialVersionUID = 1L;

    private final Figure figure;
    private final double seconds;
    private final double invocations;
    private final double[] perIteration;

    /** One iteration: {@code invocations} invocations of {@code secondsPerInvocation} each. */
    OverTime(Figure figure, double secondsPerInvocation, double invocations) {
        this(figure, secondsPerInvocation * invocations, invocations,
                new double[] {figure.of(secondsPerInvocation)});
    }

    private OverTime(Figure figure, double seconds, double invocations, double[] perIteration) {
        super(figure, figure.of(seconds / invocations));
        this.figure = figure;
        this.seconds = seconds;
        this.invocations = invocations;
        this.perIteration = perIteration;
    }

    @Override
    public double getScoreError() {
        if (perIteration.length < 3) {
            return Double.NaN;
        }
        ListStatistics s = new ListStatistics();
        Arrays.stream(perIteration).forEach(s::addValue);
        return s.getMeanErrorAt(0.999);
    }

    @Override
    public long getSampleCount() {
        return perIteration.length;
    }

    @Override
    OverTime merged(Collection<OverTime> results) {
        return merge(results);
    }

    /** Adds the seconds and invocations of several iterations (or threads) of one metric. */
    static OverTime merge(Collection<OverTime> results) {
        double s = 0;
        double n = 0;
        double[] each = new double[0];
        OverTime first = null;
        for (OverTime r : results) {
            s += r.seconds;
            n += r.invocations;
            double[] more = Arrays.copyOf(each, each.length + r.perIteration.length);
            System.arraycopy(r.perIteration, 0, more, each.length, r.perIteration.length);
            each = more;
            if (first == null) {
                first = r;
            }
        }
        if (first == null) {
            throw new IllegalArgumentException("nothing to merge");
        }
        return new OverTime(first.figure, s, n, each);
    }
}

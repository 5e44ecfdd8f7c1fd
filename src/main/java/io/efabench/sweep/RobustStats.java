package io.efabench.sweep;

import java.util.Arrays;

/** Median, median absolute deviation and the robust z-score the judgement holds figures against. */
final class RobustStats {
    /** Iglewicz and Hoaglin's modified z-score constant: 0.6745 (x - median) / MAD. */
    static final double Z_SCALE = 0.6745;

    final double median;
    final double mad;
    final int count;

    private RobustStats(double median, double mad, int count) {
        this.median = median;
        this.mad = mad;
        this.count = count;
    }

    /** Of {@code values}; NaN median where there are none. */
    static RobustStats of(double[] values) {
        if (values.length == 0) {
            return new RobustStats(Double.NaN, Double.NaN, 0);
        }
        double m = median(values);
        double[] dev = new double[values.length];
        for (int i = 0; i < values.length; i++) {
            dev[i] = Math.abs(values[i] - m);
        }
        return new RobustStats(m, median(dev), values.length);
    }

    /** The {@code q} quantile (0..1) of {@code values}, linear between order statistics; NaN where there are none. */
    static double quantile(double[] values, double q) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] s = values.clone();
        Arrays.sort(s);
        double at = q * (s.length - 1);
        int lo = (int) Math.floor(at);
        int hi = Math.min(lo + 1, s.length - 1);
        return s[lo] + (at - lo) * (s[hi] - s[lo]);
    }

    static double median(double[] values) {
        return quantile(values, 0.5);
    }

    /** The robust z-score of {@code x}; +-infinity where the MAD is 0 and x differs from the median. */
    double z(double x) {
        double d = x - median;
        if (mad > 0) {
            return Z_SCALE * d / mad;
        }
        return d == 0 ? 0 : Math.copySign(Double.POSITIVE_INFINITY, d);
    }
}

package io.efabench.harness.trial;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.time.Duration;

import io.efabench.rank.RankGroup;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.MetricsSink;

/**
 * The end of a checked round, on every rank: each passes null (its bytes were right) or its
 * one-line failure, every rank learns every verdict and throws the first failure, so all ranks
 * stop together with the same line. A clean round counts towards {@code checked_rounds} in the
 * trial's {@link MetricsSink}.
 */
public final class Verdicts {
    private Verdicts() {}

    public static void exchange(RankGroup group, String what, String mine, Duration timeout, MetricsSink metrics) {
        byte[] b = mine == null ? new byte[0] : mine.getBytes(UTF_8);
        for (byte[] v : group.allgather(what, b, timeout)) {
            if (v.length > 0) {
                throw new BenchmarkSetupException(new String(v, UTF_8));
            }
        }
        metrics.checkedRoundPassed();
    }
}

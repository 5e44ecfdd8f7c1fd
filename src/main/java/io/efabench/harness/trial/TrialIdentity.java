package io.efabench.harness.trial;

import java.time.Duration;

import org.openjdk.jmh.infra.BenchmarkParams;

import io.efabench.rank.RankEnv;

/**
 * Who a trial is, for its rendezvous and files: the benchmark's name, the key every rank must
 * agree on ({@link TrialKey}), its tag in file names and the threads per rank; and, for a trial
 * outside JMH (the sweep's pair trials), the rank environment and timeout it forms its group with
 * instead of the process's.
 *
 * @param env     the rank environment to join with; null: the process's ({@link RankEnv#fromEnvironment})
 * @param timeout every wait's deadline; null: {@code RankGroup.defaultTimeout()} (EFABENCH_TIMEOUT_S)
 * @param jmh     whether JMH drives the trial (its followers' scores are then mirrors, said so in their logs)
 */
public record TrialIdentity(String benchmark, String key, String tag, int threads, RankEnv env, Duration timeout,
        boolean jmh) {
    public static TrialIdentity of(BenchmarkParams bp) {
        return new TrialIdentity(TrialKey.benchmark(bp), TrialKey.of(bp), TrialKey.tag(bp), bp.getThreads(), null, null, true);
    }

    /** A trial outside JMH, one thread per rank, joining as {@code env} with waits of {@code timeout}. */
    public static TrialIdentity outsideJmh(String benchmark, String key, RankEnv env, Duration timeout) {
        return new TrialIdentity(benchmark, key, TrialKey.tag(benchmark, new java.util.TreeMap<>()), 1, env, timeout, false);
    }
}

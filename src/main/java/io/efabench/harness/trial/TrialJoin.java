package io.efabench.harness.trial;

import java.time.Duration;

import io.efabench.rank.RankEnv;
import io.efabench.rank.RankException;
import io.efabench.rank.RankGroup;
import io.efabench.harness.BenchmarkSetupException;

/**
 * How every trial starts, fabric or NVLink: this process's rank environment (torchrun, Open MPI,
 * Slurm or the launcher's variables), the check that enough ranks were started, and the rank group
 * formed under the trial's key (see {@link TrialKey}), with the deadline every later wait takes.
 * A bad environment or a group that does not form is one line ({@link BenchmarkSetupException}).
 *
 * @param env     this rank's environment
 * @param group   the joined group, closed by the trial
 * @param timeout the deadline of the trial's waits ({@link RankGroup#defaultTimeout})
 */
public record TrialJoin(RankEnv env, RankGroup group, Duration timeout) {

    /**
     * Joins the group of {@code benchmark}'s trial {@code key}; refuses fewer than
     * {@code minRanks} ranks, saying how to start more ({@code howToStart}).
     */
    public static TrialJoin join(String benchmark, int minRanks, String key, String howToStart) {
        return join(benchmark, minRanks, key, howToStart, null, null);
    }

    /** As {@link #join(String, int, String, String)} as {@code env} with {@code timeout} (nulls: the process's and the default). */
    public static TrialJoin join(String benchmark, int minRanks, String key, String howToStart, RankEnv given, Duration wait) {
        try {
            RankEnv env = given != null ? given : RankEnv.fromEnvironment();
            if (env.worldSize() < minRanks) {
                throw new BenchmarkSetupException(benchmark + " needs at least " + minRanks + " ranks but WORLD_SIZE is "
                        + env.worldSize() + " (source: " + env.source() + "); " + howToStart);
            }
            Duration timeout = wait != null ? wait : RankGroup.defaultTimeout();
            return new TrialJoin(env, RankGroup.join(env, key, timeout), timeout);
        } catch (RankException e) {
            throw new BenchmarkSetupException(e.getMessage());
        }
    }
}

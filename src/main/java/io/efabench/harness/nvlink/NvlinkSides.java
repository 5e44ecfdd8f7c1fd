package io.efabench.harness.nvlink;

import java.util.List;

import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.Layout;
import io.efabench.harness.MemoryKind;
import io.efabench.harness.trial.FabricTrial;
import io.efabench.harness.trial.Side;

/**
 * The sides of rounds moved by {@link NvlinkPush} (the NVLink all-to-all, MoE over NVLink): rank
 * 0 times windows of rounds and says END (its last round + W, the furthest a follower can have
 * started: a follower starts round k + W only after round k ended, which needs rank 0's); its
 * rounds after the timed ones carry END in their flags, so a follower knows END from the data
 * before it could start a round past it (the rank group's word travels slower than NVLink); every
 * rank then runs up to END uncounted and finishes (figures, checked rounds). A round is {@code
 * launches} launches (the all-to-all's 1, MoE's dispatch and combine 2), so the flags carry END's
 * last launch number.
 */
public final class NvlinkSides {
    /** What the workload does; the sides decide when. */
    public interface Workload {
        /** The last round this rank started. */
        long posted();

        /**
         * Runs {@code count} rounds from {@code posted() + 1} and waits until they ended here;
         * {@code finalFlag}: what rank 0's flags carry after its timed rounds, else 0.
         */
        void run(int count, boolean timed, long finalFlag);

        /** A timed invocation of {@code count} rounds (the all-to-all brackets it for its spread). */
        default void timed(int count) {
            run(count, true, 0);
        }

        /** An iteration's warm-up round and whatever the workload starts afresh then. */
        void warmUp();

        /** After END: the iteration's figures, then the checked round(s) through the same launches. */
        void finish(long end);
    }

    private final FabricTrial t;
    private final NvlinkPush push;
    private final int window;
    private final int launches;
    private final Workload w;

    public NvlinkSides(FabricTrial t, NvlinkPush push, int window, int launchesPerRound, Workload workload) {
        this.t = t;
        this.push = push;
        this.window = window;
        this.launches = launchesPerRound;
        this.w = workload;
    }

    /**
     * Refuses, in one line, a trial an NVLink path cannot run: memory other than device or a layout
     * over NICs, {@code ctas} out of 1..1024, ranks on several nodes ({@code fabricPaths}: what to
     * run there instead).
     */
    public static void requireOneNodeOfGpus(FabricTrial t, NvlinkPush.Mover mover, Layout layout, int ctas,
            String fabricPaths) {
        String path = "path=" + mover.label;
        if (t.memory() != MemoryKind.DEVICE || layout != Layout.SINGLE) {
            throw new BenchmarkSetupException(path + " moves device memory between GPUs with no NIC in between: config"
                    + " SingleDMA (the layouts over NICs and host memory have no meaning there)");
        }
        if (ctas < 1 || ctas > 1024) {
            throw new BenchmarkSetupException("ctas=" + ctas + ": must be from 1 to 1024");
        }
        List<String> hosts = t.hosts();
        for (int r = 1; r < hosts.size(); r++) {
            if (!hosts.get(r).equals(hosts.get(0))) {
                throw new BenchmarkSetupException(path + " runs within one node: rank " + r + " is on " + hosts.get(r)
                        + ", rank 0 on " + hosts.get(0) + " (a cross-node part over the fabric is not built yet: "
                        + fabricPaths + ")");
            }
        }
    }

    /** This rank's side: the leader's on rank 0, a follower's elsewhere. */
    public Side side() {
        return t.rank() == 0 ? new Leader() : new Follower();
    }

    /** Rank 0's END, or -1 while it is not said: from its flags, else the rank group's word. */
    private long end() {
        long fromFlags = push.endFromFlags();
        return fromFlags >= 0 ? fromFlags / launches : t.endedRounds();
    }

    /** A window of rounds, capped at END where it is known ({@code end} >= 0). */
    private int windowUpTo(long end) {
        return end >= 0 ? (int) Math.min(window, end - w.posted()) : window;
    }

    /** The iteration's start: the last one's END forgotten (its rounds all ended, no late flag brings it back). */
    private void warm() {
        push.forgetEnd();
        w.warmUp();
    }

    /** Rank 0: times the rounds and says END. */
    private final class Leader implements Side {
        @Override
        public void warmRound() {
            warm();
        }

        @Override
        public void round() {
            w.timed(window);
        }

        @Override
        public void endIteration() {
            long end = w.posted() + window;
            t.signalEnd(end);
            w.run((int) (end - w.posted()), false, end * launches);
            w.finish(end);
        }
    }

    /** Every other rank: the same rounds until rank 0's END. */
    private final class Follower implements Side {
        @Override
        public void warmRound() {
            warm();
        }

        @Override
        public void round() {
            long end = end();
            if (end < 0 || w.posted() < end) {
                w.timed(windowUpTo(end));
            }
        }

        @Override
        public void endIteration() {
            long end;
            while ((end = end()) < 0 || w.posted() < end) {
                w.run(windowUpTo(end), false, 0);
            }
            w.finish(end);
        }
    }
}

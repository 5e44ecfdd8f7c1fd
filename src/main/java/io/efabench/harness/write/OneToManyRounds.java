package io.efabench.harness.write;

import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.Layout;
import io.efabench.harness.engine.Footprint;
import io.efabench.harness.engine.OpPlan;
import io.efabench.harness.trial.RoundsSite;
import io.efabench.harness.trial.Rounds;


/**
 * The shape Write and Read share: rank 0 and every other rank as a target, in the seed's layouts
 * (SINGLE on channel 0, MULTI one stripe per channel, ROUND_ROBIN target k on channel
 * (k + rank) % channels), {@code window} rounds of {@code size} per target in flight, capped at
 * the {@code slots}, rank 0's op plan adopted by every rank; and what one invocation (a window)
 * moves, for the metrics.
 */
abstract class OneToManyRounds implements Rounds {
    public static final int MAX_WINDOW = 256;

    final RoundsSite t;
    final Layout layout;
    final long size;
    final int targets;
    final int slots;
    final int window;
    /** Rank 0's plan, adopted by every rank (targets whose NICs differ still expect exactly rank 0's ops). */
    final OpPlan plan;

    /** {@code slotsParam}: "auto" or a count ({@link Footprint}); {@code what}: the workload, in the plan's exchange. */
    OneToManyRounds(RoundsSite t, Layout layout, long size, int windowParam, String slotsParam, String what) {
        if (windowParam < 1 || windowParam > MAX_WINDOW) {
            throw new BenchmarkSetupException("window=" + windowParam + ": must be from 1 to " + MAX_WINDOW + " rounds");
        }
        if (layout == Layout.MULTI && size < t.channelCount()) {
            throw new BenchmarkSetupException("size " + size + " B cannot be split across " + t.channelCount() + " channels");
        }
        this.t = t;
        this.layout = layout;
        this.size = size;
        this.targets = t.size() - 1;
        this.slots = Footprint.slots(slotsParam, windowParam, size * targets);
        this.window = Footprint.roundsInFlight(windowParam, slots);
        byte[] mine = t.rank() == 0 ? OpPlan.write(t, layout, size).encode() : new byte[0];
        this.plan = OpPlan.decode(t.allgather(what + " op plan", mine).get(0));
    }

    /** One invocation is a window of rounds, each {@code size} to (or from) every target. */
    @Override
    public long bytesPerInvocation() {
        return size * targets * window;
    }

    /** Transfers one invocation runs in sequence: one per target, or one for all in ROUND_ROBIN. */
    @Override
    public int transfersPerInvocation() {
        return layout == Layout.ROUND_ROBIN ? 1 : targets;
    }

    @Override
    public boolean invocationIsLatency() {
        return window == 1;
    }

    @Override
    public int slots() {
        return slots;
    }

    @Override
    public int roundsInFlight() {
        return window;
    }

    /** Link speed of the channels one sequential transfer uses. */
    @Override
    public double linkGbps() {
        int[] used = new int[plan.groupStart[1] - plan.groupStart[0]];
        for (int i = 0; i < used.length; i++) {
            used[i] = plan.channel[plan.groupStart[0] + i];
        }
        return t.linkGbps(used);
    }

    @Override
    public double seedLinkGbps() {
        return t.seedLinkGbps(layout);
    }
}

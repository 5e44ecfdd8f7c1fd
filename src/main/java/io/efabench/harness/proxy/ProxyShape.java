package io.efabench.harness.proxy;

import io.efabench.harness.Layout;
import io.efabench.harness.trial.FabricTrial;

/**
 * What the proxy's leader and targets both read of the workload ({@link ProxyRounds} makes it):
 * the layout, the launch (rounds, NBI, whether the kernel fills the payload) and the slots.
 */
final class ProxyShape {
    final FabricTrial t;
    /** OpPlan's SINGLE (one channel) or MULTI (each request striped over every channel). */
    final Layout layout;
    final boolean nbi;
    final boolean fill;
    final long size;
    /** Bytes between two targets' source blocks, and a target's slots: size rounded up to whole 4-byte words. */
    final long stride;
    final int rounds;
    final int slots;

    ProxyShape(FabricTrial t, Layout layout, boolean nbi, boolean fill, long size, long stride, int rounds, int slots) {
        this.t = t;
        this.layout = layout;
        this.nbi = nbi;
        this.fill = fill;
        this.size = size;
        this.stride = stride;
        this.rounds = rounds;
        this.slots = slots;
    }

    /** The last round of the launch from {@code first} that writes the slot of round {@code r}. */
    long lastRoundOfSlot(long first, long r) {
        long last = first + rounds - 1;
        return r + (last - r) / slots * slots;
    }
}

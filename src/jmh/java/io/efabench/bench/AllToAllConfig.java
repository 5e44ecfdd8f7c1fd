package io.efabench.bench;

import io.efabench.harness.MemoryKind;
import io.efabench.harness.WriteRounds.Layout;

/**
 * AllToAllBenchmark's configs: the seed's five (SingleDMA, MultiDMA, RoundRobinDMA, SinglePin,
 * MultiPin) plus RoundRobinPin, a channel layout times a memory kind (Pin = host, DMA = device).
 * RoundRobin writes peer p on channel (p + rank) % channels.
 */
public enum AllToAllConfig {
    SinglePin(Layout.SINGLE, MemoryKind.HOST),
    MultiPin(Layout.MULTI, MemoryKind.HOST),
    RoundRobinPin(Layout.ROUND_ROBIN, MemoryKind.HOST),
    SingleDMA(Layout.SINGLE, MemoryKind.DEVICE),
    MultiDMA(Layout.MULTI, MemoryKind.DEVICE),
    RoundRobinDMA(Layout.ROUND_ROBIN, MemoryKind.DEVICE);

    public final Layout layout;
    public final MemoryKind memory;

    AllToAllConfig(Layout layout, MemoryKind memory) {
        this.layout = layout;
        this.memory = memory;
    }
}

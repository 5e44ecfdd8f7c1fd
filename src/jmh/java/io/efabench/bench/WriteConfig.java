package io.efabench.bench;

import io.efabench.harness.Layout;
import io.efabench.harness.MemoryConfig;
import io.efabench.harness.MemoryKind;


/**
 * WriteBenchmark's and AllToAllBenchmark's configs, the seed's names: a layout (Single, Multi,
 * RoundRobin) times a memory kind (Pin = host, DMA = device). In all-to-all, RoundRobin writes
 * peer p on channel (p + rank) % channels.
 */
public enum WriteConfig implements MemoryConfig {
    SinglePin(Layout.SINGLE, MemoryKind.HOST),
    SingleDMA(Layout.SINGLE, MemoryKind.DEVICE),
    MultiPin(Layout.MULTI, MemoryKind.HOST),
    MultiDMA(Layout.MULTI, MemoryKind.DEVICE),
    RoundRobinPin(Layout.ROUND_ROBIN, MemoryKind.HOST),
    RoundRobinDMA(Layout.ROUND_ROBIN, MemoryKind.DEVICE);

    public final Layout layout;
    public final MemoryKind memory;

    WriteConfig(Layout layout, MemoryKind memory) {
        this.layout = layout;
        this.memory = memory;
    }

    @Override
    public MemoryKind memory() {
        return memory;
    }
}

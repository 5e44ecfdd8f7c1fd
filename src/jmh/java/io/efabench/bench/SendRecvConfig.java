package io.efabench.bench;

import io.efabench.harness.MemoryConfig;
import io.efabench.harness.MemoryKind;


/** SendRecvBenchmark's configs, the seed's names: one channel, host or device memory. */
public enum SendRecvConfig implements MemoryConfig {
    SingleHost(MemoryKind.HOST),
    SingleDevice(MemoryKind.DEVICE);

    public final MemoryKind memory;

    SendRecvConfig(MemoryKind memory) {
        this.memory = memory;
    }

    @Override
    public MemoryKind memory() {
        return memory;
    }
}

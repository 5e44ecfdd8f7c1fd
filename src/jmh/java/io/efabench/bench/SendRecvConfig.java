package io.efabench.bench;

import io.efabench.harness.MemoryKind;


/** SendRecvBenchmark's configs, the seed's names: one channel, host or device memory. */
public enum SendRecvConfig {
    SingleHost(MemoryKind.HOST),
    SingleDevice(MemoryKind.DEVICE);

    public final MemoryKind memory;

    SendRecvConfig(MemoryKind memory) {
        this.memory = memory;
    }
}

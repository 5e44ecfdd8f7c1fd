package io.efabench.harness.ipc;

import java.util.Arrays;
import java.util.stream.Collectors;
import io.efabench.harness.BenchmarkSetupException;


/**
 * The {@code config} param of IpcBenchmark's {@code write}: which kernel of ipc_write.cu writes
 * into the peer. Store kernels generate the check pattern in registers (like the reference
 * suite's int stores); the copy kernel reads a local source buffer, like the copy engine.
 */
enum WriteKernel {
    INT("int", "store_int", 4, false, 0),
    INT4("int4", "store_int4", 16, false, 0),
    INT4X4("int4x4", "store_int4x4", 16, false, 0),
    INT4_WARP("int4warp", "store_int4_warp", 16, false, 0),
    TMA("tma", "store_tma", 1, false, 0),
    TMA_BIG("tmabig", "store_tma_big", 1, false, 4 * 32768),
    COPY4X4("copy4x4", "copy_int4x4", 16, true, 0);

    /** The param value. */
    final String label;
    final String function;
    /** The kernel's element size: its length argument counts these. */
    final int unit;
    /** Reads a local source buffer (else it stores the pattern it generates). */
    final boolean copies;
    /** Dynamic shared memory per block, bytes. */
    final int sharedBytes;

    WriteKernel(String label, String function, int unit, boolean copies, int sharedBytes) {
        this.label = label;
        this.function = function;
        this.unit = unit;
        this.copies = copies;
        this.sharedBytes = sharedBytes;
    }

    static WriteKernel parse(String config) {
        for (WriteKernel k : values()) {
            if (k.label.equals(config)) {
                return k;
            }
        }
        throw new BenchmarkSetupException("config '" + config + "' is not a write kernel; use one of "
                + Arrays.stream(values()).map(k -> k.label).collect(Collectors.joining(", ")));
    }
}

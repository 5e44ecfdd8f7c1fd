package io.efabench.cuda;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Shared by the GPU tests: skip, with the reason, where CUDA cannot run. */
final class GpuTest {
    private GpuTest() {}

    static void assumeGpu() {
        assumeTrue(Cuda.unavailableReason().isEmpty(), () -> Cuda.unavailableReason().orElse(""));
    }

    static void assumeTwoGpus() {
        assumeGpu();
        assumeTrue(CudaDevice.visibleCount() >= 2, () -> "needs 2 GPUs, " + CudaDevice.visibleCount() + " visible");
    }
}

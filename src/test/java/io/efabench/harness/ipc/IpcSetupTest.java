package io.efabench.harness.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.Test;

import io.efabench.cuda.Cuda;
import io.efabench.harness.BenchmarkSetupException;

class IpcSetupTest {

    @Test
    void withoutAGpuSetupEndsWithTheReason() {
        assumeTrue(Cuda.unavailableReason().isPresent(), "this machine has CUDA");
        BenchmarkSetupException e = assertThrows(BenchmarkSetupException.class, () -> IpcRig.open("key", "tag", 0, 16));
        assertEquals(Cuda.unavailableReason().get(), e.getMessage());
        assertTrue(e.getMessage().startsWith("no CUDA driver") || e.getMessage().startsWith("CUDA driver"), e.getMessage());
        assertEquals(0, e.getStackTrace().length, "setup errors carry no stack trace");
    }

    @Test
    void shapesResolveSmMultiples() {
        assertEquals(new LaunchShape(128, 256), LaunchShape.parse("128x256", 132, 1024));
        assertEquals(new LaunchShape(132, 1024), LaunchShape.parse("1smx1024", 132, 1024));
        assertEquals(new LaunchShape(132, 1024), LaunchShape.parse("smx1024", 132, 1024));
        assertEquals(new LaunchShape(528, 512), LaunchShape.parse("4SMx512", 132, 1024));
        for (String bad : new String[] {"", "128", "x256", "128x", "0x256", "1x2048", "axb", "-1x32"}) {
            BenchmarkSetupException e = assertThrows(BenchmarkSetupException.class, () -> LaunchShape.parse(bad, 132, 1024));
            assertTrue(e.getMessage().startsWith("shape '" + bad + "' is not a launch shape"), e.getMessage());
        }
    }

    @Test
    void unknownConfigsListTheKnownOnes() {
        assertEquals(WriteKernel.TMA, WriteKernel.parse("tma"));
        BenchmarkSetupException e = assertThrows(BenchmarkSetupException.class, () -> WriteKernel.parse("int8"));
        assertTrue(e.getMessage().contains("int, int4, int4x4, int4warp, tma, tmabig, copy4x4"), e.getMessage());
    }
}

package io.efabench.cuda;

import static io.efabench.cuda.GpuTest.assumeGpu;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * CUDA IPC across two real processes (a handle cannot be opened in the process that made it):
 * this process exports a buffer that starts 12 KiB into its allocation; the child maps it on
 * its own GPU (the second one when there are two), verifies our pattern through the mapping
 * and writes its own back. Both checks fail if the offset inside the allocation is lost.
 */
class IpcProcessTest {

    @Test
    void aPeerProcessReadsAndWritesThroughTheHandleAtTheRightOffset() throws Exception {
        assumeGpu();
        try (CudaContext ctx = CudaContext.retainPrimary(CudaDevice.get(0));
             DeviceBuffer allocation = DeviceBuffer.allocate(ctx, 8 << 20);
             CudaStream stream = CudaStream.create(ctx); PatternKernels pattern = new PatternKernels(ctx)) {
            DeviceMemory shared = allocation.slice(12 * 1024, 4 << 20);
            allocation.fill((byte) 0);
            pattern.fill(stream, shared, 0, 1, 7);
            stream.await(10_000_000_000L, "fill");
            IpcHandle handle = IpcHandle.export(shared);
            int childDevice = CudaDevice.visibleCount() >= 2 ? 1 : 0;
            String java = ProcessHandle.current().info().command().orElse("java");
            Process child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                    classPath(), IpcChild.class.getName(), Integer.toString(childDevice),
                    HexFormat.of().formatHex(handle.toBytes())).redirectErrorStream(true).start();
            String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(child.waitFor(120, TimeUnit.SECONDS), "the IPC child did not finish");
            assertEquals(0, child.exitValue(), () -> "IPC child failed:\n" + out);
            assertTrue(out.contains("child: verified rank 0 round 7"), out);
            PatternKernels.Verdict v = pattern.verify(stream, shared, 1, 1, 8, 10_000_000_000L);
            assertTrue(v.ok(), () -> "the child's writes: " + v.describe(shared.byteSize() / 4));
            // nothing was written before the shared range
            assertTrue(pattern.verify(stream, allocation.slice(0, 12 * 1024), 1, 1, 8, 10_000_000_000L).mismatchedWords() == 3 * 1024);
        }
    }

    /**
     * The test's and the library's code locations: a launcher such as JUnit's console one loads
     * them through its own class loader, so java.class.path alone may not hold them.
     */
    private static String classPath() throws Exception {
        return String.join(java.io.File.pathSeparator,
                java.nio.file.Path.of(IpcChild.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString(),
                java.nio.file.Path.of(Cuda.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString(),
                System.getProperty("java.class.path"));
    }

    /** The other process: maps the handle on GPU argv[0], checks (0, 7), writes (1, 8). */
    public static final class IpcChild {
        public static void main(String[] args) {
            IpcHandle handle = IpcHandle.fromBytes(HexFormat.of().parseHex(args[1]));
            try (CudaContext ctx = CudaContext.retainPrimary(CudaDevice.get(Integer.parseInt(args[0])));
                 IpcHandle.PeerMapping peer = handle.open(ctx); CudaStream stream = CudaStream.create(ctx);
                 PatternKernels pattern = new PatternKernels(ctx)) {
                PatternKernels.Verdict v = pattern.verify(stream, peer, 0, 1, 7, 10_000_000_000L);
                if (!v.ok()) {
                    System.out.println("child: mapping does not hold rank 0 round 7: " + v.describe(peer.byteSize() / 4));
                    System.exit(2);
                }
                System.out.println("child: verified rank 0 round 7 on GPU " + ctx.device().pciBusId());
                pattern.fill(stream, peer, 1, 1, 8);
                stream.await(10_000_000_000L, "child fill");
            }
        }
    }
}

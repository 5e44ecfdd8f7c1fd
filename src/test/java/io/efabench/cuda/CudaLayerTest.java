package io.efabench.cuda;

import static io.efabench.cuda.GpuTest.assumeGpu;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.efabench.cuda.generated.CudaDriver;

/** The CUDA layer on a real GPU; skipped with the reason where there is none. */
class CudaLayerTest {
    private static CudaContext ctx;

    @BeforeAll
    static void open() {
        if (Cuda.unavailableReason().isEmpty()) {
            ctx = CudaContext.retainPrimary(CudaDevice.forLocalRank(0));
        }
    }

    @AfterAll
    static void close() {
        if (ctx != null) {
            ctx.close();
        }
    }

    @Test
    void deviceDescribesItself() {
        assumeGpu();
        CudaDevice d = ctx.device();
        assertFalse(d.name().isBlank());
        assertTrue(d.pciBusId().matches("[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\\.[0-7]"), d.pciBusId());
        assertTrue(d.smCount() > 0);
        assertTrue(d.arch().matches("sm_\\d{2,3}"), d.arch());
        assertTrue(d.totalMemory() > 0);
        assertTrue(Cuda.driverVersion() >= 11000, "driver CUDA version " + Cuda.driverVersion());
        assertEquals(d.pciBusId(), CudaDevice.byPciBusId(d.pciBusId()).pciBusId());
    }

    @Test
    void aLocalRankWithoutAGpuIsOneClearLine() {
        assumeGpu();
        int n = CudaDevice.visibleCount();
        CudaException e = assertThrows(CudaException.class, () -> CudaDevice.forLocalRank(n));
        assertTrue(e.getMessage().startsWith("local rank " + n + " has no GPU of its own: " + n + " GPU(s) visible"),
                e.getMessage());
    }

    @Test
    void aFailedCallNamesTheCallAndTheDriversErrorText() {
        assumeGpu();
        CudaException e = assertThrows(CudaException.class, () -> DeviceBuffer.allocate(ctx, 1L << 50));
        assertEquals(CudaDriver.CUDA_ERROR_OUT_OF_MEMORY(), e.code());
        assertTrue(e.getMessage().contains("cuMemAlloc(1125899906842624 bytes"), e.getMessage());
        assertTrue(e.getMessage().contains("CUDA_ERROR_OUT_OF_MEMORY (out of memory)"), e.getMessage());
    }

    @Test
    void deviceMemoryRoundTripsThroughTheHost() {
        assumeGpu();
        try (Arena arena = Arena.ofConfined(); DeviceBuffer buf = DeviceBuffer.allocate(ctx, 1 << 20)) {
            MemorySegment in = arena.allocate(1 << 20);
            for (int i = 0; i < in.byteSize(); i += 4) {
                in.set(ValueLayout.JAVA_INT, i, i * 31 + 7);
            }
            buf.copyFrom(in);
            MemorySegment out = arena.allocate(1 << 20);
            buf.copyTo(out);
            assertEquals(-1, in.mismatch(out));
            buf.slice(4096, 8).fill((byte) 0x5a);
            buf.copyTo(out);
            assertEquals(0x5a5a5a5a, out.get(ValueLayout.JAVA_INT, 4096));
            assertEquals(0x5a5a5a5a, out.get(ValueLayout.JAVA_INT, 4100));
            assertEquals(4104 * 31 + 7, out.get(ValueLayout.JAVA_INT, 4104));
            assertEquals(4092 * 31 + 7, out.get(ValueLayout.JAVA_INT, 4092));
        }
    }

    @Test
    void everyKernelCompilesWithNvrtcAndLoads() {
        assumeGpu();
        String[][] kernels = {
            {"flag.cu", "wait_host_flag", "flag_ping", "flag_pong"},
            {"ipc_write.cu", "store_int", "store_int4", "store_int4x4", "store_int4_warp", "store_tma", "store_tma_big", "copy_int4x4"},
            {"pattern.cu", "fill_pattern", "verify_pattern"},
            {"proxy.cu", "proxy_put", "proxy_flood", "proxy_ping"},
        };
        assertEquals(KernelCompiler.SOURCES.size(), kernels.length);
        for (String[] k : kernels) {
            try (CudaModule m = KernelCompiler.load(ctx, k[0])) {
                for (int i = 1; i < k.length; i++) {
                    assertNotNull(m.kernel(k[i]));
                }
            }
        }
    }

    @Test
    void fillAndVerifyKernelsAgreeWithTheHostPatternAndFindACorruptWord() {
        assumeGpu();
        int words = 1 << 20;
        try (Arena arena = Arena.ofConfined(); DeviceBuffer buf = DeviceBuffer.allocate(ctx, 4L * words);
             CudaStream stream = CudaStream.create(ctx); PatternKernels pattern = new PatternKernels(ctx)) {
            pattern.fill(stream, buf, 3, 1, 42);
            stream.await(10_000_000_000L, "fill");
            MemorySegment host = arena.allocate(4L * words);
            buf.copyTo(host);
            int seed = CheckPattern.seed(3, 1, 42);
            for (int i = 0; i < words; i++) {
                assertEquals(CheckPattern.word(seed, i), host.getAtIndex(ValueLayout.JAVA_INT, i), "word " + i);
            }
            assertTrue(pattern.verify(stream, buf, 3, 1, 42, 10_000_000_000L).ok());
            assertFalse(pattern.verify(stream, buf, 3, 1, 43, 10_000_000_000L).ok(), "another round must not pass");
            MemorySegment bad = arena.allocate(4);
            bad.set(ValueLayout.JAVA_INT, 0, 0x12345678);
            buf.slice(4L * 777, 4).copyFrom(bad);
            buf.slice(4L * 9000, 4).copyFrom(bad);
            PatternKernels.Verdict v = pattern.verify(stream, buf, 3, 1, 42, 10_000_000_000L);
            assertEquals(2, v.mismatchedWords());
            assertEquals(777, v.firstBadWord());
            assertEquals(0x12345678, v.actual());
            assertEquals(CheckPattern.word(seed, 777), v.expected());
        }
    }

    @Test
    void eventsTimeGpuWorkAndStoreKernelsWriteThePattern() throws Exception {
        assumeGpu();
        long bytes = 256L << 20;
        try (DeviceBuffer buf = DeviceBuffer.allocate(ctx, bytes); CudaStream stream = CudaStream.create(ctx);
             CudaEvent a = CudaEvent.create(ctx); CudaEvent b = CudaEvent.create(ctx);
             CudaModule m = KernelCompiler.load(ctx, "ipc_write.cu"); PatternKernels pattern = new PatternKernels(ctx)) {
            String[] stores = {"store_int", "store_int4", "store_int4x4", "store_int4_warp", "store_tma", "store_tma_big"};
            long[] units = {4, 16, 16, 16, 1, 1};
            int[] shared = {0, 0, 0, 0, 0, 4 * 32768};
            for (int i = 0; i < stores.length; i++) {
                int k = i;
                buf.fill((byte) 0);
                Kernel kernel = m.kernel(stores[k]);
                if (shared[k] > 0) {
                    kernel.setMaxDynamicSharedMemory(shared[k]);
                }
                KernelArgs args = new KernelArgs(3).pointer(0, buf).u64(1, bytes / units[k]).u32(2, CheckPattern.seed(0, 1, k));
                long t0 = System.nanoTime();
                a.record(stream);
                kernel.launch(stream, ctx.device().smCount() * (shared[k] > 0 ? 1 : 2), 512, shared[k], args);
                b.record(stream);
                b.await(10_000_000_000L, stores[k]);
                double hostMs = (System.nanoTime() - t0) / 1e6;
                float gpuMs = b.millisSince(a);
                assertTrue(gpuMs > 0 && gpuMs <= hostMs + 0.01, stores[k] + ": GPU " + gpuMs + " ms, host " + hostMs + " ms");
                // a 256 MiB write cannot beat 10 TB/s on any GPU
                assertTrue(gpuMs > bytes / 10e12 * 1e3, stores[k] + ": " + gpuMs + " ms is implausibly fast");
                PatternKernels.Verdict v = pattern.verify(stream, buf, 0, 1, k, 10_000_000_000L);
                assertTrue(v.ok(), () -> stores[k] + ": " + v.describe(bytes / 4));
            }
        }
    }

    @Test
    void pinnedHostMemoryIsWrittenByTheGpu() {
        assumeGpu();
        try (PinnedHostBuffer pinned = PinnedHostBuffer.allocate(ctx, 1 << 16); CudaStream stream = CudaStream.create(ctx);
             PatternKernels pattern = new PatternKernels(ctx)) {
            pattern.fill(stream, pinned, 1, 1, 5);
            stream.await(10_000_000_000L, "fill pinned");
            int seed = CheckPattern.seed(1, 1, 5);
            for (int i = 0; i < (1 << 14); i++) {
                assertEquals(CheckPattern.word(seed, i), pinned.segment().getAtIndex(ValueLayout.JAVA_INT, i));
            }
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mine = arena.allocate(1 << 16, 4096);
            try (PinnedHostBuffer reg = PinnedHostBuffer.register(ctx, mine); CudaStream stream = CudaStream.create(ctx);
                 PatternKernels pattern = new PatternKernels(ctx)) {
                pattern.fill(stream, reg, 2, 1, 6);
                stream.await(10_000_000_000L, "fill registered");
                assertEquals(CheckPattern.word(CheckPattern.seed(2, 1, 6), 100), mine.getAtIndex(ValueLayout.JAVA_INT, 100));
            }
        }
    }

    @Test
    void dmaBufExportNamesTheOffsetInsideTheExportedRange() {
        assumeGpu();
        assumeTrue(ctx.device().attribute(CudaDriver.CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED()) == 1,
                "this GPU/driver does not export DMA-BUF");
        try (DeviceBuffer buf = DeviceBuffer.allocate(ctx, 4 << 20)) {
            DeviceMemory inner = buf.slice(3 * 4096 + 256, 1 << 20);
            try (DmaBuf d = DmaBuf.export(inner)) {
                assertTrue(d.fd() >= 0);
                assertEquals(1 << 20, d.length());
                assertEquals((inner.deviceAddress() % (64 * 1024)), d.offset());
            }
        }
    }

    @Test
    void ipcHandlesSurviveTheWire() {
        assumeGpu();
        try (DeviceBuffer buf = DeviceBuffer.allocate(ctx, 1 << 20)) {
            IpcHandle h = IpcHandle.export(buf.slice(8192, 4096));
            assertEquals(8192, h.offset());
            assertEquals(4096, h.length());
            assertEquals(h, IpcHandle.fromBytes(h.toBytes()));
            assertArrayEquals(h.handle(), IpcHandle.fromBytes(h.toBytes()).handle());
        }
    }
}

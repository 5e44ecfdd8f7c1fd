package io.efabench.fabric;

import io.efabench.fabric.generated.LibFabric;
import io.efabench.fabric.generated.fi_mr_attr;
import io.efabench.fabric.generated.fi_mr_dmabuf;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * API version negotiation and DMA-BUF registration without a GPU, against the real libfabric
 * found at run time (Debian's 1.17 by default; LD_LIBRARY_PATH=/opt/libfabric-2.6/lib for 2.6).
 * The device pointers are fake and must never be dereferenced: every path tested here is
 * refused before libfabric would touch the memory.
 */
class DmaBufRegistrationTest {
    /** A plausible device VA (CUDA's UVA range); nothing is mapped there in this process. */
    private static final long FAKE_DEVICE_VA = 0x7f00_0020_0000L;
    private static final long LEN = 1 << 20;
    private static final int FAKE_FD = 1_000_000; // above any fd this JVM has open

    private static MemorySegment fakeDeviceBuffer() {
        return MemorySegment.ofAddress(FAKE_DEVICE_VA).reinterpret(LEN);
    }

    /**
     * efa-desk-check.md item 1: efa returns the raw -errno of ibv_reg_dmabuf_mr, so every refusal
     * falls back to registration by VA, not only the three "unsupported" codes.
     */
    @Test
    void everyDmaBufRefusalFallsBackToVa() {
        for (int errno : new int[] {22, 14, 12, 1, 95}) { // EINVAL, EFAULT, ENOMEM, EPERM, EOPNOTSUPP
            assertTrue(Registrations.dmaBufRefused(-errno), "-" + errno);
        }
        assertTrue(Registrations.dmaBufRefused(-Fi.ENOSYS) && Registrations.dmaBufRefused(-Fi.EBADFLAGS));
        assertTrue(!Registrations.dmaBufRefused(0), "a registration that worked is no refusal");
    }

    @Test
    void bindingsAreGeneratedFrom2xHeadersWithDmaBuf() {
        // Compile-time references are the point; the values pin the 2.6 ABI jextract produced.
        assertEquals(1L << 40, LibFabric.FI_MR_DMABUF());
        assertEquals(32, fi_mr_dmabuf.sizeof());
        assertEquals(0, fi_mr_dmabuf.fd$offset());
        assertEquals(8, fi_mr_dmabuf.offset$offset());
        assertEquals(16, fi_mr_dmabuf.len$offset());
        assertEquals(24, fi_mr_dmabuf.base_addr$offset());
        // dmabuf shares mr_iov's slot: why an older library must never see FI_MR_DMABUF requests.
        assertEquals(fi_mr_attr.mr_iov$offset(), fi_mr_attr.dmabuf$offset());
        assertEquals(0, LibFabric.FI_HMEM_SYSTEM());
        assertEquals(1, LibFabric.FI_HMEM_CUDA());
        assertEquals(2, LibFabric.FI_HMEM_ROCR());
        assertEquals(3, LibFabric.FI_HMEM_ZE());
        assertEquals(4, LibFabric.FI_HMEM_NEURON());
        assertEquals(5, LibFabric.FI_HMEM_SYNAPSEAI());
        assertTrue(Fi.atLeast(Fi.HEADER_VERSION, Fi.version(2, 0)), Discovery.headerVersion());
    }

    @Test
    void requestedApiIsTheOlderOfHeaderAndRuntime() {
        int header = Fi.version(LibFabric.FI_MAJOR_VERSION(), LibFabric.FI_MINOR_VERSION());
        int runtime = LibFabric.fi_version();
        int expected = Integer.compareUnsigned(header, runtime) <= 0 ? header : runtime;
        assertEquals(expected, Fi.apiVersion());
        assertEquals((expected >>> 16) + "." + (expected & 0xffff), Discovery.apiVersion());
        assertEquals(Discovery.headerVersion(), Fi.versionText(header));
        assertEquals(Discovery.runtimeVersion(), Fi.versionText(runtime));
        // ... and reaches fi_fabric through fabric_attr->api_version.
        try (Discovery d = tcp(); Channel c = Channel.open(d, 0, 16)) {
            assertEquals(expected, c.apiVersion(), "fid_fabric.api_version");
        }
    }

    @Test
    void dmaBufBelowApi120IsRefusedBeforeAnyNativeCall() {
        assumeFalse(Fi.atLeast(Fi.apiVersion(), Fi.DMABUF_VERSION),
                "API " + Discovery.apiVersion() + " has DMA-BUF; run against libfabric < 1.20 (Debian's 1.17)");
        try (Discovery d = tcp(); Channel c = Channel.open(d, 0, 16)) {
            DmaBufUnsupportedException e = assertThrows(DmaBufUnsupportedException.class,
                    () -> c.registerCudaDmaBuf(fakeDeviceBuffer(), FAKE_FD, 0, 0));
            assertEquals(0, e.errno(), "no libfabric call was made");
            assertEquals(1, e.getMessage().lines().count(), e.getMessage());
            assertTrue(e.getMessage().startsWith("DMA-BUF registration on " + c.nic().provider() + " "
                    + c.nic().domainName() + " needs libfabric API 1.20 or newer; this process uses "
                    + Discovery.apiVersion() + " (runtime " + Discovery.runtimeVersion() + ", headers "
                    + Discovery.headerVersion() + ")"), e.getMessage());
            assertInstanceOf(FabricException.class, e);
        }
    }

    /** shm discovered with FI_HMEM, or the test skipped saying why. */
    private static Discovery shmWithHmem() {
        try {
            return Discovery.discover(true, "shm");
        } catch (FabricException e) {
            assumeTrue(false, "shm with FI_HMEM is not available here: " + e.getMessage());
            throw e; // not reached: the assumption aborts the test
        }
    }

    @Test
    void providerWithoutCudaRefusesDmaBufAsUnsupported() {
        assumeTrue(Fi.atLeast(Fi.apiVersion(), Fi.DMABUF_VERSION),
                "API " + Discovery.apiVersion() + " predates DMA-BUF; run with LD_LIBRARY_PATH=/opt/libfabric-2.6/lib");
        // With a CUDA driver present libfabric could get as far as the fake pointer.
        assumeFalse(cudaDriverPresent(), "libcuda.so.1 is loadable: this test wants a machine without CUDA");
        Discovery d = shmWithHmem();
        try (d; Channel c = Channel.open(d, 0, 16)) {
            assertTrue(c.offersHmem(), Discovery.describe(c.nic()));
            DmaBufUnsupportedException e = assertThrows(DmaBufUnsupportedException.class,
                    () -> c.registerCudaDmaBuf(fakeDeviceBuffer(), FAKE_FD, 0, 0));
            // util's ofi_mr_regattr: the CUDA iface is not initialised in a build without CUDA.
            assertEquals(-LibFabric.FI_ENOSYS(), e.errno(), e.getMessage());
            assertEquals(1, e.getMessage().lines().count(), e.getMessage());
            assertTrue(e.getMessage().startsWith("DMA-BUF registration refused by shm shm: "
                    + "fi_mr_regattr(CUDA memory via DMA-BUF, " + LEN + " bytes, device 0) on shm shm failed: "),
                    e.getMessage());
            // The VA path fails the same way but is no DMA-BUF matter: a plain FabricException.
            FabricException va = assertThrows(FabricException.class, () -> c.registerCuda(fakeDeviceBuffer(), 0));
            assertFalse(va instanceof DmaBufUnsupportedException, va.getMessage());
            assertEquals(-LibFabric.FI_ENOSYS(), va.errno(), va.getMessage());
        }
    }

    /**
     * efa-desk-check item 3: a channel discovered with FI_HMEM asks FI_OPT_CUDA_API_PERMITTED=false
     * before fi_enable and records the answer. shm with CUDA refuses (-FI_EOPNOTSUPP, smr_ep.c:146:
     * its CUDA path is CUDA IPC copies); a host channel asks nothing.
     */
    @Test
    void aDeviceChannelAsksTheProviderNotToCallCuda() {
        assumeTrue(cudaDriverPresent(), "no CUDA driver here: shm offers FI_HMEM only in a libfabric built with CUDA");
        Discovery d = shmWithHmem();
        try (d; Channel c = Channel.open(d, 0, 16)) {
            String outcome = c.cudaApiPermitted();
            if (Fi.atLeast(c.apiVersion(), EndpointOptions.CUDA_API_PERMITTED_VERSION)) {
                assertEquals("true (the provider refused false: " + Fi.strerror(Fi.EOPNOTSUPP) + " (-" + Fi.EOPNOTSUPP + "))",
                        outcome);
            } else {
                assertTrue(outcome.startsWith("not set (API "), outcome);
            }
        }
    }

    @Test
    void deviceMemoryNeedsAnHmemDiscovery() {
        try (Discovery d = tcp(); Channel c = Channel.open(d, 0, 16)) {
            assumeFalse(c.offersHmem(), "tcp offers FI_HMEM here");
            FabricException e = assertThrows(FabricException.class, () -> c.registerCuda(fakeDeviceBuffer(), 0));
            assertTrue(e.getMessage().endsWith("was discovered without FI_HMEM; use Discovery.discover(true)"),
                    e.getMessage());
            if (Fi.atLeast(c.apiVersion(), Fi.DMABUF_VERSION)) {
                FabricException dmabuf = assertThrows(FabricException.class,
                        () -> c.registerCudaDmaBuf(fakeDeviceBuffer(), FAKE_FD, 0, 0));
                assertFalse(dmabuf instanceof DmaBufUnsupportedException, dmabuf.getMessage());
            }
        }
    }

    @Test
    void dmaBufArgumentsAreCheckedFirst() {
        try (Discovery d = tcp(); Channel c = Channel.open(d, 0, 16)) {
            assertThrows(IllegalArgumentException.class, () -> c.registerCudaDmaBuf(fakeDeviceBuffer(), -1, 0, 0));
            assertThrows(IllegalArgumentException.class, () -> c.registerCudaDmaBuf(fakeDeviceBuffer(), FAKE_FD, -1, 0));
            assertThrows(IllegalArgumentException.class,
                    () -> c.registerCudaDmaBuf(fakeDeviceBuffer(), FAKE_FD, FAKE_DEVICE_VA + 1, 0));
        }
    }

    private static Discovery tcp() {
        try {
            return Discovery.discover(false, "tcp");
        } catch (FabricException e) {
            assumeTrue(false, "tcp is not available here: " + e.getMessage());
            throw e;
        }
    }

    private static boolean cudaDriverPresent() {
        try {
            SymbolLookup.libraryLookup("libcuda.so.1", Arena.global());
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}

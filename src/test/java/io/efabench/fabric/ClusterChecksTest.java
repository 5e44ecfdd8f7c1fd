package io.efabench.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import io.efabench.fabric.generated.LibFabric;
import io.efabench.fabric.generated.fi_fabric_attr;
import io.efabench.fabric.generated.fi_info;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 12's checks that need no EFA device: path hints, efa-direct, link speeds, RLIMIT_MEMLOCK. */
class ClusterChecksTest {

    private static long capsOfHints(String provider, NicPath path) {
        MemorySegment hints = DiscoveryHints.hints(false, provider, path.caps(provider), false);
        try {
            assertEquals(provider, Fi.string(fi_fabric_attr.prov_name(fi_info.fabric_attr(hints).reinterpret(fi_fabric_attr.sizeof()))));
            return fi_info.caps(hints);
        } finally {
            LibFabric.fi_freeinfo(hints);
        }
    }

    @Test
    void efaHintsOnTheNicPathAskForRemoteCommWithoutLocalComm() {
        Fi.requireLibrary();
        for (String nicProvider : List.of("efa", "verbs;ofi_rxm")) {
            long caps = capsOfHints(nicProvider, NicPath.NIC);
            assertTrue((caps & LibFabric.FI_REMOTE_COMM()) != 0, nicProvider);
            assertEquals(0, caps & LibFabric.FI_LOCAL_COMM(), nicProvider);
            assertEquals(LibFabric.FI_MSG() | LibFabric.FI_RMA(), caps & (LibFabric.FI_MSG() | LibFabric.FI_RMA()));
        }
        assertEquals(0, capsOfHints("efa", NicPath.AUTO) & (LibFabric.FI_REMOTE_COMM() | LibFabric.FI_LOCAL_COMM()));
        assertEquals(0, capsOfHints("tcp", NicPath.NIC) & LibFabric.FI_REMOTE_COMM(), "tcp has no NIC path to choose");
    }

    @Test
    void pathParsesNicAndAutoOnlyWithOneLine() {
        assertEquals(NicPath.NIC, NicPath.parse(" NIC ", "path"));
        assertEquals(NicPath.AUTO, NicPath.parse("auto", "path"));
        FabricException e = assertThrows(FabricException.class, () -> NicPath.parse("shm", "path"));
        assertTrue(e.getMessage().startsWith("path=shm: must be 'nic'"), e.getMessage());
    }

    @Test
    void efaDirectIsNeverASilentFallback() {
        assertEquals(List.of(1), Discovery.chooseFabric(List.of("efa-direct", "efa"), "efa", null));
        FabricException e = assertThrows(FabricException.class,
                () -> Discovery.chooseFabric(List.of("efa-direct", "efa-direct"), "efa", null));
        assertTrue(e.getMessage().startsWith("efa offers only the efa-direct fabric here")
                && e.getMessage().endsWith("set EFABENCH_FABRIC=efa-direct to measure it anyway"), e.getMessage());
        assertEquals(List.of(0, 1), Discovery.chooseFabric(List.of("efa-direct", "efa-direct"), "efa", "efa-direct"));
    }

    private static NicInfo nic(long bps) {
        return new NicInfo(0, "efa", "efa", "rdmap79s0-rdm", "rdmap79s0", bps, 0, 0, 0, 4, 1L << 30, 32, null, null);
    }

    @Test
    void implausibleLinkSpeedsAreUnknown() {
        assertEquals(0, nic(0).plausibleLinkGbps());
        assertEquals(0, nic(100_000_000L).plausibleLinkGbps(), "0.1 Gbps: a placeholder");
        assertEquals(0, nic(20_000_000_000_000L).plausibleLinkGbps(), "20 Tbps per NIC: garbage");
        assertEquals(100, nic(100_000_000_000L).plausibleLinkGbps());
        assertEquals(1, nic(1_000_000_000L).plausibleLinkGbps());
    }

    @Test
    void memlockRefusesPinningPastTheLimitCountingWhatIsLocked() {
        long mib = 1L << 20;
        assertNull(MemlockBudget.refusal(64 * mib, 0, -1), "unlimited");
        assertNull(MemlockBudget.refusal(60 * mib, 4 * mib, 64 * mib), "exactly at the limit");
        String r = MemlockBudget.refusal(60 * mib, 8 * mib, 64 * mib);
        assertTrue(r != null && r.contains("past RLIMIT_MEMLOCK 64 MiB") && r.contains("ulimit -l")
                && r.contains("PropagateResourceLimits") && !r.contains("\n"), String.valueOf(r));
    }

    @Test
    void lockedBytesAreVmLckPlusVmPin(@TempDir Path dir) throws IOException {
        Path status = dir.resolve("status");
        Files.writeString(status, "Name:\tjava\nVmLck:\t     128 kB\nVmPin:\t    1024 kB\nVmHWM:\t 999 kB\n");
        assertEquals((128 + 1024) * 1024L, MemlockBudget.lockedBytes(status));
        assertTrue(MemlockBudget.lockedBytes(Path.of("/proc/self/status")) >= 0);
    }

    @Test
    void memlockLimitIsWhatTheShellSays() throws Exception {
        Process p = new ProcessBuilder("sh", "-c", "ulimit -l").start();
        String text = new String(p.getInputStream().readAllBytes()).strip();
        p.waitFor();
        long limit = MemlockBudget.limit();
        assertEquals(text.equals("unlimited") ? -1 : Long.parseLong(text) * 1024, limit);
    }
}

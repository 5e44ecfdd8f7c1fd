package io.efabench.harness.trial;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import io.efabench.fabric.NicInfo;
import io.efabench.topology.InstanceType;
import io.efabench.topology.Sysfs;
import org.junit.jupiter.api.Test;

class FabricTrialChecksTest {

    private static NicInfo nic(String domain, long bps, String fabric) {
        return new NicInfo(0, "efa", fabric, domain, domain, bps, 0, 0, 0, 4, 1L << 30, 32, null, null);
    }

    @Test
    void linkSpeedIsUnknownWhenImplausibleUnlessOverriddenPerNic() {
        NicInfo good = nic("a", 100_000_000_000L, "efa");
        NicInfo zero = nic("b", 0, "efa");
        NicInfo huge = nic("c", 40_000_000_000_000L, "efa");
        assertEquals(200, TrialChecks.linkGbps(List.of(good, nic("d", 100_000_000_000L, "efa")), 0, P5));
        assertEquals(100, TrialChecks.linkGbps(List.of(good, good), 0, P5), "one NIC behind two channels counts once");
        assertEquals(0, TrialChecks.linkGbps(List.of(good, zero), 0, P5));
        assertEquals(0, TrialChecks.linkGbps(List.of(huge), 0, P5));
        assertEquals(50, TrialChecks.linkGbps(List.of(huge, zero), 25, P5), "FABRIC_LINK_GBPS: per NIC, replaces");
    }

    private static final InstanceType P5 = new InstanceType("p5.48xlarge");
    private static final InstanceType P5EN = new InstanceType("p5en.48xlarge");

    /**
     * efa's speed comes from the verbs port, and drivers have reported 100 Gbps on p5en's 200 Gbps
     * NICs: an efa speed counts only where the instance type confirms it (or FABRIC_LINK_GBPS is set).
     */
    @Test
    void anEfaLinkSpeedCountsOnlyWhereTheInstanceTypeConfirmsIt() {
        NicInfo reports100 = nic("rdmap80s0", 100_000_000_000L, "efa");
        assertEquals(100, TrialChecks.linkGbps(List.of(reports100), 0, P5));
        assertNull(TrialChecks.unverifiedLink(reports100, P5));
        assertEquals(0, TrialChecks.linkGbps(List.of(reports100), 0, P5EN), "p5en's NICs run at 200: busbw_pct left out");
        assertEquals("unverified: efa reports 100 Gbps but a p5en.48xlarge's EFA NICs run at 200 Gbps; set"
                + " FABRIC_LINK_GBPS=200 for busbw_pct", TrialChecks.unverifiedLink(reports100, P5EN));
        assertEquals(200, TrialChecks.linkGbps(List.of(reports100), 200, P5EN), "FABRIC_LINK_GBPS decides");
        assertEquals(200, TrialChecks.linkGbps(List.of(nic("rdmap81s0", 200_000_000_000L, "efa")), 0, P5EN));
        assertEquals(0, TrialChecks.linkGbps(List.of(reports100), 0, InstanceType.UNKNOWN));
        assertTrue(TrialChecks.unverifiedLink(reports100, InstanceType.UNKNOWN).contains("unknown instance type"));
        NicInfo tcp = new NicInfo(0, "tcp", "127.0.0.0/8", "lo", "lo", 100_000_000_000L, 0, 0, 0, 4, 1L << 30, 32, null, null);
        assertEquals(100, TrialChecks.linkGbps(List.of(tcp), 0, InstanceType.UNKNOWN), "other providers: as reported");
    }

    @Test
    void theInstanceTypeIsReadFromTheDmiProductName(@org.junit.jupiter.api.io.TempDir java.nio.file.Path root)
            throws java.io.IOException {
        assertEquals(InstanceType.UNKNOWN, InstanceType.of(new Sysfs(root)));
        java.nio.file.Path dmi = root.resolve("devices/virtual/dmi/id");
        java.nio.file.Files.createDirectories(dmi);
        java.nio.file.Files.writeString(dmi.resolve("product_name"), "p5en.48xlarge\n");
        InstanceType t = InstanceType.of(new Sysfs(root));
        assertEquals("p5en.48xlarge", t.name());
        assertEquals(200, t.efaNicGbps());
        assertEquals(0, new InstanceType("g6.xlarge").efaNicGbps());
    }

    @Test
    void sendsLargerThanOneMessageAreRefusedWithOneLine() {
        NicInfo direct = nic("rdmap79s0-rdm", 0, "efa-direct");
        assertNull(TrialChecks.sendTooLarge(8192, 8192, direct));
        String r = TrialChecks.sendTooLarge(16384, 8192, direct);
        assertTrue(r != null && r.startsWith("size=16K is larger than the 8192 bytes one message takes on efa rdmap79s0-rdm"
                + " (fabric efa-direct)") && r.endsWith("or the efa fabric (unset EFABENCH_FABRIC)"), String.valueOf(r));
    }

    /**
     * Ranks beyond the CPUs of their host make busy-polling waits yield; ranks pinned to CPUs of
     * their own (each process sees one CPU) do not compete, and ranks of other hosts do not count.
     */
    @Test
    void waitsYieldOnlyWhenAHostsRanksOutnumberTheirCpus() {
        List<String> twoHosts = List.of("a", "a", "b", "b", "b");
        assertArrayEquals(new int[] {2, 2}, TrialLocality.hostRanksAndCpus(twoHosts, List.of("0", "1", "0", "0", "0"), 0),
                "two ranks, each pinned to its own CPU");
        assertArrayEquals(new int[] {3, 1}, TrialLocality.hostRanksAndCpus(twoHosts, List.of("0", "1", "0", "0", "0"), 4),
                "three ranks pinned to the same CPU");
        assertArrayEquals(new int[] {2, 8}, TrialLocality.hostRanksAndCpus(twoHosts, List.of("0-3", "2-7", "0", "0", "0"), 1));
        assertEquals("0-3,8,10-11", TrialLocality.compact(List.of(0, 1, 2, 3, 8, 10, 11)));
        assertEquals(List.of(0, 1, 2, 3, 10, 11), io.efabench.topology.Sysfs.parseCpuList(TrialLocality.compact(List.of(0, 1, 2, 3, 10, 11))),
                "what a rank sends is read back as the same CPUs");
        org.junit.jupiter.api.Assumptions.assumeTrue(System.getenv("EFABENCH_YIELD") == null, "EFABENCH_YIELD overrides");
        assertTrue(TrialChecks.yieldWhenIdle(true));
        assertFalse(TrialChecks.yieldWhenIdle(false));
    }
}

package io.efabench.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import io.efabench.fabric.NicInfo;
import org.junit.jupiter.api.Test;

class FabricTrialChecksTest {

    private static NicInfo nic(String domain, long bps, String fabric) {
        return new NicInfo(0, "efa", fabric, domain, domain, bps, 0, 0, 0, 4, 1L << 30, 32, null);
    }

    @Test
    void linkSpeedIsUnknownWhenImplausibleUnlessOverriddenPerNic() {
        NicInfo good = nic("a", 100_000_000_000L, "efa");
        NicInfo zero = nic("b", 0, "efa");
        NicInfo huge = nic("c", 40_000_000_000_000L, "efa");
        assertEquals(200, FabricTrial.linkGbps(List.of(good, nic("d", 100_000_000_000L, "efa")), 0));
        assertEquals(100, FabricTrial.linkGbps(List.of(good, good), 0), "one NIC behind two channels counts once");
        assertEquals(0, FabricTrial.linkGbps(List.of(good, zero), 0));
        assertEquals(0, FabricTrial.linkGbps(List.of(huge), 0));
        assertEquals(50, FabricTrial.linkGbps(List.of(huge, zero), 25), "FABRIC_LINK_GBPS: per NIC, replaces");
    }

    @Test
    void sendsLargerThanOneMessageAreRefusedWithOneLine() {
        NicInfo direct = nic("rdmap79s0-rdm", 0, "efa-direct");
        assertNull(FabricTrial.sendTooLarge(8192, 8192, direct));
        String r = FabricTrial.sendTooLarge(16384, 8192, direct);
        assertTrue(r != null && r.startsWith("size=16K is larger than the 8192 bytes one message takes on efa rdmap79s0-rdm"
                + " (fabric efa-direct)") && r.endsWith("or the efa fabric (unset EFABENCH_FABRIC)"), String.valueOf(r));
    }

    /** Ranks beyond the CPUs make busy-polling waits yield; a host with CPUs to spare keeps spinning. */
    @Test
    void waitsYieldOnlyWhenRanksOutnumberCpus() {
        org.junit.jupiter.api.Assumptions.assumeTrue(System.getenv("EFABENCH_YIELD") == null, "EFABENCH_YIELD overrides");
        int cpus = Runtime.getRuntime().availableProcessors();
        assertTrue(FabricTrial.oversubscribed(new io.efabench.rank.RankEnv(0, cpus + 1, 0, cpus + 1, "127.0.0.1", 29500, "torchrun")));
        assertFalse(FabricTrial.oversubscribed(new io.efabench.rank.RankEnv(0, cpus, 0, cpus, "127.0.0.1", 29500, "torchrun")));
        assertFalse(FabricTrial.oversubscribed(new io.efabench.rank.RankEnv(0, 64, 0, 0, "127.0.0.1", 29500, "slurm")),
                "a launcher that does not say how many ranks share the host: no yield");
    }
}

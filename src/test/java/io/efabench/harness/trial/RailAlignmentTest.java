package io.efabench.harness.trial;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;

import org.junit.jupiter.api.Test;
import io.efabench.harness.BenchmarkSetupException;

/** Channel k of every rank on rail k: a plan with the same rails in another order is refused in one line. */
class RailAlignmentTest {
    private static final List<String> HOSTS = List.of("efb-n1", "efb-n2", "efb-n3");

    private static String[] rails(String... fabricNic) {
        return fabricNic;
    }

    @Test
    void sameRailsInTheSameOrderPass() {
        String[][] plan = {rails("198.18.0.0/24\nrail0", "198.18.1.0/24\nrail1"), rails("198.18.0.0/24\nrail0",
                "198.18.1.0/24\nrail1")};
        assertDoesNotThrow(() -> TrialExchange.requireRailAligned(0, plan, HOSTS));
        assertDoesNotThrow(() -> TrialExchange.requireRailAligned(1, plan, HOSTS));
    }

    @Test
    void theSameRailsInAnotherOrderAreMisRailed() {
        String[][] plan = {rails("198.18.0.0/24\nrail0", "198.18.1.0/24\nrail1"), rails("198.18.0.0/24\nrail0",
                "198.18.1.0/24\nrail1"), rails("198.18.1.0/24\nrail1", "198.18.0.0/24\nrail0")};
        BenchmarkSetupException e = assertThrows(BenchmarkSetupException.class,
                () -> TrialExchange.requireRailAligned(0, plan, HOSTS));
        assertEquals("mis-railed: rank 0 (node efb-n1) channel 0 is on NIC rail0 (fabric 198.18.0.0/24) but rank 2 (node"
                + " efb-n3) channel 0 is on NIC rail1 (fabric 198.18.1.0/24), its NIC rail0 on channel 1; channel k must be on"
                + " rail k on every node: list the NICs in rail order (EFABENCH_NICS)", e.getMessage());
        assertThrows(BenchmarkSetupException.class, () -> TrialExchange.requireRailAligned(2, plan, HOSTS));
    }

    /** tcp between nodes on different, routed subnets: no shared rail to be out of order on. */
    @Test
    void peersOnOtherSubnetsAltogetherAreRoutedNotMisRailed() {
        String[][] plan = {rails("172.31.0.0/20\neth0"), rails("172.31.16.0/20\neth0")};
        assertDoesNotThrow(() -> TrialExchange.requireRailAligned(0, plan, HOSTS));
    }

    /** efa names every NIC's fabric "efa": one fabric, nothing to refuse. */
    @Test
    void oneFabricForEveryNicPasses() {
        String[][] plan = {rails("efa\nrdmap16s27", "efa\nrdmap32s27"), rails("efa\nrdmap32s27", "efa\nrdmap16s27")};
        assertDoesNotThrow(() -> TrialExchange.requireRailAligned(0, plan, HOSTS));
    }
}

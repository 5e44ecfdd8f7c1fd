package io.efabench.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;

import org.junit.jupiter.api.Test;

/** EFABENCH_NICS: the named NICs in the order named, the first entry of each; a missing one is one line. */
class NicSelectionTest {

    @Test
    void parsesCommaSeparatedNames() {
        assertEquals(List.of("rail0", "rail1"), NicSelection.parse(" rail0, rail1 "));
        assertEquals(List.of(), NicSelection.parse(""));
        assertEquals(List.of(), NicSelection.parse(null));
        assertThrows(FabricException.class, () -> NicSelection.parse("rail0,,rail1"));
        assertThrows(FabricException.class, () -> NicSelection.parse("rail0,rail0"));
    }

    @Test
    void choosesTheFirstEntryOfEachNamedDomainInTheOrderNamed() {
        // fi_getinfo's order on a testbed node: rail1 before rail0, each listed again further down.
        List<String> domains = List.of("rail1", "rail0", "mgmt0", "lo", "rail1", "rail0");
        assertEquals(List.of(1, 0), NicSelection.choose(domains, List.of("rail0", "rail1"), "tcp;ofi_rxm"));
        assertEquals(List.of(0), NicSelection.choose(domains, List.of("rail1"), "tcp;ofi_rxm"));
    }

    @Test
    void aNameNoNicHasIsOneLineListingWhatThereIs() {
        FabricException e = assertThrows(FabricException.class,
                () -> NicSelection.choose(List.of("rail0", "mgmt0"), List.of("rail0", "rail2"), "tcp;ofi_rxm"));
        assertEquals("EFABENCH_NICS=rail0,rail2: no NIC 'rail2' here; tcp;ofi_rxm offers rail0, mgmt0", e.getMessage());
    }
}

package io.efabench.harness.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import io.efabench.harness.BenchmarkSetupException;


class FootprintTest {
    private static final long M = 1L << 20;

    @Test
    void autoIsOneSlotPerRoundOfTheWindowUpToOneGibPerBuffer() {
        assertEquals(64, Footprint.slots("auto", 64, 64));
        assertEquals(64, Footprint.slots("auto", 64, M), "64 x 1M: the 64 MiB fi_rma_bw -W 64 touches");
        assertEquals(16, Footprint.slots("auto", 64, 64 * M));
        assertEquals(4, Footprint.slots("auto", 64, 256 * M));
        assertEquals(1, Footprint.slots("auto", 64, 1024 * M), "the seed's 1G: one slot");
        assertEquals(1, Footprint.slots("auto", 64, 4096 * M), "never zero");
        assertEquals(1, Footprint.slots("auto", 1, 64), "window 1: one round in flight, one region");
    }

    @Test
    void anExplicitCountIsTakenAndBadOnesGetOneLine() {
        assertEquals(3, Footprint.slots("3", 64, 1024 * M));
        for (String bad : new String[] {"0", "257", "many", "-1"}) {
            BenchmarkSetupException e = assertThrows(BenchmarkSetupException.class, () -> Footprint.slots(bad, 8, 64));
            assertTrue(e.getMessage().startsWith("slots=" + bad + ": must be 'auto' or a whole number"), e.getMessage());
        }
    }

    @Test
    void theWindowIsCappedAtTheSlots() {
        assertEquals(4, Footprint.roundsInFlight(64, 4), "256M at window 64: 4 rounds in flight");
        assertEquals(1, Footprint.roundsInFlight(1, 64));
    }

    @Test
    void roundsInAWindowUseDistinctSlots() {
        for (long r = 1; r < 200; r++) {
            assertEquals((int) (r % 7), Footprint.slotOf(r, 7));
            assertEquals((int) (r % 64), Footprint.slotOf(r, 64), "a power of two takes the mask");
            assertEquals(0, Footprint.slotOf(r, 1));
        }
        assertThrows(BenchmarkSetupException.class, () -> Footprint.bufferBytes(256, Long.MAX_VALUE / 2));
    }
}

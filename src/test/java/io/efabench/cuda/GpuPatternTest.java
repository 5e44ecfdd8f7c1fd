package io.efabench.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.api.Test;

/** The host mirror of the GPU pattern: properties the checked rounds rely on. */
class GpuPatternTest {

    @Test
    void wordsAreNeverZeroSoAClearedBufferFails() {
        int seed = GpuPattern.seed(0, 1);
        for (long i = 0; i < 1 << 20; i++) {
            assertEquals(1, GpuPattern.word(seed, i) & 1);
        }
    }

    @Test
    void roundsRanksAndOffsetsGiveDifferentWords() {
        assertNotEquals(GpuPattern.seed(0, 1), GpuPattern.seed(0, 2));
        assertNotEquals(GpuPattern.seed(0, 1), GpuPattern.seed(1, 1));
        int seed = GpuPattern.seed(0, 3);
        // a chunk moved by one word, or by 4 KiB, differs everywhere
        for (long i = 0; i < 4096; i++) {
            assertNotEquals(GpuPattern.word(seed, i), GpuPattern.word(seed, i + 1));
            assertNotEquals(GpuPattern.word(seed, i), GpuPattern.word(seed, i + 1024));
        }
    }
}

package io.efabench.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** Properties of the check pattern that the checked rounds rely on. */
class CheckPatternTest {

    @Test
    void wordsAreNeverZeroSoAClearedBufferFails() {
        int seed = CheckPattern.seed(0, 1, 1);
        for (long i = 0; i < 1 << 20; i++) {
            assertEquals(1, CheckPattern.word(seed, i) & 1);
        }
    }

    @Test
    void senderReceiverAndRoundEachChangeTheSeed() {
        Set<Integer> seeds = new HashSet<>();
        int n = 0;
        for (int sender = 0; sender < 8; sender++) {
            for (int receiver = 0; receiver < 8; receiver++) {
                for (long round = 0; round < 64; round++) {
                    seeds.add(CheckPattern.seed(sender, receiver, round));
                    n++;
                }
            }
        }
        assertEquals(n, seeds.size(), "two (sender, receiver, round) share a seed");
        // swapping sender and receiver is another pattern too
        assertNotEquals(CheckPattern.seed(1, 2, 5), CheckPattern.seed(2, 1, 5));
    }

    @Test
    void shiftedWordsDiffer() {
        int seed = CheckPattern.seed(0, 1, 3);
        // a chunk moved by one word, or by 4 KiB, differs everywhere
        for (long i = 0; i < 4096; i++) {
            assertNotEquals(CheckPattern.word(seed, i), CheckPattern.word(seed, i + 1));
            assertNotEquals(CheckPattern.word(seed, i), CheckPattern.word(seed, i + 1024));
        }
    }
}

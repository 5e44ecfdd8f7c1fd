package io.efabench.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SizesTest {
    @Test
    void parsesBinarySuffixes() {
        assertEquals(4096, Sizes.parse("4K"));
        assertEquals(1L << 20, Sizes.parse("1m"));
        assertEquals(1L << 30, Sizes.parse("1G"));
        assertEquals(123, Sizes.parse("123"));
    }

    @Test
    void rejectsBadSizesWithOneLine() {
        for (String bad : new String[] {"12Q", "", "K", "-1K", "1.5M", "0"}) {
            BenchmarkSetupException e = assertThrows(BenchmarkSetupException.class, () -> Sizes.parse(bad));
            assertTrue(e.getMessage().contains("'" + bad + "'"), e.getMessage());
            assertTrue(!e.getMessage().contains("\n"));
            assertEquals(0, e.getStackTrace().length, "user errors carry no stack trace");
        }
    }

    @Test
    void formatsLikeTheSeeds() {
        assertEquals("256K", Sizes.format(256 << 10));
        assertEquals("1M", Sizes.format(1 << 20));
        assertEquals("1G", Sizes.format(1L << 30));
        assertEquals("1000", Sizes.format(1000));
    }
}

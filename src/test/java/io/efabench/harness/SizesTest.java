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
        assertEquals(64 * 1024, Sizes.parse("64KiB"), "the report's spelling is the same grammar");
        assertEquals(1L << 30, Sizes.parse("1gb"));
    }

    @Test
    void rejectsBadSizesWithOneLine() {
        for (String bad : new String[] {"12Q", "", "K", "-1K", "1.5M", "0", "99999999999999G", "17179869185G", "KiB"}) {
            BenchmarkSetupException e = assertThrows(BenchmarkSetupException.class, () -> Sizes.parse(bad));
            assertTrue(e.getMessage().contains("'" + bad + "'"), e.getMessage());
            assertTrue(!e.getMessage().contains("\n"));
            assertEquals(0, e.getStackTrace().length, "user errors carry no stack trace");
        }
    }

    @Test
    void formatsLikeTheSeeds() {
        assertEquals("256K", Sizes.label(256 << 10));
        assertEquals("1M", Sizes.label(1 << 20));
        assertEquals("1G", Sizes.label(1L << 30));
        assertEquals("1000", Sizes.label(1000));
        assertEquals("3K", Sizes.label(3072));
        assertEquals("512M", Sizes.label(512L << 20));
    }
}

package io.efabench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class SizesTest {
    @Test
    void parsesBinarySuffixes() {
        assertEquals(4096, Sizes.parse("4096"));
        assertEquals(256 * 1024, Sizes.parse("256K"));
        assertEquals(1 << 20, Sizes.parse("1m"));
        assertEquals(1L << 30, Sizes.parse("1G"));
        assertEquals(64 * 1024, Sizes.parse("64KiB"));
    }

    @Test
    void rejectsGarbage() {
        assertEquals("bad size '12Q' (expected e.g. 4096, 256K, 1M, 1G)",
                assertThrows(ReportException.class, () -> Sizes.parse("12Q")).getMessage());
        assertThrows(ReportException.class, () -> Sizes.parse("-1K"));
        assertThrows(ReportException.class, () -> Sizes.parse("99999999999999G"));
    }

    @Test
    void labelsLikeTheSeed() {
        assertEquals("256K", Sizes.label(256 * 1024));
        assertEquals("1M", Sizes.label(1 << 20));
        assertEquals("512M", Sizes.label(512L << 20));
        assertEquals("1G", Sizes.label(1L << 30));
        assertEquals("1536", Sizes.label(1536));
        assertEquals("3K", Sizes.label(3072));
        assertEquals(65536, Sizes.count(256 * 1024));
    }
}

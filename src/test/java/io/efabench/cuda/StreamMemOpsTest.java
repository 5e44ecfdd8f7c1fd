package io.efabench.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.junit.jupiter.api.Test;

/**
 * The batch's entries hold what cuStreamBatchMemOp reads, at cuda.h's offsets (CUDA 13,
 * x86-64): 48-byte CUstreamBatchMemOpParams, operation at 0, address at 8, value at 16, flags at
 * 24; WRITE_VALUE_32 = 2, WAIT_VALUE_32 = 1, GEQ = 0, the default write (fence first) = 0. No GPU.
 */
class StreamMemOpsTest {
    @Test
    void entriesLandAtTheDriversOffsets() {
        try (StreamMemOps ops = new StreamMemOps(3)) {
            ops.params().fill((byte) 0x55);
            ops.clear().write32(0x7f00_0000_1000L, 41).waitAtLeast32(0x7f00_0000_2080L, -7);
            MemorySegment p = ops.params();
            assertEquals(2, p.get(ValueLayout.JAVA_INT, 0));
            assertEquals(0x7f00_0000_1000L, p.get(ValueLayout.JAVA_LONG, 8));
            assertEquals(41, p.get(ValueLayout.JAVA_INT, 16));
            assertEquals(0, p.get(ValueLayout.JAVA_INT, 24));
            assertEquals(1, p.get(ValueLayout.JAVA_INT, 48));
            assertEquals(0x7f00_0000_2080L, p.get(ValueLayout.JAVA_LONG, 48 + 8));
            assertEquals(-7, p.get(ValueLayout.JAVA_INT, 48 + 16));
            assertEquals(0, p.get(ValueLayout.JAVA_INT, 48 + 24));
            assertEquals(0x55, p.get(ValueLayout.JAVA_BYTE, 96), "the third entry untouched");
        }
    }

    @Test
    void aBatchBeyondItsCapacityIsRefused() {
        try (StreamMemOps ops = new StreamMemOps(1)) {
            ops.write32(64, 1);
            assertThrows(IllegalStateException.class, () -> ops.write32(128, 2));
            ops.clear().write32(128, 2); // a new batch starts over
        }
    }
}

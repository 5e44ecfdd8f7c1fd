package io.efabench.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.junit.jupiter.api.Test;

class PayloadTest {
    @Test
    void aFilledBufferVerifies() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(4096 + 5);
            Payload.fill(s, 0, 7);
            Payload.verify(s, 0, 7, 1);
        }
    }

    @Test
    void everyCorruptedByteIsCaughtWithRankRoundAndOffset() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(1000 + 3);
            for (long off : new long[] {0, 7, 8, 517, 999, 1002}) {
                Payload.fill(s, 0, 3);
                s.set(ValueLayout.JAVA_BYTE, off, (byte) (s.get(ValueLayout.JAVA_BYTE, off) ^ 0x10));
                Payload.CorruptionException e = assertThrows(Payload.CorruptionException.class,
                        () -> Payload.verify(s, 0, 3, 2));
                assertEquals(off, e.offset);
                assertEquals(3, e.round);
                assertEquals(2, e.receiverRank);
                assertTrue(e.getMessage().startsWith("rank 2: corrupted byte at offset " + off + " of round 3 from rank 0"),
                        e.getMessage());
            }
        }
    }

    @Test
    void staleRoundOrWrongSenderOrShiftedDataFails() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(64);
            Payload.fill(s, 0, 4);
            assertThrows(Payload.CorruptionException.class, () -> Payload.verify(s, 0, 5, 1));
            assertThrows(Payload.CorruptionException.class, () -> Payload.verify(s, 1, 4, 1));
            MemorySegment shifted = a.allocate(64);
            shifted.asSlice(8).copyFrom(s.asSlice(0, 56));
            shifted.asSlice(0, 8).copyFrom(s.asSlice(56, 8));
            assertThrows(Payload.CorruptionException.class, () -> Payload.verify(shifted, 0, 4, 1));
        }
    }
}

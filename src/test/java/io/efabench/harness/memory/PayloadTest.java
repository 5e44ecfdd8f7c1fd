package io.efabench.harness.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import org.junit.jupiter.api.Test;

import io.efabench.cuda.CheckPattern;

class PayloadTest {
    @Test
    void aFilledBufferVerifies() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(4096 + 5);
            Payload.fill(s, 0, 1, 7);
            Payload.verify(s, 0, 1, 7);
        }
    }

    /** The host writes the words the GPU kernels write (pattern.cu), so either side can check the other's. */
    @Test
    void hostWordsAreTheGpuWords() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(4096 + 3);
            Payload.fill(s, 2, 5, 9);
            int seed = CheckPattern.seed(2, 5, 9);
            for (long w = 0; w < 1024; w++) {
                assertEquals(CheckPattern.word(seed, w),
                        s.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), w * 4), "word " + w);
            }
            int last = CheckPattern.word(seed, 1024);
            for (int b = 0; b < 3; b++) {
                assertEquals((byte) (last >>> (8 * b)), s.get(ValueLayout.JAVA_BYTE, 4096 + b));
            }
        }
    }

    @Test
    void everyCorruptedByteIsCaughtWithRankRoundAndOffset() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(1000 + 3);
            for (long off : new long[] {0, 7, 8, 517, 999, 1002}) {
                Payload.fill(s, 0, 2, 3);
                s.set(ValueLayout.JAVA_BYTE, off, (byte) (s.get(ValueLayout.JAVA_BYTE, off) ^ 0x10));
                Payload.CorruptionException e = assertThrows(Payload.CorruptionException.class,
                        () -> Payload.verify(s, 0, 2, 3));
                assertEquals(off, e.offset);
                assertEquals(3, e.round);
                assertEquals(2, e.receiverRank);
                assertTrue(e.getMessage().startsWith("rank 2: corrupted byte at offset " + off + " of round 3 from rank 0"),
                        e.getMessage());
            }
        }
    }

    @Test
    void staleRoundWrongSenderWrongTargetOrShiftedDataFails() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(64);
            Payload.fill(s, 0, 1, 4);
            assertThrows(Payload.CorruptionException.class, () -> Payload.verify(s, 0, 1, 5), "stale round");
            assertThrows(Payload.CorruptionException.class, () -> Payload.verify(s, 3, 1, 4), "wrong sender");
            assertThrows(Payload.CorruptionException.class, () -> Payload.verify(s, 0, 2, 4), "another target's data");
            MemorySegment shifted = a.allocate(64);
            shifted.asSlice(8).copyFrom(s.asSlice(0, 56));
            shifted.asSlice(0, 8).copyFrom(s.asSlice(56, 8));
            assertThrows(Payload.CorruptionException.class, () -> Payload.verify(shifted, 0, 1, 4), "shifted");
            MemorySegment cleared = a.allocate(64);
            assertThrows(Payload.CorruptionException.class, () -> Payload.verify(cleared, 0, 1, 4), "cleared");
        }
    }
}

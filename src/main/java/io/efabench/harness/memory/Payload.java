package io.efabench.harness.memory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import io.efabench.cuda.CheckPattern;

/**
 * The check pattern on host memory: the same 4-byte words of (sender rank, receiver rank,
 * round, offset) that the GPU kernels write and check in device memory ({@link CheckPattern}),
 * little-endian, the last partial word cut to the buffer's length. Data for another target,
 * from the wrong sender or an earlier round, at the wrong offset, or a stale or cleared buffer
 * all fail. Receivers check every byte of checked rounds, outside the timed region.
 */
public final class Payload {
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

    private Payload() {}

    /** The two pattern words at byte offset {@code off} (a multiple of 8) as one little-endian long. */
    private static long pair(int seed, long off) {
        long w = off >>> 2;
        return (CheckPattern.word(seed, w) & 0xFFFF_FFFFL) | ((long) CheckPattern.word(seed, w + 1) << 32);
    }

    /** The pattern byte at {@code off}. */
    static byte byteAt(int seed, long off) {
        return (byte) (CheckPattern.word(seed, off >>> 2) >>> (8 * (int) (off & 3)));
    }

    public static void fill(MemorySegment seg, int sender, int receiver, long round) {
        int seed = CheckPattern.seed(sender, receiver, round);
        long n = seg.byteSize();
        long off = 0;
        for (; off + 8 <= n; off += 8) {
            seg.set(LONG, off, pair(seed, off));
        }
        for (; off < n; off++) {
            seg.set(ValueLayout.JAVA_BYTE, off, byteAt(seed, off));
        }
    }

    /**
     * Checks every byte; throws {@link CorruptionException} naming the receiving rank, the
     * sender, the round and the first bad offset.
     */
    public static void verify(MemorySegment seg, int sender, int receiver, long round) {
        int seed = CheckPattern.seed(sender, receiver, round);
        long n = seg.byteSize();
        long off = 0;
        for (; off + 8 <= n; off += 8) {
            long expected = pair(seed, off);
            long actual = seg.get(LONG, off);
            if (actual != expected) {
                int b = Long.numberOfTrailingZeros(actual ^ expected) >>> 3;
                throw new CorruptionException(receiver, sender, round, off + b,
                        (byte) (expected >>> (8 * b)), (byte) (actual >>> (8 * b)));
            }
        }
        for (; off < n; off++) {
            byte expected = byteAt(seed, off);
            byte actual = seg.get(ValueLayout.JAVA_BYTE, off);
            if (actual != expected) {
                throw new CorruptionException(receiver, sender, round, off, expected, actual);
            }
        }
    }

    /** A byte that differs from the pattern: the receiver's verdict on a checked round. */
    public static final class CorruptionException extends RuntimeException {
        public final int receiverRank;
        public final int senderRank;
        public final long round;
        public final long offset;

        CorruptionException(int receiverRank, int senderRank, long round, long offset, byte expected, byte actual) {
            this(receiverRank, senderRank, round, offset, expected, actual, "");
        }

        private CorruptionException(int receiverRank, int senderRank, long round, long offset, byte expected, byte actual,
                String detail) {
            super(String.format("rank %d: corrupted byte at offset %d of round %d from rank %d: expected 0x%02x, got 0x%02x%s",
                    receiverRank, offset, round, senderRank, expected & 0xff, actual & 0xff, detail), null, false, false);
            this.receiverRank = receiverRank;
            this.senderRank = senderRank;
            this.round = round;
            this.offset = offset;
        }

        /** The GPU's verdict on device memory, in the same words as a host check's. */
        static CorruptionException onDevice(int receiverRank, int senderRank, long round, long firstBadWord,
                int expectedWord, int actualWord, long badWords, long totalWords) {
            int b = Integer.numberOfTrailingZeros(expectedWord ^ actualWord) >>> 3;
            return new CorruptionException(receiverRank, senderRank, round, firstBadWord * 4 + b,
                    (byte) (expectedWord >>> (8 * b)), (byte) (actualWord >>> (8 * b)),
                    " (device memory: " + badWords + " of " + totalWords + " words differ)");
        }

        @Override
        public String toString() {
            return "efabench: " + getMessage();
        }
    }
}

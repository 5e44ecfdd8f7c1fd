package io.efabench.harness;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The check pattern: every 8-byte word is a hash of (sender rank, round, offset), so a chunk
 * that lands at the wrong offset, comes from the wrong round or the wrong sender, or a stale
 * buffer, all fail. The receiver checks every byte of checked rounds, outside the timed region.
 */
public final class Payload {
    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED;

    private Payload() {}

    /** The expected value of the word at {@code offset} (a multiple of 8). */
    public static long word(int senderRank, long round, long offset) {
        long z = (offset >>> 3) * 0x9E3779B97F4A7C15L + round * 0xBF58476D1CE4E5B9L + senderRank * 0x94D049BB133111EBL
                + 0x2545F4914F6CDD1DL;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    public static void fill(MemorySegment seg, int senderRank, long round) {
        long n = seg.byteSize();
        long off = 0;
        for (; off + 8 <= n; off += 8) {
            seg.set(WORD, off, word(senderRank, round, off));
        }
        long tail = word(senderRank, round, off);
        for (int i = 0; off + i < n; i++) {
            seg.set(ValueLayout.JAVA_BYTE, off + i, (byte) (tail >>> (8 * i)));
        }
    }

    /**
     * Checks every byte; throws {@link CorruptionException} naming the receiving rank, the
     * sender, the round and the first bad offset.
     */
    public static void verify(MemorySegment seg, int senderRank, long round, int receiverRank) {
        long n = seg.byteSize();
        long off = 0;
        for (; off + 8 <= n; off += 8) {
            long expected = word(senderRank, round, off);
            long actual = seg.get(WORD, off);
            if (actual != expected) {
                int b = Long.numberOfTrailingZeros(actual ^ expected) >>> 3;
                throw new CorruptionException(receiverRank, senderRank, round, off + b,
                        (byte) (expected >>> (8 * b)), (byte) (actual >>> (8 * b)));
            }
        }
        long tail = word(senderRank, round, off);
        for (int i = 0; off + i < n; i++) {
            byte expected = (byte) (tail >>> (8 * i));
            byte actual = seg.get(ValueLayout.JAVA_BYTE, off + i);
            if (actual != expected) {
                throw new CorruptionException(receiverRank, senderRank, round, off + i, expected, actual);
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
            super(String.format("rank %d: corrupted byte at offset %d of round %d from rank %d: expected 0x%02x, got 0x%02x",
                    receiverRank, offset, round, senderRank, expected & 0xff, actual & 0xff), null, false, false);
            this.receiverRank = receiverRank;
            this.senderRank = senderRank;
            this.round = round;
            this.offset = offset;
        }

        @Override
        public String toString() {
            return "efabench: " + getMessage();
        }
    }
}

package io.efabench.cuda;

/**
 * The check pattern of every checked round, host and GPU alike: every 4-byte word is a function
 * of (sender rank, receiver rank, round, word index), with bit 0 always set so that a cleared
 * buffer never passes. Data delivered to the wrong target, from the wrong sender, from an
 * earlier round or at the wrong offset therefore fails. The GPU kernels compute the same
 * words from the same seed ({@code kernels/efabench.cuh}, {@code efa_word}); the host fill and
 * check ({@code io.efabench.harness.memory.Payload}) call {@link #word} directly.
 */
public final class CheckPattern {
    private CheckPattern() {}

    /** The seed of one (sender, receiver, round): what the kernels take as {@code seed}. */
    public static int seed(int sender, int receiver, long round) {
        long z = round * 0x9E3779B97F4A7C15L + (sender + 1L) * 0xBF58476D1CE4E5B9L + (receiver + 1L) * 0xD6E8FEB86659FD93L;
        z = (z ^ (z >>> 31)) * 0x94D049BB133111EBL;
        return (int) (z ^ (z >>> 29));
    }

    /** Word {@code index} (byte offset / 4) of the pattern with this seed. */
    public static int word(int seed, long index) {
        return ((int) index * 0x9E3779B1 ^ (int) (index >>> 32) * 0x85EBCA77 ^ seed) | 1;
    }
}

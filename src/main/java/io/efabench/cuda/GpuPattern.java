package io.efabench.cuda;

/**
 * The GPU check pattern of {@code kernels/efabench.cuh}, computed on the host: every 4-byte
 * word is a function of (sender rank, round, word index), with bit 0 always set so that a
 * cleared buffer never passes. Used to cross-check the fill and verify kernels.
 */
public final class GpuPattern {
    private GpuPattern() {}

    public static int seed(int rank, long round) {
        long z = round * 0x9E3779B97F4A7C15L + (rank + 1L) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 31)) * 0x94D049BB133111EBL;
        return (int) (z ^ (z >>> 29));
    }

    public static int word(int seed, long index) {
        return ((int) index * 0x9E3779B1 ^ (int) (index >>> 32) * 0x85EBCA77 ^ seed) | 1;
    }
}

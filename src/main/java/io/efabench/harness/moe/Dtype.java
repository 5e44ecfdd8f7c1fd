package io.efabench.harness.moe;

/**
 * How a token's hidden vector travels in dispatch: BF16 is hidden x 2 bytes; FP8 is hidden bytes
 * plus one 4-byte float scale per 128 values (DeepEP's and pplx's block scales). Combine always
 * returns BF16, as DeepEP's and pplx's combine kernels do.
 */
public enum Dtype {
    BF16,
    FP8;

    /** Values one FP8 scale covers. */
    static final int SCALE_BLOCK = 128;

    /** Bytes one token of {@code hidden} values takes in dispatch. */
    public long dispatchBytes(int hidden) {
        return switch (this) {
            case BF16 -> 2L * hidden;
            case FP8 -> hidden + 4L * ((hidden + SCALE_BLOCK - 1) / SCALE_BLOCK);
        };
    }

    /** Bytes one token takes in combine: BF16 whatever the dispatch type. */
    public static long combineBytes(int hidden) {
        return 2L * hidden;
    }
}

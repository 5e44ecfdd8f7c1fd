package io.efabench.harness.moe;

import io.efabench.harness.BenchmarkSetupException;

/**
 * The model's side of a MoE layer: {@code tokens} per rank, {@code hidden} values a token,
 * {@code topk} experts a token picks out of {@code experts}, spread over the ranks in contiguous
 * blocks (expert e on rank e x N / E, DeepEP's placement when E is a multiple of N), and the
 * dispatch type. DeepSeek-V3: hidden 7168, top-8 of 256 experts.
 */
public record MoeShape(int tokens, int hidden, int topk, int experts, Dtype dtype) {
    public MoeShape {
        if (tokens < 1 || hidden < 1 || experts < 1 || topk < 1 || topk > experts) {
            throw new BenchmarkSetupException("MoE shape tokens=" + tokens + " hidden=" + hidden + " topk=" + topk + " experts="
                    + experts + ": needs tokens, hidden and experts >= 1 and 1 <= topk <= experts");
        }
    }

    /** Bytes a token takes in dispatch ({@link Dtype#dispatchBytes}). */
    public long dispatchTokenBytes() {
        return dtype.dispatchBytes(hidden);
    }

    /** Bytes a token takes in combine (BF16). */
    public long combineTokenBytes() {
        return Dtype.combineBytes(hidden);
    }

    /** The rank expert {@code e} lives on, of {@code ranks}. */
    public int rankOf(int e, int ranks) {
        return (int) ((long) e * ranks / experts);
    }
}

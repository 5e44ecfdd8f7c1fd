package io.efabench.harness.engine;

/**
 * The stripe and chunk rule, once: a block striped over {@code parts} channels gives channel c
 * the bytes from c x (bytes / parts), bytes / parts of them, the last stripe taking the rest; a
 * stripe goes out in writes of at most the channel's cap. Write's MULTI plans ({@link OpPlan}),
 * the proxy's request count and the proxy loop's posts all cut by it, so their counts agree.
 */
public final class Stripes {
    private Stripes() {}

    /** Where stripe {@code c} of a {@code bytes}-byte block split {@code parts} ways starts. */
    public static long offset(long bytes, int parts, int c) {
        return c * (bytes / parts);
    }

    /** Stripe {@code c}'s length: bytes / parts, the last one taking the rest. */
    public static long length(long bytes, int parts, int c) {
        long stripe = bytes / parts;
        return c == parts - 1 ? bytes - stripe * c : stripe;
    }

    /** Writes of at most {@code max} bytes that carry {@code len} bytes (none for an empty stripe). */
    public static int writes(long len, long max) {
        return len <= 0 ? 0 : (int) ((len + max - 1) / max);
    }
}

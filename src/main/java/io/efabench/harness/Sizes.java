package io.efabench.harness;

import java.util.Locale;

/**
 * Byte sizes as the benchmarks, the seed's tables and the report spell them, one grammar for all:
 * a whole number with an optional binary unit, any case, optionally followed by B or iB ("4096",
 * "256K", "1m", "64KiB", "1GB"; 1K = 1024 B). A size is at least one byte.
 */
public final class Sizes {
    private Sizes() {}

    /** The bytes {@code text} names; a one-line {@link BenchmarkSetupException} when it names none. */
    public static long parse(String text) {
        String s = text == null ? "" : text.trim().toUpperCase(Locale.ROOT);
        if (s.endsWith("IB")) {
            s = s.substring(0, s.length() - 2);
        } else if (s.endsWith("B")) {
            s = s.substring(0, s.length() - 1);
        }
        int shift = s.isEmpty() ? 0 : switch (s.charAt(s.length() - 1)) {
            case 'K' -> 10;
            case 'M' -> 20;
            case 'G' -> 30;
            default -> 0;
        };
        String digits = shift == 0 ? s : s.substring(0, s.length() - 1);
        long n;
        try {
            if (digits.isEmpty() || !digits.chars().allMatch(c -> c >= '0' && c <= '9') || digits.length() > 18) {
                throw new NumberFormatException();
            }
            n = Math.multiplyExact(Long.parseLong(digits), 1L << shift);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new BenchmarkSetupException("size '" + text
                    + "' is not a size: use a whole number with an optional K, M or G suffix (binary, 1K = 1024 bytes)");
        }
        if (n <= 0) {
            throw new BenchmarkSetupException("size '" + text + "' must be at least 1 byte");
        }
        return n;
    }

    /** The seed's label: the largest binary unit that divides the size exactly (256K, 1M, 1G), else bytes. */
    public static String label(long bytes) {
        if (bytes > 0 && bytes % (1L << 30) == 0) return (bytes >> 30) + "G";
        if (bytes > 0 && bytes % (1L << 20) == 0) return (bytes >> 20) + "M";
        if (bytes > 0 && bytes % (1L << 10) == 0) return (bytes >> 10) + "K";
        return Long.toString(bytes);
    }
}

package io.efabench.harness;

/** Byte sizes with binary suffixes: 1K = 1024 B, 1M = 1024 KiB, 1G = 1024 MiB. */
public final class Sizes {
    private Sizes() {}

    public static long parse(String text) {
        String s = text == null ? "" : text.trim();
        if (s.isEmpty()) {
            throw bad(text);
        }
        long unit = switch (Character.toUpperCase(s.charAt(s.length() - 1))) {
            case 'K' -> 1L << 10;
            case 'M' -> 1L << 20;
            case 'G' -> 1L << 30;
            default -> 1L;
        };
        String digits = unit == 1 ? s : s.substring(0, s.length() - 1);
        if (digits.isEmpty() || !digits.chars().allMatch(Character::isDigit) || digits.length() > 12) {
            throw bad(text);
        }
        long n = Long.parseLong(digits) * unit;
        if (n <= 0) {
            throw new BenchmarkSetupException("size '" + text + "' must be at least 1 byte");
        }
        return n;
    }

    /** Compact label in the seeds' style: 256K, 1M, 1G; plain bytes when not a whole unit. */
    public static String format(long bytes) {
        if (bytes >= (1L << 30) && bytes % (1L << 30) == 0) return (bytes >> 30) + "G";
        if (bytes >= (1L << 20) && bytes % (1L << 20) == 0) return (bytes >> 20) + "M";
        if (bytes >= (1L << 10) && bytes % (1L << 10) == 0) return (bytes >> 10) + "K";
        return Long.toString(bytes);
    }

    private static BenchmarkSetupException bad(String text) {
        return new BenchmarkSetupException("size '" + text
                + "' is not a size: use a whole number with an optional K, M or G suffix (binary, 1K = 1024 bytes)");
    }
}

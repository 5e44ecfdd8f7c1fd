package io.efabench.report;

import java.util.Locale;

/** Message sizes as the benchmarks spell them ("256K", "1M", "1G", "4096"): binary multiples. */
public final class Sizes {
    private Sizes() {}

    /** Parses "256K", "1m", "1G", "64KiB", "4096"; throws {@link ReportException} otherwise. */
    public static long parse(String text) {
        String s = text.trim().toUpperCase(Locale.ROOT);
        if (s.endsWith("IB")) s = s.substring(0, s.length() - 2);
        else if (s.endsWith("B")) s = s.substring(0, s.length() - 1);
        int shift = 0;
        if (!s.isEmpty()) {
            switch (s.charAt(s.length() - 1)) {
                case 'K' -> shift = 10;
                case 'M' -> shift = 20;
                case 'G' -> shift = 30;
                default -> shift = -1;
            }
            if (shift > 0) s = s.substring(0, s.length() - 1);
        }
        try {
            long n = Long.parseLong(s);
            if (n < 0 || n > (Long.MAX_VALUE >> Math.max(shift, 0))) throw new NumberFormatException();
            return n << Math.max(shift, 0);
        } catch (NumberFormatException e) {
            throw new ReportException("bad size '" + text + "' (expected e.g. 4096, 256K, 1M, 1G)");
        }
    }

    /** The seed's label: the largest binary unit that divides the size exactly (256K, 1M, 1G), else bytes. */
    public static String label(long bytes) {
        if (bytes > 0 && bytes % (1L << 30) == 0) return (bytes >> 30) + "G";
        if (bytes > 0 && bytes % (1L << 20) == 0) return (bytes >> 20) + "M";
        if (bytes > 0 && bytes % (1L << 10) == 0) return (bytes >> 10) + "K";
        return Long.toString(bytes);
    }

    /** nccl-tests/seed "count": elements of a 4-byte float. */
    public static long count(long bytes) {
        return bytes / Float.BYTES;
    }
}

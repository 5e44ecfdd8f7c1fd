package io.efabench.rank;

import java.util.ArrayList;
import java.util.List;

/**
 * Slurm's compressed host list syntax, as in {@code SLURM_JOB_NODELIST}:
 * {@code p5-[001-004,007],gpu1}, {@code node[1-3]}, {@code a,b}, {@code rack[1-2]-n[01-02]}.
 * A range keeps the width of its lower bound ({@code [08-11]} gives 08, 09, 10, 11).
 */
final class Hostlist {
    private Hostlist() {
    }

    /** The first host, without expanding the whole list. */
    static String first(String hostlist) {
        return expand(hostlist).getFirst();
    }

    static List<String> expand(String hostlist) {
        if (hostlist == null || hostlist.isBlank()) {
            throw new IllegalArgumentException("it is empty");
        }
        List<String> hosts = new ArrayList<>();
        for (String entry : splitTopLevel(hostlist.strip())) {
            if (entry.isEmpty()) {
                throw new IllegalArgumentException("it has an empty entry");
            }
            expandEntry(entry, hosts);
        }
        return hosts;
    }

    /** Splits at commas that are outside brackets. */
    private static List<String> splitTopLevel(String s) {
        List<String> parts = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '[') {
                if (depth++ > 0) {
                    throw new IllegalArgumentException("nested '[' at position " + i);
                }
            } else if (c == ']') {
                if (--depth < 0) {
                    throw new IllegalArgumentException("']' without '[' at position " + i);
                }
            } else if (c == ',' && depth == 0) {
                parts.add(s.substring(start, i));
                start = i + 1;
            }
        }
        if (depth != 0) {
            throw new IllegalArgumentException("'[' is not closed");
        }
        parts.add(s.substring(start));
        return parts;
    }

    /** One entry may hold several bracket groups; their expansions multiply. */
    private static void expandEntry(String entry, List<String> out) {
        List<String> prefixes = new ArrayList<>();
        prefixes.add("");
        int i = 0;
        while (i < entry.length()) {
            int open = entry.indexOf('[', i);
            String literal = open < 0 ? entry.substring(i) : entry.substring(i, open);
            prefixes.replaceAll(p -> p + literal);
            if (open < 0) {
                break;
            }
            int close = entry.indexOf(']', open);
            List<String> values = expandRanges(entry.substring(open + 1, close));
            List<String> next = new ArrayList<>(prefixes.size() * values.size());
            for (String p : prefixes) {
                for (String v : values) {
                    next.add(p + v);
                }
            }
            prefixes = next;
            i = close + 1;
        }
        out.addAll(prefixes);
    }

    private static List<String> expandRanges(String inside) {
        if (inside.isEmpty()) {
            throw new IllegalArgumentException("'[]' is empty");
        }
        List<String> values = new ArrayList<>();
        for (String range : inside.split(",", -1)) {
            int dash = range.indexOf('-');
            String lo = dash < 0 ? range : range.substring(0, dash);
            String hi = dash < 0 ? range : range.substring(dash + 1);
            if (!isDigits(lo) || !isDigits(hi)) {
                throw new IllegalArgumentException("'" + range + "' is not a number or a range like 01-04");
            }
            long from = Long.parseLong(lo);
            long to = Long.parseLong(hi);
            if (to < from) {
                throw new IllegalArgumentException("range '" + range + "' runs backwards");
            }
            if (to - from >= 1_000_000) {
                throw new IllegalArgumentException("range '" + range + "' is too large");
            }
            for (long n = from; n <= to; n++) {
                String digits = Long.toString(n);
                values.add("0".repeat(Math.max(0, lo.length() - digits.length())) + digits);
            }
        }
        return values;
    }

    private static boolean isDigits(String s) {
        if (s.isEmpty() || s.length() > 18) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }
}

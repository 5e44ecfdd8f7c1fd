package io.efabench.report;

import java.util.Locale;

/** How a table cell is written, once for every table of the report. */
final class Cells {
    /** A cell with no figure. */
    static final String MISSING = "-";

    private Cells() {}

    /** {@code v} in {@code pattern}, or {@link #MISSING} where it is not a finite number. */
    static String format(double v, String pattern) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, pattern, v) : MISSING;
    }
}

package io.efabench.report;

/** Bad input to a report command (missing file, malformed JSON, unknown metric): one line, exit 2. */
public final class ReportException extends RuntimeException {
    public ReportException(String message) {
        super(message);
    }

    public ReportException(String message, Throwable cause) {
        super(message, cause);
    }
}

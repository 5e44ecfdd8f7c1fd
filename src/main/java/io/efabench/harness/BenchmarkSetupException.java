package io.efabench.harness;

/**
 * A user-facing failure (bad parameter, missing GPU, provider without a needed capability).
 * It carries no stack trace on purpose: JMH prints a failed benchmark's exception with
 * {@code printStackTrace}, and for these errors the one line is the whole story.
 * The launcher shows lines starting with {@code efabench: } from a failed rank's log.
 */
public final class BenchmarkSetupException extends RuntimeException {
    public BenchmarkSetupException(String oneLine) {
        super(oneLine, null, false, false);
    }

    @Override
    public String toString() {
        return "efabench: " + getMessage();
    }
}

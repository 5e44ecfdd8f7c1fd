package io.efabench.harness;

/**
 * A user-facing failure (bad parameter, missing GPU, provider without a needed capability).
 * It carries no stack trace on purpose: JMH prints a failed benchmark's exception with
 * {@code printStackTrace}, and for these errors the one line is the whole story.
 * The launcher shows lines starting with {@code efabench: } from a failed rank's log.
 */
public final class BenchmarkSetupException extends RuntimeException {
    /** The rank a failed wait was for, or -1: the failure line then names the channels to it that stalled. */
    private final int peer;

    public BenchmarkSetupException(String oneLine) {
        this(oneLine, -1);
    }

    public BenchmarkSetupException(String oneLine, int peer) {
        super(oneLine, null, false, false);
        this.peer = peer;
    }

    /** The rank a failed wait was for, or -1 when the failure is no wait's. */
    public int peer() {
        return peer;
    }

    /** This failure with {@code more} appended to its line, the same peer. */
    public BenchmarkSetupException with(String more) {
        return new BenchmarkSetupException(getMessage() + more, peer);
    }

    @Override
    public String toString() {
        return "efabench: " + getMessage();
    }
}

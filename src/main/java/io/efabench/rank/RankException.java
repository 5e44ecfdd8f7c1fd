package io.efabench.rank;

/**
 * A rank group could not be formed, or failed while running. The message is one line meant
 * for the person who launched the job: it names the rank, the peer and the operation.
 */
public class RankException extends RuntimeException {
    public RankException(String message) {
        super(message);
    }

    public RankException(String message, Throwable cause) {
        super(message, cause);
    }

    /** Printed by JMH for a failed trial: the launcher shows {@code efabench: } lines. */
    @Override
    public String toString() {
        return "efabench: " + getMessage();
    }
}

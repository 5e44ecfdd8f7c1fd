package io.efabench.bench;

/** A checked round found bytes that differ: the message names rank, round and offset. No stack trace. */
final class CheckFailedException extends RuntimeException {
    CheckFailedException(String message) {
        super(message, null, false, false);
    }

    @Override
    public String toString() {
        return "efabench: " + getMessage();
    }
}

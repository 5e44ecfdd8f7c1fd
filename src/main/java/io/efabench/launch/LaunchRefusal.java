package io.efabench.launch;

/** A refusal of one of run-jmh.sh's questions, with the exit status the launcher gives it. */
final class LaunchRefusal extends RuntimeException {
    final int status;

    LaunchRefusal(int status, String message) {
        super(message);
        this.status = status;
    }
}

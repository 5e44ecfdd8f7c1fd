package io.efabench.launch;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * One function of run-jmh.sh, taken from the script as it stands and run in bash under the
 * script's own shell options ({@code set -uo pipefail}), for tests of the launcher's pieces.
 */
final class LauncherFunction {
    record Result(int status, String output) {}

    private LauncherFunction() {}

    /** Defines {@code function} from run-jmh.sh, then runs {@code invocation} (which calls it); stdout and stderr together. */
    static Result run(String function, String invocation) throws IOException, InterruptedException {
        String script = "set -uo pipefail; eval \"$(sed -n '/^" + function + "() {/,/^}/p' run-jmh.sh)\"; " + invocation;
        Process p = new ProcessBuilder("bash", "-c", script).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(function + " did not return within 60 s: " + out);
        }
        return new Result(p.exitValue(), out);
    }
}

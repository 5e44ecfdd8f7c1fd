package io.efabench.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * run-jmh.sh's failure summary ({@link LeaderView#failureLines}) quotes a failed rank's reason, not
 * its info lines: "# efabench: path=nic ..." is printed during an iteration, so JMH's
 * "Iteration   1: " can precede it.
 */
class FailureLinesTest {
    @TempDir
    Path tmp;

    @Test
    void quotesTheReasonNotAnInfoLine() throws Exception {
        Path log = tmp.resolve("rank0.log");
        Files.writeString(log, """
                # JMH version: 1.37
                # WARNING: JMH lock is ignored by user request, make sure no other JMH instances are running
                # Warmup Iteration   1: # efabench: path=nic: rank 0's 1 peer(s): 1 on its node, through tcp
                Iteration   1: # efabench: path=nic: rank 0's 1 peer(s): 1 on its node, through tcp
                <failure>
                efabench: rank 0: waiting for the ack of a write round (round 812) with rank 1 did not complete within 20 s
                """);
        assertEquals(java.util.List.of("efabench: rank 0: waiting for the ack of a write round (round 812) with rank 1 did"
                + " not complete within 20 s"), LeaderView.failureLines(log));
    }
}

package io.efabench.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Rank 0's terminal view and a failed rank's reasons, as run-jmh.sh shows them. */
class LeaderViewTest {

    @TempDir
    Path tmp;

    private static List<String> view(String total, String... lines) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        new LeaderView(out, "logs/rank0.log", total).filter(new BufferedReader(new StringReader(String.join("\n", lines))));
        return bytes.toString(StandardCharsets.UTF_8).lines().toList();
    }

    @Test
    void aProgressLineBeforeEveryForkWithBenchmarkParamsAndEta() throws Exception {
        List<String> shown = view("28",
                "# Benchmark: io.efabench.bench.WriteBenchmark.write",
                "# Parameters: (config = MultiPin, size = 1M)",
                "# Run progress: 7.14% complete, ETA 00:02:10",
                "# Fork: 1 of 1",
                "# Warmup Fork: 1 of 2",
                "# Fork: 2 of 2");
        assertEquals(List.of(
                "# Benchmark: io.efabench.bench.WriteBenchmark.write",
                "# Parameters: (config = MultiPin, size = 1M)",
                "# Run progress: 7.14% complete, ETA 00:02:10",
                "# Fork: 1 of 1",
                "[1/28] WriteBenchmark.write config=MultiPin size=1M  ETA 00:02:10",
                "# Warmup Fork: 1 of 2",
                "[2/28] WriteBenchmark.write config=MultiPin size=1M  warmup  fork 1/2  ETA 00:02:10",
                "# Fork: 2 of 2",
                "[3/28] WriteBenchmark.write config=MultiPin size=1M  fork 2/2  ETA 00:02:10"), shown);
    }

    @Test
    void stackFramesFoldIntoOneLineAndAnExplainedFailureHidesJmhsRepeat() throws Exception {
        List<String> shown = view("?",
                "java.lang.IllegalStateException: boom",
                "\tat a.B.c(B.java:1)",
                "\t... 3 more",
                "after",
                "efabench: rank 2: the writes did not complete",
                "Benchmark had encountered error, and fail on error was requested",
                "ERROR: org.openjdk.jmh.runner.BenchmarkException: Benchmark error during the run",
                "\tat org.openjdk.jmh.runner.X.y(X.java:1)",
                "  Suppressed: efabench: rank 2: the writes did not complete",
                "# Run complete.");
        assertEquals(List.of(
                "java.lang.IllegalStateException: boom",
                "\t... 2 stack lines (full trace in logs/rank0.log)",
                "after",
                "efabench: rank 2: the writes did not complete",
                "# Run complete."), shown);
    }

    @Test
    void aFailedRanksReasonsAreItsOwnLinesElseExceptionsElseTheLastLines() throws Exception {
        Path ours = tmp.resolve("ours.log");
        Files.writeString(ours, String.join("\n",
                "# efabench: path=nic: information, not a reason",
                "Iteration   1: # efabench: also information",
                "ERROR: wrapped efabench: rank 1: the peer died",
                "efabench: rank 1: the peer died",
                "efabench: rank 1: second reason") + "\n");
        assertEquals(List.of("efabench: rank 1: the peer died", "efabench: rank 1: second reason"),
                LeaderView.failureLines(ours));
        Path exceptions = tmp.resolve("exceptions.log");
        Files.writeString(exceptions, String.join("\n",
                "ERROR: org.openjdk.jmh.runner.BenchmarkException: wrapper",
                "java.lang.IllegalArgumentException: bad input",
                "\tat a.B.c(B.java:1)",
                "Caused by: java.io.IOException: disk",
                "java.lang.IllegalArgumentException: bad input") + "\n");
        assertEquals(List.of("java.lang.IllegalArgumentException: bad input", "java.io.IOException: disk"),
                LeaderView.failureLines(exceptions));
        Path plain = tmp.resolve("plain.log");
        Files.writeString(plain, "1\n2\n\n3\n\tat x.Y(Y.java:1)\n4\n5\n6\n");
        assertEquals(List.of("2", "3", "4", "5", "6"), LeaderView.failureLines(plain));
        assertEquals(List.of("(no log at " + tmp.resolve("none.log") + ")"), LeaderView.failureLines(tmp.resolve("none.log")));
    }
}

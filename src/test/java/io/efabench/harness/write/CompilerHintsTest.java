package io.efabench.harness.write;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The leader's per-write path reaches the forks as forced inlines (JMH's annotation processor
 * turns {@code @CompilerControl(INLINE)} into META-INF/CompilerHints, which every fork gets as its
 * compile command file). Without them C2 may refuse the inline once the callee has big code of its
 * own, and 64 B writes at window 64 ran 1.28-1.82 Gbps in the dev VM's JVMs where it did, 2.48 where
 * it did not (docs/perf/journal/write-64B-gap.md, issue 19).
 */
class CompilerHintsTest {
    @Test
    void theWritePathIsForcedInlineInTheForksCompileCommands() throws IOException {
        String hints;
        try (InputStream in = getClass().getClassLoader().getResourceAsStream("META-INF/CompilerHints")) {
            assertNotNull(in, "no META-INF/CompilerHints: JMH's annotation processor did not run on the harness");
            hints = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        List<String> lines = hints.lines().map(String::strip).toList();
        for (String method : List.of("io/efabench/harness/write/WriteLeader.postOp", "io/efabench/harness/write/WriteLeader.send",
                "io/efabench/harness/engine/WriteEngine.inject")) {
            assertTrue(lines.contains("inline," + method), "not forced inline: " + method + " in\n" + hints);
        }
    }
}

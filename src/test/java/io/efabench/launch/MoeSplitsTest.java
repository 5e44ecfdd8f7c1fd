package io.efabench.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;

import org.junit.jupiter.api.Test;

/** The split sizes a peer tool runs are the benchmark's routing, line for line; bad input is one line. */
class MoeSplitsTest {
    @Test
    void oneLinePerRoutingAndOwnerWhoseTokensAddUp() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code = MoeSplits.run(new String[] {"--ranks", "4", "--tokens", "32", "--routing", "hot:0.5", "--dtype", "fp8"},
                new PrintStream(out), System.err);
        assertEquals(0, code);
        String[] lines = out.toString().split("\n");
        assertTrue(lines[0].startsWith("# dispatch_token_bytes 7392 combine_token_bytes 14336"), lines[0]);
        assertEquals(1 + 16 * 4, lines.length);
        for (int i = 1; i < lines.length; i++) {
            String[] f = lines[i].trim().split(" ");
            int sum = 0;
            for (int d = 2; d < f.length; d++) {
                sum += Integer.parseInt(f[d]);
            }
            assertTrue(sum >= 32 && sum <= 32 * 4, lines[i]); // each token to 1..min(topk, ranks) ranks
        }
    }

    @Test
    void badInputIsOneLineAndExitTwo() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(2, MoeSplits.run(new String[] {"--ranks", "1"}, System.out, new PrintStream(err)));
        assertEquals(2, MoeSplits.run(new String[] {"--routing", "zipf", "--ranks", "4"}, System.out, new PrintStream(err)));
        assertEquals(2, err.toString().strip().split("\n").length, err.toString());
    }
}

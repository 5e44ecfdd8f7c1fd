package io.efabench.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

/** The launcher's own options and their one-line refusals, as run-jmh.sh printed them. */
class LaunchOptionsTest {
    private static String refusal(List<String> args) {
        return assertThrows(IllegalArgumentException.class, () -> LaunchOptions.run(args)).getMessage();
    }

    private static String seedRefusal(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> LaunchOptions.seed(List.of(args))).getMessage();
    }

    @Test
    void optionsEndAtTheFirstJmhArgumentOrDashes() {
        LaunchOptions.Run r = LaunchOptions.run(List.of("--ranks=4", "--provider=tcp;ofi_rxm", "--profile", "Write", "--ranks", "x"));
        assertEquals(4, r.ranks());
        assertEquals("tcp;ofi_rxm", r.provider());
        assertTrue(r.profile());
        assertEquals(List.of("Write", "--ranks", "x"), r.jmhArgs());
        assertEquals(List.of("--profile"), LaunchOptions.run(List.of("--", "--profile")).jmhArgs());
        assertTrue(LaunchOptions.run(List.of("--help", "--ranks", "0")).help(), "--help before a bad option");
    }

    @Test
    void badOptionsAreOneLine() {
        assertEquals("--ranks needs a positive integer, got '0'", refusal(List.of("--ranks", "0", "X")));
        assertEquals("--ranks needs a positive integer, got '10000'", refusal(List.of("--ranks=10000")));
        assertEquals("--ranks needs a value (a positive integer)", refusal(List.of("--ranks")));
        assertEquals("--provider needs a value (tcp, shm, efa, ...)", refusal(List.of("--provider")));
        assertEquals("--provider needs a provider name (tcp, shm, efa, ...), got 'a b'", refusal(List.of("--provider", "a b")));
        assertEquals("--provider needs a provider name (tcp, shm, efa, ...), got ''", refusal(List.of("--provider=")));
        assertEquals("unknown option --rank (launcher options: --ranks N, --provider P, --profile; JMH options use one dash;"
                + " see --help)", refusal(List.of("--rank", "2")));
    }

    @Test
    void theSeedsOptions() {
        LaunchOptions.SeedRun s = LaunchOptions.seed(List.of("write", "--sizes=quick", "--provider", "shm", "--", "-i", "1"));
        assertEquals(new LaunchOptions.SeedRun("write", "quick", "shm", List.of("-i", "1")), s);
        assertEquals(new LaunchOptions.SeedRun("all2all", "all", null, List.of()), LaunchOptions.seed(List.of("all2all")));
        assertEquals("", LaunchOptions.seed(List.of("write", "--provider=")).provider(), "empty: the default provider");
        assertEquals(LaunchOptions.SEED_USAGE, seedRefusal());
        assertEquals(LaunchOptions.SEED_USAGE, seedRefusal("write", "--bogus"));
        assertEquals("--sizes needs all, quick or a list of the seed's sizes", seedRefusal("write", "--sizes"));
        assertEquals("--provider needs a value", seedRefusal("write", "--provider"));
        assertEquals("--provider needs a provider name (tcp, shm, efa, ...), got 'x y'", seedRefusal("write", "--provider", "x y"));
    }
}

package io.efabench.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

/** What the launcher does to the user's JMH arguments. */
class JmhArgsTest {
    @Test
    void theTestHelperIsHiddenUnlessNamed() {
        assertEquals(List.of("Write", "-e", "LauncherProbeBenchmark"), JmhArgs.hideTestHelpers(List.of("Write")));
        assertEquals(List.of("LauncherProbe"), JmhArgs.hideTestHelpers(List.of("LauncherProbe")));
        assertEquals(List.of(), JmhArgs.hideTestHelpers(List.of()), "no arguments: the quick suite names its benchmarks");
    }

    @Test
    void listingsAndHelpAreInfoOnly() {
        assertTrue(JmhArgs.infoOnly(List.of("Write", "-lp")));
        assertTrue(JmhArgs.infoOnly(List.of("--help")));
        assertFalse(JmhArgs.infoOnly(List.of("Write", "-p", "size=1M", "-l1")));
    }

    @Test
    void resultFilesAreTheLaunchersOwn() {
        assertEquals("-rf is set by the launcher (rank 0's JSON goes to results/<run>/jmh.json); leave it out",
                assertThrows(IllegalArgumentException.class, () -> JmhArgs.check(List.of("Write", "-rf", "csv"))).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> JmhArgs.check(List.of("-rff=x.json"))).getMessage()
                .startsWith("-rff is set by the launcher"));
        assertThrows(IllegalArgumentException.class, () -> JmhArgs.check(List.of("WriteBenchmark", "-p", "config=Nope")));
        JmhArgs.check(List.of("WriteBenchmark", "-p", "config=SinglePin", "-p", "size=-rf"));
    }

    @Test
    void everyRankFailsOnErrorWithMetricsAndWritesJson() {
        Path f = Path.of("r/followers/rank1.json");
        assertEquals(List.of("W", "-foe", "true", "-prof", JmhArgs.METRICS_PROFILER, "-rf", "json", "-rff", f.toString()),
                JmhArgs.rankArgs(List.of("W"), List.of("W"), f, true));
        assertEquals(List.of("W", "-foe", "false", "-rf", "json", "-rff", f.toString()),
                JmhArgs.rankArgs(List.of("W", "-foe", "false"), List.of("W", "-foe", "false"), f, false), "the user's -foe");
    }
}

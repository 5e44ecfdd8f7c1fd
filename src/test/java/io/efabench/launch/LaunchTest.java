package io.efabench.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** run-jmh.sh's questions answered by the same code the ranks use. */
class LaunchTest {
    @Test
    void tokensEndEachWithANul() {
        assertEquals("run\0\0-p\0a b\0", Launch.tokens(List.of("run", "", "-p", "a b")));
    }

    @Test
    void provenanceFactsHaveTheLaunchersKeys() {
        Map<String, Object> f = RunFacts.facts("slurm", 4, null, List.of("a", "b"), List.of("WriteBenchmark", "-p", "size=1M"),
                "./run-jmh.sh WriteBenchmark", Path.of("."));
        assertEquals(List.of("timestamp", "git_commit", "git_dirty", "command_line", "jmh_args", "mode", "ranks", "provider",
                "hosts", "java", "java_home", "kernel", "cpu_model", "cpus"), List.copyOf(f.keySet()));
        assertEquals(4, f.get("ranks"));
        assertTrue(f.get("git_commit").toString().matches("[0-9a-f]{40}|unknown"), f.toString());
    }

    /** -p config=Nope is one line naming the configs the benchmark takes, before any rank starts. */
    @Test
    void anUnknownConfigIsRefusedWithTheNamesItTakes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> JmhSelection.checkParams(new String[] {"SendRecvBenchmark", "-p", "config=Nope", "-p", "size=4K"}));
        assertEquals("-p config=Nope: SendRecvBenchmark takes SingleHost, SingleDevice", e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> JmhSelection.checkParams(new String[] {"WriteBenchmark", "-p", "config=SinglePin,Bogus"}));
        JmhSelection.checkParams(new String[] {"WriteBenchmark", "-p", "config=SinglePin,MultiDMA", "-p", "size=Whatever"});
        JmhSelection.checkParams(new String[] {"ProxyBenchmark", "-p", "config=ProxySingle,DirectSingle"});
        assertThrows(IllegalArgumentException.class,
                () -> JmhSelection.checkParams(new String[] {"ProxyBenchmark", "-p", "config=SingleDMA"}), "renamed: DirectSingle");
    }

    /** The progress total: benchmarks x modes x param combinations x forks, as JMH will run them. */
    @Test
    void forksCountWhatJmhWillRun() {
        assertEquals(8, JmhSelection.forks(new String[] {"WriteBenchmark", "-p", "size=64K,1M", "-p", "config=SinglePin,MultiPin",
            "-f", "1"}), "2 sizes x 2 configs x 2 completions");
        assertEquals(2 * 6 * 2, JmhSelection.forks(new String[] {"AllToAll", "-bm", "avgt,sample", "-f", "2", "-p", "size=1M"}));
        assertEquals(0, JmhSelection.forks(new String[] {"NoSuchBenchmark"}));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> JmhSelection.forks(new String[] {"-zz"}));
    }

    /** No GPU visible: a benchmark's host configs run, its device configs are named as skipped. */
    @Test
    void withoutAGpuTheHostConfigsRunAndTheDeviceOnesAreNamed() {
        assertEquals(new JmhSelection.HostConfigs(java.util.List.of("SingleHost"), java.util.List.of("SingleDevice")),
                JmhSelection.hostConfigs(new String[] {"SendRecvBenchmark", "-p", "size=4K"}));
        assertEquals(new JmhSelection.HostConfigs(java.util.List.of("SinglePin", "MultiPin", "RoundRobinPin"),
                java.util.List.of("SingleDMA", "MultiDMA", "RoundRobinDMA")),
                JmhSelection.hostConfigs(new String[] {"WriteBenchmark|AllToAllBenchmark"}), "the same host configs: one run");
        org.junit.jupiter.api.Assertions.assertNull(
                JmhSelection.hostConfigs(new String[] {"WriteBenchmark", "-p", "config=SingleDMA"}), "named configs are the user's");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> JmhSelection.hostConfigs(new String[] {"SendRecvBenchmark|WriteBenchmark"}));
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("one at a time"), e.getMessage());
    }
}

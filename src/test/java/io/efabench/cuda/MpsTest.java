package io.efabench.cuda;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** MPS is seen running when its control daemon is among the processes, and only then. */
class MpsTest {
    @TempDir
    Path proc;

    private void process(int pid, String... argv) throws Exception {
        Path dir = Files.createDirectories(proc.resolve(Integer.toString(pid)));
        Files.write(dir.resolve("cmdline"), (String.join("\0", argv) + "\0").getBytes());
    }

    @Test
    void theControlDaemonMeansOn() throws Exception {
        process(1, "/sbin/init");
        process(77, "nvidia-cuda-mps-server");
        assertFalse(Mps.running(proc), "the server alone is started by the daemon; without it no client connects");
        process(42, "/usr/bin/nvidia-cuda-mps-control", "-d");
        assertTrue(Mps.running(proc));
    }

    @Test
    void noDaemonMeansOff() throws Exception {
        process(1, "/sbin/init");
        process(2, "java", "-jar", "nvidia-cuda-mps-control.jar");
        Files.createDirectories(proc.resolve("self"));
        assertFalse(Mps.running(proc));
    }
}

package io.efabench.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Rank 0's arguments under --profile: the profiler, one -jvmArgsAppend per flag, itimer where perf events are off. */
class ProfileArgsTest {

    @TempDir
    Path jarDir;

    @Test
    void everyJvmFlagGetsItsOwnAppendAndThePerfLevelPicksTheEvent() throws Exception {
        Path lib = jarDir.resolve("async-profiler/linux-x64/libasyncProfiler.so");
        Files.createDirectories(lib.getParent());
        Files.writeString(lib, "");
        List<String> notes = new ArrayList<>();
        List<String> args = ProfileArgs.leaderArgs(List.of("WriteBenchmark", "-jvmArgsAppend", "-Xmx1g  -Dx=1", "-f", "1"),
                jarDir, Path.of("/r/run"), "amd64", null, "3", notes::add);
        assertEquals(List.of("WriteBenchmark", "-f", "1", "-prof",
                "async:libPath=" + lib + ";output=flamegraph;event=itimer;dir=/r/run/profile",
                "-jvmArgsAppend", "-Xmx1g", "-jvmArgsAppend", "-Dx=1",
                "-jvmArgsAppend", "-XX:+UnlockDiagnosticVMOptions", "-jvmArgsAppend", "-XX:+DebugNonSafepoints"), args);
        assertEquals(List.of("--profile: perf events are off (kernel.perf_event_paranoid=3); sampling with itimer"), notes);
        List<String> cpu = ProfileArgs.leaderArgs(List.of("X"), jarDir, Path.of("/r"), "x86_64", null, "1", notes::add);
        assertTrue(cpu.contains("async:libPath=" + lib + ";output=flamegraph;dir=/r/profile"), cpu.toString());
        List<String> chosen = ProfileArgs.leaderArgs(List.of("X"), jarDir, Path.of("/r"), "amd64", "alloc", "4", notes::add);
        assertTrue(chosen.contains("async:libPath=" + lib + ";output=flamegraph;event=alloc;dir=/r/profile"), chosen.toString());
    }

    @Test
    void noLibraryOrNoArchitectureIsOneLine() {
        var none = assertThrows(IllegalArgumentException.class,
                () -> ProfileArgs.leaderArgs(List.of("X"), jarDir, Path.of("/r"), "amd64", null, "1", s -> { }));
        assertTrue(none.getMessage().startsWith("--profile: no " + jarDir), none.getMessage());
        var arch = assertThrows(IllegalArgumentException.class,
                () -> ProfileArgs.leaderArgs(List.of("X"), jarDir, Path.of("/r"), "riscv64", null, "1", s -> { }));
        assertEquals("--profile: async-profiler has no library for riscv64", arch.getMessage());
    }
}

package io.efabench.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A JVM killed with SIGKILL leaves its board behind: the next main class removes it. */
class CallBoardTest {
    @TempDir
    Path dir;

    @Test
    void boardsOfGoneProcessesAreRemovedAndLiveOnesKept() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        Path dead = Files.writeString(CallBoard.fileOf(dir, gone.pid()), "x");
        Path mine = Files.writeString(CallBoard.fileOf(dir, ProcessHandle.current().pid()), "x");
        Path other = Files.writeString(dir.resolve("efabench-calls-notapid"), "x");
        Path region = Files.writeString(dir.resolve(gone.pid() + ":0:0"), "x");
        assertEquals(1, CallBoard.removeDeadBoards(dir));
        assertFalse(Files.exists(dead), "the board of a gone process is removed");
        assertTrue(Files.exists(mine) && Files.exists(other) && Files.exists(region),
                "a live process's board, a name that is no board, and shm regions are not its business");
    }
}

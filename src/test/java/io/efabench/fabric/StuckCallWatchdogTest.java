package io.efabench.fabric;

import static io.efabench.fabric.CallBoardLayout.LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StuckCallWatchdogTest {
    static final long WRITER = 4000;
    static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    @TempDir
    Path proc;

    private final MemorySegment board = Arena.ofAuto().allocate(CallBoardLayout.SIZE, 64);

    /** A board whose writer (rank 0, 5 s deadline) lists rank 1 (pid 4001) and rank 2 (pid 4002) on its host. */
    private StuckCallWatchdog watchdog() {
        board.set(ValueLayout.JAVA_INT, CallBoardLayout.MAGIC_AT, CallBoardLayout.MAGIC);
        board.set(ValueLayout.JAVA_INT, CallBoardLayout.WRITER_RANK_AT, 0);
        board.set(ValueLayout.JAVA_INT, CallBoardLayout.TIMEOUT_AT, 5);
        board.set(ValueLayout.JAVA_INT, CallBoardLayout.PEER_COUNT_AT, 2);
        for (int i = 0; i < 2; i++) {
            board.set(ValueLayout.JAVA_LONG, CallBoardLayout.peerAt(i), WRITER + 1 + i);
            board.set(ValueLayout.JAVA_INT, CallBoardLayout.peerAt(i) + 8, 1 + i);
        }
        board.asSlice(CallBoardLayout.slotAt(0) + 8).setString(0, "shm", StandardCharsets.US_ASCII);
        LONG.setRelease(board, CallBoardLayout.WRITER_PID_AT, WRITER);
        StuckCallWatchdog dog = new StuckCallWatchdog(board, Duration.ofSeconds(60), proc);
        assertNull(dog.look(0)); // takes the writer
        return dog;
    }

    private void state(long pid, char state) throws IOException {
        Files.createDirectories(proc.resolve(Long.toString(pid)));
        Files.writeString(proc.resolve(pid + "/stat"), pid + " (java (x)) " + state + " 1 2 3\n");
    }

    private void inCall(int slot, long count, int op) {
        LONG.setRelease(board, CallBoardLayout.slotAt(slot), (count << 8) | ((long) op << 1) | 1);
    }

    @Test
    void oneCallInsideTheProviderPastTheDeadlineIsReportedWithTheStoppedPeer() throws IOException {
        StuckCallWatchdog dog = watchdog();
        state(WRITER + 1, 'T');
        state(WRITER + 2, 'R');
        state(WRITER, 'R');
        inCall(0, 7, CallBoardLayout.CQ_READ);
        assertNull(dog.look(SECOND));
        assertNull(dog.look(5 * SECOND), "4 s inside one call is within the 5 s deadline");
        String message = dog.look(6 * SECOND);
        assertNotNull(message, "5 s inside one call is past the deadline");
        assertTrue(message.startsWith("efabench: rank 0: fi_cq_read on shm has not returned for 5 s"), message);
        assertTrue(message.contains("rank 1 (pid 4001 on this host) is stopped"), message);
        assertTrue(!message.contains("rank 2"), "a running peer is not blamed: " + message);
        assertTrue(message.contains("benchmark JVM (pid 4000) is killed"), message);
    }

    @Test
    void callsThatReturnAreNeverReportedHoweverLongTheRankRuns() throws IOException {
        StuckCallWatchdog dog = watchdog();
        state(WRITER + 1, 'R');
        for (int t = 1; t < 100; t++) {
            inCall(0, t, CallBoardLayout.WRITE); // a new call every look: progress
            assertNull(dog.look(t * SECOND));
        }
        LONG.setRelease(board, CallBoardLayout.slotAt(0), 99L << 8); // out of the provider: idle
        assertNull(dog.look(200 * SECOND));
        assertNull(dog.look(300 * SECOND), "a rank between calls (JMH's harness, a slow setup) is not stuck");
    }

    /**
     * Injected writes bracket a run, not each call (CallBoard.Slot#enterRun): the line stays as the
     * run's first inject left it, so an inject that never returns ages on the watchdog like any
     * call, and the channel's next bracketed call (a CQ read) ends the run.
     */
    @Test
    void aRunOfInjectsIsOneBracketThatAnInjectNeverReturningLeavesStuck() throws IOException {
        StuckCallWatchdog dog = watchdog();
        state(WRITER + 1, 'R');
        CallBoard.Slot slot = new CallBoard.Slot(null, -1, board.asSlice(CallBoardLayout.slotAt(0), CallBoardLayout.SLOT_SIZE));
        slot.enterRun(CallBoardLayout.INJECT_WRITE);
        long first = (long) LONG.getAcquire(board, CallBoardLayout.slotAt(0));
        assertTrue(CallBoardLayout.inCall(first));
        for (int k = 0; k < 63; k++) {
            slot.enterRun(CallBoardLayout.INJECT_WRITE);
        }
        assertEquals(first, (long) LONG.getAcquire(board, CallBoardLayout.slotAt(0)), "one bracket for the run");
        assertNull(dog.look(SECOND));
        slot.enter(CallBoardLayout.CQ_READ); // the engine's next CQ read ends the run
        slot.exit();
        assertTrue(!CallBoardLayout.inCall((long) LONG.getAcquire(board, CallBoardLayout.slotAt(0))));
        assertNull(dog.look(10 * SECOND), "a run that a CQ read ended is not stuck");
        slot.enterRun(CallBoardLayout.INJECT_WRITE); // a new run, whose inject never returns
        assertNull(dog.look(11 * SECOND));
        String message = dog.look(16 * SECOND);
        assertNotNull(message, "an inject that never returns is stuck");
        assertTrue(message.contains("fi_inject_writedata on shm has not returned for 5 s"), message);
        slot.endRun(); // a failure ends the run before its teardown's waits
        assertTrue(!CallBoardLayout.inCall((long) LONG.getAcquire(board, CallBoardLayout.slotAt(0))));
        slot.endRun(); // no run: nothing written
        assertNull(dog.look(30 * SECOND));
    }

    @Test
    void aPeerThatExitedIsNamedAndANewWriterStartsAfresh() throws IOException {
        StuckCallWatchdog dog = watchdog();
        state(WRITER + 2, 'Z');
        inCall(3, 1, CallBoardLayout.INJECT_WRITE);
        board.asSlice(CallBoardLayout.slotAt(3) + 8).setString(0, "efa", StandardCharsets.US_ASCII);
        assertNull(dog.look(SECOND));
        LONG.setRelease(board, CallBoardLayout.WRITER_PID_AT, WRITER + 10); // the next fork
        assertNull(dog.look(7 * SECOND), "the new writer's first look starts its clocks");
        assertNull(dog.look(8 * SECOND));
        String message = dog.look(13 * SECOND);
        assertNotNull(message);
        assertTrue(message.contains("fi_inject_writedata on efa"), message);
        assertTrue(message.contains("rank 1 (pid 4001 on this host) has exited"), message); // no /proc entry
        assertTrue(message.contains("rank 2 (pid 4002 on this host) has exited"), message); // a zombie
    }

    @Test
    void aJvmThatIsItselfStoppedIsNotStuckButStopped() throws IOException {
        StuckCallWatchdog dog = watchdog();
        state(WRITER, 'T'); // a debugger or SIGSTOP: its call would return if it ran
        state(WRITER + 1, 'R');
        inCall(0, 9, CallBoardLayout.CQ_READ);
        assertNull(dog.look(SECOND));
        assertNull(dog.look(30 * SECOND), "a stopped JVM is left alone");
        state(WRITER, 'R');
        assertNull(dog.look(31 * SECOND), "resumed: its clock starts again");
        assertNotNull(dog.look(36 * SECOND), "resumed and still inside the same call: stuck");
    }

    @Test
    void beforeTheTrialSaysItsDeadlineTheWatchdogsOwnApplies() {
        StuckCallWatchdog dog = watchdog();
        board.set(ValueLayout.JAVA_INT, CallBoardLayout.TIMEOUT_AT, 0);
        inCall(0, 1, CallBoardLayout.AV_INSERT);
        assertNull(dog.look(SECOND));
        assertNull(dog.look(60 * SECOND));
        assertNotNull(dog.look(61 * SECOND));
    }

    @Test
    void theRealProcReadsThisJvmAsRunningAndAMissingPidAsExited() {
        StuckCallWatchdog dog = new StuckCallWatchdog(board, Duration.ofSeconds(1), Path.of("/proc"));
        assertNull(dog.condition(ProcessHandle.current().pid()));
        assertEquals("has exited", dog.condition(Integer.MAX_VALUE));
    }
}

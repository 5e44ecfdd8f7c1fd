package io.efabench.fabric;

import static io.efabench.fabric.CallBoardLayout.LONG;

import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Reads a {@link CallBoard} every 200 ms and acts when one native call has not returned within
 * the trial's deadline: prints one line naming the rank, the call and the peers on this host that
 * are stopped or gone, then kills the benchmark JVM (SIGKILL from the parent; {@code _exit} when
 * it watches its own process) and removes that JVM's shm regions. Also removes the regions of a
 * fork that died by any other hand. Acting needs no thread of the watched JVM and, from the
 * parent, no safepoint of it.
 */
final class StuckCallWatchdog {
    static final Duration PERIOD = Duration.ofMillis(200);

    /** What happens to a JVM whose call is stuck; tests pass one that only records. */
    interface Actor {
        void act(long pid, String message);
    }

    private final MemorySegment board;
    private final Duration defaultTimeout;
    private final Path procDir;
    private final long[] lastState = new long[CallBoardLayout.SLOTS];
    private final long[] since = new long[CallBoardLayout.SLOTS];
    private long writer;

    StuckCallWatchdog(MemorySegment board, Duration defaultTimeout, Path procDir) {
        this.board = board;
        this.defaultTimeout = defaultTimeout;
        this.procDir = procDir;
    }

    /** Watches {@code board} on a daemon thread for the life of this JVM. */
    static void start(MemorySegment board, Duration defaultTimeout) {
        StuckCallWatchdog dog = new StuckCallWatchdog(board, defaultTimeout, Path.of("/proc"));
        Thread.ofPlatform().daemon().name("efabench-stuck-call-watchdog").start(() -> dog.watch(StuckCallWatchdog::kill));
    }

    private void watch(Actor actor) {
        long self = ProcessHandle.current().pid();
        while (true) {
            try {
                Thread.sleep(PERIOD);
            } catch (InterruptedException e) {
                return;
            }
            String stuck = look(System.nanoTime());
            if (stuck != null) {
                actor.act(writer, stuck);
                LONG.compareAndSet(board, CallBoardLayout.WRITER_PID_AT, writer, 0L);
            } else {
                sweepGoneWriter(board, self);
            }
        }
    }

    /**
     * A fork that died (killed, crashed) without closing its endpoints: its shm regions are
     * removed and the board forgets it. Nothing while the writer lives or is {@code self}.
     */
    static void sweepGoneWriter(MemorySegment board, long self) {
        long pid = (long) LONG.getAcquire(board, CallBoardLayout.WRITER_PID_AT);
        if (pid != 0 && pid != self && !alive(pid)) {
            ShmLeftovers.remove(ShmLeftovers.DIR, pid);
            LONG.compareAndSet(board, CallBoardLayout.WRITER_PID_AT, pid, 0L);
        }
    }

    /**
     * One look at the board at {@code now} (nanoTime): the message when a call has been inside
     * the same native call for the deadline or longer, else null. Allocates only then.
     */
    String look(long now) {
        long pid = (long) LONG.getAcquire(board, CallBoardLayout.WRITER_PID_AT);
        if (pid != writer) {
            writer = pid;
            java.util.Arrays.fill(lastState, 0L);
            return null;
        }
        if (pid == 0) {
            return null;
        }
        int seconds = board.get(ValueLayout.JAVA_INT, CallBoardLayout.TIMEOUT_AT);
        long limit = seconds > 0 ? TimeUnit.SECONDS.toNanos(seconds) : defaultTimeout.toNanos();
        for (int s = 0; s < CallBoardLayout.SLOTS; s++) {
            long state = (long) LONG.getAcquire(board, CallBoardLayout.slotAt(s));
            if (!CallBoardLayout.inCall(state) || state != lastState[s]) {
                lastState[s] = state;
                since[s] = now;
            } else if (now - since[s] >= limit) {
                if (isStopped(writer)) {
                    since[s] = now; // stopped on purpose (a debugger, SIGSTOP): not stuck, and not ours to kill
                    continue;
                }
                return message(s, state, (now - since[s]) / 1_000_000_000L);
            }
        }
        return null;
    }

    private String message(int slot, long state, long seconds) {
        int rank = board.get(ValueLayout.JAVA_INT, CallBoardLayout.WRITER_RANK_AT);
        MemorySegment provider = board.asSlice(CallBoardLayout.slotAt(slot) + 8, CallBoardLayout.PROVIDER_BYTES);
        List<String> peers = new ArrayList<>();
        int n = Math.min(board.get(ValueLayout.JAVA_INT, CallBoardLayout.PEER_COUNT_AT), CallBoardLayout.PEERS);
        for (int i = 0; i < n; i++) {
            long pid = board.get(ValueLayout.JAVA_LONG, CallBoardLayout.peerAt(i));
            int peer = board.get(ValueLayout.JAVA_INT, CallBoardLayout.peerAt(i) + 8);
            String condition = condition(pid);
            if (condition != null) {
                peers.add("rank " + peer + " (pid " + pid + " on this host) " + condition);
            }
        }
        return "efabench: " + (rank >= 0 ? "rank " + rank : "pid " + writer) + ": " + CallBoardLayout.op(state)
                + " on " + provider.getString(0, StandardCharsets.US_ASCII) + " has not returned for " + seconds
                + " s (EFABENCH_TIMEOUT_S); " + (peers.isEmpty() ? "no peer on this host is stopped or has exited"
                : String.join(", ", peers)) + ". A thread inside libfabric cannot be interrupted, so this rank's"
                + " benchmark JVM (pid " + writer + ") is killed";
    }

    /** "is stopped" or "has exited" from /proc/PID/stat, or null while it runs. */
    String condition(long pid) {
        try {
            String stat = Files.readString(procDir.resolve(Long.toString(pid)).resolve("stat"));
            int close = stat.lastIndexOf(')');
            char state = close >= 0 && close + 2 < stat.length() ? stat.charAt(close + 2) : '?';
            return switch (state) {
                case 'T', 't' -> "is stopped (SIGSTOP or a debugger)";
                case 'Z', 'X' -> "has exited";
                default -> null;
            };
        } catch (NoSuchFileException e) {
            return "has exited";
        } catch (IOException e) {
            return null;
        }
    }

    private boolean isStopped(long pid) {
        String condition = condition(pid);
        return condition != null && condition.startsWith("is stopped");
    }

    private static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    /** The default actor: say it, kill the JVM, remove its shm regions. */
    private static void kill(long pid, String message) {
        System.err.println();
        System.err.println(message); // on a line of its own: JMH may be half-way through one
        System.err.flush();
        if (pid == ProcessHandle.current().pid()) {
            ShmLeftovers.remove(ShmLeftovers.DIR, pid);
            Exit.now(3);
        }
        ProcessHandle.of(pid).ifPresent(p -> {
            p.destroyForcibly();
            try {
                p.onExit().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                // removed below all the same: a process that outlives SIGKILL holds nothing we can free
            }
        });
        ShmLeftovers.remove(ShmLeftovers.DIR, pid);
    }

    /** {@code _exit(2)}: ends the process now, with no safepoint (Runtime.halt needs one). */
    private static final class Exit {
        private static final MethodHandle EXIT = Linker.nativeLinker().downcallHandle(
                Linker.nativeLinker().defaultLookup().find("_exit").orElseThrow(),
                FunctionDescriptor.ofVoid(ValueLayout.JAVA_INT));

        static void now(int code) {
            try {
                EXIT.invokeExact(code);
            } catch (Throwable t) {
                Runtime.getRuntime().halt(code);
            }
        }
    }
}

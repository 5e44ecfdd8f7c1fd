package io.efabench.fabric;

import static io.efabench.fabric.CallBoardLayout.LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Says, where another thread or process can read it without this JVM's help, which libfabric
 * call each channel is inside. The reason: a peer stopped or killed while it holds a lock in the
 * shm provider's shared memory leaves this rank spinning inside {@code fi_cq_read} or a post, in
 * a critical downcall that never reaches a safepoint, so no deadline of ours fires, and a thread
 * of this JVM cannot act either once anything asks for a safepoint. {@link StuckCallWatchdog}
 * reads the board and kills the JVM whose call did not return within the trial's deadline.
 *
 * <p>Where it lives: {@code io.efabench.launch.Main} (the jar's main class) makes one in
 * /dev/shm for its JVM and watches it from there, so a JMH fork reports into its parent's board
 * and the parent, a process with no stuck thread, kills it. Without such a parent (tests, {@code
 * -f 0} under another main) the board is private memory watched by a thread of this JVM: the
 * best that can be done without a second process.
 */
public final class CallBoard {
    static final Path DIR = ShmLeftovers.DIR;
    static final String PREFIX = ShmLeftovers.BOARD_PREFIX;

    private static CallBoard current;

    final MemorySegment memory;
    private final AtomicInteger usedSlots = new AtomicInteger();

    private CallBoard(MemorySegment memory) {
        this.memory = memory;
    }

    /** The file a JVM with {@code pid} watches, under {@code dir}. */
    static Path fileOf(Path dir, long pid) {
        return dir.resolve(PREFIX + pid);
    }

    /**
     * For the jar's main class: makes this JVM's board file and watches it on a daemon thread
     * for as long as the JVM lives; {@code timeout} applies until a trial says its own. Does
     * nothing (forks then watch themselves) where /dev/shm cannot hold it.
     */
    public static void watchFromHere(Duration timeout) {
        removeDeadBoards(DIR);
        long pid = ProcessHandle.current().pid();
        Path file = fileOf(DIR, pid);
        MemorySegment memory;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            memory = ch.map(FileChannel.MapMode.READ_WRITE, 0, CallBoardLayout.SIZE, Arena.global());
        } catch (IOException | UnsupportedOperationException e) {
            return;
        }
        watch(file, memory, pid, timeout);
    }

    /**
     * Removes the boards under {@code dir} of processes that are gone (a JVM killed with SIGKILL
     * runs no hook to remove its own); returns how many. Best effort.
     */
    static int removeDeadBoards(Path dir) {
        int removed = 0;
        for (Path f : ShmLeftovers.deadBoards(dir)) {
            try {
                if (Files.deleteIfExists(f)) {
                    removed++;
                }
            } catch (IOException anotherUsers) {
                // /dev/shm is sticky: another user's board stays
            }
        }
        return removed;
    }

    private static void watch(Path file, MemorySegment memory, long pid, Duration timeout) {
        Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().name("efabench-call-board").unstarted(() -> {
            StuckCallWatchdog.sweepGoneWriter(memory, pid); // a fork that died just before this JVM ends
            try {
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // best effort: run-jmh.sh sweeps boards of dead processes
            }
        }));
        memory.set(ValueLayout.JAVA_INT, CallBoardLayout.MAGIC_AT, CallBoardLayout.MAGIC);
        StuckCallWatchdog.start(memory, timeout);
    }

    /**
     * The board this process reports into, found or made once: its own file (this JVM runs the
     * jar's main with {@code -f 0}), its parent's (a JMH fork), else private memory watched by a
     * thread of this JVM. Resets the writer fields to this process.
     */
    static synchronized CallBoard forThisProcess() {
        if (current == null) {
            ProcessHandle me = ProcessHandle.current();
            MemorySegment memory = map(fileOf(DIR, me.pid()));
            if (memory == null) {
                memory = me.parent().map(p -> map(fileOf(DIR, p.pid()))).orElse(null);
            }
            if (memory == null) {
                memory = Arena.global().allocate(CallBoardLayout.SIZE, 64);
                StuckCallWatchdog.start(memory, Duration.ofSeconds(60));
            }
            memory.asSlice(CallBoardLayout.WRITER_RANK_AT, CallBoardLayout.SIZE - CallBoardLayout.WRITER_RANK_AT).fill((byte) 0);
            memory.set(ValueLayout.JAVA_INT, CallBoardLayout.WRITER_RANK_AT, -1);
            LONG.setRelease(memory, CallBoardLayout.WRITER_PID_AT, me.pid());
            current = new CallBoard(memory);
        }
        return current;
    }

    private static MemorySegment map(Path file) {
        if (!Files.isRegularFile(file)) {
            return null;
        }
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            if (ch.size() < CallBoardLayout.SIZE) {
                return null;
            }
            MemorySegment m = ch.map(FileChannel.MapMode.READ_WRITE, 0, CallBoardLayout.SIZE, Arena.global());
            return m.get(ValueLayout.JAVA_INT, CallBoardLayout.MAGIC_AT) == CallBoardLayout.MAGIC ? m : null;
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
    }

    /**
     * Who this process is in the job, for the watchdog's message: its rank, the trial's deadline,
     * and the ranks on this host with their pids (the only peers whose state can hold a call of
     * ours inside a provider: they share its memory). Peers past the board's room are left out.
     */
    public static void identify(int rank, Duration timeout, int[] localRanks, long[] localPids) {
        MemorySegment m = forThisProcess().memory;
        int n = Math.min(localRanks.length, CallBoardLayout.PEERS);
        for (int i = 0; i < n; i++) {
            m.set(ValueLayout.JAVA_LONG, CallBoardLayout.peerAt(i), localPids[i]);
            m.set(ValueLayout.JAVA_INT, CallBoardLayout.peerAt(i) + 8, localRanks[i]);
        }
        m.set(ValueLayout.JAVA_INT, CallBoardLayout.PEER_COUNT_AT, n);
        m.set(ValueLayout.JAVA_INT, CallBoardLayout.TIMEOUT_AT, (int) Math.min(Integer.MAX_VALUE, timeout.toSeconds()));
        m.set(ValueLayout.JAVA_INT, CallBoardLayout.WRITER_RANK_AT, rank);
        java.lang.invoke.VarHandle.releaseFence(); // the watchdog reads them after an acquire
    }

    /** A slot for one channel's calls; an unwatched one when all are taken. */
    Slot claim(String provider) {
        while (true) {
            int used = usedSlots.get();
            int free = Integer.numberOfTrailingZeros(~used);
            if (free >= CallBoardLayout.SLOTS) {
                return new Slot(this, -1, Arena.ofAuto().allocate(CallBoardLayout.SLOT_SIZE, 8));
            }
            if (usedSlots.compareAndSet(used, used | (1 << free))) {
                MemorySegment s = memory.asSlice(CallBoardLayout.slotAt(free), CallBoardLayout.SLOT_SIZE);
                s.fill((byte) 0);
                byte[] name = provider.getBytes(StandardCharsets.US_ASCII);
                MemorySegment.copy(name, 0, s, ValueLayout.JAVA_BYTE, 8, Math.min(name.length, CallBoardLayout.PROVIDER_BYTES - 1));
                return new Slot(this, free, s);
            }
        }
    }

    /**
     * One channel's line on the board. {@link #enter} and {@link #exit} bracket every native call:
     * one release store each (a plain store on x86), no clock read. Injected writes are the
     * exception: {@link #enterRun} marks the first of a run of them and nothing after each, so
     * the line says "inside fi_inject_writedata" from the run's first inject until the channel's
     * next bracketed call (a CQ read, which every wait makes) or {@link #endRun}. A run of injects
     * is bounded (the engine reads the CQs every few injects and at every wait), and an inject that
     * never returns still leaves the line unchanged, so the watchdog still names it. The reason:
     * a run of 64 injects costs one bracket where it cost 64, and that was worth ~17% of the 64-byte
     * rate on the H100 host (docs/perf/journal/write-64B-gap.md, issue 19).
     */
    static final class Slot {
        private final CallBoard board;
        private final int index;
        private final MemorySegment state;
        private long count;
        private boolean released;
        /** True while a run of {@link #enterRun} calls has the line and no bracket closed it yet. */
        private boolean inRun;

        Slot(CallBoard board, int index, MemorySegment state) {
            this.board = board;
            this.index = index;
            this.state = state;
        }

        void enter(int op) {
            inRun = false;
            LONG.setRelease(state, 0L, (++count << 8) | ((long) op << 1) | 1);
        }

        void exit() {
            inRun = false;
            LONG.setRelease(state, 0L, count << 8);
        }

        /** Before a call of a run (injected writes): brackets it if no run is open; the next {@link #enter}, {@link #exit} or {@link #endRun} closes the run. */
        void enterRun(int op) {
            if (!inRun) {
                enter(op);
                inRun = true;
            }
        }

        /** Closes an open run: the channel is in no call. */
        void endRun() {
            if (inRun) {
                exit();
            }
        }

        /** The channel closed: the slot is free for the next one. */
        void release() {
            LONG.setRelease(state, 0L, 0L);
            if (index >= 0 && !released) {
                released = true;
                board.usedSlots.getAndUpdate(u -> u & ~(1 << index));
            }
        }
    }
}

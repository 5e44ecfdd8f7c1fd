package io.efabench.fabric;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The shm provider names each endpoint's region in /dev/shm after the process ({@code
 * <pid>:<uid>:<endpoint>}) and removes it when the endpoint closes. A killed rank leaves its
 * files behind, and a later process that gets the same pid then fails {@code fi_enable} with
 * EBUSY ("Device or resource busy"). Before this process opens its first endpoint, any file
 * under its own pid is such a leftover: no other live process can hold that pid.
 */
public final class ShmLeftovers {
    private static final AtomicBoolean DONE = new AtomicBoolean();

    /** Where shm regions and call boards live. */
    static final Path DIR = Path.of("/dev/shm");
    /** A call board's name before its pid ({@link CallBoard}). */
    static final String BOARD_PREFIX = "efabench-calls-";

    private ShmLeftovers() {
    }

    /**
     * Once per process, before the first shm endpoint: removes /dev/shm files named after this
     * pid, and again at exit. A trial that fails inside its benchmark method ends its JVM without
     * JMH's teardown, so its endpoints are never closed and their regions (16 MiB each) outlive
     * it; unlinking a name at exit is safe (no native call, and a peer that still maps the region
     * keeps its mapping). A killed process runs no hook: run-jmh.sh sweeps after the ranks end.
     */
    static void removeOwnOnce() {
        if (DONE.compareAndSet(false, true)) {
            long pid = ProcessHandle.current().pid();
            remove(DIR, pid);
            Runtime.getRuntime().addShutdownHook(
                    Thread.ofPlatform().name("efabench-shm-leftovers").unstarted(() -> remove(DIR, pid)));
        }
    }

    /**
     * Files under {@code dir} that an efabench process left behind and whose process is gone:
     * shm regions ({@code <pid>:<uid>:<endpoint>}) and call boards ({@code efabench-calls-<pid>}).
     * Regions of other users' processes are listed too (their uid is in the name): the caller says whose.
     */
    public static List<Path> ofDeadProcesses(Path dir) {
        List<Path> dead = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*:*:*")) {
            for (Path f : files) {
                String n = f.getFileName().toString();
                if (n.matches("\\d{1,18}:\\d+:\\d+") && ProcessHandle.of(Long.parseLong(n.substring(0, n.indexOf(':')))).isEmpty()) {
                    dead.add(f);
                }
            }
        } catch (IOException | SecurityException e) {
            // no /dev/shm, or not readable: nothing to report
        }
        dead.addAll(deadBoards(dir));
        return dead;
    }

    /**
     * After a run: removes this user's files of {@link #ofDeadProcesses} under {@code dir} that are
     * newer than {@code marker} (made during the run; all of them where the marker is missing), as a
     * killed rank leaves them; returns how many. Best effort.
     */
    public static int removeDeadOwnSince(Path dir, Path marker) {
        int removed = 0;
        try {
            Object me = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
            long since = Files.exists(marker) ? Files.getLastModifiedTime(marker).toMillis() : Long.MIN_VALUE;
            for (Path f : ofDeadProcesses(dir)) {
                try {
                    if (Files.isRegularFile(f, java.nio.file.LinkOption.NOFOLLOW_LINKS) && me.equals(Files.getAttribute(f, "unix:uid"))
                            && Files.getLastModifiedTime(f).toMillis() > since && Files.deleteIfExists(f)) {
                        removed++;
                    }
                } catch (IOException | SecurityException e) {
                    // gone meanwhile, or not ours
                }
            }
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            // no unix attributes here: nothing to sweep
        }
        return removed;
    }

    /** Removes the files of {@code pid} under {@code dir}; returns how many. Best effort. */
    static int remove(Path dir, long pid) {
        int removed = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, pid + ":*:*")) {
            for (Path f : files) {
                if (f.getFileName().toString().matches(pid + ":\\d+:\\d+")) {
                    Files.deleteIfExists(f);
                    removed++;
                }
            }
        } catch (IOException | SecurityException e) {
            // not ours to remove, or no /dev/shm: fi_enable reports what is left
        }
        return removed;
    }

    /** The boards under {@code dir} whose process is gone; empty where {@code dir} cannot be read. */
    static java.util.List<Path> deadBoards(Path dir) {
        java.util.List<Path> dead = new java.util.ArrayList<>();
        try (java.nio.file.DirectoryStream<Path> boards = Files.newDirectoryStream(dir, BOARD_PREFIX + "*")) {
            for (Path f : boards) {
                String pid = f.getFileName().toString().substring(BOARD_PREFIX.length());
                if (pid.matches("\\d{1,18}") && ProcessHandle.of(Long.parseLong(pid)).isEmpty()) {
                    dead.add(f);
                }
            }
        } catch (IOException | SecurityException e) {
            // not ours to read, or no /dev/shm
        }
        return dead;
    }
}

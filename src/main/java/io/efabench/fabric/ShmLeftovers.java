package io.efabench.fabric;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The shm provider names each endpoint's region in /dev/shm after the process ({@code
 * <pid>:<uid>:<endpoint>}) and removes it when the endpoint closes. A killed rank leaves its
 * files behind, and a later process that gets the same pid then fails {@code fi_enable} with
 * EBUSY ("Device or resource busy"). Before this process opens its first endpoint, any file
 * under its own pid is such a leftover: no other live process can hold that pid.
 */
final class ShmLeftovers {
    private static final AtomicBoolean DONE = new AtomicBoolean();

    private ShmLeftovers() {
    }

    /** Once per process, before the first shm endpoint: removes /dev/shm files named after this pid. */
    static void removeOwnOnce() {
        if (DONE.compareAndSet(false, true)) {
            remove(Path.of("/dev/shm"), ProcessHandle.current().pid());
        }
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
}

package io.efabench.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ShmLeftoversTest {
    @TempDir
    Path dir;

    @Test
    void removesOnlyTheRegionsNamedAfterThisPid() throws Exception {
        for (String name : new String[] {"4242:0:0", "4242:1000:3", "42421:0:0", "424:0:0", "4242:0:0x", "other"}) {
            Files.createFile(dir.resolve(name));
        }
        assertEquals(2, ShmLeftovers.remove(dir, 4242));
        assertFalse(Files.exists(dir.resolve("4242:0:0")));
        assertFalse(Files.exists(dir.resolve("4242:1000:3")));
        for (String kept : new String[] {"42421:0:0", "424:0:0", "4242:0:0x", "other"}) {
            assertTrue(Files.exists(dir.resolve(kept)), kept);
        }
    }

    @Test
    void afterARunRemovesOnlyDeadRanksRegionsMadeSinceTheMarker() throws Exception {
        long dead = 3_999_999; // above pid_max's default: no such process
        long alive = ProcessHandle.current().pid();
        Path before = Files.createFile(dir.resolve(dead + ":0:1"));
        Files.setLastModifiedTime(before, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() - 60_000));
        Path marker = Files.createFile(dir.resolve("marker"));
        Files.setLastModifiedTime(marker, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() - 30_000));
        Path during = Files.createFile(dir.resolve(dead + ":0:2"));
        Path live = Files.createFile(dir.resolve(alive + ":0:3"));
        assertEquals(1, ShmLeftovers.removeDeadOwnSince(dir, marker));
        assertFalse(Files.exists(during), "a dead rank's region made during the run");
        assertTrue(Files.exists(before), "made before the run: not this run's to remove");
        assertTrue(Files.exists(live), "its process lives");
        assertEquals(1, ShmLeftovers.removeDeadOwnSince(dir, dir.resolve("no-marker")), "no marker: every dead one");
    }
}

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
}

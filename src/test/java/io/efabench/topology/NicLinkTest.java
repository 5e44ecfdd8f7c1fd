package io.efabench.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A NIC's link state for failure lines: a netdev's operstate (tcp), an RDMA port's state (efa, verbs). */
class NicLinkTest {
    @TempDir
    Path root;

    private void file(String path, String text) throws Exception {
        Path p = root.resolve(path);
        Files.createDirectories(p.getParent());
        Files.writeString(p, text + "\n");
    }

    @Test
    void aNetdevSaysUpOrDown() throws Exception {
        file("class/net/rail0/operstate", "up");
        file("class/net/rail1/operstate", "down");
        Sysfs s = new Sysfs(root);
        assertEquals("up", NicLink.state(s, "rail0"));
        assertEquals("down", NicLink.state(s, "rail1"));
        assertTrue(NicLink.up(s, "rail0"));
        assertFalse(NicLink.up(s, "rail1"));
    }

    @Test
    void anEfaDomainIsItsDevicesFirstPort() throws Exception {
        file("class/infiniband/rdmap16s27/ports/1/state", "4: ACTIVE");
        file("class/infiniband/rdmap32s27/ports/1/state", "1: DOWN");
        Sysfs s = new Sysfs(root);
        assertEquals("up", NicLink.state(s, "rdmap16s27-rdm"));
        assertEquals("down", NicLink.state(s, "rdmap32s27-rdm"));
    }

    @Test
    void unknownAndLoopbackSayNothing() throws Exception {
        file("class/net/lo/operstate", "unknown");
        Sysfs s = new Sysfs(root);
        assertNull(NicLink.state(s, "lo"));
        assertNull(NicLink.state(s, "shm"));
        assertTrue(NicLink.up(s, "shm"));
    }
}

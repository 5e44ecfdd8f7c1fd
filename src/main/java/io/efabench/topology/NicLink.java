package io.efabench.topology;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A NIC's link state now, from sysfs, for a failure line: a network interface's {@code
 * class/net/<if>/operstate} (tcp's domain is the interface), else an RDMA device's first port
 * {@code class/infiniband/<dev>/ports/1/state} (efa's {@code rdmap16s27-rdm} is device {@code
 * rdmap16s27}). Read at failure only, never on a hot path.
 */
public final class NicLink {
    private NicLink() {}

    /** "up", "down" (or the kernel's other word for it), or null when sysfs says nothing of the domain (shm). */
    public static String state(Sysfs sysfs, String domainName) {
        Path operstate = sysfs.root().resolve("class/net").resolve(domainName).resolve("operstate");
        String net = read(operstate);
        if (net != null) {
            return net.equals("unknown") ? null : net; // lo, tun: no carrier to speak of
        }
        Path port = sysfs.root().resolve("class/infiniband").resolve(NicCounters.deviceOf(domainName))
                .resolve("ports/1/state");
        String ib = read(port); // "4: ACTIVE", "1: DOWN"
        if (ib == null) {
            return null;
        }
        String word = ib.substring(ib.indexOf(':') + 1).trim().toLowerCase(java.util.Locale.ROOT);
        return word.equals("active") ? "up" : word;
    }

    /** True unless sysfs says the link is not up. */
    public static boolean up(Sysfs sysfs, String domainName) {
        String s = state(sysfs, domainName);
        return s == null || s.equals("up");
    }

    private static String read(Path p) {
        try {
            return Files.isRegularFile(p) ? Files.readString(p).trim() : null;
        } catch (IOException e) {
            return null;
        }
    }
}

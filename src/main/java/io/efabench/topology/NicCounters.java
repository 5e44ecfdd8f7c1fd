package io.efabench.topology;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The byte counters RDMA NICs keep in sysfs, {@code class/infiniband/<device>/ports/<port>/}:
 * EFA's {@code hw_counters/tx_bytes} and {@code hw_counters/rx_bytes}, else the InfiniBand
 * standard {@code counters/port_xmit_data} and {@code port_rcv_data} (in 4-byte words). Read
 * before and after an iteration, they say how many bytes the NICs actually carried, a cross-check
 * of the benchmark's own count ({@code nic_bytes_ratio}): shm taking same-node traffic shows as a
 * ratio near 0, retransmissions as one above 1.
 */
public final class NicCounters {
    private final List<Path> ports;

    private NicCounters(List<Path> ports) {
        this.ports = ports;
    }

    /**
     * The counters of the devices behind the given fabric domain names (efa: {@code rdmap16s27-rdm}
     * is device {@code rdmap16s27}; verbs: {@code mlx5_0}), or empty when sysfs has none of them
     * (tcp, shm, a VM without RDMA devices) or a device has no byte counters.
     */
    public static Optional<NicCounters> of(Sysfs sysfs, List<String> domainNames) {
        Set<String> devices = new LinkedHashSet<>();
        for (String d : domainNames) {
            devices.add(deviceOf(d));
        }
        List<Path> ports = new ArrayList<>();
        for (String dev : devices) {
            Path dir = sysfs.root().resolve("class/infiniband").resolve(dev).resolve("ports");
            if (!Files.isDirectory(dir)) {
                return Optional.empty();
            }
            try (Stream<Path> s = Files.list(dir)) {
                List<Path> mine = s.sorted().filter(p -> bytes(p, true) >= 0).toList();
                if (mine.isEmpty()) {
                    return Optional.empty();
                }
                ports.addAll(mine);
            } catch (IOException e) {
                return Optional.empty();
            }
        }
        return ports.isEmpty() ? Optional.empty() : Optional.of(new NicCounters(ports));
    }

    /** The RDMA device of a fabric domain: efa appends -rdm / -dgrm to the device name. */
    static String deviceOf(String domainName) {
        for (String suffix : List.of("-rdm", "-dgrm", "-xrc")) {
            if (domainName.endsWith(suffix)) {
                return domainName.substring(0, domainName.length() - suffix.length());
            }
        }
        return domainName;
    }

    /** Bytes sent plus bytes received so far, over every port of every device; -1 when a counter cannot be read. */
    public long bytes() {
        long sum = 0;
        for (Path port : ports) {
            long tx = bytes(port, true);
            long rx = bytes(port, false);
            if (tx < 0 || rx < 0) {
                return -1;
            }
            sum += tx + rx;
        }
        return sum;
    }

    /** The ports' counter folders, for provenance. */
    public List<String> describe() {
        return ports.stream().map(Path::toString).toList();
    }

    private static long bytes(Path port, boolean sent) {
        long v = read(port.resolve("hw_counters").resolve(sent ? "tx_bytes" : "rx_bytes"));
        if (v >= 0) {
            return v;
        }
        long words = read(port.resolve("counters").resolve(sent ? "port_xmit_data" : "port_rcv_data"));
        return words >= 0 ? words * 4 : -1;
    }

    private static long read(Path file) {
        try {
            return Long.parseLong(Files.readString(file).trim());
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
    }
}

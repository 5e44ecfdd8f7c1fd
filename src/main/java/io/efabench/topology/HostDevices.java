package io.efabench.topology;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The GPUs and RDMA NICs of this node as sysfs lists them, for the doctor's placement rows: GPUs
 * are PCI devices of vendor NVIDIA (0x10de) and class display/3D (0x03xxxx); RDMA NICs are the
 * devices of {@code class/infiniband} (what efa and verbs enumerate through ibv_get_device_list),
 * by name, as fi_getinfo lists them.
 */
public final class HostDevices {
    private HostDevices() {}

    /** An RDMA NIC: its ibverbs name and where sysfs places it (null when it has no PCI device). */
    public record RdmaNic(String name, PciDevice device) {}

    /** NVIDIA GPUs by PCI address. */
    public static List<PciDevice> gpus(Sysfs sysfs) {
        List<PciDevice> out = new ArrayList<>();
        for (var e : byName(sysfs.root().resolve("bus/pci/devices")).entrySet()) {
            if (!PciAddress.isAddress(e.getKey())) {
                continue;
            }
            String vendor = read(e.getValue().resolve("vendor"));
            String cls = read(e.getValue().resolve("class"));
            if (vendor.equalsIgnoreCase("0x10de") && cls.startsWith("0x03")) {
                sysfs.device(PciAddress.parse(e.getKey())).ifPresent(out::add);
            }
        }
        return out;
    }

    /** RDMA NICs of {@code class/infiniband}, by name. */
    public static List<RdmaNic> rdmaNics(Sysfs sysfs) {
        List<RdmaNic> out = new ArrayList<>();
        for (var e : byName(sysfs.root().resolve("class/infiniband")).entrySet()) {
            out.add(new RdmaNic(e.getKey(), pciOf(sysfs, e.getValue().resolve("device")).orElse(null)));
        }
        return out;
    }

    /** The entries of {@code dir} by name; empty when it is not there. */
    private static TreeMap<String, Path> byName(Path dir) {
        TreeMap<String, Path> sorted = new TreeMap<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            entries.forEach(p -> sorted.put(p.getFileName().toString(), p));
        } catch (IOException e) {
            sorted.clear();
        }
        return sorted;
    }

    private static Optional<PciDevice> pciOf(Sysfs sysfs, Path deviceLink) {
        try {
            String name = deviceLink.toRealPath().getFileName().toString();
            return PciAddress.isAddress(name) ? sysfs.device(PciAddress.parse(name)) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static String read(Path f) {
        try {
            return Files.readString(f).strip();
        } catch (IOException e) {
            return "";
        }
    }
}

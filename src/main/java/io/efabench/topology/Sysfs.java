package io.efabench.topology;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The parts of sysfs that place devices and CPUs: {@code bus/pci/devices/<addr>} (a symlink into
 * {@code devices/pci<domain>:<bus>/...}, whose realpath lists the bridges above the device),
 * {@code numa_node}, and {@code devices/system/node/node<N>/cpulist}. The root is a parameter so
 * tests read fixture trees shaped like p5 machines; {@link #system()} reads {@code /sys}.
 */
public final class Sysfs {
    private final Path root;

    public Sysfs(Path root) {
        this.root = root;
    }

    public static Sysfs system() {
        return new Sysfs(Path.of("/sys"));
    }

    /**
     * {@link #system()}, or the fixture tree of the test hook EFABENCH_TEST_SYSFS_ROOT (NIC byte
     * counters, instance type, the doctor's placement rows; docs/DESIGN.md).
     */
    public static Sysfs fromEnvironment() {
        String root = System.getenv("EFABENCH_TEST_SYSFS_ROOT");
        return root != null ? new Sysfs(Path.of(root)) : system();
    }

    public Path root() {
        return root;
    }

    /**
     * Where sysfs places the device at {@code busId} as CUDA spells it ({@code 00000000:4F:00.0});
     * empty when the text is no PCI address or sysfs has no such device.
     */
    public Optional<PciDevice> device(String busId) {
        try {
            return device(PciAddress.parse(busId));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** Where sysfs places {@code address}; empty when it has no such device (e.g. a VM's virtual NIC). */
    public Optional<PciDevice> device(PciAddress address) {
        Path link = root.resolve("bus/pci/devices").resolve(address.toString());
        if (!Files.isDirectory(link)) {
            return Optional.empty();
        }
        try {
            Path real = link.toRealPath();
            Path devices = root.resolve("devices").toRealPath();
            if (!real.startsWith(devices)) {
                return Optional.empty();
            }
            List<String> path = new ArrayList<>();
            for (Path p : devices.relativize(real)) {
                String c = p.toString();
                if (c.startsWith("pci") && path.isEmpty() || PciAddress.isAddress(c)) {
                    path.add(c);
                }
            }
            return Optional.of(new PciDevice(address, path, readInt(real.resolve("numa_node"), -1)));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** The CPUs of NUMA node {@code node} ({@code cpulist}); empty when the node is not there. */
    public List<Integer> cpusOfNode(int node) {
        Path f = root.resolve("devices/system/node/node" + node + "/cpulist");
        try {
            return Files.exists(f) ? parseCpuList(Files.readString(f)) : List.of();
        } catch (IOException e) {
            return List.of();
        }
    }

    /** The kernel's list format: {@code 0-47,96-143} or {@code 3} or empty. */
    public static List<Integer> parseCpuList(String text) {
        List<Integer> cpus = new ArrayList<>();
        for (String part : text.strip().split(",")) {
            if (part.isEmpty()) {
                continue;
            }
            int dash = part.indexOf('-');
            try {
                int lo = Integer.parseInt(dash < 0 ? part : part.substring(0, dash));
                int hi = dash < 0 ? lo : Integer.parseInt(part.substring(dash + 1));
                if (lo < 0 || hi < lo) {
                    throw new NumberFormatException();
                }
                for (int c = lo; c <= hi; c++) {
                    cpus.add(c);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("\"" + text.strip() + "\" is not a CPU list (e.g. 0-47,96-143)");
            }
        }
        return cpus;
    }

    private static int readInt(Path file, int otherwise) {
        try {
            return Integer.parseInt(Files.readString(file).strip());
        } catch (IOException | NumberFormatException e) {
            return otherwise;
        }
    }
}

package io.efabench.topology;

import java.util.List;

/**
 * A PCI device as sysfs places it: its address, the chain from its host bridge down to it, and
 * its NUMA node.
 *
 * @param address  the device's own address
 * @param path     host bridge first ({@code pci0000:40}), then every bridge's address, then the
 *                 device's: the components of the realpath of {@code /sys/bus/pci/devices/<address>}
 * @param numaNode {@code numa_node}; -1 when the platform does not say (one node, or a VM)
 */
public record PciDevice(PciAddress address, List<String> path, int numaNode) {
    public PciDevice {
        path = List.copyOf(path);
    }

    /**
     * How many upstream components two devices share, their own addresses excluded: 0 for
     * different host bridges, 1 for the same host bridge (root complex) only, 2 and more for a
     * shared root port or PCIe switch. On p5 a GPU and its 4 EFAs share 3 (host bridge, root
     * port, switch upstream port); another GPU's EFAs share at most the host bridge.
     */
    public int sharedDepth(PciDevice other) {
        int limit = Math.min(path.size(), other.path.size()) - 1;
        int n = 0;
        while (n < limit && path.get(n).equals(other.path.get(n))) {
            n++;
        }
        return n;
    }

    /** NCCL's words for {@link #sharedDepth}: PCIe switch, host bridge, or nothing in common. */
    public String relationTo(PciDevice other) {
        int d = sharedDepth(other);
        return d >= 2 ? "pcie-switch" : d == 1 ? "host-bridge" : numaNode >= 0 && numaNode == other.numaNode ? "numa-node" : "system";
    }
}

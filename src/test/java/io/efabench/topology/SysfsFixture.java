package io.efabench.topology;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes a sysfs tree (directories, small files, symlinks) shaped like a p5-class node: 8 GPUs,
 * each behind its own PCIe switch together with {@code nicsPerGpu} EFA NICs; two host bridges per
 * NUMA node, GPUs 0-3 on node 0 and 4-7 on node 1. Bus numbers of GPUs and NICs follow
 * aws-ofi-nccl's topology/p5.48xl-topo.xml (GPU 0 at 4f:00.0, its EFAs at 50..53:00.0, GPU 1 at
 * 60:00.0...); the bridges above them (host bridge, root port, switch ports) are a faithful shape,
 * not copied numbers: that file flattens them into one virtual bridge per GPU.
 */
public final class SysfsFixture {
    static final int[] GPU_BUS = {0x4f, 0x60, 0x70, 0x80, 0x90, 0xa0, 0xb0, 0xc0};

    final Path root;
    final List<PciAddress> gpus = new ArrayList<>();
    /** NICs in fi_getinfo order: {@code ibv_get_device_list} order, which is by name, not by PCIe place. */
    final List<PciAddress> nics = new ArrayList<>();
    /** GPU index of each entry of {@link #nics}. */
    final List<Integer> nicGpu = new ArrayList<>();

    private SysfsFixture(Path root) {
        this.root = root;
    }

    /** p5.48xlarge: 32 EFA NICs, 4 per GPU. */
    public static SysfsFixture p5(Path dir) {
        return write(dir, 4, "p5.48xlarge");
    }

    /** p5en.48xlarge: 16 EFA NICs, 2 per GPU. */
    public static SysfsFixture p5en(Path dir) {
        return write(dir, 2, "p5en.48xlarge");
    }

    public Path root() {
        return root;
    }

    /**
     * Also written: vendor ids (NVIDIA 0x10de for GPUs, Amazon 0x1d0f for EFAs), each EFA under
     * {@code class/infiniband/<name>/device} as the ibverbs device of that name, and the instance
     * type as the DMI product name.
     */
    private static SysfsFixture write(Path root, int nicsPerGpu, String instanceType) {
        SysfsFixture f = new SysfsFixture(root);
        try {
            List<String> names = new ArrayList<>();
            List<PciAddress> byName = new ArrayList<>();
            List<Integer> gpuOf = new ArrayList<>();
            for (int g = 0; g < 8; g++) {
                int node = g / 4;
                String hostBridge = String.format("pci0000:%02x", (g / 2) * 0x20);
                PciAddress rootPort = new PciAddress(0, (g / 2) * 0x20, 1, g % 2);
                PciAddress up = new PciAddress(0, GPU_BUS[g] - 2, 0, 0);
                Path sw = root.resolve("devices").resolve(hostBridge).resolve(rootPort.toString()).resolve(up.toString());
                PciAddress gpu = new PciAddress(0, GPU_BUS[g], 0, 0);
                f.device(sw.resolve(new PciAddress(0, GPU_BUS[g] - 1, 0, 0).toString()), gpu, node, "0x030200", "0x10de");
                f.gpus.add(gpu);
                for (int k = 1; k <= nicsPerGpu; k++) {
                    PciAddress nic = new PciAddress(0, GPU_BUS[g] + k, 0, 0);
                    Path dir = f.device(sw.resolve(new PciAddress(0, GPU_BUS[g] - 1, k, 0).toString()), nic, node,
                            "0x020000", "0x1d0f");
                    names.add("rdmap" + (GPU_BUS[g] + k) + "s0");
                    Path ib = root.resolve("class/infiniband").resolve(names.getLast());
                    Files.createDirectories(ib);
                    Files.createSymbolicLink(ib.resolve("device"), ib.relativize(dir));
                    byName.add(nic);
                    gpuOf.add(g);
                }
            }
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < names.size(); i++) {
                order.add(i);
            }
            order.sort((a, b) -> names.get(a).compareTo(names.get(b)));
            for (int i : order) {
                f.nics.add(byName.get(i));
                f.nicGpu.add(gpuOf.get(i));
            }
            Path dmi = root.resolve("devices/virtual/dmi/id");
            Files.createDirectories(dmi);
            Files.writeString(dmi.resolve("product_name"), instanceType + "\n");
            f.node(0, "0-47,96-143");
            f.node(1, "48-95,144-191");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return f;
    }

    /** The device directory under its bridge, and the bus/pci/devices symlink to it. */
    private Path device(Path bridge, PciAddress address, int node, String pciClass, String vendor) throws IOException {
        Path dir = bridge.resolve(address.toString());
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("numa_node"), node + "\n");
        Files.writeString(dir.resolve("class"), pciClass + "\n");
        Files.writeString(dir.resolve("vendor"), vendor + "\n");
        Path links = root.resolve("bus/pci/devices");
        Files.createDirectories(links);
        Files.createSymbolicLink(links.resolve(address.toString()), links.relativize(dir));
        return dir;
    }

    private void node(int n, String cpulist) throws IOException {
        Path dir = root.resolve("devices/system/node/node" + n);
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("cpulist"), cpulist + "\n");
    }
}

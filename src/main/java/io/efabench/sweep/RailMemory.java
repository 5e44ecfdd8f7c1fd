package io.efabench.sweep;

import java.util.ArrayList;
import java.util.List;

import io.efabench.harness.MemoryKind;
import io.efabench.harness.memory.TrialGpu;
import io.efabench.topology.NicPlacement;
import io.efabench.topology.PciAddress;
import io.efabench.topology.PciDevice;
import io.efabench.topology.Sysfs;

/**
 * Where this node's probes keep their buffers ({@code --memory}): host memory, or each rail's on
 * the GPU nearest that rail's NIC (most shared PCIe bridges, then the NIC's NUMA node;
 * {@link NicPlacement#nearestGpu}), as a training job's traffic on that NIC moves that GPU's
 * memory. Where sysfs places no NIC (tcp on a virtual NIC) rail k takes GPU k modulo the GPUs.
 *
 * @param kind      the memory kind of every probe of this node
 * @param gpuOfRail per rail, the visible GPU ordinal (-1 everywhere with host memory)
 * @param said      one line saying it, for the sweep's header
 */
record RailMemory(MemoryKind kind, int[] gpuOfRail, String said) {
    /** {@code option}: "auto" (device where a GPU is visible), "host" or "device" (refused without a GPU). */
    static RailMemory of(String option, Fleet fleet, int me) {
        int rails = fleet.rails();
        boolean gpus = TrialGpu.present();
        if (option.equals("host") || (option.equals("auto") && !gpus)) {
            int[] none = new int[rails];
            java.util.Arrays.fill(none, -1);
            return new RailMemory(MemoryKind.HOST, none, "host memory" + (option.equals("auto") ? " (no GPU here)" : ""));
        }
        if (!gpus) {
            throw new IllegalArgumentException("--memory device, but " + fleet.hosts().get(me) + " has no GPU visible"
                    + " (CUDA_VISIBLE_DEVICES, the driver): run it on GPU nodes, or --memory host");
        }
        Sysfs sysfs = Sysfs.fromEnvironment();
        List<String> ids = TrialGpu.visiblePciBusIds();
        List<PciDevice> placed = new ArrayList<>();
        for (String id : ids) {
            placed.add(sysfs.device(id).orElse(null));
        }
        int[] gpu = new int[rails];
        StringBuilder b = new StringBuilder("device memory, each rail on the GPU nearest its NIC:");
        for (int k = 0; k < rails; k++) {
            String domain = fleet.domain(me, k);
            PciAddress pci = domain == null ? null : fleet.localPci().get(domain);
            PciDevice nic = pci == null ? null : sysfs.device(pci).orElse(null);
            gpu[k] = NicPlacement.nearestGpu(nic, placed, k);
            PciDevice g = placed.get(gpu[k]);
            b.append(k == 0 ? " " : ", ").append("rail ").append(k).append(" GPU ").append(gpu[k]).append(" (")
                    .append(ids.get(gpu[k])).append(nic == null ? "; the NIC has no PCI place: by rail" : g == null ? ""
                            : "; " + g.relationTo(nic)).append(')');
        }
        return new RailMemory(MemoryKind.DEVICE, gpu, b.toString());
    }
}

package io.efabench.topology;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Which NICs each rank of one node uses, and which NUMA node it runs on.
 *
 * <p>fi_getinfo lists NICs in {@code ibv_get_device_list} order, which is not PCIe order: on a
 * p5 slicing that list by local rank gives ranks NICs behind another GPU's PCIe switch, so every
 * GPU-direct transfer crosses the CPU's root complex. Instead each rank takes the NICs nearest its
 * GPU (most shared upstream bridges: on p5 and p5en the ones under the GPU's own switch); ranks
 * whose nearest sets are the same (ranks sharing a GPU, or GPUs sharing a switch) split that set.
 * Without a GPU, ranks are spread over the NUMA nodes that have NICs, in blocks of local ranks, and
 * split each node's NICs. Without PCI addresses for the NICs (tcp, shm) the old even slice in
 * fi_getinfo order is kept. Every rank of a node computes the same plan from the same inputs.
 */
public final class NicPlacement {
    private NicPlacement() {
    }

    /**
     * One local rank's share.
     *
     * @param nics     indexes into the NIC list, in that list's order
     * @param numaNode the node to bind to; -1 when unknown
     * @param basis    how the NICs were chosen, for provenance (e.g. {@code pcie-switch of GPU 0000:4f:00.0})
     */
    public record Share(List<Integer> nics, int numaNode, String basis) {
        public Share {
            nics = List.copyOf(nics);
        }
    }

    /**
     * The plan for every local rank of a node.
     *
     * @param gpus one entry per local rank in local-rank order: its GPU, or null without one
     * @param nics one entry per NIC in fi_getinfo order: where sysfs places it, or null when unknown
     */
    public static List<Share> plan(List<PciDevice> gpus, List<PciDevice> nics) {
        int local = Math.max(1, gpus.size());
        if (nics.isEmpty()) {
            throw new IllegalArgumentException("the provider reported no NIC");
        }
        if (nics.contains(null)) {
            List<Share> out = new ArrayList<>();
            for (int r = 0; r < local; r++) {
                PciDevice gpu = r < gpus.size() ? gpus.get(r) : null;
                out.add(new Share(byOrder(nics.size(), r, local), gpu != null ? gpu.numaNode() : -1,
                        "fi_getinfo order (no PCI address for every NIC)"));
            }
            return out;
        }
        List<List<Integer>> nearest = new ArrayList<>();
        List<String> basis = new ArrayList<>();
        List<Integer> nodes = new ArrayList<>();
        List<Integer> nicNodes = new ArrayList<>(new TreeSet<>(nics.stream().map(PciDevice::numaNode).filter(n -> n >= 0).toList()));
        for (int r = 0; r < local; r++) {
            PciDevice gpu = r < gpus.size() ? gpus.get(r) : null;
            if (gpu != null) {
                List<Integer> near = nearestTo(gpu, nics);
                nearest.add(near);
                basis.add(gpu.relationTo(nics.get(near.getFirst())) + " of GPU " + gpu.address());
                nodes.add(gpu.numaNode() >= 0 ? gpu.numaNode() : nics.get(near.getFirst()).numaNode());
            } else if (nicNodes.isEmpty()) {
                nearest.add(all(nics.size()));
                basis.add("all NICs (no GPU, no NUMA node in sysfs)");
                nodes.add(-1);
            } else {
                int node = nicNodes.get(r * nicNodes.size() / local); // blocks: ranks 0..3 on the first node of two
                List<Integer> on = new ArrayList<>();
                for (int i = 0; i < nics.size(); i++) {
                    if (nics.get(i).numaNode() == node) {
                        on.add(i);
                    }
                }
                nearest.add(on);
                basis.add("numa-node " + node + " (no GPU)");
                nodes.add(node);
            }
        }
        Map<List<Integer>, List<Integer>> sharers = new LinkedHashMap<>();
        for (int r = 0; r < local; r++) {
            sharers.computeIfAbsent(nearest.get(r), k -> new ArrayList<>()).add(r);
        }
        List<Share> out = new ArrayList<>();
        for (int r = 0; r < local; r++) {
            List<Integer> set = nearest.get(r);
            List<Integer> group = sharers.get(set);
            List<Integer> mine = new ArrayList<>();
            for (int p : byOrder(set.size(), group.indexOf(r), group.size())) {
                mine.add(set.get(p));
            }
            out.add(new Share(mine, nodes.get(r), basis.get(r) + (group.size() > 1 ? ", split " + group.size() + " ways" : "")));
        }
        return out;
    }

    /**
     * The GPU nearest a NIC, the other way round from {@link #plan}: the index in {@code gpus} (one
     * per visible CUDA ordinal; null where sysfs does not place it) sharing the most upstream
     * bridges with {@code nic}, among equals at host-bridge level or less one on the NIC's NUMA
     * node, the first of the rest. Without a place for the NIC (tcp over a virtual NIC) or for any
     * GPU: {@code fallback} modulo the GPUs (the sweep passes the rail, so rails spread over them).
     */
    public static int nearestGpu(PciDevice nic, List<PciDevice> gpus, int fallback) {
        if (gpus.isEmpty()) {
            throw new IllegalArgumentException("no GPU to choose from");
        }
        int best = -1;
        int bestDepth = -1;
        boolean bestSameNode = false;
        for (int i = 0; nic != null && i < gpus.size(); i++) {
            PciDevice g = gpus.get(i);
            if (g == null) {
                continue;
            }
            int d = nic.sharedDepth(g);
            boolean sameNode = nic.numaNode() >= 0 && nic.numaNode() == g.numaNode();
            if (d > bestDepth || (d == bestDepth && d <= 1 && sameNode && !bestSameNode)) {
                best = i;
                bestDepth = d;
                bestSameNode = sameNode;
            }
        }
        return best >= 0 ? best : Math.floorMod(fallback, gpus.size());
    }

    /** NICs sharing the most upstream bridges with {@code gpu}; among equals at host-bridge level or less, its NUMA node's. */
    private static List<Integer> nearestTo(PciDevice gpu, List<PciDevice> nics) {
        int best = -1;
        List<Integer> near = new ArrayList<>();
        for (int i = 0; i < nics.size(); i++) {
            int d = gpu.sharedDepth(nics.get(i));
            if (d > best) {
                best = d;
                near.clear();
            }
            if (d == best) {
                near.add(i);
            }
        }
        if (best <= 1 && gpu.numaNode() >= 0) {
            List<Integer> sameNode = near.stream().filter(i -> nics.get(i).numaNode() == gpu.numaNode()).toList();
            if (!sameNode.isEmpty()) {
                return sameNode;
            }
        }
        return near;
    }

    /**
     * Positions of member {@code k} of {@code members} sharing {@code n} NICs in order: an equal
     * contiguous block (every rank must open as many channels as the others), or one NIC,
     * round-robin, when there are fewer NICs than members.
     */
    static List<Integer> byOrder(int n, int k, int members) {
        if (n < members) {
            return List.of(k % n);
        }
        int per = n / members;
        List<Integer> out = new ArrayList<>();
        for (int p = k * per; p < k * per + per; p++) {
            out.add(p);
        }
        return out;
    }

    private static List<Integer> all(int n) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(i);
        }
        return out;
    }
}

package io.efabench.harness.trial;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.efabench.fabric.NicInfo;
import io.efabench.fabric.NicSelection;
import io.efabench.rank.RankGroup;
import io.efabench.topology.CpuBinding;
import io.efabench.topology.NicPlacement;
import io.efabench.topology.PciDevice;
import io.efabench.topology.Sysfs;

/**
 * Where this rank sits: every rank's host and GPU (one allgather at setup), the NICs this rank
 * takes ({@link NicPlacement} over this node's sysfs), the NUMA node it is bound to, and how
 * many of rank 0's peers share its node. Computed before the channels open and before any
 * payload buffer is allocated, so that binding comes before their first touch.
 */
final class TrialLocality {
    /** Hosts of all ranks, by rank. */
    final List<String> hosts;
    /** This rank's NICs, in fi_getinfo order. */
    final List<NicInfo> nics;
    final NicPlacement.Share share;
    final String gpu;
    /** What binding did, or why it did not happen. */
    final String binding;
    /** Ranks on this rank's host, and the CPUs they may run on together (after binding). */
    final int hostRanks;
    final int hostCpus;

    private TrialLocality(List<String> hosts, List<NicInfo> nics, NicPlacement.Share share, String gpu, String binding,
            int hostRanks, int hostCpus) {
        this.hosts = hosts;
        this.nics = nics;
        this.share = share;
        this.gpu = gpu;
        this.binding = binding;
        this.hostRanks = hostRanks;
        this.hostCpus = hostCpus;
    }

    /**
     * Exchanges host and GPU with every rank, picks this rank's NICs and binds its threads to
     * their NUMA node (EFABENCH_BIND=0 leaves the threads alone).
     */
    static TrialLocality establish(RankGroup group, Duration timeout, List<NicInfo> all, String gpuBusId, Sysfs sysfs) {
        String mine = RankGroup.hostname() + "\n" + (gpuBusId == null ? "" : gpuBusId);
        List<byte[]> every = group.allgather("host and GPU", mine.getBytes(StandardCharsets.UTF_8), timeout);
        List<String> hosts = new ArrayList<>();
        List<String> gpus = new ArrayList<>();
        for (byte[] b : every) {
            String[] parts = new String(b, StandardCharsets.UTF_8).split("\n", -1);
            hosts.add(parts[0]);
            gpus.add(parts.length > 1 ? parts[1] : "");
        }
        // This node's ranks in rank order; every rank of the node computes the same plan.
        List<PciDevice> localGpus = new ArrayList<>();
        int me = -1;
        for (int r = 0; r < hosts.size(); r++) {
            if (hosts.get(r).equals(hosts.get(group.rank()))) {
                if (r == group.rank()) {
                    me = localGpus.size();
                }
                localGpus.add(gpus.get(r).isEmpty() ? null : sysfs.device(gpus.get(r)).orElse(null));
            }
        }
        List<PciDevice> nicDevices = all.stream().map(n -> n.pci() == null ? null : sysfs.device(n.pci()).orElse(null)).toList();
        NicPlacement.Share share = NicPlacement.plan(localGpus, nicDevices).get(me);
        if (NicSelection.named()) {
            // Named NICs are rails: every local rank takes all of them, in the order named.
            share = new NicPlacement.Share(java.util.stream.IntStream.range(0, all.size()).boxed().toList(), share.numaNode(),
                    NicSelection.VARIABLE + " (every local rank takes these NICs in this order: channel k on the k-th)");
        }
        List<NicInfo> nics = share.nics().stream().map(all::get).toList();
        String binding = bind(sysfs, share.numaNode());
        // After binding, which CPUs each rank may run on: ranks pinned to CPUs of their own (taskset,
        // srun --cpu-bind) do not compete even where each process sees a single CPU.
        List<String> cpusOf = group.allgather("CPUs after binding",
                compact(CpuBinding.currentCpus()).getBytes(StandardCharsets.UTF_8), timeout).stream()
                .map(b -> new String(b, StandardCharsets.UTF_8)).toList();
        int[] ranksCpus = hostRanksAndCpus(hosts, cpusOf, group.rank());
        return new TrialLocality(hosts, nics, share, gpuBusId, binding, ranksCpus[0], ranksCpus[1]);
    }

    /** {@code [ranks, CPUs]} of {@code rank}'s host: its ranks, and the union of their CPU lists. */
    static int[] hostRanksAndCpus(List<String> hosts, List<String> cpuLists, int rank) {
        BitSet cpus = new BitSet();
        int ranks = 0;
        for (int r = 0; r < hosts.size(); r++) {
            if (hosts.get(r).equals(hosts.get(rank))) {
                ranks++;
                Sysfs.parseCpuList(cpuLists.get(r)).forEach(cpus::set);
            }
        }
        return new int[] {ranks, cpus.cardinality()};
    }

    /** More ranks on this host than CPUs they may run on together: busy-polling ranks then take turns. */
    boolean oversubscribed() {
        return hostRanks > hostCpus;
    }

    private static String bind(Sysfs sysfs, int node) {
        if (node < 0) {
            return "not bound: NUMA node unknown";
        }
        if ("0".equals(System.getenv("EFABENCH_BIND"))) {
            return "not bound: EFABENCH_BIND=0";
        }
        List<Integer> cpus = sysfs.cpusOfNode(node);
        if (cpus.isEmpty()) {
            return "not bound: node " + node + " lists no CPUs";
        }
        try {
            return "node " + node + " CPUs " + compact(cpus) + ": " + CpuBinding.bindProcess(cpus).describe();
        } catch (RuntimeException e) {
            return "not bound: " + e.getMessage();
        }
    }

    /** Same-node and cross-node peers of rank 0 (its targets): {@code [same, cross]}. */
    int[] rankZeroPairs() {
        int same = 0;
        for (int r = 1; r < hosts.size(); r++) {
            same += hosts.get(r).equals(hosts.get(0)) ? 1 : 0;
        }
        return new int[] {same, hosts.size() - 1 - same};
    }

    /** rank -> GPU -> NICs -> NUMA node, for this rank's provenance. */
    Map<String, Object> provenance(int rank) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("rank", rank);
        m.put("host", hosts.get(rank));
        m.put("gpu", gpu == null ? "none" : gpu);
        m.put("nics", nics.stream().map(n -> n.nicName() + (n.pci() != null ? " " + n.pci() : "")).toList());
        m.put("nic_choice", share.basis());
        m.put("numa_node", share.numaNode());
        m.put("binding", binding);
        m.put("host_ranks_cpus", hostRanks + " ranks on " + hostCpus + " CPUs");
        return m;
    }

    /** CPUs in the kernel's list format, the inverse of {@link Sysfs#parseCpuList}: 0-3,8. */
    static String compact(List<Integer> cpus) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < cpus.size(); i++) {
            int lo = cpus.get(i);
            while (i + 1 < cpus.size() && cpus.get(i + 1) == cpus.get(i) + 1) {
                i++;
            }
            b.append(b.isEmpty() ? "" : ",").append(lo).append(cpus.get(i) != lo ? "-" + cpus.get(i) : "");
        }
        return b.toString();
    }
}

package io.efabench.harness.trial;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.efabench.fabric.Discovery;
import io.efabench.fabric.NicInfo;
import io.efabench.fabric.NicPath;
import io.efabench.provenance.JavaFootprint;
import io.efabench.provenance.JvmLayout;
import io.efabench.provenance.ProvenanceFragments;
import io.efabench.harness.MemoryKind;
import io.efabench.harness.memory.TrialBuffer;

/**
 * What a trial records of itself for the results (a provenance fragment, named after the trial by
 * {@code TrialKey.tag}), once its rounds are built.
 */
final class TrialProvenance {
    private TrialProvenance() {}

    /**
     * Rank 0 records the fabric facts of the run; every rank with a GPU records its GPU (which
     * one, shared or not), and device buffers say how they were registered.
     */
    static void record(FabricTrial t, Rounds rounds) {
        // Every buffer of a trial is registered alike (one provider), so the first one speaks for all.
        String registration = t.buffers.isEmpty() ? "none" : t.buffers.get(0).registration().name().toLowerCase(java.util.Locale.ROOT);
        String refusal = t.buffers.isEmpty() ? null : t.buffers.get(0).dmaBufRefusal();
        if (t.gpu() != null) {
            Map<String, Object> g = t.gpu().provenance();
            g.put("rank", t.rank);
            g.put("memory", t.memory.name().toLowerCase(java.util.Locale.ROOT));
            if (t.memory == MemoryKind.DEVICE) {
                g.put("registration", registration);
                if (refusal != null) {
                    g.put("dmabuf_refused", refusal);
                }
            }
            ProvenanceFragments.record("cuda-rank" + t.rank + "-" + t.trialTag, g);
        }
        ProvenanceFragments.record("locality-rank" + t.rank + "-" + t.trialTag, t.locality.provenance(t.rank));
        Map<String, Object> footprint = new LinkedHashMap<>();
        footprint.put("benchmark", t.config);
        footprint.put("slots", rounds.slots());
        footprint.put("rounds_in_flight", rounds.roundsInFlight());
        footprint.put("payload_bytes", t.buffers.stream().mapToLong(TrialBuffer::byteSize).sum());
        footprint.put("registration", t.buffers.isEmpty() ? "none" : t.buffers.get(0).describeRegistration());
        footprint.putAll(rounds.provenance());
        // The Java side beside the native bytes (README "Footprint"), and the layout it was sized in.
        footprint.putAll(JavaFootprint.factsOf(t, rounds));
        footprint.put(JvmLayout.KEY, JvmLayout.facts());
        ProvenanceFragments.record("footprint-rank" + t.rank + "-" + t.trialTag, footprint);
        if (t.rank != 0) {
            return;
        }
        int[] pairs = t.locality.rankZeroPairs();
        String via = !t.discovery().pathApplies() ? t.discovery().provider() + " (no NIC path choice)"
                : t.path == NicPath.NIC ? "the NIC (FI_REMOTE_COMM only)" : t.discovery().provider() + "'s own choice (efa: shm)";
        System.out.println("# efabench: path=" + t.path.label() + ": rank 0's " + (pairs[0] + pairs[1]) + " peer(s): "
                + pairs[0] + " on its node, through " + via + "; " + pairs[1] + " on other nodes");
        if (t.memory == MemoryKind.DEVICE) {
            System.out.println("# efabench: " + t.config + ": device buffers on " + t.gpu().device.name() + " " + t.gpu().device.pciBusId()
                    + (t.gpu().shared ? " (shared by the ranks of this node)" : "") + ", registered through "
                    + registration + (refusal == null ? "" : " (DMA-BUF refused: " + refusal + ")"));
            if (t.gpu().shared && !io.efabench.cuda.Mps.running()) {
                System.out.println("# efabench: WARNING: the ranks of this node share " + t.gpu().device.name()
                        + " without MPS: their kernels and copies time-slice it (a proxy round takes ~2.4 ms whatever"
                        + " its size); start `nvidia-cuda-mps-control -d` before the run (README, \"Ranks sharing a GPU\")");
            }
        }
        Map<String, Object> facts = new LinkedHashMap<>();
        facts.put("provider", t.discovery().provider());
        facts.put("libfabric_header", Discovery.headerVersion());
        facts.put("libfabric_runtime", t.discovery().runtimeVersion());
        facts.put("libfabric_api", Discovery.apiVersion());
        facts.put("control_progress", t.discovery().controlProgress());
        facts.put("memory", t.memory.name().toLowerCase(java.util.Locale.ROOT));
        if (t.memory == MemoryKind.DEVICE) {
            facts.put("registration", registration);
        }
        List<Map<String, Object>> nics = new ArrayList<>();
        java.util.Set<String> unverifiedLinks = new java.util.LinkedHashSet<>();
        for (NicInfo nic : t.discovery().nics()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", nic.nicName());
            m.put("domain", nic.domainName());
            m.put("link_gbps", nic.linkSpeedBps() / 1e9);
            String unverified = TrialChecks.unverifiedLink(nic, t.instance);
            if (unverified != null) {
                m.put("link", unverified);
                unverifiedLinks.add(nic.domainName() + ": " + unverified);
            }
            if (nic.pci() != null) {
                m.put("pci", nic.pci().toString());
            }
            nics.add(m);
        }
        facts.put("nics", nics);
        facts.put("instance_type", t.instance.known() ? t.instance.name() : "unknown");
        if (!unverifiedLinks.isEmpty() && TrialChecks.linkOverrideGbps() == 0 && t.discovery().provider().equals("efa")) {
            System.out.println("# efabench: link speed " + unverifiedLinks.iterator().next()
                    + (unverifiedLinks.size() > 1 ? " (and " + (unverifiedLinks.size() - 1) + " more NICs)" : "")
                    + "; busbw_pct is left out");
        }
        endpointFacts(t, facts);
        facts.put("channels", t.channelCount());
        facts.put("path", t.path.label());
        facts.put("path_applies", t.discovery().pathApplies());
        facts.put("pairs_same_node", pairs[0]);
        facts.put("pairs_cross_node", pairs[1]);
        facts.put("nic_counters", t.nicCounters != null ? t.nicCounters.describe()
                : "none (tcp/shm, or no RDMA byte counters in sysfs for these NICs): no nic_bytes_ratio");
        facts.put("ranks", t.size);
        facts.put("waits_yield", t.yieldsWhenIdle());
        facts.put("writes_in_flight", t.paced != null ? t.paced : "as planned");
        // How setup and this rank's memory grow with the rank count (README "Rank counts").
        facts.put("rendezvous_ms", t.joinedNanos / 1_000_000);
        facts.put("setup_ms", (System.nanoTime() - t.openedAt) / 1_000_000);
        facts.put("buffer_bytes", t.buffers.stream().mapToLong(TrialBuffer::byteSize).sum());
        facts.put("rss_mib", residentMib());
        facts.put("rank_source", t.env.source());
        ProvenanceFragments.record("fabric-" + t.trialTag, facts);
    }

    /**
     * What rank 0's endpoints answered at open (efa-desk-check.md items 2-5), of channel 0 where
     * all agree, else per channel; one line on stdout when efa emulates RDMA writes with messages.
     */
    private static void endpointFacts(FabricTrial t, Map<String, Object> facts) {
        facts.put("event_queue", same(t, c -> c.eventQueueState()));
        facts.put("inject_rma_bytes", same(t, c -> c.injectRmaSize()));
        facts.put("max_write_bytes", same(t, c -> c.maxWrite()));
        if (t.memory == MemoryKind.DEVICE) {
            facts.put("cuda_api_permitted", same(t, c -> c.cudaApiPermitted()));
        }
        if (t.discovery().provider().equals("efa")) {
            Object emulated = same(t, c -> c.writesEmulated() == null ? "unknown (FI_OPT_EFA_EMULATED_WRITE not answered)"
                    : c.writesEmulated() ? "emulated" : "rdma");
            facts.put("rma_writes", emulated);
            if (!"rdma".equals(emulated)) {
                System.out.println("# efabench: efa " + (emulated.equals("emulated") ? "emulates RDMA writes with messages"
                        : "does not say whether it emulates RDMA writes") + " on this node (FI_OPT_EFA_EMULATED_WRITE: "
                        + emulated + "): Write, AllToAll and Proxy figures measure that, not device RDMA");
            }
        }
    }

    /** This process's resident memory now (VmRSS of /proc/self/status), MiB; -1 where unknown. */
    private static long residentMib() {
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024;
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            // not Linux: unknown
        }
        return -1;
    }

    /** The value all channels share, or a list of each channel's. */
    private static Object same(FabricTrial t, java.util.function.Function<io.efabench.fabric.Channel, Object> f) {
        List<Object> values = new ArrayList<>();
        for (io.efabench.fabric.Channel c : t.channels()) {
            values.add(f.apply(c));
        }
        return values.stream().distinct().count() == 1 ? values.get(0) : values;
    }
}

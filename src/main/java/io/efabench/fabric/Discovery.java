package io.efabench.fabric;

import io.efabench.fabric.generated.LibFabric;
import io.efabench.fabric.generated.fi_domain_attr;
import io.efabench.fabric.generated.fi_info;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * fi_getinfo for what efabench needs: RDM endpoints with FI_MSG|FI_RMA and 4 bytes of remote CQ
 * data. Owns the returned fi_info list until {@link #close()}; channels opened from it stay valid
 * after that.
 */
public final class Discovery implements AutoCloseable {
    /** Bytes of remote CQ data (immediate) asked for: what EFA carries ({@link DiscoveryHints}). */
    public static final int CQ_DATA_SIZE = DiscoveryHints.CQ_DATA_SIZE;

    private final String provider;
    private final NicPath path;
    private final boolean pathApplies;
    private final List<NicInfo> nics;
    private final List<MemorySegment> infos; // fi_info entry per NIC, same order as nics
    private final String controlProgress;
    private MemorySegment head;              // owned list, NULL once closed

    private Discovery(MemorySegment head, List<NicInfo> nics, List<MemorySegment> infos, NicPath path, boolean pathApplies) {
        this.head = head;
        this.path = path;
        this.pathApplies = pathApplies;
        this.nics = List.copyOf(nics);
        this.infos = List.copyOf(infos);
        this.provider = nics.getFirst().provider();
        this.controlProgress = controlProgressOf(infos.getFirst());
    }

    /** Discovery with the provider from {@code FI_PROVIDER}, else {@code efa}, else a one-line error. */
    public static Discovery discover(boolean hmem) {
        return discover(hmem, null, NicPath.fromEnvironment());
    }

    /** As {@link #discover(boolean)} with the path given ({@link NicPath}), not read from {@code EFABENCH_PATH}. */
    public static Discovery discover(boolean hmem, NicPath path) {
        return discover(hmem, null, path);
    }

    /**
     * As {@link #discover(boolean)}, but a non-null {@code providerOverride} is put into
     * {@code hints->fabric_attr->prov_name} (for tests that pick tcp or shm in-process).
     */
    public static Discovery discover(boolean hmem, String providerOverride) {
        return discover(hmem, providerOverride, NicPath.fromEnvironment());
    }

    /**
     * The full form: {@code path} decides the hints' FI_LOCAL_COMM/FI_REMOTE_COMM for NIC
     * providers ({@link NicPath#caps}); the provider is {@code providerOverride}, else
     * {@code FI_PROVIDER}, else efa.
     */
    public static Discovery discover(boolean hmem, String providerOverride, NicPath path) {
        return discover(hmem, providerOverride, path, NicSelection.fromEnvironment());
    }

    /**
     * As {@link #discover(boolean, NicPath)} with the NICs named here, in channel order, instead of
     * EFABENCH_NICS's; an empty list: every NIC the provider lists (the sweep asks so to learn which
     * of a node's rails are there, and opens each rail's NIC by name).
     */
    public static Discovery discover(boolean hmem, NicPath path, List<String> named) {
        return discover(hmem, null, path, named);
    }

    private static Discovery discover(boolean hmem, String providerOverride, NicPath path, List<String> nics) {
        Fi.requireLibrary();
        String envProvider = System.getenv("FI_PROVIDER");
        if (providerOverride != null || (envProvider != null && !envProvider.isBlank())) {
            String named = providerOverride != null ? providerOverride : envProvider;
            MemorySegment list = DiscoveryHints.getinfo(hmem, providerOverride, path.caps(named), providerOverride != null
                    ? "provider '" + providerOverride + "'" : "FI_PROVIDER=" + envProvider,
                    DiscoveryHints.asksControlUnified(named));
            return build(list, path, nics);
        }
        Set<String> found = providers(hmem);
        if (!found.contains("efa")) {
            throw new FabricException("no EFA provider found; set FI_PROVIDER to one of: "
                    + String.join(", ", found) + " (providers offering " + DiscoveryHints.asked(hmem) + " here)");
        }
        return build(DiscoveryHints.getinfo(hmem, "efa", path.caps("efa"), "provider 'efa'",
                DiscoveryHints.asksControlUnified("efa")), path, nics);
    }

    /**
     * The providers that offer what a run asks for ({@link #asked}), as fi_getinfo lists them
     * (utility providers dropped: "tcp" for "tcp;ofi_rxm"); fails with one line when none does.
     */
    public static Set<String> providers(boolean hmem) {
        Fi.requireLibrary();
        // Listing what is there: no path bits, or shm (local only) would be missing from the list.
        MemorySegment any = DiscoveryHints.getinfo(hmem, null, 0, "FI_PROVIDER unset", false);
        Set<String> found = new LinkedHashSet<>();
        for (MemorySegment e = any; e.address() != 0; e = FiInfoEntry.next(e)) {
            found.add(FiInfoEntry.providerName(e).split(";")[0]);
        }
        LibFabric.fi_freeinfo(any);
        return found;
    }

    /** Null when libfabric.so.1 loads; else the one line saying it does not and what to do. */
    public static String libraryError() {
        try {
            Fi.requireLibrary();
            return null;
        } catch (FabricException e) {
            return e.getMessage();
        }
    }

    private static Discovery build(MemorySegment list, NicPath path, List<String> named) {
        try {
            return build0(list, path, named);
        } catch (RuntimeException e) {
            LibFabric.fi_freeinfo(list);
            throw e;
        }
    }

    private static Discovery build0(MemorySegment list, NicPath path, List<String> named) {
        String prov = FiInfoEntry.providerName(list);
        List<MemorySegment> entries = new ArrayList<>();
        for (MemorySegment e = list; e.address() != 0; e = FiInfoEntry.next(e)) {
            if (FiInfoEntry.providerName(e).equals(prov)) {
                entries.add(e);
            }
        }
        List<MemorySegment> offered = entries;
        entries = chooseFabric(entries.stream().map(FiInfoEntry::fabricName).toList(), prov,
                System.getenv("EFABENCH_FABRIC")).stream().map(offered::get).toList();
        boolean applies = path.caps(prov) != 0;
        if (applies) {
            requireNoLocalComm(entries, prov);
        }
        // EFABENCH_NICS (or the caller) names the NICs, in channel order; else the local launcher
        // (every rank on this host) keeps tcp on the loopback interface.
        if (!named.isEmpty()) {
            List<MemorySegment> all = entries;
            entries = NicSelection.choose(all.stream().map(FiInfoEntry::domainName).toList(), named, prov).stream()
                    .map(all::get).toList();
        } else if ("1".equals(System.getenv("EFABENCH_LOOPBACK"))) {
            List<MemorySegment> loop = entries.stream().filter(FiInfoEntry::sourceIsLoopback).toList();
            if (!loop.isEmpty()) {
                entries = loop;
            }
        }
        List<NicInfo> nics = new ArrayList<>();
        List<MemorySegment> infos = new ArrayList<>();
        Set<String> domains = new LinkedHashSet<>();
        // A domain's entry is its first IPv4 one where it has one: tcp lists each NIC again per IPv6
        // address, and a link-local one (fe80::, on every NIC of a host with IPv6 on) needs a scope
        // its peers cannot know.
        Map<String, MemorySegment> ipv4 = new HashMap<>();
        for (MemorySegment e : entries) {
            if (FiInfoEntry.sourceIpv4(e) != null) {
                ipv4.putIfAbsent(FiInfoEntry.domainName(e), e);
            }
        }
        for (MemorySegment e : entries) {
            String domain = FiInfoEntry.domainName(e);
            if (domains.add(domain)) {
                MemorySegment chosen = ipv4.getOrDefault(domain, e);
                nics.add(FiInfoEntry.nicInfo(nics.size(), chosen, domain, FiInfoEntry.sourceIpv4(chosen)));
                infos.add(chosen);
            }
        }
        return new Discovery(list, nics, infos, path, applies);
    }

    /**
     * path=nic on efa: the answer must have dropped FI_LOCAL_COMM (efa does since 1.18, when the
     * hints ask for FI_REMOTE_COMM alone), or its endpoints would still open shm for same-node
     * peers. FI_EFA_ENABLE_SHM_TRANSFER=0 turns shm off whatever the caps say.
     */
    private static void requireNoLocalComm(List<MemorySegment> entries, String prov) {
        if (!prov.equals("efa") || "0".equals(System.getenv("FI_EFA_ENABLE_SHM_TRANSFER"))) {
            return;
        }
        for (MemorySegment e : entries) {
            if ((fi_info.caps(e) & Fi.LOCAL_COMM) != 0) {
                throw new FabricException("path=nic: efa (libfabric " + runtimeVersion() + ") kept FI_LOCAL_COMM though"
                        + " asked for FI_REMOTE_COMM only, so same-node peers would go through shm; set"
                        + " FI_EFA_ENABLE_SHM_TRANSFER=0 or use path=auto");
            }
        }
    }

    /**
     * Positions of the entries to keep, given each entry's fabric name. EFABENCH_FABRIC
     * ({@code requested}) keeps the entries of that fabric. Without it "efa-direct" (libfabric
     * 2.x: the same NICs without the EFA protocol layer, so two-sided messages stop at the device
     * MTU) is never taken: where it is all the provider offers, that is a one-line error, not a
     * silent fallback. libfabric's FI_PROVIDER matches provider names only ("efa" for both
     * fabrics), so EFABENCH_FABRIC=efa-direct is the explicit way to measure it.
     */
    static List<Integer> chooseFabric(List<String> fabrics, String provider, String requested) {
        List<Integer> keep = new ArrayList<>();
        if (requested != null && !requested.isBlank()) {
            for (int i = 0; i < fabrics.size(); i++) {
                if (fabrics.get(i).equals(requested)) {
                    keep.add(i);
                }
            }
            if (keep.isEmpty()) {
                throw new FabricException("EFABENCH_FABRIC=" + requested + ": no such fabric; "
                        + provider + " offers " + fabrics.stream().distinct().toList());
            }
            return keep;
        }
        for (int i = 0; i < fabrics.size(); i++) {
            if (!fabrics.get(i).equals(EFA_DIRECT)) {
                keep.add(i);
            }
        }
        if (keep.isEmpty()) {
            throw new FabricException(provider + " offers only the " + EFA_DIRECT + " fabric here for " + "FI_EP_RDM with"
                    + " FI_MSG|FI_RMA (no EFA protocol layer: two-sided messages stop at the device MTU); set"
                    + " EFABENCH_FABRIC=" + EFA_DIRECT + " to measure it anyway");
        }
        return keep;
    }

    static final String EFA_DIRECT = "efa-direct";

    /** Provider of every NIC in this discovery, as libfabric names it (e.g. {@code tcp;ofi_rxm}). */
    public String provider() {
        return provider;
    }

    /**
     * The control progress model the provider granted ({@code fi_domain_attr.control_progress}):
     * "control-unified" where efabench asked for it and got it ({@link DiscoveryHints#CONTROL_UNIFIED_PROVIDERS}),
     * else "auto" or "manual", the provider's default. For provenance: it moves small-message figures.
     */
    public String controlProgress() {
        return controlProgress;
    }

    private static String controlProgressOf(MemorySegment entry) {
        int p = fi_domain_attr.control_progress(FiInfoEntry.domainAttr(entry));
        return p == Fi.PROGRESS_CONTROL_UNIFIED ? "control-unified" : p == LibFabric.FI_PROGRESS_AUTO() ? "auto"
                : p == LibFabric.FI_PROGRESS_MANUAL() ? "manual" : "unspecified (" + p + ")";
    }

    /** The path asked for, and whether it changed the hints (a NIC provider: efa, verbs). */
    public NicPath path() {
        return path;
    }

    /** True when {@link #path()} is NIC and the provider was asked for FI_REMOTE_COMM alone. */
    public boolean pathApplies() {
        return pathApplies;
    }

    /** One entry per distinct domain, in fi_getinfo order. */
    public List<NicInfo> nics() {
        return Collections.unmodifiableList(nics);
    }

    /** Version of the libfabric library loaded at run time, e.g. {@code 1.17}. */
    public static String runtimeVersion() {
        Fi.requireLibrary();
        return Fi.versionText(Fi.runtimeVersion());
    }

    /** Version of the headers the bindings were generated from, e.g. {@code 2.6}. */
    public static String headerVersion() {
        return Fi.versionText(Fi.HEADER_VERSION);
    }

    /**
     * The API version this process requests from libfabric (fi_getinfo, fi_fabric):
     * min({@link #headerVersion()}, {@link #runtimeVersion()}), e.g. {@code 1.17} with Debian's
     * library under 2.6 bindings. Features of a newer API are refused with a {@link FabricException}.
     */
    public static String apiVersion() {
        return Fi.versionText(Fi.apiVersion());
    }

    /** mr_mode, mode and caps of {@code nic} in libfabric's own names, for logs and provenance. */
    public static String describe(NicInfo nic) {
        return nic.provider() + " " + nic.domainName() + " (" + nic.fabricName() + ", nic " + nic.nicName()
                + (nic.pci() != null ? ", pci " + nic.pci() : "")
                + ", link " + (nic.plausibleLinkGbps() == 0 ? "unknown" + (nic.linkSpeedBps() != 0 ? " (reported "
                        + nic.linkSpeedBps() + " bit/s)" : "") : nic.linkGbps() + " Gbps")
                + ") mr_mode " + Fi.tostr(nic.mrMode(), LibFabric.FI_TYPE_MR_MODE())
                + " mode " + Fi.tostr(nic.mode(), LibFabric.FI_TYPE_MODE())
                + " cq_data_size " + nic.cqDataSize()
                + " max_msg_size " + nic.maxMsgSize() + " inject_size " + nic.injectSize()
                + " caps " + Fi.tostr(nic.caps(), LibFabric.FI_TYPE_CAPS());
    }

    /** The fi_info entry behind {@code nic}; valid until {@link #close()}. */
    MemorySegment info(NicInfo nic) {
        if (head.address() == 0) {
            throw new IllegalStateException("discovery is closed");
        }
        if (nic.index() < 0 || nic.index() >= infos.size() || !nics.get(nic.index()).equals(nic)) {
            throw new IllegalArgumentException("NIC " + nic.domainName() + " is not from this discovery");
        }
        return infos.get(nic.index());
    }

    @Override
    public void close() {
        if (head.address() != 0) {
            LibFabric.fi_freeinfo(head);
            head = MemorySegment.NULL;
        }
    }
}

package io.efabench.fabric;

import io.efabench.fabric.generated.LibFabric;
import io.efabench.fabric.generated.fi_bus_attr;
import io.efabench.fabric.generated.fi_pci_attr;
import io.efabench.fabric.generated.fi_device_attr;
import io.efabench.fabric.generated.fi_domain_attr;
import io.efabench.fabric.generated.fi_ep_attr;
import io.efabench.fabric.generated.fi_fabric_attr;
import io.efabench.fabric.generated.fi_info;
import io.efabench.fabric.generated.fi_link_attr;
import io.efabench.fabric.generated.fi_tx_attr;
import io.efabench.fabric.generated.fid_nic;
import io.efabench.topology.PciAddress;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * fi_getinfo for what efabench needs: RDM endpoints with FI_MSG|FI_RMA and 4 bytes of remote CQ
 * data. Owns the returned fi_info list until {@link #close()}; channels opened from it stay valid
 * after that.
 */
public final class Discovery implements AutoCloseable {
    /** Bytes of remote CQ data (immediate) asked for: what EFA carries. */
    public static final int CQ_DATA_SIZE = 4;

    private final String provider;
    private final NicPath path;
    private final boolean pathApplies;
    private final List<NicInfo> nics;
    private final List<MemorySegment> infos; // fi_info entry per NIC, same order as nics
    private MemorySegment head;              // owned list, NULL once closed

    private Discovery(MemorySegment head, List<NicInfo> nics, List<MemorySegment> infos, NicPath path, boolean pathApplies) {
        this.head = head;
        this.path = path;
        this.pathApplies = pathApplies;
        this.nics = List.copyOf(nics);
        this.infos = List.copyOf(infos);
        this.provider = nics.getFirst().provider();
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
        Fi.requireLibrary();
        String envProvider = System.getenv("FI_PROVIDER");
        if (providerOverride != null || (envProvider != null && !envProvider.isBlank())) {
            String named = providerOverride != null ? providerOverride : envProvider;
            MemorySegment list = getinfo(hmem, providerOverride, path.caps(named), providerOverride != null
                    ? "provider '" + providerOverride + "'" : "FI_PROVIDER=" + envProvider);
            return build(list, path);
        }
        Set<String> found = providers(hmem);
        if (!found.contains("efa")) {
            throw new FabricException("no EFA provider found; set FI_PROVIDER to one of: "
                    + String.join(", ", found) + " (providers offering " + asked(hmem) + " here)");
        }
        return build(getinfo(hmem, "efa", path.caps("efa"), "provider 'efa'"), path);
    }

    /**
     * The providers that offer what a run asks for ({@link #asked}), as fi_getinfo lists them
     * (utility providers dropped: "tcp" for "tcp;ofi_rxm"); fails with one line when none does.
     */
    public static Set<String> providers(boolean hmem) {
        Fi.requireLibrary();
        // Listing what is there: no path bits, or shm (local only) would be missing from the list.
        MemorySegment any = getinfo(hmem, null, 0, "FI_PROVIDER unset");
        Set<String> found = new LinkedHashSet<>();
        for (MemorySegment e = any; e.address() != 0; e = next(e)) {
            found.add(providerName(e).split(";")[0]);
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

    private static String asked(boolean hmem) {
        return "FI_EP_RDM with FI_MSG|FI_RMA" + (hmem ? "|FI_HMEM" : "")
                + " and " + CQ_DATA_SIZE + " bytes of remote CQ data";
    }

    /** fi_getinfo with our hints; returns the head of a non-empty list or throws. */
    private static MemorySegment getinfo(boolean hmem, String provName, long pathCaps, String selection) {
        MemorySegment hints = hints(hmem, provName, pathCaps);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            int rc = LibFabric.fi_getinfo(Fi.apiVersion(), MemorySegment.NULL, MemorySegment.NULL, 0L, hints, out);
            if (rc == -LibFabric.FI_ENODATA()) {
                throw new FabricException(selection + ": no provider offers " + asked(hmem)
                        + (pathCaps != 0 ? " with FI_REMOTE_COMM only (path=nic)" : "")
                        + " here (fi_getinfo: " + Fi.strerror(rc) + ")", rc);
            }
            Fi.check("fi_getinfo (" + selection + ")", rc);
            return out.get(ValueLayout.ADDRESS, 0).reinterpret(fi_info.sizeof());
        } finally {
            LibFabric.fi_freeinfo(hints);
        }
    }

    /**
     * The hints efabench passes to fi_getinfo; the caller frees them with fi_freeinfo.
     * {@code pathCaps} is {@link NicPath#caps}: FI_REMOTE_COMM alone tells efa not to open its
     * shm peer provider (efa_shm.c) and to drop FI_LOCAL_COMM from what it returns.
     */
    static MemorySegment hints(boolean hmem, String provName, long pathCaps) {
        MemorySegment hints = LibFabric.fi_dupinfo(MemorySegment.NULL); // fi_allocinfo()
        if (hints.address() == 0) {
            throw new FabricException("fi_allocinfo failed: out of memory");
        }
        hints = hints.reinterpret(fi_info.sizeof());
        fi_info.caps(hints, Fi.MSG | Fi.RMA | (hmem ? Fi.HMEM : 0) | pathCaps);
        fi_info.mode(hints, Fi.CONTEXT | Fi.CONTEXT2 | Fi.RX_CQ_DATA);
        MemorySegment ep = fi_info.ep_attr(hints).reinterpret(fi_ep_attr.sizeof());
        fi_ep_attr.type(ep, LibFabric.FI_EP_RDM());
        MemorySegment dom = fi_info.domain_attr(hints).reinterpret(fi_domain_attr.sizeof());
        // FI_MR_RAW is not offered: no provider we target needs keys wider than 64 bits.
        fi_domain_attr.mr_mode(dom, Fi.MR_LOCAL | Fi.MR_VIRT_ADDR | Fi.MR_ALLOCATED
                | Fi.MR_PROV_KEY | Fi.MR_ENDPOINT | (hmem ? Fi.MR_HMEM : 0));
        fi_domain_attr.cq_data_size(dom, CQ_DATA_SIZE);
        fi_domain_attr.threading(dom, LibFabric.FI_THREAD_DOMAIN());
        if (provName != null) {
            MemorySegment fab = fi_info.fabric_attr(hints).reinterpret(fi_fabric_attr.sizeof());
            fi_fabric_attr.prov_name(fab, Fi.strdup(provName)); // freed by fi_freeinfo
        }
        return hints;
    }

    private static Discovery build(MemorySegment list, NicPath path) {
        try {
            return build0(list, path);
        } catch (RuntimeException e) {
            LibFabric.fi_freeinfo(list);
            throw e;
        }
    }

    private static Discovery build0(MemorySegment list, NicPath path) {
        String prov = providerName(list);
        List<MemorySegment> entries = new ArrayList<>();
        for (MemorySegment e = list; e.address() != 0; e = next(e)) {
            if (providerName(e).equals(prov)) {
                entries.add(e);
            }
        }
        List<MemorySegment> offered = entries;
        entries = chooseFabric(entries.stream().map(Discovery::fabricName).toList(), prov,
                System.getenv("EFABENCH_FABRIC")).stream().map(offered::get).toList();
        boolean applies = path.caps(prov) != 0;
        if (applies) {
            requireNoLocalComm(entries, prov);
        }
        // The local launcher runs every rank on this host: keep tcp on the loopback interface.
        if ("1".equals(System.getenv("EFABENCH_LOOPBACK"))) {
            List<MemorySegment> loop = entries.stream().filter(Discovery::sourceIsLoopback).toList();
            if (!loop.isEmpty()) {
                entries = loop;
            }
        }
        List<NicInfo> nics = new ArrayList<>();
        List<MemorySegment> infos = new ArrayList<>();
        Set<String> domains = new LinkedHashSet<>();
        for (MemorySegment e : entries) {
            String domain = Fi.string(fi_domain_attr.name(domainAttr(e)));
            if (domains.add(domain)) {
                nics.add(nicInfo(nics.size(), e, domain));
                infos.add(e);
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

    private static String fabricName(MemorySegment e) {
        return Fi.string(fi_fabric_attr.name(fi_info.fabric_attr(e).reinterpret(fi_fabric_attr.sizeof())));
    }

    private static NicInfo nicInfo(int index, MemorySegment e, String domain) {
        MemorySegment fab = fi_info.fabric_attr(e).reinterpret(fi_fabric_attr.sizeof());
        MemorySegment dom = domainAttr(e);
        MemorySegment ep = fi_info.ep_attr(e).reinterpret(fi_ep_attr.sizeof());
        MemorySegment tx = fi_info.tx_attr(e).reinterpret(fi_tx_attr.sizeof());
        String nicName = domain;
        long speed = 0;
        PciAddress pci = null;
        MemorySegment nic = fi_info.nic(e);
        if (nic.address() != 0) {
            nic = nic.reinterpret(fid_nic.sizeof());
            MemorySegment dev = fid_nic.device_attr(nic);
            if (dev.address() != 0) {
                String name = Fi.string(fi_device_attr.name(dev.reinterpret(fi_device_attr.sizeof())));
                if (!name.isEmpty()) {
                    nicName = name;
                }
            }
            MemorySegment bus = fid_nic.bus_attr(nic);
            if (bus.address() != 0) {
                pci = pciAddress(bus.reinterpret(fi_bus_attr.sizeof()));
            }
            MemorySegment link = fid_nic.link_attr(nic);
            if (link.address() != 0) {
                speed = fi_link_attr.speed(link.reinterpret(fi_link_attr.sizeof()));
            }
        }
        return new NicInfo(index, Fi.string(fi_fabric_attr.prov_name(fab)), Fi.string(fi_fabric_attr.name(fab)),
                domain, nicName, speed, fi_domain_attr.mr_mode(dom) & 0xffffffffL, fi_info.mode(e),
                fi_info.caps(e), fi_domain_attr.cq_data_size(dom), unsignedSize(fi_ep_attr.max_msg_size(ep)),
                unsignedSize(fi_tx_attr.inject_size(tx)), pci);
    }

    /** {@code bus_attr->attr.pci} when the bus is PCI (efa, verbs), else null. */
    private static PciAddress pciAddress(MemorySegment bus) {
        if (fi_bus_attr.bus_type(bus) != LibFabric.FI_BUS_PCI()) {
            return null;
        }
        MemorySegment pci = fi_bus_attr.attr(bus); // union; pci is its only member
        return new PciAddress(fi_pci_attr.domain_id(pci) & 0xffff, fi_pci_attr.bus_id(pci) & 0xff,
                fi_pci_attr.device_id(pci) & 0xff, fi_pci_attr.function_id(pci) & 0xff);
    }

    /** size_t values above Long.MAX_VALUE (SIZE_MAX means unlimited) as Long.MAX_VALUE. */
    private static long unsignedSize(long size) {
        return size < 0 ? Long.MAX_VALUE : size;
    }

    private static MemorySegment next(MemorySegment e) {
        MemorySegment n = fi_info.next(e);
        return n.address() == 0 ? MemorySegment.NULL : n.reinterpret(fi_info.sizeof());
    }

    private static MemorySegment domainAttr(MemorySegment e) {
        return fi_info.domain_attr(e).reinterpret(fi_domain_attr.sizeof());
    }

    private static String providerName(MemorySegment e) {
        return Fi.string(fi_fabric_attr.prov_name(fi_info.fabric_attr(e).reinterpret(fi_fabric_attr.sizeof())));
    }

    private static final int AF_INET = 2;
    private static final int AF_INET6 = 10;

    /** True for a sockaddr source address of 127.0.0.0/8 or ::1. */
    private static boolean sourceIsLoopback(MemorySegment e) {
        long len = fi_info.src_addrlen(e);
        MemorySegment a = fi_info.src_addr(e);
        if (a.address() == 0 || len < 8) {
            return false;
        }
        int format = fi_info.addr_format(e);
        if (format != LibFabric.FI_SOCKADDR() && format != LibFabric.FI_SOCKADDR_IN()
                && format != LibFabric.FI_SOCKADDR_IN6()) {
            return false;
        }
        a = a.reinterpret(len);
        int family = a.get(ValueLayout.JAVA_SHORT, 0);
        if (family == AF_INET) {
            return a.get(ValueLayout.JAVA_BYTE, 4) == 127;
        }
        if (family == AF_INET6 && len >= 24) {
            for (int i = 8; i < 23; i++) {
                if (a.get(ValueLayout.JAVA_BYTE, i) != 0) {
                    return false;
                }
            }
            return a.get(ValueLayout.JAVA_BYTE, 23) == 1;
        }
        return false;
    }

    /** Provider of every NIC in this discovery, as libfabric names it (e.g. {@code tcp;ofi_rxm}). */
    public String provider() {
        return provider;
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

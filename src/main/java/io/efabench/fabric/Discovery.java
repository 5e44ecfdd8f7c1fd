package io.efabench.fabric;

import io.efabench.fabric.generated.LibFabric;
import io.efabench.fabric.generated.fi_device_attr;
import io.efabench.fabric.generated.fi_domain_attr;
import io.efabench.fabric.generated.fi_ep_attr;
import io.efabench.fabric.generated.fi_fabric_attr;
import io.efabench.fabric.generated.fi_info;
import io.efabench.fabric.generated.fi_link_attr;
import io.efabench.fabric.generated.fi_tx_attr;
import io.efabench.fabric.generated.fid_nic;

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
    private final List<NicInfo> nics;
    private final List<MemorySegment> infos; // fi_info entry per NIC, same order as nics
    private MemorySegment head;              // owned list, NULL once closed

    private Discovery(MemorySegment head, List<NicInfo> nics, List<MemorySegment> infos) {
        this.head = head;
        this.nics = List.copyOf(nics);
        this.infos = List.copyOf(infos);
        this.provider = nics.getFirst().provider();
    }

    /** Discovery with the provider from {@code FI_PROVIDER}, else {@code efa}, else a one-line error. */
    public static Discovery discover(boolean hmem) {
        return discover(hmem, null);
    }

    /**
     * As {@link #discover(boolean)}, but a non-null {@code providerOverride} is put into
     * {@code hints->fabric_attr->prov_name} (for tests that pick tcp or shm in-process).
     */
    public static Discovery discover(boolean hmem, String providerOverride) {
        Fi.requireLibrary();
        String envProvider = System.getenv("FI_PROVIDER");
        if (providerOverride != null || (envProvider != null && !envProvider.isBlank())) {
            MemorySegment list = getinfo(hmem, providerOverride, providerOverride != null
                    ? "provider '" + providerOverride + "'" : "FI_PROVIDER=" + envProvider);
            return build(list);
        }
        MemorySegment any = getinfo(hmem, null, "FI_PROVIDER unset");
        Set<String> found = new LinkedHashSet<>();
        boolean efa = false;
        for (MemorySegment e = any; e.address() != 0; e = next(e)) {
            String name = providerName(e);
            efa |= name.equals("efa");
            found.add(name.split(";")[0]);
        }
        LibFabric.fi_freeinfo(any);
        if (!efa) {
            throw new FabricException("no EFA provider found; set FI_PROVIDER to one of: "
                    + String.join(", ", found) + " (providers offering " + asked(hmem) + " here)");
        }
        return build(getinfo(hmem, "efa", "provider 'efa'"));
    }

    private static String asked(boolean hmem) {
        return "FI_EP_RDM with FI_MSG|FI_RMA" + (hmem ? "|FI_HMEM" : "")
                + " and " + CQ_DATA_SIZE + " bytes of remote CQ data";
    }

    /** fi_getinfo with our hints; returns the head of a non-empty list or throws. */
    private static MemorySegment getinfo(boolean hmem, String provName, String selection) {
        MemorySegment hints = LibFabric.fi_dupinfo(MemorySegment.NULL); // fi_allocinfo()
        if (hints.address() == 0) {
            throw new FabricException("fi_allocinfo failed: out of memory");
        }
        hints = hints.reinterpret(fi_info.sizeof());
        try (Arena arena = Arena.ofConfined()) {
            fi_info.caps(hints, Fi.MSG | Fi.RMA | (hmem ? Fi.HMEM : 0));
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
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            int rc = LibFabric.fi_getinfo(Fi.apiVersion(), MemorySegment.NULL, MemorySegment.NULL, 0L, hints, out);
            if (rc == -LibFabric.FI_ENODATA()) {
                throw new FabricException(selection + ": no provider offers " + asked(hmem)
                        + " here (fi_getinfo: " + Fi.strerror(rc) + ")", rc);
            }
            Fi.check("fi_getinfo (" + selection + ")", rc);
            return out.get(ValueLayout.ADDRESS, 0).reinterpret(fi_info.sizeof());
        } finally {
            LibFabric.fi_freeinfo(hints);
        }
    }

    private static Discovery build(MemorySegment list) {
        String prov = providerName(list);
        List<MemorySegment> entries = new ArrayList<>();
        for (MemorySegment e = list; e.address() != 0; e = next(e)) {
            if (providerName(e).equals(prov)) {
                entries.add(e);
            }
        }
        entries = chooseFabric(entries, System.getenv("EFABENCH_FABRIC"));
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
        return new Discovery(list, nics, infos);
    }

    /**
     * EFABENCH_FABRIC keeps the entries of that fabric. Without it, "efa-direct" (libfabric 2.x:
     * the same NICs without the EFA protocol layer, so sends are limited to one MTU) is dropped
     * where another fabric offers the same provider.
     */
    private static List<MemorySegment> chooseFabric(List<MemorySegment> entries, String fabric) {
        if (fabric != null && !fabric.isBlank()) {
            List<MemorySegment> chosen = entries.stream().filter(e -> fabricName(e).equals(fabric)).toList();
            if (chosen.isEmpty()) {
                throw new FabricException("EFABENCH_FABRIC=" + fabric + ": no such fabric; "
                        + providerName(entries.getFirst()) + " offers " + entries.stream().map(Discovery::fabricName)
                        .distinct().toList());
            }
            return chosen;
        }
        List<MemorySegment> full = entries.stream().filter(e -> !fabricName(e).equals("efa-direct")).toList();
        return full.isEmpty() ? entries : full;
    }

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
            MemorySegment link = fid_nic.link_attr(nic);
            if (link.address() != 0) {
                speed = fi_link_attr.speed(link.reinterpret(fi_link_attr.sizeof()));
            }
        }
        return new NicInfo(index, Fi.string(fi_fabric_attr.prov_name(fab)), Fi.string(fi_fabric_attr.name(fab)),
                domain, nicName, speed, fi_domain_attr.mr_mode(dom) & 0xffffffffL, fi_info.mode(e),
                fi_info.caps(e), fi_domain_attr.cq_data_size(dom), unsignedSize(fi_ep_attr.max_msg_size(ep)),
                unsignedSize(fi_tx_attr.inject_size(tx)));
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
                + ", link " + (nic.linkSpeedBps() == 0 ? "unknown" : nic.linkGbps() + " Gbps")
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

package io.efabench.fabric;

import io.efabench.fabric.generated.LibFabric;
import io.efabench.fabric.generated.fi_bus_attr;
import io.efabench.fabric.generated.fi_device_attr;
import io.efabench.fabric.generated.fi_domain_attr;
import io.efabench.fabric.generated.fi_ep_attr;
import io.efabench.fabric.generated.fi_fabric_attr;
import io.efabench.fabric.generated.fi_info;
import io.efabench.fabric.generated.fi_link_attr;
import io.efabench.fabric.generated.fi_pci_attr;
import io.efabench.fabric.generated.fi_tx_attr;
import io.efabench.fabric.generated.fid_nic;
import io.efabench.topology.PciAddress;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Reading one entry of an fi_getinfo answer: its provider, fabric and domain names, the next
 * entry, whether its source address is loopback, and the {@link NicInfo} a channel is opened
 * from (link speed, PCI address, limits, modes). Reads only; the list is {@link Discovery}'s.
 */
final class FiInfoEntry {
    private FiInfoEntry() {}

    static String fabricName(MemorySegment e) {
        return Fi.string(fi_fabric_attr.name(fi_info.fabric_attr(e).reinterpret(fi_fabric_attr.sizeof())));
    }

    static NicInfo nicInfo(int index, MemorySegment e, String domain, String ipv4) {
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
                unsignedSize(fi_tx_attr.inject_size(tx)), pci, ipv4);
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

    static MemorySegment next(MemorySegment e) {
        MemorySegment n = fi_info.next(e);
        return n.address() == 0 ? MemorySegment.NULL : n.reinterpret(fi_info.sizeof());
    }

    static String domainName(MemorySegment e) {
        return Fi.string(fi_domain_attr.name(domainAttr(e)));
    }

    static MemorySegment domainAttr(MemorySegment e) {
        return fi_info.domain_attr(e).reinterpret(fi_domain_attr.sizeof());
    }

    static String providerName(MemorySegment e) {
        return Fi.string(fi_fabric_attr.prov_name(fi_info.fabric_attr(e).reinterpret(fi_fabric_attr.sizeof())));
    }

    private static final int AF_INET = 2;
    private static final int AF_INET6 = 10;

    /** The entry's source address when it is IPv4 ("198.18.1.2"), else null (efa's own format, IPv6, none). */
    static String sourceIpv4(MemorySegment e) {
        MemorySegment a = sourceSockaddr(e);
        if (a == null || a.get(ValueLayout.JAVA_SHORT, 0) != AF_INET) {
            return null;
        }
        return (a.get(ValueLayout.JAVA_BYTE, 4) & 0xff) + "." + (a.get(ValueLayout.JAVA_BYTE, 5) & 0xff) + "."
                + (a.get(ValueLayout.JAVA_BYTE, 6) & 0xff) + "." + (a.get(ValueLayout.JAVA_BYTE, 7) & 0xff);
    }

    /** The entry's source address as a sockaddr of its length, or null where it has none or another format. */
    private static MemorySegment sourceSockaddr(MemorySegment e) {
        long len = fi_info.src_addrlen(e);
        MemorySegment a = fi_info.src_addr(e);
        int format = fi_info.addr_format(e);
        if (a.address() == 0 || len < 8 || (format != LibFabric.FI_SOCKADDR() && format != LibFabric.FI_SOCKADDR_IN()
                && format != LibFabric.FI_SOCKADDR_IN6())) {
            return null;
        }
        return a.reinterpret(len);
    }

    /** True for a sockaddr source address of 127.0.0.0/8 or ::1. */
    static boolean sourceIsLoopback(MemorySegment e) {
        MemorySegment a = sourceSockaddr(e);
        if (a == null) {
            return false;
        }
        long len = a.byteSize();
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
}

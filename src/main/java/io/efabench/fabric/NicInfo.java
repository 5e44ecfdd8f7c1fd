package io.efabench.fabric;

import io.efabench.topology.PciAddress;

/**
 * One NIC (libfabric domain) as fi_getinfo reported it for our hints.
 *
 * @param index        position in {@link Discovery#nics()}
 * @param provider     libfabric provider name, e.g. {@code efa} or {@code tcp;ofi_rxm}
 * @param fabricName   fabric name, e.g. {@code 127.0.0.1/32} for tcp
 * @param domainName   domain name, e.g. {@code rdmap16s27-rdm} or {@code lo}
 * @param nicName      {@code nic->device_attr->name}, else the domain name
 * @param linkSpeedBps {@code nic->link_attr->speed} in bit/s; 0 when unknown
 * @param mrMode       {@code domain_attr->mr_mode} bits (FI_MR_*)
 * @param mode         {@code fi_info->mode} bits the provider requires (FI_CONTEXT, FI_RX_CQ_DATA...)
 * @param caps         {@code fi_info->caps}
 * @param cqDataSize   bytes of remote CQ data (immediate) the provider carries
 * @param maxMsgSize   {@code ep_attr->max_msg_size}
 * @param injectSize   {@code tx_attr->inject_size}
 * @param pci          {@code nic->bus_attr} PCI address, or null when the provider gives none (tcp, shm)
 * @param ipv4         the NIC's IPv4 source address ("198.18.1.2") from any of its domain's entries, null
 *                     where the provider addresses it otherwise (efa, shm)
 */
public record NicInfo(int index, String provider, String fabricName, String domainName, String nicName,
                      long linkSpeedBps, long mrMode, long mode, long caps, long cqDataSize,
                      long maxMsgSize, long injectSize, PciAddress pci, String ipv4) {

    /** True for the loopback interface (tcp's {@code lo}): never a NIC between nodes. */
    public boolean isLoopback() {
        return ipv4 != null && ipv4.startsWith("127.");
    }

    /** True when the provider granted FI_HMEM (device memory registration) on this NIC. */
    public boolean offersHmem() {
        return (caps & Fi.HMEM) != 0;
    }

    /** Link speed in Gbit/s (1e9 bit/s) as reported, 0 when unknown. */
    public double linkGbps() {
        return linkSpeedBps / 1e9;
    }

    /** Below this a reported speed is a placeholder, not a link (providers report 0 or 1 for unknown). */
    public static final double MIN_PLAUSIBLE_GBPS = 1;
    /** Above this (10 Tbps per NIC) a reported speed is garbage, e.g. an unset field read as bits. */
    public static final double MAX_PLAUSIBLE_GBPS = 10_000;

    /** {@link #linkGbps()} when plausible for one NIC (1 Gbps to 10 Tbps), else 0: unknown, never a guess. */
    public double plausibleLinkGbps() {
        double g = linkGbps();
        return g >= MIN_PLAUSIBLE_GBPS && g <= MAX_PLAUSIBLE_GBPS ? g : 0;
    }
}

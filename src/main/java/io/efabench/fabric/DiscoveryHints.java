package io.efabench.fabric;

import io.efabench.fabric.generated.LibFabric;
import io.efabench.fabric.generated.fi_domain_attr;
import io.efabench.fabric.generated.fi_ep_attr;
import io.efabench.fabric.generated.fi_fabric_attr;
import io.efabench.fabric.generated.fi_info;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * What {@link Discovery} asks fi_getinfo for, built in one place: RDM endpoints with
 * FI_MSG|FI_RMA (+FI_HMEM for device memory), 4 bytes of remote CQ data, the memory-registration
 * modes and context modes efabench handles, one thread per domain, and the NIC path's caps. The
 * choice among the answers (provider, fabric, NICs) is {@link Discovery}'s.
 */
final class DiscoveryHints {
    /** Bytes of remote CQ data (immediate) asked for: what EFA carries. */
    static final int CQ_DATA_SIZE = 4;

    private DiscoveryHints() {}

    static String asked(boolean hmem) {
        return "FI_EP_RDM with FI_MSG|FI_RMA" + (hmem ? "|FI_HMEM" : "")
                + " and " + CQ_DATA_SIZE + " bytes of remote CQ data";
    }

    /**
     * Providers asked for {@link Fi#PROGRESS_CONTROL_UNIFIED}: with FI_THREAD_DOMAIN it lets
     * libfabric drop the mutex its CQ read takes around progress (util_cq's ep_list_lock). A C
     * benchmark of one thread pays that mutex without atomics (glibc skips them in a process
     * with one thread); a JVM, many threads, pays a locked pair per CQ read: on the dev VM 23-36% of
     * a busy-polling target's cycles, and 2-10% of a 64 B window-1 round over shm
     * (docs/perf/journal/write-64B-gap.md, issue 19). Only providers measured with it are asked; every other
     * keeps the provider's default progress model.
     */
    static final java.util.Set<String> CONTROL_UNIFIED_PROVIDERS = java.util.Set.of("shm");

    /** Whether {@code provider} is asked for control-unified progress: one of those above, unless EFABENCH_PROGRESS=default. */
    static boolean asksControlUnified(String provider) {
        return asksControlUnified(provider, System.getenv("EFABENCH_PROGRESS"));
    }

    /**
     * As above with EFABENCH_PROGRESS = {@code setting}: unset, blank or {@code control-unified}
     * asks the providers above; {@code default} asks none. Anything else fails with one line, so
     * a misspelt {@code defualt} does not run the model it meant to turn off.
     */
    static boolean asksControlUnified(String provider, String setting) {
        String v = setting == null ? "" : setting.strip();
        boolean ask = switch (v) {
            case "", "control-unified" -> true;
            case "default" -> false;
            default -> throw new FabricException("EFABENCH_PROGRESS=\"" + setting
                    + "\" is not one of: default (the provider's own progress model), control-unified (the default)");
        };
        return ask && CONTROL_UNIFIED_PROVIDERS.contains(provider);
    }

    /**
     * fi_getinfo with our hints; returns the head of a non-empty list or throws. With
     * {@code controlUnified} the hints first ask for {@link Fi#PROGRESS_CONTROL_UNIFIED} (where the
     * API has it), then, if that fails in any way, ask again without.
     */
    static MemorySegment getinfo(boolean hmem, String provName, long pathCaps, String selection, boolean controlUnified) {
        if (controlUnified && Fi.apiVersion() >= Fi.CONTROL_UNIFIED_VERSION) {
            MemorySegment unified = getinfo0(hints(hmem, provName, pathCaps, true), null);
            if (unified != null) {
                return unified;
            }
        }
        MemorySegment list = getinfo0(hints(hmem, provName, pathCaps, false), selection);
        if (list == null) {
            throw new FabricException(selection + ": no provider offers " + asked(hmem)
                    + (pathCaps != 0 ? " with FI_REMOTE_COMM only (path=nic)" : "")
                    + " here (fi_getinfo: " + Fi.strerror(-LibFabric.FI_ENODATA()) + ")", -LibFabric.FI_ENODATA());
        }
        return list;
    }

    /**
     * fi_getinfo with {@code hints}, which it frees: the list, or null for -FI_ENODATA; other
     * errors throw naming {@code selection}, or return null too where it is null (an ask that may fail).
     */
    private static MemorySegment getinfo0(MemorySegment hints, String selection) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            int rc = LibFabric.fi_getinfo(Fi.apiVersion(), MemorySegment.NULL, MemorySegment.NULL, 0L, hints, out);
            if (rc == -LibFabric.FI_ENODATA() || (rc != 0 && selection == null)) {
                return null;
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
    static MemorySegment hints(boolean hmem, String provName, long pathCaps, boolean controlUnified) {
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
        if (controlUnified) {
            // 2.x: "progress" shares data_progress's place, and a provider built on libfabric's
            // utility code takes it as the control progress too (ofi_alter_domain_attr)
            fi_domain_attr.progress(dom, Fi.PROGRESS_CONTROL_UNIFIED);
        }
        if (provName != null) {
            MemorySegment fab = fi_info.fabric_attr(hints).reinterpret(fi_fabric_attr.sizeof());
            fi_fabric_attr.prov_name(fab, Fi.strdup(provName)); // freed by fi_freeinfo
        }
        return hints;
    }
}

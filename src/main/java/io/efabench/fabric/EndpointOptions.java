package io.efabench.fabric;

import io.efabench.fabric.generated.fi_ops_ep;
import io.efabench.fabric.generated.fid_ep;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * {@code fi_getopt}/{@code fi_setopt} at level FI_OPT_ENDPOINT, and what a channel decides from
 * them. The option names are members of anonymous enums in fi_endpoint.h and fi_ext.h, which
 * jextract skips, so their values are spelled here with the header line they come from (2.6).
 * Every getter asks only where the API in use defines the option, and returns -1 (or null) where
 * the provider does not answer; the deciding functions take the answers as arguments, so a unit
 * test can drive them with what a provider we cannot reach here (efa, efa-direct) would answer.
 */
final class EndpointOptions {
    private EndpointOptions() {}

    static final int LEVEL_ENDPOINT = 0;           // FI_OPT_ENDPOINT (fi_endpoint.h:56)
    static final int CUDA_API_PERMITTED = 10;      // fi_endpoint.h:71, API 1.18+
    static final int MAX_MSG_SIZE = 12;            // fi_endpoint.h:73, API 2.0+
    static final int MAX_RMA_SIZE = 14;            // fi_endpoint.h:75, API 2.0+
    static final int INJECT_RMA_SIZE = 18;         // fi_endpoint.h:79, API 2.0+
    private static final int PROV_SPECIFIC_EFA = 0xefa << 16; // fi_ext.h:66
    static final int EFA_EMULATED_READ = -PROV_SPECIFIC_EFA + 1;  // fi_ext.h:73
    static final int EFA_EMULATED_WRITE = -PROV_SPECIFIC_EFA + 2; // fi_ext.h:74

    static final int CUDA_API_PERMITTED_VERSION = Fi.version(1, 18);
    static final int SIZE_OPTIONS_VERSION = Fi.version(2, 0);

    /**
     * A size_t option, or -1 where the API predates it or the provider does not answer (rc != 0);
     * a value beyond Long.MAX_VALUE (SIZE_MAX: no limit) reads as Long.MAX_VALUE.
     */
    static long size(MemorySegment ep, int apiVersion, int optname) {
        if (!Fi.atLeast(apiVersion, SIZE_OPTIONS_VERSION)) {
            return -1;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(ValueLayout.JAVA_LONG);
            int rc = get(ep, optname, value, 8, arena);
            long v = value.get(ValueLayout.JAVA_LONG, 0);
            return rc != 0 ? -1 : v < 0 ? Long.MAX_VALUE : v;
        }
    }

    /** A bool option, or null where the provider does not answer. */
    static Boolean bool(MemorySegment ep, int optname) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(ValueLayout.JAVA_LONG); // zeroed; a bool is its first byte
            int rc = get(ep, optname, value, 1, arena);
            return rc == 0 ? value.get(ValueLayout.JAVA_BYTE, 0) != 0 : null;
        }
    }

    private static int get(MemorySegment ep, int optname, MemorySegment value, long size, Arena arena) {
        MemorySegment len = arena.allocate(ValueLayout.JAVA_LONG);
        len.set(ValueLayout.JAVA_LONG, 0, size);
        MemorySegment ops = fid_ep.ops(ep).reinterpret(fi_ops_ep.sizeof());
        return fi_ops_ep.getopt.invoke(fi_ops_ep.getopt(ops), ep, LEVEL_ENDPOINT, optname, value, len);
    }

    /** {@code fi_setopt} of a bool option; the provider's return code. */
    static int setBool(MemorySegment ep, int optname, boolean v) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(ValueLayout.JAVA_BYTE);
            value.set(ValueLayout.JAVA_BYTE, 0, (byte) (v ? 1 : 0));
            MemorySegment ops = fid_ep.ops(ep).reinterpret(fi_ops_ep.sizeof());
            return fi_ops_ep.setopt.invoke(fi_ops_ep.setopt(ops), ep, LEVEL_ENDPOINT, optname, value, 1);
        }
    }

    /**
     * Largest RMA write that carries data to post in one operation: {@code FI_OPT_MAX_RMA_SIZE}
     * where answered ({@code answered} > 0), else {@code ep_attr->max_msg_size}, and at most
     * {@code cap}. efa-direct answers the device's {@code max_rdma_size} (efa_base_ep.c:631); efa-rdm
     * answers ep_attr's max_msg_size (efa_rdm_ep_fiops.c:498, UINT64_MAX: it segments writes itself
     * at min(1 GiB, the device's max_rdma_size), efa_rdm_ope.c:1570), so the cap decides there.
     */
    static long maxWrite(long answered, long maxMsgSize, long cap) {
        long limit = answered > 0 ? answered : maxMsgSize;
        return limit <= 0 || limit > cap ? cap : limit;
    }

    /**
     * Largest write to inject: {@code FI_OPT_INJECT_RMA_SIZE} where the provider answers it
     * ({@code answered} >= 0, API 2.0+), else {@code tx_attr->inject_size}. efa-direct answers 0
     * (efa_base_ep.c:633-635) and returns -FI_ENOSYS for an injected write (efa_rma.c:428) while its
     * tx_attr->inject_size reports the device's inline size (efa_prov_info.c:245): the answer wins.
     */
    static long injectRmaSize(long answered, long txInjectSize) {
        return answered >= 0 ? answered : txInjectSize;
    }

    /** Sets FI_OPT_CUDA_API_PERMITTED=false where the API has it; what that came to ({@link #cudaApiPermittedOutcome}). */
    static String forbidCudaApi(MemorySegment ep, int apiVersion) {
        int rc = Fi.atLeast(apiVersion, CUDA_API_PERMITTED_VERSION) ? setBool(ep, CUDA_API_PERMITTED, false) : 0;
        return cudaApiPermittedOutcome(apiVersion, rc);
    }

    /**
     * What FI_OPT_CUDA_API_PERMITTED=false came to on a device channel, for provenance:
     * "false" (set: the provider will not call CUDA from its progress), or why not. shm refuses
     * with -FI_EOPNOTSUPP (its CUDA support is CUDA IPC copies, smr_ep.c:137-148); efa-rdm accepts
     * where the GPU and NIC do P2P (efa_rdm_ep_fiops.c:1560-1580), as aws-ofi-nccl sets it
     * (nccl_ofi_ofiutils.cpp:350).
     */
    static String cudaApiPermittedOutcome(int apiVersion, int rc) {
        if (!Fi.atLeast(apiVersion, CUDA_API_PERMITTED_VERSION)) {
            return "not set (API " + Fi.versionText(apiVersion) + " predates FI_OPT_CUDA_API_PERMITTED)";
        }
        return rc == 0 ? "false" : "true (the provider refused false: " + Fi.strerror(rc) + " (" + rc + "))";
    }
}

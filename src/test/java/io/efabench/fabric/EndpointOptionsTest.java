package io.efabench.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The decisions taken from endpoint options, with what efa and efa-direct answer (see EndpointOptions). */
class EndpointOptionsTest {
    private static final long GIB = 1L << 30;

    @Test
    void efaDirectInjectsNoWriteWhateverTxAttrSays() {
        // efa-direct: FI_OPT_INJECT_RMA_SIZE = 0 (efa_base_ep.c:635), tx_attr->inject_size = inline size 32.
        assertEquals(0, EndpointOptions.injectRmaSize(0, 32));
        assertEquals(4096, EndpointOptions.injectRmaSize(4096, 4096));
        // Not answered (API 1.x or a provider without the option): tx_attr's.
        assertEquals(32, EndpointOptions.injectRmaSize(-1, 32));
    }

    @Test
    void writesAreCutAtTheEndpointsRmaLimitAndAtMostOneGib() {
        long deviceMaxRdma = 1L << 30 - 2; // a device whose max_rdma_size is below 1 GiB (efa-direct answers it)
        assertEquals(deviceMaxRdma, EndpointOptions.maxWrite(deviceMaxRdma, Long.MAX_VALUE, GIB));
        assertEquals(GIB, EndpointOptions.maxWrite(Long.MAX_VALUE, Long.MAX_VALUE, GIB)); // efa-rdm: SIZE_MAX
        assertEquals(4096, EndpointOptions.maxWrite(-1, 4096, GIB)); // unanswered: ep_attr->max_msg_size
        assertEquals(GIB, EndpointOptions.maxWrite(-1, 0, GIB));
        assertEquals(GIB, EndpointOptions.maxWrite(-1, 8 * GIB, GIB));
    }

    @Test
    void cudaApiPermittedOutcomeSaysWhatTheProviderDid() {
        assertEquals("false", EndpointOptions.cudaApiPermittedOutcome(Fi.version(2, 6), 0));
        String shm = EndpointOptions.cudaApiPermittedOutcome(Fi.version(2, 6), -Fi.EOPNOTSUPP);
        assertTrue(shm.startsWith("true (the provider refused false: "), shm);
        assertTrue(EndpointOptions.cudaApiPermittedOutcome(Fi.version(1, 17), 0).startsWith("not set (API 1.17"));
    }

    @Test
    void optionNamesAreTheHeadersEnumPositions() {
        // fi_endpoint.h (2.6): FI_OPT_CUDA_API_PERMITTED is the 11th name, INJECT_RMA_SIZE the 19th.
        assertEquals(10, EndpointOptions.CUDA_API_PERMITTED);
        assertEquals(18, EndpointOptions.INJECT_RMA_SIZE);
        // fi_ext.h: FI_OPT_EFA_RNR_RETRY = -(0xefa << 16), then EMULATED_READ, EMULATED_WRITE.
        assertEquals(-(0xefa << 16) + 2, EndpointOptions.EFA_EMULATED_WRITE);
    }
}

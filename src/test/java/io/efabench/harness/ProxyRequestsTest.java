package io.efabench.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** How many writes the proxy turns a request into: the targets count exactly these. */
class ProxyRequestsTest {
    private static final long GIB = 1L << 30;

    @Test
    void oneChannelCutsAtTheWriteLimit() {
        long[] limits = {1 << 20, 1 << 20};
        assertEquals(1, ProxyRequests.writesFor(4096, 0, limits));
        assertEquals(1, ProxyRequests.writesFor(1 << 20, 1, limits));
        assertEquals(3, ProxyRequests.writesFor((2 << 20) + 1, 0, limits));
    }

    @Test
    void allChannelsStripeAndSkipEmptyStripes() {
        long[] limits = {GIB, GIB, GIB};
        assertEquals(3, ProxyRequests.writesFor(3000, ProxyRequests.ALL_CHANNELS, limits));
        // 2 bytes over 3 channels: stripes of 0, 0 and 2 bytes: one write.
        assertEquals(1, ProxyRequests.writesFor(2, ProxyRequests.ALL_CHANNELS, limits));
        long[] small = {100, 1000};
        // 1000 bytes: stripes of 500 (cut at 100: 5 writes) and 500 (1 write).
        assertEquals(6, ProxyRequests.writesFor(1000, ProxyRequests.ALL_CHANNELS, small));
    }
}

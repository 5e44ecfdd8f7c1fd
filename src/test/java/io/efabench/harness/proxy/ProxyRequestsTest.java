package io.efabench.harness.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import io.efabench.proxy.RequestRing;

/** How many writes the proxy turns a request into (the targets count exactly these), and which requests it refuses. */
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

    /** A put from rank 0 to rank {@code target} on channel 0: 100 bytes from offset 0 to offset 0. */
    private static RequestRing.Request put(int target) {
        RequestRing.Request r = new RequestRing.Request();
        r.op = ProxyRequests.OP_PUT;
        r.target = target;
        r.channel = 0;
        r.bytes = 100;
        return r;
    }

    /** Rank 0 of 3 with 2 channels, a 1000-byte source; rank 1's destination holds 200 bytes, rank 2's 400. */
    private static String invalid(RequestRing.Request r) {
        return ProxyRequests.invalid(r, 0, 2, 1000, new long[] {4096, 200, 400});
    }

    @Test
    void everyFieldOfARequestIsCheckedAgainstThisRankAndItsPeersBuffers() {
        assertNull(invalid(put(1)));
        assertNull(invalid(put(2)));
        RequestRing.Request fence = put(99);
        fence.op = ProxyRequests.OP_FENCE;
        assertNull(invalid(fence), "a fence names no target");
        RequestRing.Request op = put(1);
        op.op = 7;
        assertTrue(invalid(op).startsWith("has op 7"), invalid(op));
        for (int target : new int[] {-1, 0, 3}) {
            assertTrue(invalid(put(target)).startsWith("targets rank " + target + ", which is no peer"), invalid(put(target)));
        }
        RequestRing.Request channel = put(1);
        channel.channel = 2;
        assertTrue(invalid(channel).startsWith("names channel 2 of 2"), invalid(channel));
        channel.channel = ProxyRequests.ALL_CHANNELS;
        assertNull(invalid(channel));
        RequestRing.Request over = put(1);
        over.dst = 101; // 100 bytes at 101 overrun rank 1's 200
        assertTrue(invalid(over).contains("the 200-byte destination"), invalid(over));
        over.target = 2; // rank 2's 400 bytes hold them
        assertNull(invalid(over));
        over.src = 901; // 100 bytes at 901 overrun the 1000-byte source
        assertTrue(invalid(over).contains("outside the 1000-byte source"), invalid(over));
    }
}

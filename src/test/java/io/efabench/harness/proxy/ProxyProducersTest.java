package io.efabench.harness.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import io.efabench.cuda.Cuda;
import io.efabench.cuda.CudaContext;
import io.efabench.cuda.CudaDevice;
import io.efabench.cuda.CudaStream;
import io.efabench.cuda.PinnedHostBuffer;
import io.efabench.proxy.Mailbox;
import io.efabench.proxy.ProxyKernels;
import io.efabench.proxy.RequestRing;
import io.efabench.harness.engine.Immediate;

/**
 * The proxy experiment's two producers: the direct baseline's {@link HostProducer} on its own
 * (CPU), and, on a GPU, the resident kernel against it: the same requests in the same order, and
 * the kernel's quiet counter (blocking: one per push; NBI: one per launch, plus one per slot reuse).
 */
class ProxyProducersTest {
    /** Rank 0 of 3 (two targets), 1000 bytes as 3 requests (400, 400, 200), slot stride 2000. */
    private static ProxyKernels.PutShape shape(int rounds, int slots) {
        return new ProxyKernels.PutShape(0, 1000, 1000, 2000, 400, 3, 3, 0, 0, Immediate.encode(Immediate.DATA, 0, 0),
                rounds, slots, 1, 32);
    }

    private record Req(int op, int target, int channel, long src, long dst, long bytes, long imm) {
        static Req of(RequestRing.Request r) {
            return new Req(r.op, r.target, r.channel, r.src, r.dst, r.bytes, r.imm);
        }
    }

    @Test
    void blockingWaitsForEveryRequestToComplete() {
        HostProducer p = new HostProducer(shape(2, 2), false);
        RequestRing.Request req = new RequestRing.Request();
        assertFalse(p.next(req, 0), "no launch rung yet");
        p.ring(1);
        assertTrue(p.next(req, 0));
        assertEquals(0, req.ticket);
        assertFalse(p.next(req, 0), "quiet: request 0 has not completed");
        assertTrue(p.next(req, 1));
        assertEquals(1, req.ticket);
    }

    @Test
    void nbiRunsAheadUntilARoundReusesASlotStillInFlight() {
        HostProducer p = new HostProducer(shape(5, 2), true);
        RequestRing.Request req = new RequestRing.Request();
        p.ring(1);
        for (int i = 0; i < 12; i++) { // rounds 1 and 2: 2 targets x 3 requests each, no completion needed
            assertTrue(p.next(req, 0), "request " + i);
        }
        assertFalse(p.next(req, 0), "round 3 writes round 1's slot: waits for tickets 0..5");
        assertFalse(p.next(req, 5));
        assertTrue(p.next(req, 6));
        assertEquals(3, Immediate.roundBits(req.imm));
    }

    @Test
    void requestsNameTheSlotTargetAndChunkOfTheirRound() {
        List<Req> all = hostRequests(shape(3, 2), false);
        assertEquals(3 * 2 * 3, all.size());
        for (int i = 0; i < all.size(); i++) {
            long round = 1 + i / 6;
            int target = 1 + (i / 3) % 2;
            int j = i % 3;
            long slot = round % 2;
            Req r = all.get(i);
            assertEquals(new Req(ProxyRequests.OP_PUT, target, 0, slot * 2000 + (target - 1) * 1000L + j * 400L,
                    slot * 1000 + j * 400L, j == 2 ? 200 : 400, Immediate.encode(Immediate.DATA, 0, round)), r, "request " + i);
        }
    }

    /** Every request of a launch from round 1, each completed as soon as it is made. */
    private static List<Req> hostRequests(ProxyKernels.PutShape s, boolean nbi) {
        HostProducer p = new HostProducer(s, nbi);
        RequestRing.Request req = new RequestRing.Request();
        List<Req> out = new ArrayList<>();
        p.ring(1);
        while (p.next(req, p.produced())) {
            out.add(Req.of(req));
        }
        return out;
    }

    /**
     * On a GPU: one launch of the resident kernel, drained by this thread (each request completed
     * at once), makes exactly the host producer's requests; blocking quiets after every push, NBI
     * once per launch plus once per round that reuses a slot (rounds - slots of them).
     */
    @ParameterizedTest(name = "nbi={0} rounds={1} slots={2}")
    @CsvSource({"false, 5, 2, 30", "true, 5, 5, 1", "true, 5, 2, 4"})
    void theKernelPushesTheHostProducersRequestsAndQuietsAsItsModeSays(boolean nbi, int rounds, int slots, long quiets) {
        assumeTrue(Cuda.unavailableReason().isEmpty(), () -> Cuda.unavailableReason().orElse(""));
        ProxyKernels.PutShape s = shape(rounds, slots);
        List<Req> expected = hostRequests(s, nbi);
        try (CudaContext ctx = CudaContext.retainPrimary(CudaDevice.forLocalRank(0))) {
            ctx.makeCurrent();
            try (ProxyKernels kernels = new ProxyKernels(ctx); Mailbox mailbox = new Mailbox(ctx);
                    PinnedHostBuffer memory = PinnedHostBuffer.allocate(ctx, RequestRing.bytesFor(64));
                    CudaStream stream = CudaStream.create(ctx)) {
                RequestRing ring = RequestRing.mapped(memory, 64);
                long timeout = 20_000_000_000L;
                kernels.put(stream, ring, mailbox, s, nbi ? ProxyKernels.FLAG_NBI : 0, 0, timeout, timeout);
                mailbox.ring(1);
                RequestRing.Request req = new RequestRing.Request();
                List<Req> got = new ArrayList<>();
                long until = System.nanoTime() + timeout;
                while (got.size() < expected.size() || mailbox.pushes() < expected.size()) {
                    if (ring.poll(req)) {
                        got.add(Req.of(req));
                        ring.complete(ring.consumed());
                    }
                    assertEquals(null, mailbox.failure());
                    assertTrue(System.nanoTime() < until, "got " + got.size() + " of " + expected.size() + " requests");
                }
                mailbox.stopPing();
                stream.await(timeout, "the resident producer");
                assertEquals(expected, got);
                assertEquals(expected.size(), mailbox.pushes());
                assertEquals(quiets, mailbox.quiets(), "quiets of one launch");
            }
        }
    }
}

package io.efabench.harness.proxy;

import io.efabench.proxy.ProxyKernels;
import io.efabench.proxy.RequestRing;
import io.efabench.harness.engine.Footprint;
import io.efabench.harness.engine.Immediate;
import io.efabench.harness.engine.PaddedLong;

/**
 * The producer of the proxy experiment's direct baseline (the Direct* configs): the proxy thread
 * makes, itself, the requests the producer kernel would push (proxy.cu's {@code proxy_put} with
 * one block: the same fields, the same order, the same slots) and waits as the kernel waits:
 * blocking for every request's completion before the next, NBI only before a round reuses a slot
 * still in flight. Everything after the request (the proxy's checks, posts, completions, the
 * targets' acks) is the proxy configs' own code, so the difference between a Proxy config and its
 * Direct twin is what crossing to the GPU and back costs: the doorbell seen by a kernel instead of
 * a thread, the push over PCIe, the quiet's poll of {@code completed}.
 *
 * <p>{@link #ring} is called by the benchmark thread, {@link #next} by the proxy thread only.
 * Allocation-free.
 */
final class HostProducer {
    private final ProxyKernels.PutShape s;
    private final boolean nbi;
    private final int targets;
    private final long[] lastTicket;
    /**
     * First round of the latest launch rung (0: none yet), written by the benchmark thread: a cell of
     * its own, off the fields below that the proxy thread writes at every request.
     */
    private final PaddedLong doorbell = new PaddedLong(0);

    private long seen;
    private boolean active;
    private long first;
    private int k;
    private int target;
    private int j;
    private boolean creditTaken;
    /** Requests made so far: the next one's ticket. */
    private long produced;
    /** The proxy's completed count the next request waits for. */
    private long want;

    HostProducer(ProxyKernels.PutShape shape, boolean nbi) {
        this.s = shape;
        this.nbi = nbi;
        this.targets = shape.world() - 1;
        this.lastTicket = new long[shape.slots()];
    }

    /** Starts a launch of the shape's rounds, the first one {@code firstRound} (>= 1, rising). */
    void ring(long firstRound) {
        doorbell.set(firstRound);
    }

    long produced() {
        return produced;
    }

    /**
     * The next request into {@code req}, given the proxy's {@code completed} count; false while
     * there is none (no launch rung, or a quiet waits for earlier requests).
     */
    boolean next(RequestRing.Request req, long completed) {
        if (completed < want) {
            return false;
        }
        if (!active) {
            long d = doorbell.get();
            if (d == seen) {
                return false;
            }
            seen = d;
            first = d;
            k = 0;
            target = 0;
            j = 0;
            creditTaken = false;
            active = true;
        }
        long r = first + k;
        int slot = Footprint.slotOf(r, s.slots());
        if (nbi && k >= s.slots() && target == 0 && j == 0 && !creditTaken) {
            creditTaken = true;
            want = lastTicket[slot] + 1; // the round that used this slot last: its requests completed
            if (completed < want) {
                return false;
            }
        }
        long off = j * s.chunk();
        req.op = ProxyRequests.OP_PUT;
        req.target = target < s.me() ? target : target + 1;
        req.channel = s.channel();
        req.src = slot * s.slotStride() + target * s.stride() + off;
        req.dst = slot * s.stride() + off;
        req.bytes = Math.min(s.chunk(), s.size() - off);
        req.imm = s.immBase() | (r & Immediate.ROUND_BITS);
        req.ticket = produced++;
        lastTicket[slot] = req.ticket;
        if (!nbi) {
            want = req.ticket + 1; // quiet after every request
        }
        if (++j == s.requests()) {
            j = 0;
            if (++target == targets) {
                target = 0;
                creditTaken = false;
                if (++k == s.rounds()) {
                    active = false;
                }
            }
        }
        return true;
    }
}

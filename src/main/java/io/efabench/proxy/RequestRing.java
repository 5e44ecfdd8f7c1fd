package io.efabench.proxy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import io.efabench.cuda.PinnedHostBuffer;

/**
 * The GPU-to-CPU request queue of the proxy experiment: a bounded multi-producer /
 * single-consumer ring whose every word lives in one memory segment (pinned host memory that the
 * GPU sees through its device alias, {@link #mapped}; any segment in tests). Producers are GPU
 * threads ({@code kernels/proxy.cu}, whose {@code efa_push} mirrors {@link #offer}) or Java
 * threads; the consumer is the proxy.
 *
 * <p>The protocol is Vyukov's bounded queue: cell i carries a sequence word, initially i. A
 * producer takes a ticket t with an atomic add on {@code head}, waits until cell t % capacity has
 * sequence t (free), writes the request and publishes sequence t + 1 with release. The consumer at
 * {@code tail} = t waits for sequence t + 1 with acquire, reads the request, and frees the cell
 * with sequence t + capacity (release). A full ring holds producers on their cell: back-pressure
 * without a lock. {@code posted} (producers' count, atomic add after publishing) and
 * {@code completed} (the proxy's count of finished writes, release) are what a blocking push's
 * quiet compares.
 *
 * <p>Layout: head, tail, posted and completed each on their own 128-byte line (no false sharing
 * between the GPU's atomics, the proxy's stores and adjacent-line prefetch), then the cells, 64
 * bytes each: sequence, op | target rank, channel hint | 0, source offset, destination offset,
 * bytes, immediate. {@link #LAYOUT_BYTES} and the offsets are public so the kernel source and a
 * layout test use the same numbers.
 */
public final class RequestRing {
    public static final long LINE = 128;
    public static final long HEAD = 0;
    public static final long TAIL = LINE;
    public static final long POSTED = 2 * LINE;
    public static final long COMPLETED = 3 * LINE;
    public static final long CELLS = 4 * LINE;
    public static final long CELL = 64;
    public static final long SEQ = 0;
    public static final long OP_TARGET = 8;
    public static final long CHANNEL = 16;
    public static final long SRC = 24;
    public static final long DST = 32;
    public static final long BYTES = 40;
    public static final long IMM = 48;
    /** Bytes of the header before the cells. */
    public static final long LAYOUT_BYTES = CELLS;

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final MemorySegment ring;
    private final long deviceAddress;
    private final int capacity;
    private final long mask;
    /** Consumer-owned copy of tail: the proxy is the only consumer. */
    private long tail;

    /** Bytes a ring of {@code capacity} cells needs. */
    public static long bytesFor(int capacity) {
        return CELLS + CELL * (long) capacity;
    }

    /**
     * Lays out a ring over {@code ring} (at least {@link #bytesFor} bytes, 128-byte aligned) and
     * initialises it: counters 0, cell i's sequence i. {@code capacity} is a power of two.
     */
    public RequestRing(MemorySegment ring, int capacity) {
        this(ring, 0, capacity);
    }

    /** A ring in pinned host memory that kernels reach at {@code memory.deviceAddress()}. */
    public static RequestRing mapped(PinnedHostBuffer memory, int capacity) {
        return new RequestRing(memory.segment(), memory.deviceAddress(), capacity);
    }

    private RequestRing(MemorySegment ring, long deviceAddress, int capacity) {
        if (capacity < 2 || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("ring capacity " + capacity + " is not a power of two >= 2");
        }
        if (ring.byteSize() < bytesFor(capacity) || ring.address() % LINE != 0) {
            throw new IllegalArgumentException("a ring of " + capacity + " cells needs " + bytesFor(capacity)
                    + " bytes aligned to " + LINE);
        }
        this.ring = ring;
        this.deviceAddress = deviceAddress;
        this.capacity = capacity;
        this.mask = capacity - 1;
        ring.asSlice(0, bytesFor(capacity)).fill((byte) 0);
        for (int i = 0; i < capacity; i++) {
            LONG.setRelease(ring, cell(i) + SEQ, (long) i);
        }
        VarHandle.fullFence();
    }

    public int capacity() {
        return capacity;
    }

    /** Where kernels see the ring (0 for a ring in plain host memory). */
    public long deviceAddress() {
        return deviceAddress;
    }

    /** Tickets the consumer has taken so far. */
    public long consumed() {
        return tail;
    }

    private long cell(long ticket) {
        return CELLS + (ticket & mask) * CELL;
    }

    /**
     * Producer side (Java producers; the kernel does the same with system-scope atomics): takes a
     * ticket, waits at most {@code spinLimit} spins for its cell to be free, writes and publishes.
     * Returns false when the cell stayed full (the ticket is then lost: tests of back-pressure
     * only; the GPU never gives up a ticket).
     */
    public boolean offer(int op, int target, int channel, long src, long dst, long bytes, long imm, long spinLimit) {
        long t = (long) LONG.getAndAdd(ring, HEAD, 1L);
        long c = cell(t);
        for (long spins = 0; (long) LONG.getAcquire(ring, c + SEQ) != t; spins++) {
            if (spins >= spinLimit) {
                return false;
            }
            if ((spins & 255) == 255) {
                Thread.yield(); // Java producers may outnumber the CPUs; the consumer must get to run
            } else {
                Thread.onSpinWait();
            }
        }
        ring.set(ValueLayout.JAVA_LONG, c + OP_TARGET, ((long) target << 32) | (op & 0xFFFF_FFFFL));
        ring.set(ValueLayout.JAVA_LONG, c + CHANNEL, channel & 0xFFFF_FFFFL);
        ring.set(ValueLayout.JAVA_LONG, c + SRC, src);
        ring.set(ValueLayout.JAVA_LONG, c + DST, dst);
        ring.set(ValueLayout.JAVA_LONG, c + BYTES, bytes);
        ring.set(ValueLayout.JAVA_LONG, c + IMM, imm);
        LONG.setRelease(ring, c + SEQ, t + 1);
        LONG.getAndAdd(ring, POSTED, 1L);
        return true;
    }

    /**
     * Consumer side (the proxy thread only): copies the next published request into {@code into}
     * and frees its cell; false when none is published yet. Allocation-free.
     */
    public boolean poll(Request into) {
        long c = cell(tail);
        if ((long) LONG.getAcquire(ring, c + SEQ) != tail + 1) {
            return false;
        }
        long opTarget = ring.get(ValueLayout.JAVA_LONG, c + OP_TARGET);
        into.op = (int) opTarget;
        into.target = (int) (opTarget >>> 32);
        into.channel = (int) ring.get(ValueLayout.JAVA_LONG, c + CHANNEL);
        into.src = ring.get(ValueLayout.JAVA_LONG, c + SRC);
        into.dst = ring.get(ValueLayout.JAVA_LONG, c + DST);
        into.bytes = ring.get(ValueLayout.JAVA_LONG, c + BYTES);
        into.imm = ring.get(ValueLayout.JAVA_LONG, c + IMM);
        into.ticket = tail;
        LONG.setRelease(ring, c + SEQ, tail + capacity);
        tail++;
        return true;
    }

    /** The proxy publishes how many requests' writes have completed (release: the GPU's quiet reads it). */
    public void complete(long count) {
        LONG.setRelease(ring, COMPLETED, count);
    }

    public long completed() {
        return (long) LONG.getAcquire(ring, COMPLETED);
    }

    /** Requests producers have published. */
    public long posted() {
        return (long) LONG.getAcquire(ring, POSTED);
    }

    /** One request, reused by the proxy (mutated in place by {@link #poll}). */
    public static final class Request {
        public int op;
        public int target;
        public int channel;
        public long src;
        public long dst;
        public long bytes;
        public long imm;
        /** Position in the ring's order of tickets. */
        public long ticket;
    }
}

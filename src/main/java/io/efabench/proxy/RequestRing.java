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
 * <p>The protocol is Vyukov's bounded queue, with self-validating cells: cell i carries a
 * sequence word, initially i. A producer takes a ticket t with an atomic add on {@code head},
 * waits until cell t % capacity has sequence t (free; a producer that knows the proxy already
 * consumed ticket t - capacity skips the read), and writes the request's six words, each
 * {@code value << 16 | (t & 0xFFFF)}: its ticket's tag. The consumer at {@code tail} = t takes
 * the cell once all six words carry t's tag, reads the request, and frees the cell with sequence
 * t + capacity (release). An aligned 8-byte store is single-copy atomic, so a word is either the
 * previous occupant's (ticket t - capacity, another tag: capacity is below 2^16) or this one's, and
 * the producer needs no fence between its data and a publish word: on the GPU that fence (a
 * system-scope release) waited ~0.9 us per push for its stores to reach host memory. A full ring
 * holds producers on their cell: back-pressure without a lock. {@code posted} (producers' count)
 * and {@code completed} (the proxy's count of leading tickets whose writes completed, release) are
 * what a quiet compares. Values carry 48 bits (offsets, sizes and immediates far below 2^48).
 *
 * <p>Layout: head, tail, posted and completed each on their own 128-byte line (no false sharing
 * between the GPU's atomics, the proxy's stores and adjacent-line prefetch), then the cells, 64
 * bytes each: sequence, then tagged words: op | target rank << 32, channel hint, source offset,
 * destination offset, bytes, immediate. {@link #LAYOUT_BYTES} and the offsets are public so the kernel source and a
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
    /** Low bits of every request word: its ticket's tag. */
    public static final int TAG_BITS = 16;
    public static final long TAG_MASK = (1L << TAG_BITS) - 1;
    /** Largest value a request word carries. */
    public static final long MAX_VALUE = (1L << (64 - TAG_BITS)) - 1;
    /** Largest ring: two occupants of a cell (tickets capacity apart) must differ in tag. */
    public static final int MAX_CAPACITY = 1 << (TAG_BITS - 1);
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
     * initialises it: counters 0, cell i's sequence i and its words tagged as the lap before the
 * first (ticket i - capacity). {@code capacity} is a power of two up to {@link #MAX_CAPACITY}.
     */
    public RequestRing(MemorySegment ring, int capacity) {
        this(ring, 0, capacity);
    }

    /** A ring in pinned host memory that kernels reach at {@code memory.deviceAddress()}. */
    public static RequestRing mapped(PinnedHostBuffer memory, int capacity) {
        return new RequestRing(memory.segment(), memory.deviceAddress(), capacity);
    }

    private RequestRing(MemorySegment ring, long deviceAddress, int capacity) {
        if (capacity < 2 || Integer.bitCount(capacity) != 1 || capacity > MAX_CAPACITY) {
            throw new IllegalArgumentException("ring capacity " + capacity + " is not a power of two from 2 to " + MAX_CAPACITY);
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
            // Words of the lap before the first: zeros would carry tag 0, ticket 0's.
            long stale = tagged(0, (i - capacity) & TAG_MASK);
            for (long w = OP_TARGET; w <= IMM; w += 8) {
                LONG.setRelease(ring, cell(i) + w, stale);
            }
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
        long tag = t & TAG_MASK;
        LONG.setOpaque(ring, c + OP_TARGET, tagged(((long) target << 32) | (op & 0xFFFF_FFFFL), tag));
        LONG.setOpaque(ring, c + CHANNEL, tagged(channel & 0xFFFF_FFFFL, tag));
        LONG.setOpaque(ring, c + SRC, tagged(src, tag));
        LONG.setOpaque(ring, c + DST, tagged(dst, tag));
        LONG.setOpaque(ring, c + BYTES, tagged(bytes, tag));
        LONG.setRelease(ring, c + IMM, tagged(imm, tag));
        LONG.getAndAdd(ring, POSTED, 1L);
        return true;
    }

    /**
     * Consumer side (the proxy thread only): copies the next published request into {@code into}
     * and frees its cell; false when none is published yet. Allocation-free.
     */
    public boolean poll(Request into) {
        long c = cell(tail);
        long tag = tail & TAG_MASK;
        // Cheapest rejection first: the last word a producer writes.
        long imm = (long) LONG.getAcquire(ring, c + IMM);
        long opTarget = (long) LONG.getAcquire(ring, c + OP_TARGET);
        long channel = (long) LONG.getAcquire(ring, c + CHANNEL);
        long src = (long) LONG.getAcquire(ring, c + SRC);
        long dst = (long) LONG.getAcquire(ring, c + DST);
        long bytes = (long) LONG.getAcquire(ring, c + BYTES);
        if (((imm ^ tag) & TAG_MASK) != 0 || ((opTarget ^ tag) & TAG_MASK) != 0 || ((channel ^ tag) & TAG_MASK) != 0
                || ((src ^ tag) & TAG_MASK) != 0 || ((dst ^ tag) & TAG_MASK) != 0 || ((bytes ^ tag) & TAG_MASK) != 0) {
            return false; // not published yet, or only partly visible
        }
        opTarget >>>= TAG_BITS;
        into.op = (int) opTarget;
        into.target = (int) (opTarget >>> 32);
        into.channel = (int) (channel >>> TAG_BITS);
        into.src = src >>> TAG_BITS;
        into.dst = dst >>> TAG_BITS;
        into.bytes = bytes >>> TAG_BITS;
        into.imm = imm >>> TAG_BITS;
        into.ticket = tail;
        LONG.setRelease(ring, c + SEQ, tail + capacity);
        tail++;
        return true;
    }

    /** A request word: {@code value} (at most {@link #MAX_VALUE}) above the ticket's tag. */
    static long tagged(long value, long tag) {
        if (value < 0 || value > MAX_VALUE) {
            throw new IllegalArgumentException("request value " + value + " does not fit the ring's 48 bits");
        }
        return value << TAG_BITS | tag;
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

package io.efabench.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

/** The request ring with Java producers standing in for GPU threads (the consumer is the real proxy side). */
class RequestRingTest {

    private static RequestRing ring(Arena a, int capacity) {
        return new RequestRing(a.allocate(RequestRing.bytesFor(capacity), RequestRing.LINE), capacity);
    }

    /** Counters on their own 128-byte lines, cells 64-byte aligned after them: no false sharing. */
    @Test
    void layoutKeepsCountersApartAndCellsAligned() {
        long[] counters = {RequestRing.HEAD, RequestRing.TAIL, RequestRing.POSTED, RequestRing.COMPLETED};
        for (int i = 0; i < counters.length; i++) {
            assertEquals(0, counters[i] % RequestRing.LINE);
            for (int j = 0; j < i; j++) {
                assertTrue(Math.abs(counters[i] - counters[j]) >= RequestRing.LINE, "counters " + i + " and " + j);
            }
            assertTrue(counters[i] + 8 <= RequestRing.CELLS);
        }
        assertEquals(0, RequestRing.CELLS % RequestRing.CELL);
        assertTrue(RequestRing.IMM + 8 <= RequestRing.CELL, "a request fits its cell");
        try (Arena a = Arena.ofConfined()) {
            assertThrows(IllegalArgumentException.class, () -> ring(a, 6), "capacity must be a power of two");
            MemorySegment small = a.allocate(RequestRing.bytesFor(8) - 1, RequestRing.LINE);
            assertThrows(IllegalArgumentException.class, () -> new RequestRing(small, 8));
        }
    }

    /**
     * A cell is taken only once every word carries its ticket's tag: words that arrive one by one
     * (a GPU's stores to host memory, unordered without a fence) or still hold the previous lap's
     * request are not a request yet.
     */
    @Test
    void aCellIsTakenOnlyWhenEveryWordCarriesItsTicketsTag() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment m = a.allocate(RequestRing.bytesFor(4), RequestRing.LINE);
            RequestRing r = new RequestRing(m, 4);
            RequestRing.Request q = new RequestRing.Request();
            assertFalse(r.poll(q), "a fresh ring holds no request (zeroed words would carry ticket 0's tag)");
            for (int i = 0; i < 4; i++) { // one lap: every cell now holds a request of tag 0..3
                assertTrue(r.offer(1, 1, 0, i, i, 8, i, 1));
                assertTrue(r.poll(q));
            }
            long cell = RequestRing.CELLS; // ticket 4 reuses cell 0, which still holds ticket 0's words
            assertFalse(r.poll(q), "the previous lap's request");
            long[] words = {RequestRing.IMM, RequestRing.SRC, RequestRing.OP_TARGET, RequestRing.BYTES, RequestRing.DST,
                RequestRing.CHANNEL};
            long[] values = {77, 4096, (2L << 32) | 1, 64, 8192, 0};
            for (int w = 0; w < words.length; w++) {
                assertFalse(r.poll(q), w + " of 6 words written");
                m.set(ValueLayout.JAVA_LONG, cell + words[w], RequestRing.tagged(values[w], 4));
            }
            assertTrue(r.poll(q));
            assertEquals(4, q.ticket);
            assertEquals(2, q.target);
            assertEquals(1, q.op);
            assertEquals(4096, q.src);
            assertEquals(8192, q.dst);
            assertEquals(64, q.bytes);
            assertEquals(77, q.imm);
            assertThrows(IllegalArgumentException.class, () -> RequestRing.tagged(1L << 48, 0), "48 bits of value");
            assertThrows(IllegalArgumentException.class, () -> ring(a, RequestRing.MAX_CAPACITY * 2),
                    "tags of two occupants of a cell must differ");
        }
    }

    /** Every field travels, in order, through many wrap-arounds of a small ring. */
    @Test
    void fieldsSurviveWrapAround() {
        try (Arena a = Arena.ofConfined()) {
            RequestRing r = ring(a, 8);
            RequestRing.Request q = new RequestRing.Request();
            for (int i = 0; i < 1000; i++) {
                assertTrue(r.offer(i % 3, i % 5, i % 2, 10L * i, 20L * i, 4096 + i, 0xABCD0000L + i, Long.MAX_VALUE));
                assertTrue(r.poll(q));
                assertEquals(i % 3, q.op);
                assertEquals(i % 5, q.target);
                assertEquals(i % 2, q.channel);
                assertEquals(10L * i, q.src);
                assertEquals(20L * i, q.dst);
                assertEquals(4096 + i, q.bytes);
                assertEquals(0xABCD0000L + i, q.imm);
                assertEquals(i, q.ticket);
            }
            assertFalse(r.poll(q), "nothing left");
            assertEquals(1000, r.posted());
            r.complete(1000);
            assertEquals(1000, r.completed());
        }
    }

    /** A full ring holds the next producer until the proxy frees a cell. */
    @Test
    void aFullRingHoldsProducersBack() throws Exception {
        try (Arena a = Arena.ofShared()) {
            RequestRing r = ring(a, 4);
            for (int i = 0; i < 4; i++) {
                assertTrue(r.offer(0, 1, 0, i, i, 1, i, Long.MAX_VALUE));
            }
            CountDownLatch done = new CountDownLatch(1);
            Thread producer = new Thread(() -> {
                r.offer(0, 1, 0, 4, 4, 1, 4, Long.MAX_VALUE);
                done.countDown();
            });
            producer.start();
            assertFalse(done.await(200, TimeUnit.MILLISECONDS), "the fifth request must wait for a free cell");
            RequestRing.Request q = new RequestRing.Request();
            assertTrue(r.poll(q));
            assertTrue(done.await(10, TimeUnit.SECONDS), "freed cell: the producer goes on");
            for (int i = 1; i <= 4; i++) {
                assertTrue(r.poll(q));
                assertEquals(i, q.imm);
            }
            producer.join();
        }
    }

    /** Three producers, one consumer: every request arrives exactly once, each producer's in its order. */
    @Test
    void manyProducersOneConsumer() throws Exception {
        int producers = 3;
        int each = 30_000;
        try (Arena a = Arena.ofShared()) {
            RequestRing r = ring(a, 64);
            Thread[] threads = new Thread[producers];
            for (int p = 0; p < producers; p++) {
                int id = p;
                threads[p] = new Thread(() -> {
                    for (int i = 0; i < each; i++) {
                        r.offer(0, id, 0, i, 0, 8, ((long) id << 32) | i, Long.MAX_VALUE);
                    }
                });
                threads[p].start();
            }
            long[] next = new long[producers];
            RequestRing.Request q = new RequestRing.Request();
            AtomicBoolean ok = new AtomicBoolean(true);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            for (long got = 0; got < (long) producers * each; ) {
                if (r.poll(q)) {
                    int id = (int) (q.imm >>> 32);
                    ok.compareAndSet(true, q.target == id && (q.imm & 0xFFFF_FFFFL) == next[id] && q.src == next[id]);
                    next[id]++;
                    got++;
                } else if (System.nanoTime() > deadline) {
                    throw new AssertionError("stalled after " + got + " requests");
                }
            }
            for (Thread t : threads) {
                t.join();
            }
            assertTrue(ok.get(), "each producer's requests arrive intact and in its order");
            assertEquals((long) producers * each, r.posted());
        }
    }
}

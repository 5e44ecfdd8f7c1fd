package io.efabench.harness.engine;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Volatile longs, each alone on its cache lines: element k sits 128 bytes from its neighbours and
 * from both ends of the array, so one thread publishes per-peer progress (the proxy's acks) while
 * another spins on it without either disturbing the lines of the objects around the array.
 */
public final class PaddedLongArray {
    /** Longs from one element to the next: 128 bytes between them (adjacent-line prefetch pairs 64-byte lines). */
    static final int STRIDE = 17;
    private static final VarHandle AT = MethodHandles.arrayElementVarHandle(long[].class);

    private final long[] values;
    private final int length;

    public PaddedLongArray(int length) {
        this.length = length;
        this.values = new long[(length + 2) * STRIDE];
    }

    public int length() {
        return length;
    }

    /** Element k (volatile read). */
    public long get(int k) {
        return (long) AT.getVolatile(values, index(k));
    }

    /** Sets element k with release semantics (AtomicLongArray's lazySet). */
    public void setRelease(int k, long v) {
        AT.setRelease(values, index(k), v);
    }

    /** Where element k lives in the backing array (LayoutTest reads it). */
    static int index(int k) {
        return (k + 1) * STRIDE;
    }
}

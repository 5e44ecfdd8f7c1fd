package io.efabench.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The {@code void** kernelParams} of cuLaunchKernel, allocated once and mutated in place, so a
 * launch allocates nothing. Slot i holds the i-th kernel parameter (8 bytes each; 4-byte
 * parameters use the low half).
 */
public final class KernelArgs {
    private final MemorySegment values;
    private final MemorySegment pointers;
    private final int count;

    public KernelArgs(int count) {
        Arena arena = Arena.ofAuto();
        this.count = count;
        this.values = arena.allocate(8L * Math.max(count, 1), 8);
        this.pointers = arena.allocate(ValueLayout.ADDRESS, Math.max(count, 1));
        for (int i = 0; i < count; i++) {
            pointers.setAtIndex(ValueLayout.ADDRESS, i, values.asSlice(8L * i, 8));
        }
    }

    public KernelArgs pointer(int index, DeviceMemory memory) {
        return u64(index, memory.deviceAddress());
    }

    public KernelArgs u64(int index, long value) {
        values.set(ValueLayout.JAVA_LONG, 8L * check(index), value);
        return this;
    }

    public KernelArgs u32(int index, int value) {
        values.set(ValueLayout.JAVA_LONG, 8L * check(index), 0L);
        values.set(ValueLayout.JAVA_INT, 8L * index, value);
        return this;
    }

    public int count() {
        return count;
    }

    MemorySegment pointers() {
        return pointers;
    }

    private int check(int index) {
        if (index < 0 || index >= count) {
            throw new IndexOutOfBoundsException("kernel argument " + index + " of " + count);
        }
        return index;
    }
}

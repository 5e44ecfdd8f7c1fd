package io.efabench.cuda;

import static io.efabench.cuda.Cuda.check;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import io.efabench.cuda.generated.CudaDriver;

/**
 * A retained primary context. Every object made in it ({@link DeviceBuffer}, {@link CudaStream}...)
 * belongs to it; CUDA's current context is per thread, so code that may run on another thread
 * than the one that created the objects calls {@link #makeCurrent()} first (it is cheap).
 */
public final class CudaContext implements AutoCloseable {
    private final CudaDevice device;
    private final MemorySegment handle;
    private boolean closed;

    private CudaContext(CudaDevice device, MemorySegment handle) {
        this.device = device;
        this.handle = handle;
    }

    /** Retains {@code device}'s primary context (the one the runtime API would use). */
    public static CudaContext retainPrimary(CudaDevice device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            check(CudaDriver.cuDevicePrimaryCtxRetain(p, device.handle()),
                    "cuDevicePrimaryCtxRetain(device " + device.ordinal() + ")");
            CudaContext ctx = new CudaContext(device, p.get(ValueLayout.ADDRESS, 0));
            ctx.makeCurrent();
            return ctx;
        }
    }

    /** Binds this context to the calling thread. No allocation: safe on hot paths. */
    public void makeCurrent() {
        check(CudaDriver.cuCtxSetCurrent(handle), "cuCtxSetCurrent");
    }

    /** Waits for all work of this context (cuCtxSynchronize). */
    public void synchronize() {
        makeCurrent();
        check(CudaDriver.cuCtxSynchronize(), "cuCtxSynchronize");
    }

    public CudaDevice device() {
        return device;
    }

    /** Free and total device memory, in bytes. */
    public long[] memoryInfo() {
        makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment free = arena.allocate(ValueLayout.JAVA_LONG);
            MemorySegment total = arena.allocate(ValueLayout.JAVA_LONG);
            check(CudaDriver.cuMemGetInfo_v2(free, total), "cuMemGetInfo");
            return new long[] {free.get(ValueLayout.JAVA_LONG, 0), total.get(ValueLayout.JAVA_LONG, 0)};
        }
    }

    MemorySegment handle() {
        return handle;
    }

    /** Releases the primary context (it is destroyed when the last retain is released). */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        check(CudaDriver.cuDevicePrimaryCtxRelease_v2(device.handle()),
                "cuDevicePrimaryCtxRelease(device " + device.ordinal() + ")");
    }
}

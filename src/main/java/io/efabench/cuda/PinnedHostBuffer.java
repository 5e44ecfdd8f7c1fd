package io.efabench.cuda;

import static io.efabench.cuda.Cuda.check;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import io.efabench.cuda.generated.CudaDriver;

/**
 * Page-locked host memory mapped into the GPU's address space: the host reads and writes
 * {@link #segment()}, kernels use {@link #deviceAddress()}. Either allocated by CUDA
 * (cuMemHostAlloc DEVICEMAP|PORTABLE) or an existing segment registered in place
 * (cuMemHostRegister), e.g. a buffer that a NIC also uses.
 */
public final class PinnedHostBuffer implements DeviceMemory, AutoCloseable {
    private final CudaContext context;
    private final MemorySegment host;
    private final long device;
    private final boolean registered;
    private boolean closed;

    private PinnedHostBuffer(CudaContext context, MemorySegment host, boolean registered) {
        this.context = context;
        this.host = host;
        this.registered = registered;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.JAVA_LONG);
            check(CudaDriver.cuMemHostGetDevicePointer_v2(p, host, 0), "cuMemHostGetDevicePointer");
            this.device = p.get(ValueLayout.JAVA_LONG, 0);
        }
    }

    public static PinnedHostBuffer allocate(CudaContext context, long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("pinned host buffer of " + bytes + " bytes");
        }
        context.makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            int flags = CudaDriver.CU_MEMHOSTALLOC_DEVICEMAP() | CudaDriver.CU_MEMHOSTALLOC_PORTABLE();
            check(CudaDriver.cuMemHostAlloc(p, bytes, flags), "cuMemHostAlloc(" + bytes + " bytes)");
            return new PinnedHostBuffer(context, p.get(ValueLayout.ADDRESS, 0).reinterpret(bytes), false);
        }
    }

    /** Page-locks and maps {@code segment} in place; close() unregisters it (the caller still owns it). */
    public static PinnedHostBuffer register(CudaContext context, MemorySegment segment) {
        context.makeCurrent();
        int flags = CudaDriver.CU_MEMHOSTREGISTER_DEVICEMAP() | CudaDriver.CU_MEMHOSTREGISTER_PORTABLE();
        check(CudaDriver.cuMemHostRegister_v2(segment, segment.byteSize(), flags),
                "cuMemHostRegister(" + segment.byteSize() + " bytes)");
        return new PinnedHostBuffer(context, segment, true);
    }

    /** The host view. Stays valid until close(). */
    public MemorySegment segment() {
        return host;
    }

    @Override
    public long deviceAddress() {
        return device;
    }

    @Override
    public long byteSize() {
        return host.byteSize();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        context.makeCurrent();
        if (registered) {
            check(CudaDriver.cuMemHostUnregister(host), "cuMemHostUnregister");
        } else {
            check(CudaDriver.cuMemFreeHost(host), "cuMemFreeHost");
        }
    }
}

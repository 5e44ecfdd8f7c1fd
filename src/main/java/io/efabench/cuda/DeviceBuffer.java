package io.efabench.cuda;

import static io.efabench.cuda.Cuda.check;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import io.efabench.cuda.generated.CudaDriver;

/** Device memory from cuMemAlloc, freed on close. */
public final class DeviceBuffer implements DeviceMemory, AutoCloseable {
    /**
     * Allocations are rounded up to 64 KiB so that a {@link DmaBuf} of the whole buffer is
     * host-page aligned at both ends (cuMemGetHandleForAddressRange demands it); byteSize()
     * stays what was asked for.
     */
    static final long GRANULE = 64 * 1024;

    private final CudaContext context;
    private final long address;
    private final long size;
    private boolean closed;

    private DeviceBuffer(CudaContext context, long address, long size) {
        this.context = context;
        this.address = address;
        this.size = size;
    }

    public static DeviceBuffer allocate(CudaContext context, long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("device buffer of " + bytes + " bytes");
        }
        context.makeCurrent();
        long rounded = (bytes + GRANULE - 1) / GRANULE * GRANULE;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.JAVA_LONG);
            check(CudaDriver.cuMemAlloc_v2(p, rounded), "cuMemAlloc(" + bytes + " bytes on GPU "
                    + context.device().ordinal() + ")");
            return new DeviceBuffer(context, p.get(ValueLayout.JAVA_LONG, 0), bytes);
        }
    }

    /**
     * Sets CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: synchronous memory operations on this allocation
     * (a cudaMemcpy device-to-device, as libfabric's shm does into a peer's buffer through CUDA
     * IPC) then return only when the copy is done, not when it is queued. Without it a
     * transfer's completion can come before its bytes land, and times fall below what the
     * memory can do. Memory that a NIC or a peer process writes needs it (fabtests, NCCL and
     * UCX set it too).
     */
    public DeviceBuffer syncMemops() {
        context.makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment one = arena.allocate(ValueLayout.JAVA_INT);
            one.set(ValueLayout.JAVA_INT, 0, 1);
            check(CudaDriver.cuPointerSetAttribute(one, CudaDriver.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS(), address),
                    "cuPointerSetAttribute(SYNC_MEMOPS)");
        }
        return this;
    }

    @Override
    public long deviceAddress() {
        return address;
    }

    @Override
    public long byteSize() {
        return size;
    }

    public CudaContext context() {
        return context;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        context.makeCurrent();
        check(CudaDriver.cuMemFree_v2(address), "cuMemFree");
    }
}

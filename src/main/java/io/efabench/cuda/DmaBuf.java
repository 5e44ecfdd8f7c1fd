package io.efabench.cuda;

import static io.efabench.cuda.Cuda.check;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

import io.efabench.cuda.generated.CudaDriver;

/**
 * A DMA-BUF file descriptor for device memory (cuMemGetHandleForAddressRange), for RDMA
 * registration (libfabric {@code fi_mr_dmabuf}: fd, offset, length). The exported range must be
 * host-page aligned at both ends, so it is widened to 64 KiB boundaries inside the allocation and
 * {@link #offset()} says where the memory starts inside the exported range.
 */
public final class DmaBuf implements AutoCloseable {
    private static final long ALIGN = 64 * 1024;
    private static final MethodHandle CLOSE = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().findOrThrow("close"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

    private final int fd;
    private final long offset;
    private final long length;
    private boolean closed;

    private DmaBuf(int fd, long offset, long length) {
        this.fd = fd;
        this.offset = offset;
        this.length = length;
    }

    /** Exports the pages holding {@code memory}; needs CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED. */
    public static DmaBuf export(DeviceMemory memory) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment base = arena.allocate(ValueLayout.JAVA_LONG);
            MemorySegment size = arena.allocate(ValueLayout.JAVA_LONG);
            check(CudaDriver.cuMemGetAddressRange_v2(base, size, memory.deviceAddress()), "cuMemGetAddressRange");
            long allocStart = base.get(ValueLayout.JAVA_LONG, 0);
            long allocEnd = allocStart + size.get(ValueLayout.JAVA_LONG, 0);
            long start = Math.max(allocStart, memory.deviceAddress() / ALIGN * ALIGN);
            long end = Math.min(allocEnd, (memory.deviceAddress() + memory.byteSize() + ALIGN - 1) / ALIGN * ALIGN);
            MemorySegment fd = arena.allocate(ValueLayout.JAVA_INT);
            check(CudaDriver.cuMemGetHandleForAddressRange(fd, start, end - start,
                    CudaDriver.CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD(), 0),
                    "cuMemGetHandleForAddressRange(" + (end - start) + " bytes, DMA_BUF_FD)");
            return new DmaBuf(fd.get(ValueLayout.JAVA_INT, 0), memory.deviceAddress() - start, memory.byteSize());
        }
    }

    public int fd() {
        return fd;
    }

    /** Where the exported memory starts inside the DMA-BUF. */
    public long offset() {
        return offset;
    }

    public long length() {
        return length;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            int rc = (int) CLOSE.invokeExact(fd);
            if (rc != 0) {
                throw new IllegalStateException("close(dmabuf fd " + fd + ") failed");
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }
}

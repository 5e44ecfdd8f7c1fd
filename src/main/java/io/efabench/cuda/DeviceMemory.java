package io.efabench.cuda;

import static io.efabench.cuda.Cuda.check;

import java.lang.foreign.MemorySegment;

import io.efabench.cuda.generated.CudaDriver;

/**
 * Memory a GPU can address: a {@link DeviceBuffer}, a {@link PinnedHostBuffer}'s device alias,
 * a peer's buffer mapped through {@link IpcHandle#open}, or a {@link #slice} of one of them.
 *
 * <p>{@link #deviceAddress()} is the CUDA unified address, meant for kernel arguments (through
 * {@link KernelArgs}) and for registration with other native layers (libfabric FI_HMEM_CUDA).
 * The synchronous helpers below run on the calling thread's current context: call
 * {@link CudaContext#makeCurrent()} first when in doubt.
 */
public interface DeviceMemory {

    long deviceAddress();

    long byteSize();

    /**
     * The range as a segment, for handing its address to a library that takes device pointers
     * (fi_mr_regattr with FI_HMEM_CUDA). Its address is a device virtual address: never read or
     * write it from the host.
     */
    default MemorySegment addressRange() {
        return MemorySegment.ofAddress(deviceAddress()).reinterpret(byteSize());
    }

    /** A view of {@code length} bytes at {@code offset}; the owner keeps the memory alive. */
    default DeviceMemory slice(long offset, long length) {
        if (offset < 0 || length < 0 || offset + length > byteSize()) {
            throw new IndexOutOfBoundsException("slice [" + offset + ", " + (offset + length) + ") of " + byteSize() + " bytes");
        }
        long address = deviceAddress() + offset;
        return new DeviceMemory() {
            @Override
            public long deviceAddress() {
                return address;
            }

            @Override
            public long byteSize() {
                return length;
            }
        };
    }

    /**
     * Copies {@code host} (same size) to this memory and waits until it has landed (a plain
     * cuMemcpyHtoD from pageable memory may return before the DMA is done, which work on a
     * non-blocking stream would not wait for).
     */
    default void copyFrom(MemorySegment host) {
        requireSameSize(host);
        check(CudaDriver.cuMemcpyHtoD_v2(deviceAddress(), host, host.byteSize()),
                "cuMemcpyHtoD(" + host.byteSize() + " bytes)");
        check(CudaDriver.cuCtxSynchronize(), "cuCtxSynchronize after cuMemcpyHtoD");
    }

    /** Copies this memory to {@code host} (same size), synchronously. */
    default void copyTo(MemorySegment host) {
        requireSameSize(host);
        check(CudaDriver.cuMemcpyDtoH_v2(host, deviceAddress(), host.byteSize()),
                "cuMemcpyDtoH(" + host.byteSize() + " bytes)");
    }

    /** Sets every byte to {@code value}, synchronously with respect to the host. */
    default void fill(byte value) {
        check(CudaDriver.cuMemsetD8_v2(deviceAddress(), value, byteSize()), "cuMemsetD8(" + byteSize() + " bytes)");
        check(CudaDriver.cuCtxSynchronize(), "cuCtxSynchronize after cuMemsetD8");
    }

    /** Sets every 4-byte word to {@code value} (byteSize must be a multiple of 4), synchronously. */
    default void fillWords(int value) {
        if (byteSize() % 4 != 0) {
            throw new IllegalArgumentException(byteSize() + " bytes is not a whole number of 4-byte words");
        }
        check(CudaDriver.cuMemsetD32_v2(deviceAddress(), value, byteSize() / 4), "cuMemsetD32(" + byteSize() + " bytes)");
        check(CudaDriver.cuCtxSynchronize(), "cuCtxSynchronize after cuMemsetD32");
    }

    private void requireSameSize(MemorySegment host) {
        if (host.byteSize() != byteSize()) {
            throw new IllegalArgumentException("host segment of " + host.byteSize() + " bytes for device memory of "
                    + byteSize() + " bytes");
        }
    }
}

package io.efabench.cuda;

import static io.efabench.cuda.Cuda.check;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.Arrays;

import io.efabench.cuda.generated.CUipcMemHandle_st;
import io.efabench.cuda.generated.CudaDriver;

/**
 * What another process needs to map a piece of this process's device memory: the
 * cuIpcGetMemHandle bytes of the allocation that holds it, plus where the piece starts inside
 * that allocation and how long it is. cuIpcOpenMemHandle maps the allocation's base, so a
 * handle without the offset (the reference suite's bug) points the peer at the wrong bytes
 * for any buffer that does not start its allocation.
 *
 * @param handle 64 opaque bytes (CU_IPC_HANDLE_SIZE)
 * @param offset bytes from the allocation's base to the shared memory
 * @param length bytes shared
 */
public record IpcHandle(byte[] handle, long offset, long length) {
    public static final int WIRE_SIZE = 64 + 16;

    public IpcHandle {
        if (handle.length != 64) {
            throw new IllegalArgumentException("IPC handle of " + handle.length + " bytes, expected 64");
        }
        if (offset < 0 || length <= 0) {
            throw new IllegalArgumentException("IPC handle offset " + offset + ", length " + length);
        }
        handle = handle.clone();
    }

    /** A copy of the 64 handle bytes. */
    @Override
    public byte[] handle() {
        return handle.clone();
    }

    /** Exports {@code memory} (cuMemAlloc memory or a slice of it) of the current context. */
    public static IpcHandle export(DeviceMemory memory) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment base = arena.allocate(ValueLayout.JAVA_LONG);
            MemorySegment size = arena.allocate(ValueLayout.JAVA_LONG);
            check(CudaDriver.cuMemGetAddressRange_v2(base, size, memory.deviceAddress()), "cuMemGetAddressRange");
            long allocationBase = base.get(ValueLayout.JAVA_LONG, 0);
            MemorySegment h = arena.allocate(CUipcMemHandle_st.layout());
            check(CudaDriver.cuIpcGetMemHandle(h, allocationBase), "cuIpcGetMemHandle");
            return new IpcHandle(h.toArray(ValueLayout.JAVA_BYTE), memory.deviceAddress() - allocationBase,
                    memory.byteSize());
        }
    }

    /** Maps the peer's memory into {@code context} (peer access enabled lazily by the driver). */
    public PeerMapping open(CudaContext context) {
        context.makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment h = arena.allocate(CUipcMemHandle_st.layout());
            MemorySegment.copy(handle, 0, h, ValueLayout.JAVA_BYTE, 0, 64);
            MemorySegment p = arena.allocate(ValueLayout.JAVA_LONG);
            check(CudaDriver.cuIpcOpenMemHandle_v2(p, h, CudaDriver.CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS()),
                    "cuIpcOpenMemHandle(into GPU " + context.device().ordinal() + ")");
            return new PeerMapping(context, p.get(ValueLayout.JAVA_LONG, 0), offset, length);
        }
    }

    /** 80 bytes for the rank group's allgather. */
    public byte[] toBytes() {
        return ByteBuffer.allocate(WIRE_SIZE).put(handle).putLong(offset).putLong(length).array();
    }

    public static IpcHandle fromBytes(byte[] bytes) {
        if (bytes.length != WIRE_SIZE) {
            throw new IllegalArgumentException("IPC handle message of " + bytes.length + " bytes, expected " + WIRE_SIZE);
        }
        ByteBuffer b = ByteBuffer.wrap(bytes);
        byte[] h = new byte[64];
        b.get(h);
        return new IpcHandle(h, b.getLong(), b.getLong());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IpcHandle other && Arrays.equals(handle, other.handle) && offset == other.offset
                && length == other.length;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(handle) * 31 + Long.hashCode(offset) * 17 + Long.hashCode(length);
    }

    @Override
    public String toString() {
        return "IpcHandle[offset=" + offset + ", length=" + length + "]";
    }

    /** A peer's memory mapped into this process; close() unmaps it (cuIpcCloseMemHandle). */
    public static final class PeerMapping implements DeviceMemory, AutoCloseable {
        private final CudaContext context;
        private final long base;
        private final long address;
        private final long length;
        private boolean closed;

        PeerMapping(CudaContext context, long base, long offset, long length) {
            this.context = context;
            this.base = base;
            this.address = base + offset;
            this.length = length;
        }

        @Override
        public long deviceAddress() {
            return address;
        }

        @Override
        public long byteSize() {
            return length;
        }

        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            context.makeCurrent();
            check(CudaDriver.cuIpcCloseMemHandle(base), "cuIpcCloseMemHandle");
        }
    }
}

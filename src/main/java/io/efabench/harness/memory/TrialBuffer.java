package io.efabench.harness.memory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.Function;

import io.efabench.cuda.CudaException;
import io.efabench.cuda.DeviceBuffer;
import io.efabench.cuda.DmaBuf;
import io.efabench.cuda.PinnedHostBuffer;
import io.efabench.fabric.Channel;
import io.efabench.fabric.DmaBufUnsupportedException;
import io.efabench.fabric.MemoryRegion;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.MemoryKind;
import io.efabench.harness.Sizes;

/**
 * A payload buffer of one memory kind, registered on every channel of a trial: what the round
 * protocols move and check. The memory and its pattern code are the kind's {@link PayloadMemory}
 * (host: the CPU fills and checks; device: the GPU's pattern kernels), the registrations this
 * class's.
 * Owned by the trial: closed after its channels' endpoints (which close the regions first).
 */
public final class TrialBuffer implements AutoCloseable {
    /** How device memory was registered with the provider, for provenance. */
    public enum Registration {
        /** Host memory, FI_HMEM_SYSTEM. */
        HOST,
        /** fi_mr_regattr with FI_MR_DMABUF, iface FI_HMEM_CUDA. */
        DMABUF,
        /** fi_mr_regattr by virtual address, iface FI_HMEM_CUDA (the provider or API refused DMA-BUF). */
        VA
    }

    public final MemoryKind kind;
    private final long bytes;
    private final PayloadMemory memory;
    private final MemoryRegion[] regions;
    private final Registration registration;
    private final String dmaBufRefusal;

    private TrialBuffer(MemoryKind kind, long bytes, PayloadMemory memory, MemoryRegion[] regions, Registration registration,
            String dmaBufRefusal) {
        this.kind = kind;
        this.bytes = bytes;
        this.memory = memory;
        this.regions = regions;
        this.registration = registration;
        this.dmaBufRefusal = dmaBufRefusal;
    }

    /**
     * Host memory: page-aligned from {@code arena}, page-locked on {@code gpu} when there is one.
     * The arena outlives the buffer (the trial closes it last).
     */
    public static TrialBuffer host(Arena arena, long bytes, TrialGpu gpu, Channel[] channels, int rank) {
        MemorySegment seg;
        try {
            seg = arena.allocate(bytes, 4096);
        } catch (OutOfMemoryError e) {
            throw new BenchmarkSetupException("rank " + rank + ": cannot allocate " + Sizes.label(bytes) + " of host memory");
        }
        HostPayload payload = new HostPayload(seg, gpu == null ? null : PinnedHostBuffer.register(gpu.context, seg));
        MemoryRegion[] mrs;
        try {
            mrs = registerAll(channels, ch -> ch.register(seg));
        } catch (RuntimeException e) {
            payload.close();
            throw e;
        }
        return new TrialBuffer(MemoryKind.HOST, bytes, payload, mrs, Registration.HOST, null);
    }

    /**
     * Device memory on {@code gpu}, registered on every channel through DMA-BUF, or by virtual
     * address where the provider, the API version or the driver refuses DMA-BUF.
     */
    public static TrialBuffer device(long bytes, TrialGpu gpu, Channel[] channels, int rank) {
        if (bytes % 4 != 0) {
            throw new BenchmarkSetupException("device buffers are checked in 4-byte words: size " + bytes
                    + " B is not a multiple of 4");
        }
        DeviceBuffer mem;
        try {
            mem = DeviceBuffer.allocate(gpu.context, bytes).syncMemops();
        } catch (CudaException e) {
            throw new BenchmarkSetupException("rank " + rank + ": cannot allocate " + Sizes.label(bytes)
                    + " of device memory on GPU " + gpu.device.ordinal() + ": " + e.getMessage());
        }
        DevicePayload payload = new DevicePayload(gpu, mem);
        MemorySegment seg = mem.addressRange();
        int ordinal = gpu.device.ordinal();
        DmaBuf dmaBuf = null;
        String refusal = null;
        try {
            dmaBuf = DmaBuf.export(mem);
        } catch (CudaException e) {
            refusal = "the driver exports no DMA-BUF: " + e.getMessage();
        }
        MemoryRegion[] mrs = null;
        Registration how = Registration.VA;
        try {
            if (dmaBuf != null) {
                DmaBuf exported = dmaBuf;
                try {
                    mrs = registerAll(channels, ch -> ch.registerCudaDmaBuf(seg, exported.fd(), exported.offset(), ordinal));
                    how = Registration.DMABUF;
                    payload.keep(exported);
                } catch (DmaBufUnsupportedException e) {
                    refusal = e.getMessage(); // every channel has the same provider: VA for all of them
                    dmaBuf.close();
                }
                dmaBuf = null;
            }
            if (mrs == null) {
                mrs = registerAll(channels, ch -> ch.registerCuda(seg, ordinal));
            }
        } catch (RuntimeException e) {
            if (dmaBuf != null) {
                dmaBuf.close();
            }
            payload.close();
            throw e;
        }
        return new TrialBuffer(MemoryKind.DEVICE, bytes, payload, mrs, how, refusal);
    }

    /**
     * Host memory that something else registered, as {@code regions} (one per channel): a fake
     * fabric's stand-ins in unit tests. The caller frees the memory; closing deregisters.
     */
    public static TrialBuffer ofRegistered(MemorySegment segment, MemoryRegion[] regions) {
        return new TrialBuffer(MemoryKind.HOST, segment.byteSize(), new HostPayload(segment, null), regions.clone(),
                Registration.HOST, null);
    }

    public long byteSize() {
        return bytes;
    }

    /** Where kernels see a device buffer. */
    public long deviceAddress() {
        return memory.deviceAddress();
    }

    /** The allocation behind a device buffer (what CUDA IPC exports); a host buffer has none. */
    public DeviceBuffer deviceBuffer() {
        if (memory instanceof DevicePayload device) {
            return device.memory;
        }
        throw new IllegalStateException("a host buffer has no device allocation");
    }

    /** This buffer's registration on channel {@code c}. */
    public MemoryRegion region(int c) {
        return regions[c];
    }

    /** The registrations by channel (the array is this buffer's: do not change it). */
    public MemoryRegion[] regions() {
        return regions;
    }

    public Registration registration() {
        return registration;
    }

    /**
     * How the payload memory is registered, for provenance: the device registration (dmabuf, va),
     * or host memory page-locked on the rank's GPU (cuMemHostRegister, like the seed's pinned
     * buffers) or pageable (no GPU: as fabtests' buffers).
     */
    public String describeRegistration() {
        return memory.describe();
    }

    /** Why DMA-BUF registration was not used, or null. */
    public String dmaBufRefusal() {
        return dmaBufRefusal;
    }

    /** Writes the pattern of (sender, receiver, round); returns when it is in memory. */
    public void fill(int sender, int receiver, long round) {
        fill(0, bytes, sender, receiver, round);
    }

    /**
     * Writes the pattern of (sender, receiver, round) into the block [offset, offset + length),
     * offsets counted from the block's start (all-to-all keeps one block per peer).
     */
    public void fill(long offset, long length, int sender, int receiver, long round) {
        memory.fill(offset, length, sender, receiver, round);
    }

    /** Zeroes the buffer (a zero word never passes the check); returns when it is done. */
    public void clear() {
        memory.clear();
    }

    /**
     * Checks every byte against the pattern of (sender, receiver, round); throws
     * {@link Payload.CorruptionException} naming receiver, sender, round and offset.
     */
    public void verify(int sender, int receiver, long round) {
        verify(0, bytes, sender, receiver, round);
    }

    /** As {@link #verify(int, int, long)} for the block [offset, offset + length); offsets named are the block's. */
    public void verify(long offset, long length, int sender, int receiver, long round) {
        memory.verify(offset, length, sender, receiver, round);
    }

    /** Flips the byte at {@code offset} (tests: EFABENCH_CORRUPT_OFFSET); out of range does nothing. */
    public void corrupt(long offset) {
        if (offset >= 0 && offset < bytes) {
            memory.corrupt(offset);
        }
    }

    /**
     * Deregisters (a no-op for regions the channel already closed with its endpoint) and frees.
     */
    @Override
    public void close() {
        closeAll(regions);
        memory.close();
    }

    /** Registers on every channel; on a failure closes what was registered and rethrows. */
    private static MemoryRegion[] registerAll(Channel[] channels, Function<Channel, MemoryRegion> register) {
        MemoryRegion[] mrs = new MemoryRegion[channels.length];
        try {
            for (int c = 0; c < channels.length; c++) {
                mrs[c] = register.apply(channels[c]);
            }
            return mrs;
        } catch (RuntimeException e) {
            closeAll(mrs);
            throw e;
        }
    }

    private static void closeAll(MemoryRegion[] mrs) {
        for (int i = 0; i < mrs.length; i++) {
            if (mrs[i] != null) {
                try {
                    mrs[i].close();
                } catch (RuntimeException ignored) {
                    // on the way out of a failure: the first error is the one reported
                }
                mrs[i] = null;
            }
        }
    }
}

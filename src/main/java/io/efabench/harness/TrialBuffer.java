package io.efabench.harness;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.function.Function;

import io.efabench.cuda.CudaException;
import io.efabench.cuda.DeviceBuffer;
import io.efabench.cuda.DmaBuf;
import io.efabench.cuda.PatternKernels;
import io.efabench.cuda.PinnedHostBuffer;
import io.efabench.fabric.Channel;
import io.efabench.fabric.DmaBufUnsupportedException;
import io.efabench.fabric.MemoryRegion;

/**
 * A payload buffer of one memory kind, registered on every channel of a trial: what the round
 * protocols move and check. Host buffers are filled and checked by the CPU, device buffers by
 * the GPU's pattern kernels, both with the pattern of (sender, receiver, round, offset).
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
    private final TrialGpu gpu;
    /** Host memory (HOST), or the device pointer wrapped as a segment and never dereferenced (DEVICE). */
    private final MemorySegment segment;
    private final PinnedHostBuffer pinned;
    private final DeviceBuffer device;
    private final DmaBuf dmaBuf;
    private final MemoryRegion[] regions;
    private final Registration registration;
    private final String dmaBufRefusal;

    private TrialBuffer(MemoryKind kind, long bytes, TrialGpu gpu, MemorySegment segment, PinnedHostBuffer pinned,
            DeviceBuffer device, DmaBuf dmaBuf, MemoryRegion[] regions, Registration registration, String dmaBufRefusal) {
        this.kind = kind;
        this.bytes = bytes;
        this.gpu = gpu;
        this.segment = segment;
        this.pinned = pinned;
        this.device = device;
        this.dmaBuf = dmaBuf;
        this.regions = regions;
        this.registration = registration;
        this.dmaBufRefusal = dmaBufRefusal;
    }

    /**
     * Host memory: page-aligned from {@code arena}, page-locked on {@code gpu} when there is one.
     * The arena outlives the buffer (the trial closes it last).
     */
    static TrialBuffer host(Arena arena, long bytes, TrialGpu gpu, Channel[] channels, int rank) {
        MemorySegment seg;
        try {
            seg = arena.allocate(bytes, 4096);
        } catch (OutOfMemoryError e) {
            throw new BenchmarkSetupException("rank " + rank + ": cannot allocate " + Sizes.format(bytes) + " of host memory");
        }
        PinnedHostBuffer pinned = gpu == null ? null : PinnedHostBuffer.register(gpu.context, seg);
        MemoryRegion[] mrs;
        try {
            mrs = registerAll(channels, ch -> ch.register(seg));
        } catch (RuntimeException e) {
            if (pinned != null) {
                pinned.close();
            }
            throw e;
        }
        return new TrialBuffer(MemoryKind.HOST, bytes, gpu, seg, pinned, null, null, mrs, Registration.HOST, null);
    }

    /**
     * Device memory on {@code gpu}, registered on every channel through DMA-BUF, or by virtual
     * address where the provider, the API version or the driver refuses DMA-BUF.
     */
    static TrialBuffer device(long bytes, TrialGpu gpu, Channel[] channels, int rank) {
        if (bytes % 4 != 0) {
            throw new BenchmarkSetupException("device buffers are checked in 4-byte words: size " + bytes
                    + " B is not a multiple of 4");
        }
        DeviceBuffer mem;
        try {
            mem = DeviceBuffer.allocate(gpu.context, bytes).syncMemops();
        } catch (CudaException e) {
            throw new BenchmarkSetupException("rank " + rank + ": cannot allocate " + Sizes.format(bytes)
                    + " of device memory on GPU " + gpu.device.ordinal() + ": " + e.getMessage());
        }
        MemorySegment seg = MemorySegment.ofAddress(mem.deviceAddress()).reinterpret(bytes);
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
                } catch (DmaBufUnsupportedException e) {
                    refusal = e.getMessage(); // every channel has the same provider: VA for all of them
                    dmaBuf.close();
                    dmaBuf = null;
                }
            }
            if (mrs == null) {
                mrs = registerAll(channels, ch -> ch.registerCuda(seg, ordinal));
            }
        } catch (RuntimeException e) {
            if (dmaBuf != null) {
                dmaBuf.close();
            }
            mem.close();
            throw e;
        }
        return new TrialBuffer(MemoryKind.DEVICE, bytes, gpu, seg, null, mem, dmaBuf, mrs, how, refusal);
    }

    public long byteSize() {
        return bytes;
    }

    /** Where kernels see a device buffer. */
    public long deviceAddress() {
        if (device == null) {
            throw new IllegalStateException("a host buffer has no device address here");
        }
        return device.deviceAddress();
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
        return switch (registration) {
            case HOST -> pinned != null ? "host, page-locked (cuMemHostRegister)" : "host, pageable";
            case DMABUF -> "device, dmabuf";
            case VA -> "device, va";
        };
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
        if (kind == MemoryKind.HOST) {
            Payload.fill(segment.asSlice(offset, length), sender, receiver, round);
        } else {
            gpu.context.makeCurrent();
            gpu.pattern.fill(gpu.stream, device.slice(offset, length), sender, receiver, round);
            gpu.await("rank " + receiver + "'s pattern fill from rank " + sender);
        }
    }

    /** Zeroes the buffer (a zero word never passes the check); returns when it is done. */
    public void clear() {
        if (kind == MemoryKind.HOST) {
            segment.fill((byte) 0);
        } else {
            gpu.await("clearing a device buffer: earlier work");
            device.fill((byte) 0);
        }
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
        if (kind == MemoryKind.HOST) {
            Payload.verify(segment.asSlice(offset, length), sender, receiver, round);
            return;
        }
        PatternKernels.Verdict v = gpu.pattern.verify(gpu.stream, device.slice(offset, length), sender, receiver, round,
                gpu.timeoutNanos);
        if (!v.ok()) {
            throw Payload.CorruptionException.onDevice(receiver, sender, round, v.firstBadWord(), v.expected(), v.actual(),
                    v.mismatchedWords(), length / 4);
        }
    }

    /** Flips the byte at {@code offset} (tests: EFABENCH_CORRUPT_OFFSET); out of range does nothing. */
    void corrupt(long offset) {
        if (offset < 0 || offset >= bytes) {
            return;
        }
        if (kind == MemoryKind.HOST) {
            segment.set(ValueLayout.JAVA_BYTE, offset, (byte) ~segment.get(ValueLayout.JAVA_BYTE, offset));
            return;
        }
        gpu.context.makeCurrent();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment one = a.allocate(1);
            device.slice(offset, 1).copyTo(one);
            one.set(ValueLayout.JAVA_BYTE, 0, (byte) ~one.get(ValueLayout.JAVA_BYTE, 0));
            device.slice(offset, 1).copyFrom(one);
        }
    }

    /**
     * Deregisters (a no-op for regions the channel already closed with its endpoint) and frees.
     */
    @Override
    public void close() {
        closeAll(regions);
        if (pinned != null) {
            pinned.close();
        }
        if (dmaBuf != null) {
            dmaBuf.close();
        }
        if (device != null) {
            gpu.context.makeCurrent();
            device.close();
        }
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

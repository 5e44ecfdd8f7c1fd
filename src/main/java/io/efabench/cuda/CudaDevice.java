package io.efabench.cuda;

import static io.efabench.cuda.Cuda.check;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import io.efabench.cuda.generated.CudaDriver;

/**
 * One GPU as this process sees it: ordinals count the devices left visible by
 * {@code CUDA_VISIBLE_DEVICES}, so ordinal = local rank gives each rank of a node its own GPU.
 * The PCI bus id names the same GPU across processes whatever each one's visible set is.
 */
public final class CudaDevice {
    private final int ordinal;
    private final int handle;
    private final String name;
    private final String pciBusId;
    private final int smCount;
    private final int ccMajor;
    private final int ccMinor;
    private final long totalMemory;

    private CudaDevice(int ordinal, int handle) {
        this.ordinal = ordinal;
        this.handle = handle;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment text = arena.allocate(256);
            check(CudaDriver.cuDeviceGetName(text, (int) text.byteSize(), handle), "cuDeviceGetName(" + ordinal + ")");
            this.name = text.getString(0);
            check(CudaDriver.cuDeviceGetPCIBusId(text, 64, handle), "cuDeviceGetPCIBusId(" + ordinal + ")");
            this.pciBusId = text.getString(0);
            MemorySegment bytes = arena.allocate(ValueLayout.JAVA_LONG);
            check(CudaDriver.cuDeviceTotalMem_v2(bytes, handle), "cuDeviceTotalMem(" + ordinal + ")");
            this.totalMemory = bytes.get(ValueLayout.JAVA_LONG, 0);
        }
        this.smCount = attribute(CudaDriver.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT());
        this.ccMajor = attribute(CudaDriver.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR());
        this.ccMinor = attribute(CudaDriver.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR());
    }

    /** How many GPUs this process may use (after CUDA_VISIBLE_DEVICES). */
    public static int visibleCount() {
        Cuda.require();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n = arena.allocate(ValueLayout.JAVA_INT);
            check(CudaDriver.cuDeviceGetCount(n), "cuDeviceGetCount");
            return n.get(ValueLayout.JAVA_INT, 0);
        }
    }

    public static CudaDevice get(int ordinal) {
        Cuda.require();
        int count = visibleCount();
        if (ordinal < 0 || ordinal >= count) {
            throw new CudaException("cuDeviceGet(" + ordinal + ")", -1, "GPU ordinal " + ordinal
                    + " does not exist: " + count + " GPU(s) visible" + visibleDevicesNote());
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment dev = arena.allocate(ValueLayout.JAVA_INT);
            check(CudaDriver.cuDeviceGet(dev, ordinal), "cuDeviceGet(" + ordinal + ")");
            return new CudaDevice(ordinal, dev.get(ValueLayout.JAVA_INT, 0));
        }
    }

    /** The GPU of a local rank: ordinal = local rank among the visible devices. */
    public static CudaDevice forLocalRank(int localRank) {
        Cuda.require();
        int count = visibleCount();
        if (localRank >= count) {
            throw new CudaException("cuDeviceGet(" + localRank + ")", -1, "local rank " + localRank
                    + " has no GPU of its own: " + count + " GPU(s) visible" + visibleDevicesNote()
                    + "; start at most " + count + " rank(s) per node");
        }
        return get(localRank);
    }

    /** The visible device with this PCI bus id, or null when it is not visible to this process. */
    public static CudaDevice byPciBusId(String busId) {
        int count = visibleCount();
        for (int i = 0; i < count; i++) {
            CudaDevice d = get(i);
            if (d.pciBusId.equalsIgnoreCase(busId)) {
                return d;
            }
        }
        return null;
    }

    /** " (CUDA_VISIBLE_DEVICES=...)" when it is set, for messages about which GPUs a rank sees; else "". */
    public static String visibleDevicesNote() {
        String v = System.getenv("CUDA_VISIBLE_DEVICES");
        return v == null ? "" : " (CUDA_VISIBLE_DEVICES=" + v + ")";
    }

    public int attribute(int attribute) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocate(ValueLayout.JAVA_INT);
            check(CudaDriver.cuDeviceGetAttribute(v, attribute, handle),
                    "cuDeviceGetAttribute(" + attribute + ", device " + ordinal + ")");
            return v.get(ValueLayout.JAVA_INT, 0);
        }
    }

    /** Whether this device can map memory of {@code peer} (both visible to this process). */
    public boolean canAccessPeer(CudaDevice peer) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocate(ValueLayout.JAVA_INT);
            check(CudaDriver.cuDeviceCanAccessPeer(v, handle, peer.handle),
                    "cuDeviceCanAccessPeer(" + ordinal + ", " + peer.ordinal + ")");
            return v.get(ValueLayout.JAVA_INT, 0) != 0;
        }
    }

    public int ordinal() {
        return ordinal;
    }

    int handle() {
        return handle;
    }

    public String name() {
        return name;
    }

    /** "0000:18:00.0" */
    public String pciBusId() {
        return pciBusId;
    }

    public int smCount() {
        return smCount;
    }

    public int computeCapabilityMajor() {
        return ccMajor;
    }

    public int computeCapabilityMinor() {
        return ccMinor;
    }

    /** The real architecture NVRTC compiles for, e.g. "sm_90". */
    public String arch() {
        return "sm_" + ccMajor + ccMinor;
    }

    public long totalMemory() {
        return totalMemory;
    }

    @Override
    public String toString() {
        return "GPU " + ordinal + " " + name + " (" + pciBusId + ", " + arch() + ", " + smCount + " SMs)";
    }
}

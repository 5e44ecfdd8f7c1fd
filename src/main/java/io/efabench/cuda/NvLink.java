package io.efabench.cuda;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Locale;

/**
 * The NVLink bandwidth between two GPUs, read from NVML ({@code libnvidia-ml.so.1}, small
 * hand-written downcalls), never assumed: the active links of {@code local} that reach
 * {@code peer} directly or through an NVSwitch, and each link's speed
 * ({@code NVML_FI_DEV_NVLINK_GET_SPEED}, else the common speed of active links).
 *
 * @param links       links counted for the pair
 * @param activeLinks active NVLinks of the local GPU
 * @param gbytesPerSec summed one-direction speed of the counted links, 1e9 B/s (0 when unknown)
 * @param detail      how it was read, or why it could not be: for provenance
 */
public record NvLink(int links, int activeLinks, double gbytesPerSec, String detail) {

    /** Summed link speed in Gbps (1e9 bit/s), 0 when unknown: the busbw_pct denominator. */
    public double gbps() {
        return gbytesPerSec * 8;
    }

    public boolean known() {
        return gbytesPerSec > 0;
    }

    private static final int MAX_LINKS = 18;
    private static final int FI_NVLINK_SPEED_MBPS_COMMON = 90;
    private static final int FI_NVLINK_GET_SPEED = 164;
    private static final int DEVICE_TYPE_GPU = 0;
    private static final int DEVICE_TYPE_SWITCH = 2;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final AddressLayout PTR = ValueLayout.ADDRESS;

    /** NVML's view of the pair {@code local} -> {@code peerPciBusId}; unknown (0) with the reason when unreadable. */
    public static NvLink between(CudaDevice local, String peerPciBusId) {
        Lib lib;
        try {
            lib = Lib.INSTANCE;
        } catch (Throwable t) {
            return unknown("NVML not available (libnvidia-ml.so.1: " + Lib.rootCause(t) + ")");
        }
        try (Arena arena = Arena.ofConfined()) {
            int rc = (int) lib.init.invokeExact();
            if (rc != 0) {
                return unknown("nvmlInit failed: " + lib.error(rc));
            }
            try {
                return read(lib, arena, local.pciBusId(), peerPciBusId);
            } finally {
                int ignored = (int) lib.shutdown.invokeExact();
            }
        } catch (Throwable t) {
            return unknown("NVML query failed: " + t);
        }
    }

    /** The driver version NVML reports ("580.159.04"), or "unknown". */
    public static String driverVersion() {
        try (Arena arena = Arena.ofConfined()) {
            Lib lib = Lib.INSTANCE;
            if ((int) lib.init.invokeExact() != 0) {
                return "unknown";
            }
            try {
                MemorySegment text = arena.allocate(96);
                int rc = (int) lib.driverVersion.invokeExact(text, 96);
                return rc == 0 ? text.getString(0) : "unknown";
            } finally {
                int ignored = (int) lib.shutdown.invokeExact();
            }
        } catch (Throwable t) {
            return "unknown";
        }
    }

    private static NvLink unknown(String why) {
        return new NvLink(0, 0, 0, why);
    }

    private static NvLink read(Lib lib, Arena arena, String localBusId, String peerBusId) throws Throwable {
        MemorySegment handle = arena.allocate(PTR);
        int rc = (int) lib.handleByPciBusId.invokeExact(arena.allocateFrom(localBusId), handle);
        if (rc != 0) {
            return unknown("nvmlDeviceGetHandleByPciBusId(" + localBusId + "): " + lib.error(rc));
        }
        MemorySegment dev = handle.get(PTR, 0);
        int[] peer = parseBusId(peerBusId);
        MemorySegment state = arena.allocate(INT);
        MemorySegment type = arena.allocate(INT);
        MemorySegment pci = arena.allocate(128, 8);
        MemorySegment field = arena.allocate(40, 8);
        int active = 0;
        int counted = 0;
        int viaSwitch = 0;
        double mbps = 0;
        for (int link = 0; link < MAX_LINKS; link++) {
            if ((int) lib.linkState.invokeExact(dev, link, state) != 0 || state.get(INT, 0) != 1) {
                continue;
            }
            active++;
            if ((int) lib.remoteType.invokeExact(dev, link, type) != 0) {
                continue;
            }
            int t = type.get(INT, 0);
            boolean toPeer;
            if (t == DEVICE_TYPE_SWITCH) {
                toPeer = true;
                viaSwitch++;
            } else if (t == DEVICE_TYPE_GPU && (int) lib.remotePci.invokeExact(dev, link, pci) == 0) {
                toPeer = pci.get(INT, 16) == peer[0] && pci.get(INT, 20) == peer[1] && pci.get(INT, 24) == peer[2];
            } else {
                toPeer = false;
            }
            if (!toPeer) {
                continue;
            }
            double speed = fieldValue(lib, dev, field, FI_NVLINK_GET_SPEED, link);
            if (!(speed > 0)) {
                speed = fieldValue(lib, dev, field, FI_NVLINK_SPEED_MBPS_COMMON, 0);
            }
            if (!(speed > 0)) {
                return new NvLink(counted, active, 0, "NVML reports no NVLink speed for link " + link);
            }
            counted++;
            mbps += speed;
        }
        if (counted == 0) {
            return new NvLink(0, active, 0, active + " active NVLink(s), none to GPU " + peerBusId
                    + ": the pair is not NVLink-connected as far as NVML can tell");
        }
        double gbytes = mbps / 1000.0;
        String how = String.format(Locale.ROOT, "%d NVLink(s) to %s%s, %.3f GB/s each way in total (NVML)",
                counted, peerBusId, viaSwitch > 0 ? " via NVSwitch" : " direct", gbytes);
        return new NvLink(counted, active, gbytes, how);
    }

    /** nvmlDeviceGetFieldValues for one field; NaN when NVML has no value for it. */
    private static double fieldValue(Lib lib, MemorySegment dev, MemorySegment field, int id, int scope) throws Throwable {
        field.fill((byte) 0);
        field.set(INT, 0, id);
        field.set(INT, 4, scope);
        if ((int) lib.fieldValues.invokeExact(dev, 1, field) != 0 || field.get(INT, 28) != 0) {
            return Double.NaN;
        }
        return switch (field.get(INT, 24)) {
            case 0 -> field.get(ValueLayout.JAVA_DOUBLE, 32);
            case 1 -> Integer.toUnsignedLong(field.get(INT, 32));
            case 2, 3, 4 -> field.get(ValueLayout.JAVA_LONG, 32);
            default -> Double.NaN;
        };
    }

    /** "0000:18:00.0" or "00000000:18:00.0" -> {domain, bus, device}. */
    static int[] parseBusId(String busId) {
        String[] parts = busId.trim().split("[:.]");
        if (parts.length != 4) {
            throw new IllegalArgumentException("PCI bus id '" + busId + "' is not domain:bus:device.function");
        }
        return new int[] {Integer.parseUnsignedInt(parts[0], 16), Integer.parseInt(parts[1], 16),
                Integer.parseInt(parts[2], 16)};
    }

    private static final class Lib {
        static final Lib INSTANCE = new Lib();
        final MethodHandle init;
        final MethodHandle shutdown;
        final MethodHandle errorString;
        final MethodHandle driverVersion;
        final MethodHandle handleByPciBusId;
        final MethodHandle linkState;
        final MethodHandle remoteType;
        final MethodHandle remotePci;
        final MethodHandle fieldValues;

        private Lib() {
            SymbolLookup lib = SymbolLookup.libraryLookup("libnvidia-ml.so.1", Arena.global());
            Linker l = Linker.nativeLinker();
            init = l.downcallHandle(lib.findOrThrow("nvmlInit_v2"), FunctionDescriptor.of(INT));
            shutdown = l.downcallHandle(lib.findOrThrow("nvmlShutdown"), FunctionDescriptor.of(INT));
            errorString = l.downcallHandle(lib.findOrThrow("nvmlErrorString"), FunctionDescriptor.of(PTR, INT));
            driverVersion = l.downcallHandle(lib.findOrThrow("nvmlSystemGetDriverVersion"),
                    FunctionDescriptor.of(INT, PTR, INT));
            handleByPciBusId = l.downcallHandle(lib.findOrThrow("nvmlDeviceGetHandleByPciBusId_v2"),
                    FunctionDescriptor.of(INT, PTR, PTR));
            linkState = l.downcallHandle(lib.findOrThrow("nvmlDeviceGetNvLinkState"),
                    FunctionDescriptor.of(INT, PTR, INT, PTR));
            remoteType = l.downcallHandle(lib.findOrThrow("nvmlDeviceGetNvLinkRemoteDeviceType"),
                    FunctionDescriptor.of(INT, PTR, INT, PTR));
            remotePci = l.downcallHandle(lib.findOrThrow("nvmlDeviceGetNvLinkRemotePciInfo_v2"),
                    FunctionDescriptor.of(INT, PTR, INT, PTR));
            fieldValues = l.downcallHandle(lib.findOrThrow("nvmlDeviceGetFieldValues"),
                    FunctionDescriptor.of(INT, PTR, INT, PTR));
        }

        String error(int rc) {
            try {
                return ((MemorySegment) errorString.invokeExact(rc)).reinterpret(256).getString(0) + " (nvmlReturn " + rc + ")";
            } catch (Throwable t) {
                return "nvmlReturn " + rc;
            }
        }

        static String rootCause(Throwable t) {
            while (t.getCause() != null) {
                t = t.getCause();
            }
            return t.getMessage() == null ? t.toString() : t.getMessage();
        }
    }
}

package io.efabench.harness.memory;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

import io.efabench.cuda.CudaContext;
import io.efabench.cuda.CudaDevice;
import io.efabench.cuda.CudaException;
import io.efabench.cuda.DeviceMemory;
import io.efabench.cuda.IpcHandle;
import io.efabench.cuda.NvLink;
import io.efabench.harness.BenchmarkSetupException;

/**
 * Every rank's device regions mapped into every other rank of one node (CUDA IPC, all pairs;
 * IpcBenchmark's IpcRig maps rank 0 and its followers only). Each rank exports the same number of
 * regions, in the same order; {@link #peer} is rank r's region i as this rank's GPU addresses it.
 * Ranks may share a GPU (IPC within one device: {@link #sharesGpu}). Closing unmaps; the owner
 * must close before any rank frees what it exported (the trial's close stack does: peer mappings
 * first, then the end-of-trial barrier, then the buffers).
 */
public final class IpcMesh implements AutoCloseable {
    /** Exchanges one byte array with every rank, in rank order (the rank group's allgather). */
    @FunctionalInterface
    public interface Allgather {
        List<byte[]> allgather(String what, byte[] mine);
    }

    private final CudaContext context;
    private final int me;
    private final String[] busIds;
    private final IpcHandle.PeerMapping[][] mapped;

    private IpcMesh(CudaContext context, int me, String[] busIds, int regions) {
        this.context = context;
        this.me = me;
        this.busIds = busIds;
        this.mapped = new IpcHandle.PeerMapping[regions][busIds.length];
    }

    /**
     * Exports {@code regions} of this rank's GPU {@code device}, learns every rank's, maps every
     * other rank's into {@code context}; a rank whose regions cannot be mapped is named in one line.
     */
    public static IpcMesh open(CudaContext context, CudaDevice device, int me, List<? extends DeviceMemory> regions,
            Allgather group) {
        context.makeCurrent();
        List<byte[]> all = group.allgather("ipc mesh: GPU and regions of every rank", describe(device, regions));
        int ranks = all.size();
        String[] busIds = new String[ranks];
        IpcHandle[][] handles = new IpcHandle[regions.size()][ranks];
        for (int r = 0; r < ranks; r++) {
            try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(all.get(r)))) {
                busIds[r] = in.readUTF();
                int n = in.readInt();
                if (n != regions.size()) {
                    throw new BenchmarkSetupException("ipc mesh: rank " + r + " exports " + n + " regions, rank " + me
                            + " " + regions.size());
                }
                for (int i = 0; i < n; i++) {
                    handles[i][r] = IpcHandle.fromBytes(in.readNBytes(in.readInt()));
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        IpcMesh mesh = new IpcMesh(context, me, busIds, regions.size());
        try {
            for (int r = 0; r < ranks; r++) {
                for (int i = 0; r != me && i < regions.size(); i++) {
                    mesh.mapped[i][r] = handles[i][r].open(context);
                }
            }
            return mesh;
        } catch (CudaException e) {
            mesh.close();
            throw new BenchmarkSetupException("rank " + me + " (GPU " + device.pciBusId() + ") cannot map a peer's memory: "
                    + e.getMessage() + visibleNote());
        }
    }

    private static byte[] describe(CudaDevice device, List<? extends DeviceMemory> regions) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeUTF(device.pciBusId());
            out.writeInt(regions.size());
            for (DeviceMemory region : regions) {
                byte[] h = IpcHandle.export(region).toBytes();
                out.writeInt(h.length);
                out.write(h);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /** " (CUDA_VISIBLE_DEVICES=...: every rank must see every GPU of the job)" when it is set: why a peer's GPU may not map. */
    public static String visibleNote() {
        String v = System.getenv("CUDA_VISIBLE_DEVICES");
        return v == null ? "" : " (CUDA_VISIBLE_DEVICES=" + v + ": every rank must see every GPU of the job)";
    }

    /** Rank {@code rank}'s region {@code region}, mapped here; null for this rank's own. */
    public DeviceMemory peer(int region, int rank) {
        return mapped[region][rank];
    }

    public int ranks() {
        return busIds.length;
    }

    public String busId(int rank) {
        return busIds[rank];
    }

    /** Whether {@code rank} runs on this rank's GPU (IPC within one device: no NVLink in between). */
    public boolean sharesGpu(int rank) {
        return rank != me && busIds[rank].equalsIgnoreCase(busIds[me]);
    }

    /** Whether any other rank shares this rank's GPU. */
    public boolean anySharedGpu() {
        for (int r = 0; r < busIds.length; r++) {
            if (sharesGpu(r)) {
                return true;
            }
        }
        return false;
    }

    /**
     * This GPU's NVLink egress in Gbps as the link figures are held against: the fastest pair's
     * NVLink (on an NVSwitch node every pair reports the GPU's whole NVLink); 0 when any pair is
     * unknown or shares a GPU.
     */
    public double linkGbps(CudaDevice device) {
        double best = 0;
        for (int r = 0; r < busIds.length; r++) {
            if (r == me) {
                continue;
            }
            NvLink link = NvLink.between(device, busIds[r]);
            if (!link.known() || sharesGpu(r)) {
                return 0;
            }
            best = Math.max(best, link.gbps());
        }
        return best;
    }

    /** One line per peer: its GPU and the NVLink to it, for provenance. */
    public List<String> describeLinks(CudaDevice device) {
        java.util.List<String> lines = new java.util.ArrayList<>();
        for (int r = 0; r < busIds.length; r++) {
            if (r != me) {
                lines.add("rank " + me + " -> rank " + r + " (" + busIds[r] + "): "
                        + (sharesGpu(r) ? "same GPU (IPC within one device)" : NvLink.between(device, busIds[r]).detail()));
            }
        }
        return lines;
    }

    /** Unmaps every peer's regions (every close attempted; the first failure thrown). */
    @Override
    public void close() {
        RuntimeException first = null;
        context.makeCurrent();
        for (IpcHandle.PeerMapping[] region : mapped) {
            for (int r = 0; r < region.length; r++) {
                if (region[r] != null) {
                    try {
                        region[r].close();
                    } catch (RuntimeException e) {
                        first = first == null ? e : first;
                    }
                    region[r] = null;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}

package io.efabench.harness.memory;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.efabench.cuda.Cuda;
import io.efabench.cuda.CudaContext;
import io.efabench.cuda.CudaDevice;
import io.efabench.cuda.CudaException;
import io.efabench.cuda.CudaStream;
import io.efabench.cuda.KernelCompiler;
import io.efabench.cuda.NvLink;
import io.efabench.cuda.PatternKernels;
import io.efabench.rank.RankEnv;
import io.efabench.harness.BenchmarkSetupException;

/**
 * The GPU part of a trial on this rank: the device chosen for it, its primary context, a
 * stream and the pattern kernels that fill, clear and check device buffers. Any trial may hold
 * one: a fabric trial with device buffers (or pinned host buffers on a GPU machine), and the
 * NVLink IPC trial. Closed with the trial, after everything allocated on it.
 */
public final class TrialGpu implements AutoCloseable {
    /** Whether ranks may share a GPU when a node has fewer GPUs than local ranks. */
    public enum Sharing {
        /** Fabric benchmarks: ranks share a GPU round-robin; provenance says so. */
        ALLOWED,
        /** NVLink IPC: every rank needs a GPU of its own. */
        REFUSED
    }

    public final CudaDevice device;
    public final CudaContext context;
    public final CudaStream stream;
    public final PatternKernels pattern;
    /** True when another local rank was given the same GPU. */
    public final boolean shared;
    public final long timeoutNanos;
    private final int visible;

    private TrialGpu(CudaDevice device, CudaContext context, CudaStream stream, PatternKernels pattern,
            boolean shared, int visible, Duration timeout) {
        this.device = device;
        this.context = context;
        this.stream = stream;
        this.pattern = pattern;
        this.shared = shared;
        this.visible = visible;
        this.timeoutNanos = timeout.toNanos();
    }

    /** True when a CUDA driver is loaded and at least one GPU is visible to this process. */
    public static boolean present() {
        if (Cuda.unavailableReason().isPresent()) {
            return false;
        }
        try {
            return CudaDevice.visibleCount() > 0;
        } catch (CudaException e) {
            return false; // e.g. CUDA_ERROR_NO_DEVICE from cuInit on a host with a driver but no GPU
        }
    }

    /**
     * The GPU of this rank: local rank k takes visible GPU k when the node has at least as many
     * visible GPUs as local ranks ({@code CUDA_VISIBLE_DEVICES} honoured); with fewer, ranks
     * share them round-robin where {@code sharing} allows, else this is refused with one line.
     */
    public static TrialGpu open(RankEnv env, Sharing sharing, Duration timeout) {
        return open(env, sharing, timeout, -1);
    }

    /** As {@link #open(RankEnv, Sharing, Duration)}, on visible GPU {@code ordinal} where it is not -1. */
    public static TrialGpu open(RankEnv env, Sharing sharing, Duration timeout, int ordinal) {
        Cuda.unavailableReason().ifPresent(reason -> {
            throw new BenchmarkSetupException(reason);
        });
        int visible = CudaDevice.visibleCount();
        if (visible == 0) {
            throw new BenchmarkSetupException("no GPU visible to rank " + env.rank() + CudaDevice.visibleDevicesNote());
        }
        int local = Math.max(env.localWorldSize(), env.localRank() + 1);
        CudaDevice device = CudaDevice.get(ordinal >= 0 ? ordinal : ordinalFor(env.localRank(), local, visible, sharing));
        CudaContext context = CudaContext.retainPrimary(device);
        CudaStream stream = null;
        try {
            stream = CudaStream.create(context);
            PatternKernels pattern = new PatternKernels(context);
            return new TrialGpu(device, context, stream, pattern, ordinal < 0 && visible < local, visible, timeout);
        } catch (RuntimeException e) {
            if (stream != null) {
                stream.close();
            }
            context.close();
            throw e;
        }
    }

    /** The PCI bus id of every visible GPU, by CUDA ordinal (e.g. {@code 0000:4F:00.0}). */
    public static List<String> visiblePciBusIds() {
        int visible = CudaDevice.visibleCount();
        List<String> ids = new java.util.ArrayList<>(visible);
        for (int i = 0; i < visible; i++) {
            ids.add(CudaDevice.get(i).pciBusId());
        }
        return ids;
    }

    /** Visible GPU ordinal of local rank {@code localRank} among {@code localRanks}. */
    static int ordinalFor(int localRank, int localRanks, int visible, Sharing sharing) {
        if (visible >= localRanks) {
            return localRank;
        }
        if (sharing == Sharing.REFUSED) {
            throw new BenchmarkSetupException("local rank " + localRank + " has no GPU of its own: " + visible
                    + " GPU(s) visible for " + localRanks + " local ranks" + CudaDevice.visibleDevicesNote()
                    + "; start at most " + visible + " rank(s) per node");
        }
        return localRank % visible;
    }

    /** This rank's GPU facts for the run's provenance. */
    public Map<String, Object> provenance() {
        Map<String, Object> facts = new LinkedHashMap<>();
        facts.put("gpus", List.of(device.name() + " " + device.pciBusId() + " (" + device.arch() + ", "
                + device.smCount() + " SMs)"));
        facts.put("gpu_ordinal", device.ordinal());
        facts.put("gpus_visible", visible);
        facts.put("gpu_shared_by_local_ranks", shared);
        facts.put("mps", io.efabench.cuda.Mps.describe());
        facts.put("driver", NvLink.driverVersion() + " (CUDA " + Cuda.driverVersionText() + ")");
        facts.put("nvrtc", KernelCompiler.nvrtcDescription());
        return facts;
    }

    /** Waits for the stream's work, naming {@code what} if it does not finish in time. */
    public void await(String what) {
        context.makeCurrent();
        stream.await(timeoutNanos, what);
    }

    @Override
    public void close() {
        Runnable[] steps = {pattern::close, stream::close, context::close};
        RuntimeException first = null;
        context.makeCurrent();
        for (Runnable step : steps) {
            try {
                step.run();
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }
}

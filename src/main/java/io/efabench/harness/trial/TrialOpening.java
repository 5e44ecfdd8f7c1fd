package io.efabench.harness.trial;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import io.efabench.cuda.Cuda;
import io.efabench.fabric.Discovery;
import io.efabench.fabric.FabricException;
import io.efabench.fabric.NicInfo;
import io.efabench.fabric.NicPath;
import io.efabench.rank.RankEnv;
import io.efabench.rank.RankGroup;
import io.efabench.topology.NicCounters;
import io.efabench.topology.Sysfs;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.MemoryKind;
import io.efabench.harness.memory.TrialGpu;

/** The pieces {@link FabricTrial} opens that can fail in a way worth its own sentence (the GPU, fi_getinfo, the NIC counters), and its line on the call board. */
final class TrialOpening {
    private TrialOpening() {}

    /**
     * Device buffers need this rank's GPU; host buffers are page-locked on it where a GPU is
     * present, like the seed's pinned buffers. Ranks of a node share GPUs when there are fewer
     * GPUs than local ranks (provenance says so).
     */
    static TrialGpu gpu(MemoryKind memory, RankEnv env, Duration timeout, String config, int rank, int ordinal) {
        if (memory == MemoryKind.DEVICE) {
            try {
                return TrialGpu.open(env, TrialGpu.Sharing.ALLOWED, timeout, ordinal);
            } catch (BenchmarkSetupException | io.efabench.cuda.CudaException e) {
                throw new BenchmarkSetupException(config + " moves GPU memory, but rank " + rank + " has no usable GPU: "
                        + e.getMessage());
            }
        }
        return TrialGpu.present() ? TrialGpu.open(env, TrialGpu.Sharing.ALLOWED, timeout, ordinal) : null;
    }

    /**
     * fi_getinfo for this trial; FI_HMEM is asked for only when device buffers are used.
     * {@code nic}: the one NIC to open, by its domain name, EFABENCH_NICS aside; null: EFABENCH_NICS's
     * (or every one).
     */
    static Discovery discover(boolean hmem, NicPath path, String config, String nic) {
        try {
            return nic == null ? Discovery.discover(hmem, path) : Discovery.discover(hmem, path, List.of(nic));
        } catch (FabricException e) {
            if (!hmem) {
                throw e;
            }
            throw new BenchmarkSetupException(noHmem(config, System.getenv("FI_PROVIDER"), e.getMessage(),
                    Cuda.runtimeLoadsByPlainName()));
        }
    }

    /**
     * Why FI_HMEM is missing, in one line. libfabric's CUDA support dlopens the CUDA runtime by its
     * unversioned name, {@code libcudart.so} (src/hmem_cuda.c, cuda_hmem_dl_init), which only a
     * CUDA toolkit (or a -dev package) provides: without it a libfabric built with CUDA offers no
     * FI_HMEM either, and blaming the build would send the user the wrong way.
     */
    static String noHmem(String config, String provider, String error, boolean cudartLoads) {
        String which = provider == null || provider.isBlank() ? "(any)" : provider;
        String cause = cudartLoads
                ? "needs a libfabric built with CUDA and a provider with FI_HMEM (efa, shm; see docs/DESIGN.md)"
                : "libfabric loads the CUDA runtime as libcudart.so (unversioned), and no libcudart.so is on the loader"
                        + " path: add the CUDA toolkit's lib64 to LD_LIBRARY_PATH (a libfabric without CUDA says the same)";
        return config + " moves GPU memory, but provider " + which + " offers no FI_HMEM (device memory) with FI_EP_RDM"
                + " and FI_MSG|FI_RMA here; " + cause + " (" + error + ")";
    }

    /**
     * Rank 0's NIC byte counters (efa/verbs, from sysfs) for nic_bytes_ratio, or null. Test hook
     * EFABENCH_TEST_SYSFS_ROOT: the counters of a fixture sysfs tree, for any provider (tcp and
     * shm have no RDMA counters), so a test sees nic_bytes_ratio reach the results.
     */
    static NicCounters nicCounters(String provider, NicInfo[] nicOf) {
        if (System.getenv("EFABENCH_TEST_SYSFS_ROOT") == null && !NicPath.isNicProvider(provider)) {
            return null;
        }
        return NicCounters.of(Sysfs.fromEnvironment(), Arrays.stream(nicOf).map(NicInfo::domainName).distinct().toList())
                .orElse(null);
    }

    /** Tells the stuck-call watchdog (see {@link io.efabench.fabric.CallBoard}) this rank and the peers that share its host. */
    static void identifyOnCallBoard(RankGroup group, Duration timeout) {
        int[] ranks = java.util.stream.IntStream.range(0, group.size())
                .filter(r -> r != group.rank() && group.pidOnThisHost(r) > 0).toArray();
        long[] pids = java.util.Arrays.stream(ranks).mapToLong(group::pidOnThisHost).toArray();
        io.efabench.fabric.CallBoard.identify(group.rank(), timeout, ranks, pids);
    }
}

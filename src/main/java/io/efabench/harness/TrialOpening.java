package io.efabench.harness;

import java.time.Duration;
import java.util.Arrays;

import io.efabench.fabric.Discovery;
import io.efabench.fabric.FabricException;
import io.efabench.fabric.NicInfo;
import io.efabench.fabric.NicPath;
import io.efabench.rank.RankEnv;
import io.efabench.topology.NicCounters;
import io.efabench.topology.Sysfs;

/** The pieces {@link FabricTrial} opens that can fail in a way worth its own sentence: the GPU, fi_getinfo, the NIC counters. */
final class TrialOpening {
    private TrialOpening() {}

    /**
     * Device buffers need this rank's GPU; host buffers are page-locked on it where a GPU is
     * present, like the seed's pinned buffers. Ranks of a node share GPUs when there are fewer
     * GPUs than local ranks (provenance says so).
     */
    static TrialGpu gpu(MemoryKind memory, RankEnv env, Duration timeout, String config, int rank) {
        if (memory == MemoryKind.DEVICE) {
            try {
                return TrialGpu.open(env, TrialGpu.Sharing.ALLOWED, timeout);
            } catch (BenchmarkSetupException | io.efabench.cuda.CudaException e) {
                throw new BenchmarkSetupException(config + " moves GPU memory, but rank " + rank + " has no usable GPU: "
                        + e.getMessage());
            }
        }
        return TrialGpu.present() ? TrialGpu.open(env, TrialGpu.Sharing.ALLOWED, timeout) : null;
    }

    /** fi_getinfo for this trial; FI_HMEM is asked for only when device buffers are used. */
    static Discovery discover(boolean hmem, NicPath path, String config) {
        try {
            return Discovery.discover(hmem, path);
        } catch (FabricException e) {
            if (!hmem) {
                throw e;
            }
            String provider = System.getenv("FI_PROVIDER");
            throw new BenchmarkSetupException(config + " moves GPU memory, but provider "
                    + (provider == null || provider.isBlank() ? "(any)" : provider)
                    + " offers no FI_HMEM (device memory) with FI_EP_RDM and FI_MSG|FI_RMA here; needs a libfabric built"
                    + " with CUDA and a provider with FI_HMEM (efa, shm; see docs/DESIGN.md) (" + e.getMessage() + ")");
        }
    }

    /**
     * Rank 0's NIC byte counters (efa/verbs, from sysfs) for nic_bytes_ratio, or null. Test hook
     * EFABENCH_TEST_SYSFS_ROOT: the counters of a fixture sysfs tree, for any provider (tcp and
     * shm have no RDMA counters), so a test sees nic_bytes_ratio reach the results.
     */
    static NicCounters nicCounters(String provider, NicInfo[] nicOf) {
        String counterRoot = System.getenv("EFABENCH_TEST_SYSFS_ROOT");
        if (counterRoot == null && !NicPath.isNicProvider(provider)) {
            return null;
        }
        return NicCounters.of(counterRoot != null ? new Sysfs(java.nio.file.Path.of(counterRoot)) : Sysfs.system(),
                Arrays.stream(nicOf).map(NicInfo::domainName).distinct().toList()).orElse(null);
    }
}

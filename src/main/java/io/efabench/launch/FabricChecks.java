package io.efabench.launch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import io.efabench.fabric.Channel;
import io.efabench.fabric.Discovery;
import io.efabench.fabric.FabricException;
import io.efabench.fabric.MemlockBudget;
import io.efabench.fabric.NicInfo;
import io.efabench.fabric.NicPath;
import io.efabench.topology.InstanceType;
import io.efabench.harness.memory.DeviceProbe;
import io.efabench.harness.memory.TrialGpu;
import io.efabench.harness.trial.TrialChecks;

/**
 * The doctor's questions to libfabric: is it there, which providers, which one a run takes,
 * device memory, write emulation, link speeds and the memlock limit a NIC provider needs. Each
 * answers with one {@link DoctorCheck}; none throws.
 */
final class FabricChecks {
    /** The seed's largest size: a Write rank pins a source and a target buffer of it per channel. */
    static final long SEED_LARGEST = 1L << 30;

    private final InstanceType instance;
    /** The provider a run takes here, once libfabric answered; null before or without it. */
    String provider;
    private List<NicInfo> nics = List.of();
    /** True once {@link #deviceMemory} registered device memory on the provider a run takes. */
    boolean deviceMemoryRegistered;

    FabricChecks(InstanceType instance) {
        this.instance = instance;
    }

    /** libfabric.so.1 loads (from {@code dir} where given), with its versions and file. */
    DoctorCheck library(String dir) {
        String fix = "install libfabric (Debian/Ubuntu: apt-get install libfabric1 libfabric-bin; on EFA nodes the EFA"
                + " installer puts it in /opt/amazon/efa/lib) and pass its lib directory: ./run-jmh.sh doctor --libfabric DIR"
                + " (runs: LD_LIBRARY_PATH=DIR)";
        if (dir != null) {
            Path d = Path.of(dir);
            if (!Files.exists(d.resolve("libfabric.so.1")) && !Files.exists(d.resolve("lib/libfabric.so.1"))) {
                return DoctorCheck.fail("libfabric", "--libfabric " + dir + ": no libfabric.so.1 there (nor in "
                        + d.resolve("lib") + ")", fix);
            }
        }
        String error = Discovery.libraryError();
        if (error != null) {
            return DoctorCheck.fail("libfabric", error, fix);
        }
        String file = loadedFrom("libfabric.so");
        if (dir != null && (file == null || !file.startsWith(Path.of(dir).toAbsolutePath().toString()))) {
            return DoctorCheck.fail("libfabric", "loaded " + file + ", not the one under " + dir,
                    "start the doctor through ./run-jmh.sh, which puts --libfabric's directory first on LD_LIBRARY_PATH");
        }
        return DoctorCheck.pass("libfabric", Discovery.runtimeVersion() + " at " + file + " (API in use "
                + Discovery.apiVersion() + ", bindings' headers " + Discovery.headerVersion() + ")");
    }

    /** The providers that offer what a run asks for, and the one a run takes. */
    List<DoctorCheck> providers() {
        Set<String> found;
        try {
            found = Discovery.providers(false);
        } catch (FabricException e) {
            return List.of(DoctorCheck.fail("providers", e.getMessage(), "a libfabric with the tcp, shm or efa provider"));
        }
        List<DoctorCheck> out = new ArrayList<>();
        out.add(DoctorCheck.pass("providers", String.join(", ", found) + " offer RDM endpoints with FI_MSG|FI_RMA and "
                + Discovery.CQ_DATA_SIZE + " bytes of remote CQ data"));
        String env = System.getenv("FI_PROVIDER");
        provider = env != null && !env.isBlank() ? env.trim() : found.contains("efa") ? "efa" : "tcp";
        try (Discovery d = Discovery.discover(false, provider)) {
            nics = d.nics();
            String how = env != null && !env.isBlank() ? "FI_PROVIDER=" + env : found.contains("efa") ? "efa is here"
                    : "./run-jmh.sh's local default";
            String detail = provider + " (" + how + "), fabric " + nics.getFirst().fabricName() + ", " + nics.size()
                    + " NIC(s): " + String.join(" ", nics.stream().map(NicInfo::domainName).distinct().toList())
                    + (NicPath.isNicProvider(provider) ? ", path " + NicPath.fromEnvironment().label() : "");
            out.add(found.contains("efa") || env != null ? DoctorCheck.pass("run-provider", detail)
                    : DoctorCheck.warn("run-provider", detail + "; no efa here: srun/mpirun runs stop without FI_PROVIDER",
                            "on EFA nodes install the EFA software (aws-efa-installer); elsewhere set FI_PROVIDER=tcp or shm"));
        } catch (FabricException e) {
            String asked = provider;
            provider = null;
            out.add(DoctorCheck.fail("run-provider", asked + ": " + e.getMessage(),
                    "set FI_PROVIDER to one of: " + String.join(", ", found)));
        }
        return out;
    }

    /** FI_HMEM and DMA-BUF for device memory, where a GPU is visible. */
    DoctorCheck deviceMemory() {
        if (!TrialGpu.present()) {
            return DoctorCheck.pass("device-memory", "no GPU visible to CUDA here: host memory configs only");
        }
        try (Discovery hmem = Discovery.discover(true, provider)) {
            DeviceProbe.Outcome o = DeviceProbe.register(hmem);
            deviceMemoryRegistered = true;
            String detail = "FI_HMEM on " + provider + "; 2 MiB of device memory registered by " + o.registration()
                    + "; FI_OPT_CUDA_API_PERMITTED " + o.cudaApiPermitted();
            return o.dmabuf() ? DoctorCheck.pass("device-memory", detail)
                    : DoctorCheck.warn("device-memory", detail, "DMA-BUF needs libfabric >= 1.20, an NVIDIA open kernel"
                            + " module and rdma-core with ibv_reg_dmabuf_mr; registration by VA still works");
        } catch (RuntimeException e) {
            Set<String> hmem;
            try {
                hmem = Discovery.providers(true);
            } catch (RuntimeException none) {
                hmem = Set.of();
            }
            return DoctorCheck.warn("device-memory", "device configs will stop: " + e.getMessage(), hmem.isEmpty()
                    ? "a libfabric built with CUDA (../shared/gpu/build-libfabric-cuda.sh, or the EFA installer's)"
                            + " whose provider offers FI_HMEM, and libcudart.so on the loader's path"
                    : String.join(", ", hmem) + " offer(s) FI_HMEM here: FI_PROVIDER=" + hmem.iterator().next()
                            + " (./run-jmh.sh --provider " + hmem.iterator().next() + ")");
        }
    }

    /** efa: whether RDMA writes go to the device or are sent as messages. */
    DoctorCheck writeEmulation() {
        if (!"efa".equals(provider)) {
            return DoctorCheck.pass("write-emulation", "not efa: " + provider + "'s own RMA");
        }
        try (Discovery d = Discovery.discover(false, provider); Channel ch = Channel.open(d, d.nics().getFirst(), 64)) {
            Boolean emulated = ch.writesEmulated();
            if (Boolean.FALSE.equals(emulated)) {
                return DoctorCheck.pass("write-emulation", "efa writes with device RDMA (FI_OPT_EFA_EMULATED_WRITE false)");
            }
            return DoctorCheck.warn("write-emulation", emulated == null ? "efa does not answer FI_OPT_EFA_EMULATED_WRITE"
                    : "efa emulates RDMA writes with messages on this node: Write/AllToAll/Proxy figures would measure that",
                    "an instance type whose EFA does RDMA write (p5, p5en, p6) and a current EFA installer");
        } catch (RuntimeException e) {
            return DoctorCheck.fail("write-emulation", "cannot open an efa endpoint: " + e.getMessage(),
                    "check the EFA installation (fi_info -p efa) and the security group (all traffic to itself)");
        }
    }

    /** Each NIC's link speed, and whether it counts for busbw_pct. */
    DoctorCheck links() {
        if (nics.isEmpty()) {
            return DoctorCheck.pass("link-speed", "no NIC discovered");
        }
        double override;
        try {
            override = TrialChecks.linkOverrideGbps();
        } catch (RuntimeException e) {
            return DoctorCheck.fail("link-speed", e.getMessage(), "unset FABRIC_LINK_GBPS or give the NIC's rate in Gbps");
        }
        List<String> unverified = new ArrayList<>();
        for (NicInfo nic : nics) {
            String why = TrialChecks.unverifiedLink(nic, instance);
            if (why != null) {
                unverified.add(nic.domainName() + ": " + why);
            }
        }
        String speeds = nics.stream().map(n -> n.domainName() + " " + Math.round(n.linkGbps()) + " Gbps").distinct()
                .reduce((a, b) -> a + ", " + b).orElse("");
        String on = " (" + instance + ")";
        if (override > 0) {
            return DoctorCheck.pass("link-speed", "FABRIC_LINK_GBPS=" + override + " per NIC decides busbw_pct; reported: " + speeds);
        }
        if (unverified.isEmpty()) {
            return DoctorCheck.pass("link-speed", speeds + on + ": counted for busbw_pct");
        }
        if (!NicPath.isNicProvider(provider)) {
            return DoctorCheck.pass("link-speed", provider + " reports " + speeds + ": not a NIC's rate, busbw_pct is left"
                    + " out (FABRIC_LINK_GBPS sets one)");
        }
        return DoctorCheck.warn("link-speed", unverified.getFirst() + (unverified.size() > 1 ? " (and "
                + (unverified.size() - 1) + " more)" : "") + on + ": busbw_pct is left out",
                "set FABRIC_LINK_GBPS to the NIC's real rate in Gbps");
    }

    /** RLIMIT_MEMLOCK against a Write of the seed's largest size on every NIC a rank uses (efa, verbs pin). */
    DoctorCheck memlock(int channelsPerRank) {
        long limit = MemlockBudget.limit();
        String have = limit < 0 ? "unlimited" : (limit >> 20) + " MiB";
        if (!NicPath.isNicProvider(provider)) {
            return DoctorCheck.pass("memlock", "RLIMIT_MEMLOCK " + have + "; " + provider + " pins no host memory");
        }
        long need = 2 * SEED_LARGEST * Math.max(1, channelsPerRank);
        String refusal = MemlockBudget.refusal(need, 0, limit);
        if (refusal == null) {
            return DoctorCheck.pass("memlock", "RLIMIT_MEMLOCK " + have + " holds a 1G Write on " + Math.max(1, channelsPerRank)
                    + " channel(s) (" + (need >> 20) + " MiB pinned)");
        }
        return DoctorCheck.fail("memlock", "RLIMIT_MEMLOCK " + have + " is below the " + (need >> 20)
                + " MiB a 1G Write pins on " + Math.max(1, channelsPerRank) + " channel(s)",
                "ulimit -l unlimited (Slurm: PropagateResourceLimits, and LimitMEMLOCK=infinity in slurmd's unit)");
    }

    /** The file a loaded library came from (/proc/self/maps), or null. */
    static String loadedFrom(String namePrefix) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
                int slash = line.indexOf('/');
                if (slash > 0) {
                    String file = line.substring(slash).strip();
                    if (Path.of(file).getFileName().toString().startsWith(namePrefix)) {
                        return file;
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            return null;
        }
        return null;
    }
}

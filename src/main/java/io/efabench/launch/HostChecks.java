package io.efabench.launch;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.efabench.fabric.ShmLeftovers;
import io.efabench.topology.HostDevices;
import io.efabench.topology.NicPlacement;
import io.efabench.topology.PciDevice;
import io.efabench.topology.Sysfs;

/**
 * The doctor's questions to the node: GPU -> NIC -> NUMA placement from sysfs, libjsig, ptrace
 * scope and /dev/shm for shm, huge pages, and shm regions left by dead efabench processes. Paths
 * are parameters so tests read fixtures; none throws.
 */
final class HostChecks {
    private final Sysfs sysfs;
    private final Path proc;
    private final Path devShm;
    /** NICs per GPU in the placement: the channels a rank opens by default (1 without RDMA NICs). */
    int nicsPerRank = 1;

    HostChecks(Sysfs sysfs, Path proc, Path devShm) {
        this.sysfs = sysfs;
        this.proc = proc;
        this.devShm = devShm;
    }

    /**
     * One row per GPU: its PCI address and NUMA node, and the RDMA NICs a rank on it takes
     * ({@link NicPlacement}, what a run's locality step decides), with the basis of the choice.
     */
    DoctorCheck placement() {
        List<PciDevice> gpus = HostDevices.gpus(sysfs);
        List<HostDevices.RdmaNic> nics = HostDevices.rdmaNics(sysfs);
        if (gpus.isEmpty()) {
            return DoctorCheck.pass("placement", "no NVIDIA GPU in sysfs; " + nics.size() + " RDMA NIC(s)");
        }
        if (nics.isEmpty()) {
            return DoctorCheck.pass("placement", gpus.size() + " GPU(s), no RDMA NIC (efa/verbs) in sysfs: device runs"
                    + " go over shm or tcp");
        }
        List<NicPlacement.Share> plan = NicPlacement.plan(gpus, nics.stream().map(HostDevices.RdmaNic::device).toList());
        List<String> rows = new ArrayList<>();
        List<Integer> offSwitch = new ArrayList<>();
        for (int g = 0; g < gpus.size(); g++) {
            NicPlacement.Share s = plan.get(g);
            List<String> names = s.nics().stream().map(i -> nics.get(i).name() + " "
                    + (nics.get(i).device() != null ? nics.get(i).device().address() : "?")).toList();
            rows.add("GPU " + g + " " + gpus.get(g).address() + " NUMA " + gpus.get(g).numaNode() + " -> "
                    + String.join(", ", names) + " [" + s.basis() + "]");
            if (!s.basis().startsWith("pcie-switch")) {
                offSwitch.add(g);
            }
            nicsPerRank = Math.max(nicsPerRank, s.nics().size());
        }
        String detail = gpus.size() + " GPU(s), " + nics.size() + " RDMA NIC(s); one rank per GPU takes:";
        return (offSwitch.isEmpty() ? DoctorCheck.pass("placement", detail)
                : DoctorCheck.warn("placement", detail + " GPU(s) " + offSwitch + " share no PCIe switch with a NIC",
                        "their traffic crosses the host bridge: expect less than the NIC's rate (set EFABENCH_PATH or"
                                + " pin NICs by hand only if the instance type says otherwise)")).withRows(rows);
    }

    /** libjsig.so preloaded: shm and efa replace the JVM's signal handlers otherwise. */
    DoctorCheck libjsig() {
        Path home = Path.of(System.getProperty("java.home"));
        Path lib = Files.exists(home.resolve("lib/libjsig.so")) ? home.resolve("lib/libjsig.so") : home.resolve("lib/server/libjsig.so");
        String preload = System.getenv("LD_PRELOAD");
        if (!Files.exists(lib)) {
            return DoctorCheck.fail("libjsig", "no libjsig.so in " + home, "use a full JDK 25 (or a jlink image of one): shm and efa need"
                    + " signal chaining");
        }
        if (preload == null || !preload.contains("libjsig")) {
            return DoctorCheck.warn("libjsig", lib + " is not preloaded: shm and efa runs would refuse to start",
                    "LD_PRELOAD=" + lib + " for java -jar under srun/mpirun (./run-jmh.sh sets it)");
        }
        return DoctorCheck.pass("libjsig", "preloaded (" + lib + ")");
    }

    /** Yama's ptrace scope: shm's CMA copies (process_vm_readv) between ranks need 0. */
    DoctorCheck ptraceScope() {
        String v = read(proc.resolve("sys/kernel/yama/ptrace_scope"));
        if (v.isEmpty() || v.equals("0")) {
            return DoctorCheck.pass("ptrace-scope", v.isEmpty() ? "no Yama: shm may use CMA" : "0: shm may use CMA");
        }
        return DoctorCheck.warn("ptrace-scope", v + ": shm cannot read a peer's memory with CMA and stages large messages"
                + " through its bounce buffers", "sudo sysctl -w kernel.yama.ptrace_scope=0");
    }

    /** /dev/shm: shm maps a region (16 MiB) per endpoint and peer set there. */
    DoctorCheck devShm() {
        try {
            FileStore fs = Files.getFileStore(devShm);
            long total = fs.getTotalSpace() >> 20;
            long free = fs.getUsableSpace() >> 20;
            String detail = devShm + " " + total + " MiB, " + free + " MiB free";
            return free >= 512 ? DoctorCheck.pass("dev-shm", detail)
                    : DoctorCheck.warn("dev-shm", detail + ": shm runs of several ranks and channels may not fit",
                            "a larger /dev/shm (docker: --shm-size=8g; mount -o remount,size=8G /dev/shm)");
        } catch (IOException e) {
            return DoctorCheck.warn("dev-shm", "no " + devShm + ": the shm provider cannot run", "mount a tmpfs at /dev/shm");
        }
    }

    /** Huge pages: efa allocates its packet pools from them and falls back to 4 KiB pages without. */
    DoctorCheck hugePages(String provider) {
        long total = -1;
        String size = "?";
        for (String line : read(proc.resolve("meminfo")).split("\n")) {
            if (line.startsWith("HugePages_Total:")) {
                total = Long.parseLong(line.substring(16).strip());
            } else if (line.startsWith("Hugepagesize:")) {
                size = line.substring(13).strip();
            }
        }
        String thp = read(sysfs.root().resolve("kernel/mm/transparent_hugepage/enabled"));
        String detail = "HugePages_Total " + total + " of " + size + (thp.isEmpty() ? "" : "; transparent: " + thp);
        if ("efa".equals(provider) && total == 0) {
            return DoctorCheck.warn("hugepages", detail + ": efa's packet pools fall back to 4 KiB pages",
                    "sudo sysctl -w vm.nr_hugepages=5128 (what the EFA installer sets)");
        }
        return DoctorCheck.pass("hugepages", detail);
    }

    /** shm regions and call boards of efabench processes that are gone. */
    DoctorCheck leftovers() {
        List<Path> dead = ShmLeftovers.ofDeadProcesses(devShm);
        if (dead.isEmpty()) {
            return DoctorCheck.pass("shm-leftovers", "none in " + devShm);
        }
        long bytes = 0;
        for (Path f : dead) {
            try {
                bytes += Files.size(f);
            } catch (IOException ignored) {
                // gone meanwhile
            }
        }
        return DoctorCheck.warn("shm-leftovers", dead.size() + " file(s) of dead processes in " + devShm + " ("
                + (bytes >> 20) + " MiB), e.g. " + dead.getFirst().getFileName(),
                "rm " + devShm + "/<pid>:* for those pids (./run-jmh.sh removes its own after every run)");
    }

    private static String read(Path f) {
        try {
            return Files.readString(f).strip();
        } catch (IOException e) {
            return "";
        }
    }
}

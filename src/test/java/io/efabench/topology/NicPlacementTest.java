package io.efabench.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NicPlacementTest {

    private static List<PciDevice> placed(Sysfs sysfs, List<PciAddress> addresses) {
        return addresses.stream().map(a -> sysfs.device(a).orElseThrow(() -> new AssertionError("no " + a))).toList();
    }

    /** NIC indexes (fi_getinfo order) of the NICs the fixture put behind GPU {@code g}'s switch. */
    private static List<Integer> nicsOfGpu(SysfsFixture f, int g) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < f.nics.size(); i++) {
            if (f.nicGpu.get(i) == g) {
                out.add(i);
            }
        }
        return out;
    }

    @Test
    void p5EachRankGetsTheFourEfasUnderItsGpusSwitchAndItsNumaNode(@TempDir Path dir) {
        SysfsFixture f = SysfsFixture.p5(dir);
        Sysfs sysfs = new Sysfs(f.root);
        List<NicPlacement.Share> plan = NicPlacement.plan(placed(sysfs, f.gpus), placed(sysfs, f.nics));
        for (int g = 0; g < 8; g++) {
            NicPlacement.Share s = plan.get(g);
            assertEquals(nicsOfGpu(f, g), s.nics(), "rank " + g);
            assertEquals(4, s.nics().size());
            assertEquals(g / 4, s.numaNode(), "rank " + g);
            assertTrue(s.basis().startsWith("pcie-switch of GPU " + f.gpus.get(g)), s.basis());
        }
        // What slicing fi_getinfo order gave rank 0: another GPU's EFAs (rdmap113s0... sort first).
        assertNotEquals(nicsOfGpu(f, 0), List.of(0, 1, 2, 3));
    }

    /** The sweep's way round: each of a p5's 32 EFAs to the GPU under whose switch it sits; unplaced NICs by rail. */
    @Test
    void p5EachEfaIsNearestTheGpuOfItsSwitch(@TempDir Path dir) {
        SysfsFixture f = SysfsFixture.p5(dir);
        Sysfs sysfs = new Sysfs(f.root);
        List<PciDevice> gpus = placed(sysfs, f.gpus);
        List<PciDevice> nics = placed(sysfs, f.nics);
        for (int i = 0; i < nics.size(); i++) {
            assertEquals(f.nicGpu.get(i), NicPlacement.nearestGpu(nics.get(i), gpus, i), "EFA " + f.nics.get(i));
        }
        assertEquals(5 % 8, NicPlacement.nearestGpu(null, gpus, 5), "a NIC sysfs does not place: rail modulo the GPUs");
        assertEquals(1, NicPlacement.nearestGpu(nics.get(0), java.util.Arrays.asList(null, null, null), 7));
        assertThrows(IllegalArgumentException.class, () -> NicPlacement.nearestGpu(null, List.of(), 0));
    }

    @Test
    void p5enEachRankGetsTheTwoEfasOfItsGpu(@TempDir Path dir) {
        SysfsFixture f = SysfsFixture.p5en(dir);
        Sysfs sysfs = new Sysfs(f.root);
        List<NicPlacement.Share> plan = NicPlacement.plan(placed(sysfs, f.gpus), placed(sysfs, f.nics));
        for (int g = 0; g < 8; g++) {
            assertEquals(nicsOfGpu(f, g), plan.get(g).nics(), "rank " + g);
            assertEquals(g / 4, plan.get(g).numaNode());
        }
    }

    @Test
    void ranksSharingAGpuSplitItsNics(@TempDir Path dir) {
        SysfsFixture f = SysfsFixture.p5(dir);
        Sysfs sysfs = new Sysfs(f.root);
        List<PciDevice> gpus = new ArrayList<>();
        for (int r = 0; r < 16; r++) {
            gpus.add(sysfs.device(f.gpus.get(r % 8)).orElseThrow()); // TrialGpu: local rank % visible GPUs
        }
        List<NicPlacement.Share> plan = NicPlacement.plan(gpus, placed(sysfs, f.nics));
        for (int g = 0; g < 8; g++) {
            List<Integer> four = nicsOfGpu(f, g);
            assertEquals(four.subList(0, 2), plan.get(g).nics());
            assertEquals(four.subList(2, 4), plan.get(g + 8).nics());
            assertTrue(plan.get(g).basis().endsWith("split 2 ways"), plan.get(g).basis());
        }
    }

    @Test
    void withoutGpusRanksAreSpreadOverNumaNodesInBlocks(@TempDir Path dir) {
        SysfsFixture f = SysfsFixture.p5(dir);
        Sysfs sysfs = new Sysfs(f.root);
        List<PciDevice> noGpus = new ArrayList<>();
        for (int r = 0; r < 8; r++) {
            noGpus.add(null);
        }
        List<NicPlacement.Share> plan = NicPlacement.plan(noGpus, placed(sysfs, f.nics));
        List<Integer> seen = new ArrayList<>();
        for (int r = 0; r < 8; r++) {
            NicPlacement.Share s = plan.get(r);
            assertEquals(r / 4, s.numaNode(), "rank " + r);
            assertEquals(4, s.nics().size());
            for (int i : s.nics()) {
                assertEquals(r / 4, f.nicGpu.get(i) / 4, "rank " + r + " took a NIC of the other node");
            }
            seen.addAll(s.nics());
        }
        assertEquals(32, seen.stream().distinct().count(), "every NIC used once");
    }

    @Test
    void nicsWithoutPciAddressKeepTheEvenSliceInOrder() {
        List<PciDevice> nics = new ArrayList<>();
        nics.add(null);
        NicPlacement.Share s = NicPlacement.plan(List.of(), nics).getFirst();
        assertEquals(List.of(0), s.nics());
        assertEquals(-1, s.numaNode());
        assertEquals(List.of(2, 3), NicPlacement.byOrder(4, 1, 2));
        assertEquals(List.of(1), NicPlacement.byOrder(2, 3, 4));
        assertEquals(List.of(1), NicPlacement.byOrder(3, 1, 2), "equal counts: one each, the third unused");
    }

    @Test
    void sysfsParsesPathsNumaNodesAndCpuLists(@TempDir Path dir) {
        SysfsFixture f = SysfsFixture.p5(dir);
        Sysfs sysfs = new Sysfs(f.root);
        PciDevice gpu0 = sysfs.device(PciAddress.parse("00000000:4f:00.0")).orElseThrow(); // CUDA's spelling
        assertEquals(List.of("pci0000:00", "0000:00:01.0", "0000:4d:00.0", "0000:4e:00.0", "0000:4f:00.0"), gpu0.path());
        assertEquals(0, gpu0.numaNode());
        PciDevice nicOfGpu7 = sysfs.device(PciAddress.parse("0000:c1:00.0")).orElseThrow();
        assertEquals(1, nicOfGpu7.numaNode());
        assertEquals(0, gpu0.sharedDepth(nicOfGpu7));
        assertEquals(List.of(48, 49), sysfs.cpusOfNode(1).subList(0, 2));
        assertEquals(96, sysfs.cpusOfNode(1).size());
        assertTrue(sysfs.cpusOfNode(2).isEmpty());
        assertTrue(sysfs.device(PciAddress.parse("0000:ff:00.0")).isEmpty());
        assertEquals(List.of(0, 1, 2, 7), Sysfs.parseCpuList("0-2,7\n"));
        assertThrows(IllegalArgumentException.class, () -> Sysfs.parseCpuList("3-1"));
        assertThrows(IllegalArgumentException.class, () -> PciAddress.parse("4f:00.0"));
    }

    /** This machine's own sysfs: no GPU, so the NUMA fallback; its PCI NICs (virtio here) are placed. */
    @Test
    void thisMachinesSysfsPlacesItsNetworkDevices() throws IOException {
        Sysfs sysfs = Sysfs.system();
        List<PciDevice> nics = new ArrayList<>();
        try (Stream<Path> devices = Files.list(Path.of("/sys/bus/pci/devices"))) {
            for (Path d : devices.toList()) {
                if (Files.readString(d.resolve("class")).startsWith("0x02")) {
                    nics.add(sysfs.device(PciAddress.parse(d.getFileName().toString())).orElseThrow());
                }
            }
        }
        org.junit.jupiter.api.Assumptions.assumeFalse(nics.isEmpty(), "no PCI network device on this machine");
        for (PciDevice n : nics) {
            assertTrue(n.path().getFirst().startsWith("pci"), n.path().toString());
            assertEquals(n.address().toString(), n.path().getLast());
        }
        NicPlacement.Share s = NicPlacement.plan(java.util.Collections.singletonList(null), nics).getFirst();
        assertFalse(s.nics().isEmpty());
        int node = nics.getFirst().numaNode();
        assertEquals(node, s.numaNode(), s.basis());
        if (node >= 0) {
            assertFalse(sysfs.cpusOfNode(node).isEmpty());
        }
    }

    @Test
    void bindingToTheCpusThisThreadHasChangesNothing() {
        List<Integer> cpus = CpuBinding.currentCpus();
        CpuBinding.Result r = CpuBinding.bindProcess(cpus);
        assertTrue(r.bound() >= 1, r.describe());
        assertEquals(cpus, CpuBinding.currentCpus());
    }
}

package io.efabench.fabric;

import io.efabench.fabric.generated.LibFabric;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DiscoveryTest {

    /** Output of {@link FabricInfo} run in a child JVM with {@code env} changes (null value = unset). */
    private record Run(int exit, String out, String err) {
    }

    private static Run fabricInfo(Map<String, String> env) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                FabricInfo.class.getName());
        env.forEach((k, v) -> {
            if (v == null) {
                pb.environment().remove(k);
            } else {
                pb.environment().put(k, v);
            }
        });
        Process p = pb.start();
        p.getOutputStream().close();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("FabricInfo with " + env + " did not finish within 60 s");
        }
        return new Run(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
                new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    @Test
    void unknownFiProviderIsOneLineNamingIt() throws Exception {
        Run run = fabricInfo(Map.of("FI_PROVIDER", "nosuch"));
        assertEquals(2, run.exit(), run.out() + run.err());
        List<String> lines = run.err().lines().toList();
        assertEquals(1, lines.size(), run.err());
        assertTrue(lines.getFirst().startsWith("FI_PROVIDER=nosuch: no provider offers FI_EP_RDM with FI_MSG|FI_RMA"),
                lines.getFirst());
    }

    @Test
    void withoutFiProviderEfaIsChosenOrTheAlternativesAreListed() throws Exception {
        Map<String, String> env = new java.util.HashMap<>();
        env.put("FI_PROVIDER", null);
        Run run = fabricInfo(env);
        if (run.exit() == 0) {
            assertTrue(run.out().startsWith("provider efa,"), run.out());
        } else {
            assertEquals(2, run.exit(), run.out() + run.err());
            List<String> lines = run.err().lines().toList();
            assertEquals(1, lines.size(), run.err());
            assertTrue(lines.getFirst().startsWith("no EFA provider found; set FI_PROVIDER to one of: "), run.err());
        }
    }

    @Test
    void loopbackLauncherKeepsTcpOnLoopback() throws Exception {
        Run run = fabricInfo(Map.of("FI_PROVIDER", "tcp", "EFABENCH_LOOPBACK", "1"));
        org.junit.jupiter.api.Assumptions.assumeTrue(run.exit() == 0, "tcp is not available here: " + run.err());
        List<String> nics = run.out().lines().skip(1).toList();
        assertEquals(1, nics.size(), run.out());
        assertTrue(nics.getFirst().contains("(127.0.0.1/"), run.out());
    }

    @Test
    void unknownFabricIsOneLineListingTheFabrics() throws Exception {
        Run run = fabricInfo(Map.of("FI_PROVIDER", "tcp", "EFABENCH_FABRIC", "nosuch"));
        org.junit.jupiter.api.Assumptions.assumeFalse(run.err().contains("no provider offers"), "tcp is not available here");
        assertEquals(2, run.exit(), run.out() + run.err());
        // 1.x layers tcp under ofi_rxm for RDM; 2.x tcp offers RDM itself.
        assertTrue(run.err().matches("EFABENCH_FABRIC=nosuch: no such fabric; tcp(;ofi_rxm)? offers \\[.*\\R?"), run.err());
        assertEquals(1, run.err().lines().count(), run.err());
    }

    @Test
    void unknownOverrideFailsWithEnodata() {
        FabricException e = assertThrows(FabricException.class, () -> Discovery.discover(false, "nosuch"));
        assertEquals(-LibFabric.FI_ENODATA(), e.errno());
        assertTrue(e.getMessage().startsWith("provider 'nosuch': no provider offers"), e.getMessage());
    }

    /** Discovery of {@code provider} on host memory; the test is skipped, saying why, where it is not offered. */
    private static Discovery discoverOrSkip(String provider) {
        try {
            return Discovery.discover(false, provider);
        } catch (FabricException e) {
            org.junit.jupiter.api.Assumptions.assumeTrue(false, provider + " is not available here: " + e.getMessage());
            throw e;
        }
    }

    @Test
    void nicsAreDistinctDomainsWithTheAskedForCqData() {
        try (Discovery d = discoverOrSkip("tcp")) {
            assertFalse(d.nics().isEmpty());
            assertEquals(d.nics().size(), d.nics().stream().map(NicInfo::domainName).distinct().count(),
                    "one NicInfo per domain: " + d.nics());
            for (NicInfo nic : d.nics()) {
                assertTrue(nic.provider().startsWith("tcp"), nic.toString());
                assertTrue(nic.cqDataSize() >= Discovery.CQ_DATA_SIZE, nic.toString());
                assertTrue((nic.caps() & (Fi.MSG | Fi.RMA)) == (Fi.MSG | Fi.RMA), nic.toString());
                assertEquals(nic, d.nics().get(nic.index()));
            }
        }
        assertTrue(Discovery.headerVersion().matches("\\d+\\.\\d+"));
        assertTrue(Discovery.runtimeVersion().matches("\\d+\\.\\d+"));
    }

    @Test
    void hintsAskForControlUnifiedProgressOnlyWhenTold() {
        for (boolean unified : new boolean[] {false, true}) {
            java.lang.foreign.MemorySegment hints = DiscoveryHints.hints(false, "shm", 0, unified);
            try {
                java.lang.foreign.MemorySegment dom = io.efabench.fabric.generated.fi_info.domain_attr(hints)
                        .reinterpret(io.efabench.fabric.generated.fi_domain_attr.sizeof());
                assertEquals(unified ? Fi.PROGRESS_CONTROL_UNIFIED : 0, io.efabench.fabric.generated.fi_domain_attr.progress(dom));
            } finally {
                LibFabric.fi_freeinfo(hints);
            }
        }
    }

    @Test
    void progressSettingAsksShmOnlyAndRejectsWhatItDoesNotKnow() {
        assertTrue(DiscoveryHints.asksControlUnified("shm", null));
        assertTrue(DiscoveryHints.asksControlUnified("shm", " control-unified "));
        assertFalse(DiscoveryHints.asksControlUnified("shm", "default"));
        assertFalse(DiscoveryHints.asksControlUnified("tcp", null));
        FabricException e = assertThrows(FabricException.class,
                () -> DiscoveryHints.asksControlUnified("tcp", "defualt"));
        assertTrue(e.getMessage().startsWith("EFABENCH_PROGRESS=\"defualt\" is not one of: default"), e.getMessage());
    }

    /**
     * shm is asked for FI_PROGRESS_CONTROL_UNIFIED where the API has it (2.x) and grants it, which
     * drops the mutex of every CQ read; under a 1.x library (Debian's 1.17 on CI) it keeps its
     * default. tcp is never asked. The GPU machine's libfabric 2.6 runs the first branch.
     */
    @Test
    void shmRunsWithControlUnifiedProgressWhereTheApiHasIt() {
        try (Discovery d = discoverOrSkip("shm")) {
            if (Fi.apiVersion() >= Fi.CONTROL_UNIFIED_VERSION) {
                assertEquals("control-unified", d.controlProgress());
            } else {
                assertFalse(d.controlProgress().equals("control-unified"), d.controlProgress());
            }
        }
        try (Discovery tcp = Discovery.discover(false, "tcp")) {
            assertFalse(tcp.controlProgress().equals("control-unified"), tcp.controlProgress());
        } catch (FabricException e) {
            // tcp absent: the shm half above still ran
        }
    }
}

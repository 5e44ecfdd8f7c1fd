package io.efabench.harness.trial;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

/** efa-desk-check.md item 8: a missing libcudart.so is named, not blamed on the libfabric build. */
class TrialOpeningTest {

    @Test
    void noCudaRuntimeIsNamedAsSuch() {
        String line = TrialOpening.noHmem("WriteBenchmark config=SingleDMA", "efa", "fi_getinfo: No data available", false);
        assertTrue(line.contains("libfabric loads the CUDA runtime as libcudart.so (unversioned), and no libcudart.so is"
                + " on the loader path"), line);
        assertFalse(line.contains("needs a libfabric built with CUDA"), line);
        assertTrue(line.startsWith("WriteBenchmark config=SingleDMA moves GPU memory, but provider efa offers no FI_HMEM"), line);
        assertTrue(line.endsWith("(fi_getinfo: No data available)"), line);
    }

    @Test
    void withTheCudaRuntimeTheBuildOrProviderIsNamed() {
        String line = TrialOpening.noHmem("SendRecvBenchmark config=SingleDevice", null, "x", true);
        assertTrue(line.contains("provider (any) offers no FI_HMEM") && line.contains("needs a libfabric built with CUDA"), line);
        assertFalse(line.contains("libcudart"), line);
    }

    /** The loader's answer agrees with what is on its path here (this machine: no CUDA toolkit, so false). */
    @Test
    void theCudaRuntimeCheckAsksTheLoaderForTheUnversionedName() throws Exception {
        boolean onPath = false;
        String ld = System.getenv("LD_LIBRARY_PATH");
        for (String dir : (ld == null ? "" : ld).split(":")) {
            onPath |= !dir.isEmpty() && Files.exists(Path.of(dir, "libcudart.so"));
        }
        Process p = new ProcessBuilder("sh", "-c", "ldconfig -p 2>/dev/null || /sbin/ldconfig -p").start();
        String cache = new String(p.getInputStream().readAllBytes());
        p.waitFor();
        onPath |= cache.lines().anyMatch(l -> l.trim().startsWith("libcudart.so "));
        assertEquals(onPath, io.efabench.cuda.Cuda.runtimeLoadsByPlainName());
    }
}

package io.efabench.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every kernel source compiles with nvcc for Hopper (sm_90), on any machine that has nvcc
 * (no GPU needed); NVRTC compiles the same sources at run time on the GPU machine.
 */
class KernelSourcesTest {
    private static final Path DIR = Path.of("src/main/resources/io/efabench/cuda/kernels");

    @Test
    void sourceListMatchesTheResourceDirectory() throws IOException {
        try (Stream<Path> files = Files.list(DIR)) {
            List<String> cu = files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".cu")).sorted().toList();
            assertEquals(cu, KernelCompiler.SOURCES.stream().sorted().toList());
        }
        for (String s : KernelCompiler.SOURCES) {
            assertTrue(KernelCompiler.source(s).contains("#include \"" + KernelCompiler.HEADER + "\""), s);
        }
    }

    @Test
    void everyKernelCompilesWithNvccForSm90(@TempDir Path out) throws Exception {
        String nvcc = findNvcc();
        assumeTrue(nvcc != null, "nvcc not on PATH (nor in /usr/local/cuda/bin): kernel compile check skipped");
        for (String source : KernelCompiler.SOURCES) {
            Path cubin = out.resolve(source.replace(".cu", ".cubin"));
            Process p = new ProcessBuilder(nvcc, "-arch=sm_90", "--cubin", "-I", DIR.toString(), "-o", cubin.toString(),
                    DIR.resolve(source).toString()).redirectErrorStream(true).start();
            String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(300, TimeUnit.SECONDS), "nvcc did not finish compiling " + source);
            assertEquals(0, p.exitValue(), () -> "nvcc failed on " + source + ":\n" + log);
            assertTrue(Files.size(cubin) > 0, source + " produced an empty cubin");
        }
    }

    private static String findNvcc() {
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(":")) {
                if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "nvcc"))) {
                    return Path.of(dir, "nvcc").toString();
                }
            }
        }
        Path fallback = Path.of("/usr/local/cuda/bin/nvcc");
        return Files.isExecutable(fallback) ? fallback.toString() : null;
    }
}

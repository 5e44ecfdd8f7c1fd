package io.efabench.cuda;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * Compiles the CUDA C kernels shipped as resources ({@code io/efabench/cuda/kernels/*.cu}) for
 * the GPU at hand with NVRTC, into a CUBIN for its exact architecture (sm_90 on Hopper, so
 * Hopper-only instructions such as bulk copies are available).
 *
 * <p>Each JMH fork is a new JVM, so CUBINs are cached on disk, keyed by the SHA-256 of source,
 * header, options and driver version: {@code $EFABENCH_KERNEL_CACHE}, else
 * {@code java.io.tmpdir/efabench-kernels-<user>}. A cache that cannot be written is skipped.
 */
public final class KernelCompiler {
    private KernelCompiler() {}

    /** Every kernel source; a test checks this list against the resource directory. */
    public static final List<String> SOURCES = List.of("alltoall.cu", "flag.cu", "ipc_write.cu", "pattern.cu", "proxy.cu");
    /** The header every source includes. */
    public static final String HEADER = "efabench.cuh";
    private static final String DIR = "/io/efabench/cuda/kernels/";

    /** The text of a kernel source or header shipped in the jar. */
    public static String source(String file) {
        try (InputStream in = KernelCompiler.class.getResourceAsStream(DIR + file)) {
            if (in == null) {
                throw new IllegalArgumentException("no kernel source " + DIR + file + " on the class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** NVRTC options for {@code device}. */
    public static List<String> options(CudaDevice device) {
        return List.of("--gpu-architecture=" + device.arch(), "--std=c++17");
    }

    /** The CUBIN of {@code file} for {@code device}, from the cache or NVRTC. */
    public static byte[] cubin(String file, CudaDevice device) {
        String src = source(file);
        String header = source(HEADER);
        List<String> options = options(device);
        String key = sha256(file + "\0" + src + "\0" + header + "\0" + options + "\0" + Cuda.driverVersion());
        Path cached = cacheDir().resolve(file.replace(".cu", "") + "-" + device.arch() + "-" + key.substring(0, 24) + ".cubin");
        try {
            if (Files.isRegularFile(cached)) {
                return Files.readAllBytes(cached);
            }
        } catch (IOException unreadable) {
            // compile afresh below
        }
        byte[] bin = Nvrtc.get().compileToCubin(src, file, Map.of(HEADER, header), options);
        store(cached, bin);
        return bin;
    }

    /** Compiles (or takes from the cache) and loads {@code file} into {@code context}. */
    public static CudaModule load(CudaContext context, String file) {
        return CudaModule.load(context, cubin(file, context.device()), file);
    }

    /** Where NVRTC was found and its version, for provenance: "13.0 (/usr/local/cuda/lib64/libnvrtc.so.13)". */
    public static String nvrtcDescription() {
        Nvrtc n = Nvrtc.get();
        return n.version() + " (" + n.path() + ")";
    }

    private static Path cacheDir() {
        String dir = System.getenv("EFABENCH_KERNEL_CACHE");
        if (dir != null && !dir.isBlank()) {
            return Path.of(dir);
        }
        return Path.of(System.getProperty("java.io.tmpdir"), "efabench-kernels-" + System.getProperty("user.name"));
    }

    private static void store(Path target, byte[] bin) {
        try {
            Files.createDirectories(target.getParent());
            Path tmp = Files.createTempFile(target.getParent(), "cubin", ".tmp");
            Files.write(tmp, bin);
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException | UnsupportedOperationException e) {
            // a read-only or shared tmp: compile again next time
        }
    }

    private static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }
}

package io.efabench.cuda;

import static io.efabench.cuda.generated.CudaDriver.CUDA_SUCCESS;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.efabench.cuda.generated.CudaDriver;

/**
 * The CUDA driver, loaded lazily: nothing here touches {@code libcuda.so.1} until the first
 * call, so that machines without a GPU run everything else and GPU benchmarks can stop at setup
 * with {@link #unavailableReason()}.
 *
 * <p>The generated {@link CudaDriver} resolves symbols through the class loader's libraries, so
 * the driver has to be {@code System.load}ed by absolute path before the first CUDA call. The path
 * is found the way the driver's own users find it: {@code dlopen("libcuda.so.1")} (honouring
 * {@code LD_LIBRARY_PATH} and the ld.so cache), then the mapped file is read from
 * {@code /proc/self/maps}. {@code EFABENCH_LIBCUDA} overrides the search with a path.
 */
public final class Cuda {
    private Cuda() {}

    /** Directories where drivers live when the ld.so cache does not list them (containers, WSL). */
    private static final List<String> FALLBACK_DIRS = List.of(
            "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
            "/usr/local/nvidia/lib64", "/usr/local/nvidia/lib", "/usr/lib/wsl/lib");

    private record Driver(String path, int version, String failure) {}

    private static final class Holder {
        static final Driver DRIVER = load();
    }

    /**
     * Whether the dynamic loader finds the CUDA runtime as {@code libcudart.so} (unversioned), the
     * name libfabric's CUDA support loads it by.
     */
    public static boolean runtimeLoadsByPlainName() {
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            java.lang.foreign.SymbolLookup.libraryLookup("libcudart.so", arena);
            return true;
        } catch (IllegalArgumentException notFound) {
            return false;
        }
    }

    /** Why CUDA cannot be used here (one line), or empty when the driver loaded and initialised. */
    public static Optional<String> unavailableReason() {
        return Optional.ofNullable(Holder.DRIVER.failure());
    }

    /** Throws {@link CudaException} with {@link #unavailableReason()} when CUDA cannot be used. */
    public static void require() {
        String failure = Holder.DRIVER.failure();
        if (failure != null) {
            throw new CudaException("cuInit", -1, failure);
        }
    }

    /** The driver's CUDA version as major * 1000 + minor * 10 (13000 for 13.0). */
    public static int driverVersion() {
        require();
        return Holder.DRIVER.version();
    }

    /** "13.0" */
    public static String driverVersionText() {
        int v = driverVersion();
        return (v / 1000) + "." + (v % 1000) / 10;
    }

    /** Absolute path of the loaded libcuda. */
    public static String libraryPath() {
        require();
        return Holder.DRIVER.path();
    }

    /** Turns a CUresult into {@link CudaException} naming the call; a no-op on CUDA_SUCCESS. */
    static void check(int result, String call) {
        if (result != CUDA_SUCCESS()) {
            throw failure(result, call);
        }
    }

    static CudaException failure(int result, String call) {
        return new CudaException(call, result, call + " failed: " + errorName(result) + " (" + errorText(result) + ")");
    }

    /** cuGetErrorName, e.g. CUDA_ERROR_OUT_OF_MEMORY; "CUresult N" when the driver does not know it. */
    public static String errorName(int result) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            if (CudaDriver.cuGetErrorName(result, p) != CUDA_SUCCESS()) {
                return "CUresult " + result;
            }
            return p.get(ValueLayout.ADDRESS, 0).reinterpret(256).getString(0);
        }
    }

    /** cuGetErrorString, e.g. "out of memory". */
    public static String errorText(int result) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            if (CudaDriver.cuGetErrorString(result, p) != CUDA_SUCCESS()) {
                return "unknown error";
            }
            return p.get(ValueLayout.ADDRESS, 0).reinterpret(1024).getString(0);
        }
    }

    private static Driver load() {
        String path;
        try {
            path = locate();
        } catch (RuntimeException e) {
            return new Driver(null, 0, "no CUDA driver: " + e.getMessage());
        }
        if (path == null) {
            return new Driver(null, 0, "no CUDA driver: libcuda.so.1 not found (loader path, LD_LIBRARY_PATH, "
                    + "/usr/lib*, /usr/local/nvidia/lib*); set EFABENCH_LIBCUDA=/path/to/libcuda.so.1 if it is elsewhere");
        }
        try {
            System.load(path);
        } catch (UnsatisfiedLinkError e) {
            return new Driver(path, 0, "no CUDA driver: " + path + " does not load: " + e.getMessage());
        }
        int rc = CudaDriver.cuInit(0);
        if (rc != CUDA_SUCCESS()) {
            return new Driver(path, 0, "CUDA driver " + path + " cannot start: cuInit failed: " + errorName(rc)
                    + " (" + errorText(rc) + ")");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocate(ValueLayout.JAVA_INT);
            check(CudaDriver.cuDriverGetVersion(v), "cuDriverGetVersion");
            return new Driver(path, v.get(ValueLayout.JAVA_INT, 0), null);
        }
    }

    private static String locate() {
        String override = System.getenv("EFABENCH_LIBCUDA");
        if (override != null && !override.isBlank()) {
            if (!Files.isReadable(Path.of(override))) {
                throw new IllegalStateException("EFABENCH_LIBCUDA=" + override + " is not a readable file");
            }
            return Path.of(override).toAbsolutePath().toString();
        }
        try {
            SymbolLookup.libraryLookup("libcuda.so.1", Arena.global());
            String mapped = mappedPath("libcuda.so");
            if (mapped != null) {
                return mapped;
            }
        } catch (IllegalArgumentException notFound) {
            // not on the loader's search path: try the usual driver directories below
        }
        List<String> dirs = new ArrayList<>();
        String ld = System.getenv("LD_LIBRARY_PATH");
        if (ld != null) {
            dirs.addAll(List.of(ld.split(":")));
        }
        dirs.addAll(FALLBACK_DIRS);
        for (String dir : dirs) {
            // The toolkit's stubs/libcuda.so links but fails cuInit with CUDA_ERROR_STUB_LIBRARY.
            if (dir.isBlank() || dir.contains("stubs")) {
                continue;
            }
            Path p = Path.of(dir, "libcuda.so.1");
            if (Files.isReadable(p)) {
                return p.toAbsolutePath().toString();
            }
        }
        return null;
    }

    /** The file of a loaded library whose name starts with {@code prefix}, from /proc/self/maps. */
    static String mappedPath(String prefix) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
                int slash = line.indexOf('/');
                if (slash < 0) {
                    continue;
                }
                String file = line.substring(slash).trim();
                String name = file.substring(file.lastIndexOf('/') + 1);
                if (name.startsWith(prefix)) {
                    return file;
                }
            }
        } catch (IOException e) {
            return null;
        }
        return null;
    }
}

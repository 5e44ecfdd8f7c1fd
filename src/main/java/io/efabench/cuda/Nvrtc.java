package io.efabench.cuda;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * NVRTC, the CUDA C++ compiler library, loaded at run time (nvcc is not needed where the
 * benchmarks run). Hand-written downcalls: nvrtc.h is not installed on the machine that
 * generates the committed bindings, and the nine calls below are stable C API.
 */
final class Nvrtc {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final ValueLayout.OfLong SIZE_T = ValueLayout.JAVA_LONG;
    private static final AddressLayout PTR = ValueLayout.ADDRESS;

    private final String path;
    private final MethodHandle version;
    private final MethodHandle errorString;
    private final MethodHandle create;
    private final MethodHandle compile;
    private final MethodHandle destroy;
    private final MethodHandle logSize;
    private final MethodHandle log;
    private final MethodHandle cubinSize;
    private final MethodHandle cubin;

    private static final class Holder {
        static final Object INSTANCE = load();
    }

    private Nvrtc(String path, SymbolLookup lib) {
        this.path = path;
        version = handle(lib, "nvrtcVersion", FunctionDescriptor.of(INT, PTR, PTR));
        errorString = handle(lib, "nvrtcGetErrorString", FunctionDescriptor.of(PTR, INT));
        create = handle(lib, "nvrtcCreateProgram", FunctionDescriptor.of(INT, PTR, PTR, PTR, INT, PTR, PTR));
        compile = handle(lib, "nvrtcCompileProgram", FunctionDescriptor.of(INT, PTR, INT, PTR));
        destroy = handle(lib, "nvrtcDestroyProgram", FunctionDescriptor.of(INT, PTR));
        logSize = handle(lib, "nvrtcGetProgramLogSize", FunctionDescriptor.of(INT, PTR, PTR));
        log = handle(lib, "nvrtcGetProgramLog", FunctionDescriptor.of(INT, PTR, PTR));
        cubinSize = handle(lib, "nvrtcGetCUBINSize", FunctionDescriptor.of(INT, PTR, PTR));
        cubin = handle(lib, "nvrtcGetCUBIN", FunctionDescriptor.of(INT, PTR, PTR));
    }

    private static MethodHandle handle(SymbolLookup lib, String name, FunctionDescriptor fd) {
        return LINKER.downcallHandle(lib.findOrThrow(name), fd);
    }

    /** The library, or a {@link CudaException} saying where it was looked for. */
    static Nvrtc get() {
        Object o = Holder.INSTANCE;
        if (o instanceof Nvrtc n) {
            return n;
        }
        throw new CudaException("nvrtc", -1, (String) o);
    }

    private static Object load() {
        List<String> tried = new ArrayList<>();
        for (String candidate : candidates()) {
            tried.add(candidate);
            try {
                SymbolLookup lib = SymbolLookup.libraryLookup(candidate, Arena.global());
                String resolved = candidate.startsWith("/") ? candidate : Cuda.mappedPath("libnvrtc.so");
                return new Nvrtc(resolved == null ? candidate : resolved, lib);
            } catch (IllegalArgumentException notThere) {
                // next candidate
            }
        }
        return "no NVRTC (needed to compile the CUDA kernels for this GPU): libnvrtc not found; tried "
                + String.join(", ", tried) + "; set EFABENCH_LIBNVRTC=/path/to/libnvrtc.so.N";
    }

    private static List<String> candidates() {
        List<String> out = new ArrayList<>();
        String override = System.getenv("EFABENCH_LIBNVRTC");
        if (override != null && !override.isBlank()) {
            return List.of(override);
        }
        // dlopen's own search (LD_LIBRARY_PATH, ld.so cache) first, newest major first.
        out.addAll(List.of("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"));
        List<Path> dirs = new ArrayList<>();
        for (String env : List.of("CUDA_HOME", "CUDA_PATH")) {
            String v = System.getenv(env);
            if (v != null && !v.isBlank()) {
                dirs.add(Path.of(v, "lib64"));
                dirs.add(Path.of(v, "lib"));
            }
        }
        dirs.add(Path.of("/usr/local/cuda/lib64"));
        dirs.add(Path.of("/usr/local/cuda/targets/x86_64-linux/lib"));
        dirs.add(Path.of("/usr/local/cuda/targets/sbsa-linux/lib"));
        try (Stream<Path> versions = Files.list(Path.of("/usr/local"))) {
            versions.filter(p -> p.getFileName().toString().startsWith("cuda-"))
                    .sorted(Comparator.reverseOrder())
                    .forEach(p -> dirs.add(p.resolve("lib64")));
        } catch (Exception ignored) {
            // no /usr/local/cuda-* toolkits
        }
        for (Path dir : dirs) {
            try (Stream<Path> files = Files.list(dir)) {
                files.map(Path::toString)
                        .filter(f -> f.matches(".*/libnvrtc\\.so\\.\\d+(\\.\\d+)*$"))
                        .sorted(Comparator.reverseOrder())
                        .forEach(out::add);
            } catch (Exception ignored) {
                // directory absent
            }
        }
        return out;
    }

    String path() {
        return path;
    }

    /** "13.0" */
    String version() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment major = arena.allocate(INT);
            MemorySegment minor = arena.allocate(INT);
            check((int) version.invokeExact(major, minor), "nvrtcVersion");
            return major.get(INT, 0) + "." + minor.get(INT, 0);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * Compiles {@code source} to a CUBIN. {@code headers} maps include names to their text.
     * A compile error throws {@link CudaException} with NVRTC's log.
     */
    byte[] compileToCubin(String source, String name, Map<String, String> headers, List<String> options) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment prog = arena.allocate(PTR);
            MemorySegment headerTexts = arena.allocate(PTR, Math.max(1, headers.size()));
            MemorySegment headerNames = arena.allocate(PTR, Math.max(1, headers.size()));
            int i = 0;
            for (Map.Entry<String, String> h : headers.entrySet()) {
                headerNames.setAtIndex(PTR, i, arena.allocateFrom(h.getKey()));
                headerTexts.setAtIndex(PTR, i, arena.allocateFrom(h.getValue()));
                i++;
            }
            check((int) create.invokeExact(prog, arena.allocateFrom(source), arena.allocateFrom(name),
                    headers.size(), headerTexts, headerNames), "nvrtcCreateProgram(" + name + ")");
            MemorySegment program = prog.get(PTR, 0);
            try {
                MemorySegment opts = arena.allocate(PTR, Math.max(1, options.size()));
                for (int k = 0; k < options.size(); k++) {
                    opts.setAtIndex(PTR, k, arena.allocateFrom(options.get(k)));
                }
                int rc = (int) compile.invokeExact(program, options.size(), opts);
                if (rc != 0) {
                    throw new CudaException("nvrtcCompileProgram(" + name + ")", rc, "nvrtcCompileProgram(" + name + ", "
                            + String.join(" ", options) + ") failed: " + errorText(rc) + "\n" + log(arena, program));
                }
                MemorySegment size = arena.allocate(SIZE_T);
                check((int) cubinSize.invokeExact(program, size), "nvrtcGetCUBINSize(" + name + ")");
                MemorySegment bin = arena.allocate(size.get(SIZE_T, 0));
                check((int) cubin.invokeExact(program, bin), "nvrtcGetCUBIN(" + name + ")");
                return bin.toArray(ValueLayout.JAVA_BYTE);
            } finally {
                int ignored = (int) destroy.invokeExact(prog);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    private String log(Arena arena, MemorySegment program) throws Throwable {
        MemorySegment size = arena.allocate(SIZE_T);
        if ((int) logSize.invokeExact(program, size) != 0) {
            return "(no log)";
        }
        MemorySegment text = arena.allocate(Math.max(1, size.get(SIZE_T, 0)));
        if ((int) log.invokeExact(program, text) != 0) {
            return "(no log)";
        }
        return text.getString(0).strip();
    }

    private void check(int rc, String call) {
        if (rc != 0) {
            throw new CudaException(call, rc, call + " failed: " + errorText(rc));
        }
    }

    private String errorText(int rc) {
        try {
            MemorySegment s = (MemorySegment) errorString.invokeExact(rc);
            return s.reinterpret(256).getString(0) + " (nvrtcResult " + rc + ")";
        } catch (Throwable t) {
            return "nvrtcResult " + rc;
        }
    }
}

package io.efabench.fabric;

import io.efabench.fabric.generated.LibFabric;
import io.efabench.fabric.generated.fi_ops;
import io.efabench.fabric.generated.fid;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/** Package-private glue over the generated bindings: library probe, constants, fid helpers. */
final class Fi {
    private Fi() {
    }

    static final String LIBRARY = "libfabric.so.1";

    /**
     * Checks that libfabric can be opened before anything touches {@link LibFabric}, whose static
     * initialiser would otherwise fail with an ExceptionInInitializerError.
     */
    static void requireLibrary() {
        Probe.check();
    }

    private static final class Probe {
        private static final String ERROR = probe();

        private static String probe() {
            try {
                SymbolLookup.libraryLookup(LIBRARY, Arena.global());
                return null;
            } catch (IllegalArgumentException e) {
                return LIBRARY + " cannot be loaded (" + e.getMessage()
                        + "); install libfabric or add its lib directory to LD_LIBRARY_PATH";
            }
        }

        static void check() {
            if (ERROR != null) {
                throw new FabricException(ERROR);
            }
        }
    }

    // Constants used on hot paths, read once from the generated bindings.
    static final long EAGAIN = LibFabric.FI_EAGAIN();
    static final long EAVAIL = LibFabric.FI_EAVAIL();
    static final long SEND = LibFabric.FI_SEND();
    static final long RECV = LibFabric.FI_RECV();
    static final long READ = LibFabric.FI_READ();
    static final long WRITE = LibFabric.FI_WRITE();
    static final long REMOTE_READ = LibFabric.FI_REMOTE_READ();
    static final long REMOTE_WRITE = LibFabric.FI_REMOTE_WRITE();
    static final long REMOTE_CQ_DATA = LibFabric.FI_REMOTE_CQ_DATA();
    static final long COMPLETION = LibFabric.FI_COMPLETION();
    static final long MSG = LibFabric.FI_MSG();
    static final long RMA = LibFabric.FI_RMA();
    static final long TRANSMIT = LibFabric.FI_TRANSMIT();
    static final long HMEM = LibFabric.FI_HMEM();
    static final long LOCAL_COMM = LibFabric.FI_LOCAL_COMM();
    static final long REMOTE_COMM = LibFabric.FI_REMOTE_COMM();
    static final long CONTEXT = LibFabric.FI_CONTEXT();
    static final long CONTEXT2 = LibFabric.FI_CONTEXT2();
    static final long RX_CQ_DATA = LibFabric.FI_RX_CQ_DATA();
    static final long ADDR_UNSPEC = LibFabric.FI_ADDR_UNSPEC();

    static final int MR_LOCAL = LibFabric.FI_MR_LOCAL();
    static final int MR_VIRT_ADDR = LibFabric.FI_MR_VIRT_ADDR();
    static final int MR_ALLOCATED = LibFabric.FI_MR_ALLOCATED();
    static final int MR_PROV_KEY = LibFabric.FI_MR_PROV_KEY();
    static final int MR_ENDPOINT = LibFabric.FI_MR_ENDPOINT();
    static final int MR_HMEM = LibFabric.FI_MR_HMEM();
    static final long MR_DMABUF = LibFabric.FI_MR_DMABUF();
    static final long HMEM_DEVICE_ONLY = LibFabric.FI_HMEM_DEVICE_ONLY();

    static final int ENOSYS = LibFabric.FI_ENOSYS();
    static final int EOPNOTSUPP = LibFabric.FI_EOPNOTSUPP();
    static final int EBADFLAGS = LibFabric.FI_EBADFLAGS();

    /** {@code FI_VERSION(major, minor)}: a function-like macro, so jextract cannot give it. */
    static int version(int major, int minor) {
        return (major << 16) | minor;
    }

    /** FI_VERSION of the headers the bindings were generated from (2.6). */
    static final int HEADER_VERSION = version(LibFabric.FI_MAJOR_VERSION(), LibFabric.FI_MINOR_VERSION());

    /** FI_VERSION(1, 20): the first API with {@code fi_mr_attr.dmabuf} and {@code FI_MR_DMABUF}. */
    static final int DMABUF_VERSION = version(1, 20);

    /**
     * {@code FI_PROGRESS_CONTROL_UNIFIED} of {@code enum fi_progress} (libfabric 2.x's rdma/fabric.h:
     * UNSPEC, AUTO, MANUAL, CONTROL_UNIFIED), not among the constants jextract/fabric.args keeps.
     * "The user will synchronize progressing the data and control operations themselves ... combined
     * with threading=FI_THREAD_DOMAIN allows libfabric to remove all locking in the critical data
     * progress path" (fi_domain(3)); efabench drives each domain from one thread (docs/DESIGN.md).
     */
    static final int PROGRESS_CONTROL_UNIFIED = 3;

    /** FI_VERSION(2, 0): the first API with {@code fi_domain_attr.progress}, through which efabench asks for {@link #PROGRESS_CONTROL_UNIFIED}. */
    static final int CONTROL_UNIFIED_VERSION = version(2, 0);

    /** {@code fi_version()} of the library loaded at run time. */
    static int runtimeVersion() {
        requireLibrary();
        return Versions.RUNTIME;
    }

    /**
     * The API version passed to fi_getinfo (and, through {@code fabric_attr->api_version}, to
     * fi_fabric): min(header, runtime). A 1.x library must not be asked for 2.x semantics it
     * does not know, and the 2.6 structs in the bindings are only safe against an older library
     * because the code never touches the fields that version lacks (docs/DESIGN.md).
     */
    static int apiVersion() {
        requireLibrary();
        return Versions.API;
    }

    private static final class Versions {
        static final int RUNTIME = LibFabric.fi_version();
        static final int API = Integer.compareUnsigned(HEADER_VERSION, RUNTIME) <= 0 ? HEADER_VERSION : RUNTIME;
    }

    /** True when {@code version} (FI_VERSION) is at least {@code required}. */
    static boolean atLeast(int version, int required) {
        return Integer.compareUnsigned(version, required) >= 0;
    }

    /** {@code "<op> failed: <fi_strerror text> (<rc>)"} for a negative return code of {@code op}. */
    static FabricException failure(String op, long rc) {
        return new FabricException(op + " failed: " + strerror(rc) + " (" + rc + ")", (int) rc);
    }

    /** The one line that refuses {@code feature}, which needs API {@code required} or newer. */
    static String apiTooOld(int required, String feature) {
        return feature + " needs libfabric API " + versionText(required) + " or newer; this process uses "
                + versionText(apiVersion()) + " (runtime " + versionText(runtimeVersion()) + ", headers "
                + versionText(HEADER_VERSION) + ")";
    }

    static String versionText(int version) {
        return (version >>> 16) + "." + (version & 0xffff);
    }

    static String strerror(long rc) {
        return LibFabric.fi_strerror((int) Math.abs(rc)).getString(0);
    }

    static void check(String op, long rc) {
        if (rc != 0) {
            throw Fi.failure(op, rc);
        }
    }

    static String string(MemorySegment charPtr) {
        return charPtr.address() == 0 ? "" : charPtr.reinterpret(Long.MAX_VALUE).getString(0);
    }

    /** A raw pointer as a segment large enough for the struct layout it points to. */
    static MemorySegment struct(MemorySegment ptr, long size) {
        return ptr.reinterpret(size);
    }

    /** {@code fi_close(fid)}: static inline in fabric.h, so through {@code fid->ops->close}. */
    static int close(MemorySegment fidPtr) {
        MemorySegment f = fidPtr.reinterpret(fid.sizeof());
        MemorySegment ops = fid.ops(f).reinterpret(fi_ops.sizeof());
        return fi_ops.close.invoke(fi_ops.close(ops), f);
    }

    /** {@code fi_ep_bind}/{@code fi_mr_bind}: {@code fid->ops->bind(fid, bfid, flags)}. */
    static void bind(String op, MemorySegment fidPtr, MemorySegment target, long flags) {
        check(op, bindReturning(fidPtr, target, flags));
    }

    /** {@link #bind} returning the provider's code instead of throwing. */
    static int bindReturning(MemorySegment fidPtr, MemorySegment target, long flags) {
        MemorySegment f = fidPtr.reinterpret(fid.sizeof());
        MemorySegment ops = fid.ops(f).reinterpret(fi_ops.sizeof());
        return fi_ops.bind.invoke(fi_ops.bind(ops), f, target, flags);
    }

    /** {@code fi_enable}/{@code fi_mr_enable}: {@code fid->ops->control(fid, FI_ENABLE, NULL)}. */
    static void enable(String op, MemorySegment fidPtr) {
        MemorySegment f = fidPtr.reinterpret(fid.sizeof());
        MemorySegment ops = fid.ops(f).reinterpret(fi_ops.sizeof());
        check(op, fi_ops.control.invoke(fi_ops.control(ops), f, LibFabric.FI_ENABLE(), MemorySegment.NULL));
    }

    private static final MethodHandle STRDUP = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().findOrThrow("strdup"),
            FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS));

    /** A malloc'd copy of {@code s}, for fi_info fields that fi_freeinfo frees. */
    static MemorySegment strdup(String s) {
        try (Arena arena = Arena.ofConfined()) {
            return (MemorySegment) STRDUP.invokeExact(arena.allocateFrom(s));
        } catch (Throwable t) {
            throw new AssertionError("strdup", t);
        }
    }

    /** libfabric's own rendering of a value of the given {@code FI_TYPE_*}, e.g. mr_mode bits. */
    static String tostr(long value, int fiType) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocate(ValueLayout.JAVA_LONG);
            v.set(ValueLayout.JAVA_LONG, 0, value);
            return string(LibFabric.fi_tostr(v, fiType)).trim();
        }
    }
}

package io.efabench.cuda;

import static io.efabench.cuda.Cuda.check;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import io.efabench.cuda.generated.CudaDriver;

/** A loaded CUBIN (see {@link KernelCompiler}); its kernels live until close(). */
public final class CudaModule implements AutoCloseable {
    private final CudaContext context;
    private final MemorySegment handle;
    private final String name;
    private boolean closed;

    private CudaModule(CudaContext context, MemorySegment handle, String name) {
        this.context = context;
        this.handle = handle;
        this.name = name;
    }

    public static CudaModule load(CudaContext context, byte[] image, String name) {
        context.makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment data = arena.allocate(image.length + 1L, 16);
            MemorySegment.copy(image, 0, data, ValueLayout.JAVA_BYTE, 0, image.length);
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            check(CudaDriver.cuModuleLoadData(p, data), "cuModuleLoadData(" + name + ")");
            return new CudaModule(context, p.get(ValueLayout.ADDRESS, 0), name);
        }
    }

    public Kernel kernel(String function) {
        context.makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            check(CudaDriver.cuModuleGetFunction(p, handle, arena.allocateFrom(function)),
                    "cuModuleGetFunction(" + name + ", " + function + ")");
            return new Kernel(p.get(ValueLayout.ADDRESS, 0), name + ":" + function);
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        context.makeCurrent();
        check(CudaDriver.cuModuleUnload(handle), "cuModuleUnload(" + name + ")");
    }
}

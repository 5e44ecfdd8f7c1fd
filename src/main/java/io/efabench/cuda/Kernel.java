package io.efabench.cuda;

import static io.efabench.cuda.Cuda.check;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import io.efabench.cuda.generated.CudaDriver;

/** A kernel of a {@link CudaModule}; valid while the module is loaded. */
public final class Kernel {
    private final MemorySegment function;
    private final String name;

    Kernel(MemorySegment function, String name) {
        this.function = function;
        this.name = name;
    }

    /** Enqueues a 1-D launch. No allocation; {@code args} is read at this call (the driver copies it). */
    public void launch(CudaStream stream, int grid, int block, int sharedBytes, KernelArgs args) {
        int rc = CudaDriver.cuLaunchKernel(function, grid, 1, 1, block, 1, 1, sharedBytes, stream.handle(),
                args.pointers(), MemorySegment.NULL);
        if (rc != 0) {
            throw Cuda.failure(rc, "cuLaunchKernel(" + name + ", grid " + grid + ", block " + block + ")");
        }
    }

    public int attribute(int attribute) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocate(ValueLayout.JAVA_INT);
            check(CudaDriver.cuFuncGetAttribute(v, attribute, function), "cuFuncGetAttribute(" + name + ")");
            return v.get(ValueLayout.JAVA_INT, 0);
        }
    }

    /** Allows launches with up to {@code bytes} of dynamic shared memory (above the default 48 KiB). */
    public void setMaxDynamicSharedMemory(int bytes) {
        check(CudaDriver.cuFuncSetAttribute(function, CudaDriver.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES(), bytes),
                "cuFuncSetAttribute(" + name + ", MAX_DYNAMIC_SHARED_SIZE_BYTES, " + bytes + ")");
    }

    /** Blocks of {@code block} threads that fit on one SM at once. */
    public int maxActiveBlocksPerSm(int block, long dynamicSharedBytes) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocate(ValueLayout.JAVA_INT);
            check(CudaDriver.cuOccupancyMaxActiveBlocksPerMultiprocessor(v, function, block, dynamicSharedBytes),
                    "cuOccupancyMaxActiveBlocksPerMultiprocessor(" + name + ")");
            return v.get(ValueLayout.JAVA_INT, 0);
        }
    }

    public String name() {
        return name;
    }

    @Override
    public String toString() {
        return name;
    }
}

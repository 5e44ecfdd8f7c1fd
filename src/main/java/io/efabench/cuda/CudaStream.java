package io.efabench.cuda;

import static io.efabench.cuda.Cuda.check;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import io.efabench.cuda.generated.CudaDriver;

/** A non-blocking stream (does not synchronise with the legacy default stream). */
public final class CudaStream implements AutoCloseable {
    private final CudaContext context;
    private final MemorySegment handle;
    private boolean closed;

    private CudaStream(CudaContext context, MemorySegment handle) {
        this.context = context;
        this.handle = handle;
    }

    public static CudaStream create(CudaContext context) {
        context.makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            check(CudaDriver.cuStreamCreate(p, CudaDriver.CU_STREAM_NON_BLOCKING()), "cuStreamCreate");
            return new CudaStream(context, p.get(ValueLayout.ADDRESS, 0));
        }
    }

    /** Enqueues a copy of {@code bytes} from {@code src} to {@code dst} (either may be a peer's memory: copy engine). */
    public void copy(DeviceMemory dst, DeviceMemory src, long bytes) {
        check(CudaDriver.cuMemcpyDtoDAsync_v2(dst.deviceAddress(), src.deviceAddress(), bytes, handle),
                "cuMemcpyDtoDAsync");
    }

    /** True when all work enqueued so far is done. */
    public boolean isIdle() {
        int rc = CudaDriver.cuStreamQuery(handle);
        if (rc == CudaDriver.CUDA_ERROR_NOT_READY()) {
            return false;
        }
        check(rc, "cuStreamQuery");
        return true;
    }

    /**
     * Waits until the stream is idle, at most {@code timeoutNanos}; then throws naming
     * {@code what}. Polls (cuStreamQuery) so that a GPU that never finishes cannot hang the rank.
     */
    public void await(long timeoutNanos, String what) {
        long deadline = System.nanoTime() + timeoutNanos;
        while (!isIdle()) {
            if (System.nanoTime() - deadline > 0) {
                throw new CudaException("cuStreamQuery", CudaDriver.CUDA_ERROR_NOT_READY(),
                        what + ": GPU " + context.device().ordinal() + " did not finish within "
                                + timeoutNanos / 1_000_000 + " ms");
            }
            Thread.onSpinWait();
        }
    }

    public void synchronize() {
        check(CudaDriver.cuStreamSynchronize(handle), "cuStreamSynchronize");
    }

    public CudaContext context() {
        return context;
    }

    MemorySegment handle() {
        return handle;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        context.makeCurrent();
        check(CudaDriver.cuStreamDestroy_v2(handle), "cuStreamDestroy");
    }
}

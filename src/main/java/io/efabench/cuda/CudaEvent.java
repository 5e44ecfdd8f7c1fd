package io.efabench.cuda;

import static io.efabench.cuda.Cuda.check;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import io.efabench.cuda.generated.CudaDriver;

/** A timing event. Record, wait, read the time since another event: no allocation. */
public final class CudaEvent implements AutoCloseable {
    private final CudaContext context;
    private final MemorySegment handle;
    /** cuEventElapsedTime's out parameter, allocated once. */
    private final MemorySegment millis = Arena.ofAuto().allocate(ValueLayout.JAVA_FLOAT);
    private boolean closed;

    private CudaEvent(CudaContext context, MemorySegment handle) {
        this.context = context;
        this.handle = handle;
    }

    public static CudaEvent create(CudaContext context) {
        context.makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocate(ValueLayout.ADDRESS);
            check(CudaDriver.cuEventCreate(p, CudaDriver.CU_EVENT_DEFAULT()), "cuEventCreate");
            return new CudaEvent(context, p.get(ValueLayout.ADDRESS, 0));
        }
    }

    public void record(CudaStream stream) {
        check(CudaDriver.cuEventRecord(handle, stream.handle()), "cuEventRecord");
    }

    public boolean isDone() {
        int rc = CudaDriver.cuEventQuery(handle);
        if (rc == CudaDriver.CUDA_ERROR_NOT_READY()) {
            return false;
        }
        check(rc, "cuEventQuery");
        return true;
    }

    /** Waits for the event by polling, at most {@code timeoutNanos}; then throws naming {@code what}. */
    public void await(long timeoutNanos, String what) {
        long deadline = System.nanoTime() + timeoutNanos;
        while (!isDone()) {
            if (System.nanoTime() - deadline > 0) {
                throw new CudaException("cuEventQuery", CudaDriver.CUDA_ERROR_NOT_READY(),
                        what + ": GPU " + context.device().ordinal() + " did not finish within "
                                + timeoutNanos / 1_000_000 + " ms");
            }
            Thread.onSpinWait();
        }
    }

    /** GPU time from {@code start} to this event, in milliseconds (about 0.5 us resolution). Both must be done. */
    public float millisSince(CudaEvent start) {
        check(CudaDriver.cuEventElapsedTime_v2(millis, start.handle, handle), "cuEventElapsedTime");
        return millis.get(ValueLayout.JAVA_FLOAT, 0);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        context.makeCurrent();
        check(CudaDriver.cuEventDestroy_v2(handle), "cuEventDestroy");
    }
}

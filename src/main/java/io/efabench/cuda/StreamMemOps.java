package io.efabench.cuda;

import static io.efabench.cuda.Cuda.check;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import io.efabench.cuda.generated.CUstreamBatchMemOpParams_union;
import io.efabench.cuda.generated.CUstreamBatchMemOpParams_union.CUstreamMemOpWaitValueParams_st;
import io.efabench.cuda.generated.CUstreamBatchMemOpParams_union.CUstreamMemOpWriteValueParams_st;
import io.efabench.cuda.generated.CudaDriver;

/**
 * A batch of stream memory operations ({@code cuStreamBatchMemOp}): 32-bit writes and waits the
 * stream carries out itself, no kernel and no SM, in the order they are set. The parameter array
 * is allocated once ({@code capacity} entries) and rewritten in place, so enqueueing allocates
 * nothing. A write is preceded by a system-wide fence (the default flag): what the stream did
 * before it is visible first. A wait has no deadline: the caller watches the stream and, to end
 * it, writes the awaited word itself.
 */
public final class StreamMemOps implements AutoCloseable {
    // Offsets from the generated layouts, set through plain accesses: no slice per operation.
    private static final long ENTRY = CUstreamBatchMemOpParams_union.sizeof();
    private static final long OPERATION = CUstreamBatchMemOpParams_union.operation$offset();
    private static final long WRITE_ADDRESS = CUstreamBatchMemOpParams_union.writeValue$offset() + CUstreamMemOpWriteValueParams_st.address$offset();
    private static final long WRITE_VALUE = CUstreamBatchMemOpParams_union.writeValue$offset() + CUstreamMemOpWriteValueParams_st.value$offset();
    private static final long WRITE_FLAGS = CUstreamBatchMemOpParams_union.writeValue$offset() + CUstreamMemOpWriteValueParams_st.flags$offset();
    private static final long WAIT_ADDRESS = CUstreamBatchMemOpParams_union.waitValue$offset() + CUstreamMemOpWaitValueParams_st.address$offset();
    private static final long WAIT_VALUE = CUstreamBatchMemOpParams_union.waitValue$offset() + CUstreamMemOpWaitValueParams_st.value$offset();
    private static final long WAIT_FLAGS = CUstreamBatchMemOpParams_union.waitValue$offset() + CUstreamMemOpWaitValueParams_st.flags$offset();

    private final Arena arena = Arena.ofShared();
    private final MemorySegment params;
    private final int capacity;
    private int count;

    public StreamMemOps(int capacity) {
        this.capacity = capacity;
        this.params = CUstreamBatchMemOpParams_union.allocateArray(Math.max(1, capacity), arena);
        params.fill((byte) 0);
    }

    /** Starts a new batch. */
    public StreamMemOps clear() {
        count = 0;
        return this;
    }

    /** Adds: write {@code value} to the 32-bit word at {@code address} (a peer's memory too), after a fence. */
    public StreamMemOps write32(long address, int value) {
        long at = next();
        params.set(ValueLayout.JAVA_INT, at + OPERATION, CudaDriver.CU_STREAM_MEM_OP_WRITE_VALUE_32());
        params.set(ValueLayout.JAVA_LONG, at + WRITE_ADDRESS, address);
        params.set(ValueLayout.JAVA_INT, at + WRITE_VALUE, value);
        params.set(ValueLayout.JAVA_INT, at + WRITE_FLAGS, CudaDriver.CU_STREAM_WRITE_VALUE_DEFAULT());
        return this;
    }

    /** Adds: wait until the 32-bit word at {@code address} holds {@code value} or more ((int) (word - value) >= 0). */
    public StreamMemOps waitAtLeast32(long address, int value) {
        long at = next();
        params.set(ValueLayout.JAVA_INT, at + OPERATION, CudaDriver.CU_STREAM_MEM_OP_WAIT_VALUE_32());
        params.set(ValueLayout.JAVA_LONG, at + WAIT_ADDRESS, address);
        params.set(ValueLayout.JAVA_INT, at + WAIT_VALUE, value);
        params.set(ValueLayout.JAVA_INT, at + WAIT_FLAGS, CudaDriver.CU_STREAM_WAIT_VALUE_GEQ());
        return this;
    }

    /** Enqueues the batch set since {@link #clear} on {@code stream}. */
    public void enqueue(CudaStream stream) {
        if (count == 0) {
            return;
        }
        check(CudaDriver.cuStreamBatchMemOp_v2(stream.handle(), count, params, 0), "cuStreamBatchMemOp");
    }

    /** The parameter array as the driver reads it (its unit test checks the bytes against cuda.h's layout). */
    MemorySegment params() {
        return params;
    }

    /** The byte offset of the next entry. */
    private long next() {
        if (count == capacity) {
            throw new IllegalStateException("a batch of more than " + capacity + " memory operations");
        }
        return ENTRY * count++;
    }

    @Override
    public void close() {
        arena.close();
    }
}

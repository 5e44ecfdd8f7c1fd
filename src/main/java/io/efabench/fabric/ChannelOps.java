package io.efabench.fabric;

/**
 * The operations of one channel that code posting and reaping RMA traffic uses: post a write,
 * read, send or receive (0, or -FI_EAGAIN: progress, then retry) and read a batch of completions.
 * {@link Channel} is the one implementation in a benchmark; unit tests of the code above drive a
 * fake through it (no provider, no process).
 */
public interface ChannelOps {
    int tryWrite(MemoryRegion mr, long off, long len, long dest, RemoteRegion target, long targetOffset, long data,
            boolean withData, int ctx);

    int tryRead(MemoryRegion mr, long off, long len, long dest, RemoteRegion source, long sourceOffset, int ctx);

    int trySend(MemoryRegion mr, long off, long len, long dest, long data, boolean withData, int ctx);

    int tryRecv(MemoryRegion mr, long off, long len, int ctx);

    /** Reads at most one completion into {@code c} (entry 0): 1 when one was read, 0 when the CQ is empty. */
    int poll(Completion c);

    /** Reads up to {@link Completion#BATCH} completions into {@code c}; how many. */
    int pollBatch(Completion c);

    /** Whether a write with immediate data consumes a posted receive at the target (FI_RX_CQ_DATA). */
    boolean rxCqDataConsumesRecv();

    /** "efa rdmap16s27-rdm", for failure lines. */
    String describe();
}

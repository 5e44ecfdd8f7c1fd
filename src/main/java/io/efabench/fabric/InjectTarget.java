package io.efabench.fabric;

/**
 * A peer's registered region as the target of injected writes from one local region, resolved
 * and checked once ({@link Channel#injectTarget}): a post then checks only its own offsets and
 * length. At 64 B a write of a window costs little on shm, so the lookups and region checks
 * a general post makes per write (which channel owns the source, the peer's address, the target's
 * base and key) were a measurable part of it (docs/perf/journal/write-vs-fi_rma_bw.md, issue 19).
 */
public final class InjectTarget {
    private final Channel channel;
    private final long srcAddress;
    private final long srcLength;
    private final long dest;
    private final long dstBase;
    private final long dstLength;
    private final long key;
    private final long maxLength;

    InjectTarget(Channel channel, MemoryRegion src, long dest, RemoteRegion target, long maxLength) {
        this.channel = channel;
        this.srcAddress = src.address();
        this.srcLength = src.length();
        this.dest = dest;
        this.dstBase = target.base();
        this.dstLength = target.length();
        this.key = target.key();
        this.maxLength = maxLength;
    }

    /**
     * {@code fi_inject_writedata} of {@code len} bytes at {@code srcOff} of the source region to
     * {@code dstOff} of the target region, with immediate {@code data}; the source may be reused
     * once it returns 0. Returns 0 or {@code -FI_EAGAIN}.
     */
    public int tryInject(long srcOff, long len, long dstOff, long data) {
        if (srcOff < 0 || dstOff < 0 || len < 0 || len > maxLength || len > srcLength - srcOff || len > dstLength - dstOff) {
            throw new IndexOutOfBoundsException("inject write of " + len + " bytes from offset " + srcOff + " of "
                    + srcLength + " to offset " + dstOff + " of " + dstLength + " (inject size " + maxLength + ")");
        }
        return channel.injectWrite(srcAddress + srcOff, len, dest, dstBase + dstOff, key, data);
    }
}

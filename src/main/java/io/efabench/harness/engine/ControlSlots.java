package io.efabench.harness.engine;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import io.efabench.fabric.ChannelOps;
import io.efabench.fabric.MemoryRegion;
import io.efabench.harness.BenchmarkSetupException;

/**
 * Small receive buffers kept posted on one channel: they take the leader's acks and, on
 * providers whose mode has FI_RX_CQ_DATA, the receive that a write with immediate data
 * consumes at the target. Slot i uses op context {@code base + i}; a reaped slot is reposted
 * at once ({@link #repost}) or at the start of the next CQ read ({@link #repostLater}), or, where
 * the provider refuses it for now (-FI_EAGAIN: its receive queue is full until it progresses), at
 * the next {@link #retryPending} after a CQ read: a repost runs inside completion handling, where
 * spinning cannot progress the CQ (efa frees receive resources only in its progress).
 */
public final class ControlSlots {
    public static final int SLOT_BYTES = 64;
    public static final int ACK = 3;
    private static final long REFUSED_FOR_NANOS = 10_000_000_000L;

    /** Posts one receive into the slots' buffer: 0, or -FI_EAGAIN (Channel.tryRecv on the slots' region). */
    interface ReceivePoster {
        int tryRecv(long offset, long length, int ctx);
    }

    private final MemoryRegion mr;
    private final MemorySegment buf;
    private final ReceivePoster poster;
    private final int base;
    private final int count;
    /** Slots whose repost the provider refused, to retry after the next CQ read. */
    private final int[] pending;
    private int npending;
    private long refusedSince;
    /** Slots reaped by the last CQ read, to repost at the start of the next ({@link #repostLater}). */
    private final int[] deferred;
    private int ndeferred;

    /** Slots in a buffer of the trial, registered on channel {@code channelIndex}, all posted. */
    public static ControlSlots open(EngineSite site, int channelIndex, int base, int count) {
        ChannelOps channel = site.channel(channelIndex);
        MemorySegment buf = site.allocate((long) (count + 1) * SLOT_BYTES);
        MemoryRegion mr = site.register(channelIndex, buf);
        return new ControlSlots(buf, mr, (off, len, ctx) -> channel.tryRecv(mr, off, len, ctx), base, count);
    }

    /** Slots over {@code buf} posted through {@code poster} (tests fake the provider with it). */
    ControlSlots(MemorySegment buf, MemoryRegion mr, ReceivePoster poster, int base, int count) {
        this.buf = buf;
        this.mr = mr;
        this.poster = poster;
        this.base = base;
        this.count = count;
        this.pending = new int[count];
        this.deferred = new int[count];
        for (int i = 0; i < count; i++) {
            post(i);
        }
    }

    public boolean owns(int ctx) {
        return ctx >= base && ctx < base + count;
    }

    /** Kind of the message that landed in the slot of {@code ctx}. */
    public int kind(int ctx) {
        return buf.get(ValueLayout.JAVA_INT_UNALIGNED, (long) (ctx - base) * SLOT_BYTES);
    }

    public int senderRank(int ctx) {
        return buf.get(ValueLayout.JAVA_INT_UNALIGNED, (long) (ctx - base) * SLOT_BYTES + 4);
    }

    public long round(int ctx) {
        return buf.get(ValueLayout.JAVA_LONG_UNALIGNED, (long) (ctx - base) * SLOT_BYTES + 8);
    }

    public void repost(int ctx) {
        post(ctx - base);
    }

    /**
     * Reposts the slot of {@code ctx} at the next {@link #repostDeferred}, which the engine calls
     * before its next CQ read: an ack lets the leader post its next round, and a receive posted
     * first (shm's fi_recvmsg) held back the next write of every window-1 round; posted after it,
     * it overlaps the write in flight (docs/perf/journal/write-64B-gap.md, "The round trip in
     * segments"). Every slot but the few reaped by one CQ read stays posted meanwhile.
     */
    public void repostLater(int ctx) {
        deferred[ndeferred++] = ctx - base;
    }

    /** Posts the slots of {@link #repostLater}; a refused one waits for {@link #retryPending}. */
    public void repostDeferred() {
        for (int i = 0; i < ndeferred; i++) {
            post(deferred[i]);
        }
        ndeferred = 0;
    }

    /** Slots reaped and not yet handed back to the provider by {@link #repostDeferred}. */
    int deferredReposts() {
        return ndeferred;
    }

    /** Reposts the slots the provider refused earlier; call after each CQ read (it progressed). */
    public void retryPending() {
        if (npending == 0) {
            return;
        }
        int left = 0;
        for (int i = 0; i < npending; i++) {
            int slot = pending[i];
            if (poster.tryRecv((long) slot * SLOT_BYTES, SLOT_BYTES, base + slot) != 0) {
                pending[left++] = slot;
            }
        }
        npending = left;
        if (left > 0 && System.nanoTime() - refusedSince > REFUSED_FOR_NANOS) {
            throw new BenchmarkSetupException("the provider kept refusing a receive (-FI_EAGAIN) for 10 s while"
                    + " its completion queue was read");
        }
    }

    /** Slots waiting for a repost the provider refused. */
    int pendingReposts() {
        return npending;
    }

    private void post(int slot) {
        if (poster.tryRecv((long) slot * SLOT_BYTES, SLOT_BYTES, base + slot) != 0) {
            if (npending == 0) {
                refusedSince = System.nanoTime();
            }
            pending[npending++] = slot;
        }
    }

    /** The extra slot past the receive slots is this side's send buffer for one message at a time. */
    public long sendOffset(int kind, int senderRank, long round) {
        long off = (long) count * SLOT_BYTES;
        buf.set(ValueLayout.JAVA_INT_UNALIGNED, off, kind);
        buf.set(ValueLayout.JAVA_INT_UNALIGNED, off + 4, senderRank);
        buf.set(ValueLayout.JAVA_LONG_UNALIGNED, off + 8, round);
        return off;
    }

    public MemoryRegion mr() {
        return mr;
    }
}

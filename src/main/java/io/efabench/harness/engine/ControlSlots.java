package io.efabench.harness.engine;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import io.efabench.fabric.Channel;
import io.efabench.fabric.MemoryRegion;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.FabricTrial;

/**
 * Small receive buffers kept posted on one channel: they take the leader's acks and, on
 * providers whose mode has FI_RX_CQ_DATA, the receive that a write with immediate data
 * consumes at the target. Slot i uses op context {@code base + i}; a reaped slot is reposted
 * at once.
 */
public final class ControlSlots {
    public static final int SLOT_BYTES = 64;
    public static final int ACK = 3;

    private final Channel channel;
    private final MemoryRegion mr;
    private final MemorySegment buf;
    private final int base;
    private final int count;

    public ControlSlots(FabricTrial trial, int channelIndex, int base, int count) {
        this.channel = trial.channels[channelIndex];
        this.buf = trial.allocate((long) (count + 1) * SLOT_BYTES);
        this.mr = channel.register(buf);
        trial.own(mr);
        this.base = base;
        this.count = count;
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

    private void post(int slot) {
        // -FI_EAGAIN only while the provider's receive queue is momentarily full; this runs
        // inside completion handling, so it cannot progress the CQ itself: bounded spin.
        long giveUp = 0;
        while (channel.tryRecv(mr, (long) slot * SLOT_BYTES, SLOT_BYTES, base + slot) != 0) {
            long now = System.nanoTime();
            if (giveUp == 0) {
                giveUp = now + 10_000_000_000L;
            } else if (now - giveUp > 0) {
                throw new BenchmarkSetupException("the provider kept refusing a receive (-FI_EAGAIN) for 10 s");
            }
            Thread.onSpinWait();
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

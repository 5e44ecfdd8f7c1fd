package io.efabench.fabric;

import io.efabench.fabric.generated.fi_cq_data_entry;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Reusable CQ entries ({@code struct fi_cq_data_entry}) that {@link Channel#poll(Completion)}
 * (one) or {@link Channel#pollBatch(Completion)} (up to {@link #BATCH}) fill in place; the
 * accessors read the selected one ({@link #select}). Reading allocates nothing. Use one per
 * polling thread.
 */
public final class Completion {
    /** What a completion {@link #fill} writes reports: the FI_* flags a provider sets for it. */
    public enum Kind {
        WRITE(Fi.RMA | Fi.WRITE),
        READ(Fi.RMA | Fi.READ),
        SEND(Fi.SEND),
        RECV(Fi.RECV),
        REMOTE_WRITE(Fi.RMA | Fi.REMOTE_WRITE | Fi.REMOTE_CQ_DATA);

        final long flags;

        Kind(long flags) {
            this.flags = flags;
        }
    }

    /** Entries one {@link Channel#pollBatch} reads at most. */
    public static final int BATCH = 16;
    /**
     * What one {@link Channel#pollBatch} asks fi_cq_read for: {@link #BATCH}, or 1 to {@link #BATCH}
     * under the test hook EFABENCH_TEST_CQ_BATCH, for A/B runs against fabtests, which read one
     * completion per fi_cq_read (and so run the provider's progress once per completion).
     */
    static final long READ_COUNT = readCount(System.getenv("EFABENCH_TEST_CQ_BATCH"));

    static long readCount(String v) {
        if (v == null || v.isBlank()) {
            return BATCH;
        }
        try {
            return Math.clamp(Long.parseLong(v.trim()), 1, BATCH);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("EFABENCH_TEST_CQ_BATCH=" + v + ": must be a whole number from 1 to " + BATCH);
        }
    }
    private static final long ENTRY = fi_cq_data_entry.layout().byteSize();
    private static final long OP_CONTEXT = fi_cq_data_entry.op_context$offset();
    private static final long FLAGS = fi_cq_data_entry.flags$offset();
    private static final long LEN = fi_cq_data_entry.len$offset();
    private static final long DATA = fi_cq_data_entry.data$offset();

    final MemorySegment entry = Arena.ofAuto().allocate(ENTRY * BATCH, 8);
    long contextBase; // base of the polled channel's context slots
    private long base; // offset of the selected entry

    /**
     * Fills entry {@code i} as a provider's fi_cq_read would: a completion of {@code kind} for the
     * operation posted with context {@code ctx} (-1: none), its length and immediate data. For
     * fakes of {@link ChannelOps} in unit tests; a {@link Channel} never calls it.
     */
    public void fill(int i, Kind kind, int ctx, long len, long data) {
        long flags = kind.flags;
        long at = i * ENTRY;
        entry.set(ValueLayout.JAVA_LONG, at + OP_CONTEXT, ctx < 0 ? contextBase - 1 : contextBase + (long) ctx * OpContexts.SIZE);
        entry.set(ValueLayout.JAVA_LONG, at + FLAGS, flags);
        entry.set(ValueLayout.JAVA_LONG, at + LEN, len);
        entry.set(ValueLayout.JAVA_LONG, at + DATA, data);
    }

    /** Selects entry {@code i} of the last batch read (0 after {@link Channel#poll}). */
    public void select(int i) {
        base = i * ENTRY;
    }

    /**
     * The {@code ctx} index the operation was posted with, or -1 where the completion belongs
     * to no posted operation (a remote write with CQ data that consumed no receive).
     */
    public int context() {
        long delta = entry.get(ValueLayout.JAVA_LONG, base + OP_CONTEXT) - contextBase;
        if (delta < 0 || delta >= (long) OpContexts.SLOTS * OpContexts.SIZE) {
            return -1;
        }
        return (int) (delta / OpContexts.SIZE);
    }

    /** FI_SEND, FI_RECV, FI_RMA, FI_WRITE, FI_REMOTE_WRITE, FI_REMOTE_CQ_DATA... */
    public long flags() {
        return entry.get(ValueLayout.JAVA_LONG, base + FLAGS);
    }

    /** Bytes received, for receive completions. */
    public long len() {
        return entry.get(ValueLayout.JAVA_LONG, base + LEN);
    }

    /** Remote CQ data (immediate), valid when {@link #hasRemoteData()}. */
    public long data() {
        return entry.get(ValueLayout.JAVA_LONG, base + DATA);
    }

    public boolean hasRemoteData() {
        return (flags() & Fi.REMOTE_CQ_DATA) != 0;
    }

    public boolean isRemoteWrite() {
        return (flags() & Fi.REMOTE_WRITE) != 0;
    }

    public boolean isRecv() {
        return (flags() & Fi.RECV) != 0;
    }

    public boolean isSend() {
        return (flags() & Fi.SEND) != 0;
    }

    /** An RMA read this rank posted completed: the bytes are in its memory. */
    public boolean isRead() {
        return (flags() & Fi.READ) != 0;
    }

    public boolean isWrite() {
        return (flags() & Fi.WRITE) != 0;
    }
}

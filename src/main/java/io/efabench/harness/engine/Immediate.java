package io.efabench.harness.engine;

import io.efabench.fabric.Channel;
import io.efabench.harness.BenchmarkSetupException;

/**
 * The 32 bits of immediate data every engine write carries, one layout for every workload:
 * kind (2) | sender rank (10) | round (20). A receiver rebuilds the full round number from the
 * 20 bits and the next round it expects ({@link #roundsAhead}): rounds in flight are bounded by
 * the scheduler's window and credits, far below 2^19, so the wrap is unambiguous.
 */
public final class Immediate {
    /**
     * MoE's combine: an expert's output on its way back to the token's owner (the dispatch that
     * brought the token is a {@link #DATA} write). Combine and Write's acks never share a workload.
     */
    public static final int RETURN = 0;
    /** A round's ordinary write. */
    public static final int DATA = 1;
    /**
     * Write: a write of the last round of a window with remote completion; the target acks once
     * that round is served, so the window's invocation ends at the ack.
     */
    public static final int ACK_ME = 2;
    /** All-to-all: rank 0's untimed rounds after its JMH iteration ended (the first one tells END). */
    public static final int FINAL = 3;
    /** Most ranks a sender field holds. */
    public static final int MAX_RANKS = 1 << 10;
    static final int SENDER_SHIFT = 20;
    /** The round bits of the immediate data (proxy.cu's IMM_ROUND_MASK). */
    public static final long ROUND_BITS = (1L << SENDER_SHIFT) - 1;
    private static final int KIND_SHIFT = 30;

    private Immediate() {}

    /**
     * Refuses, with one line, a group whose channels carry fewer than 32 bits of immediate data
     * ({@code cq_data_size}; EFA carries 4 bytes) or that has more ranks than the sender field holds.
     */
    public static void requireCarried(Channel[] channels, int ranks) {
        if (ranks > MAX_RANKS) {
            throw new BenchmarkSetupException("the immediate data carry the sender in 10 bits: at most "
                    + MAX_RANKS + " ranks, not " + ranks);
        }
        for (Channel ch : channels) {
            if (ch.maxCqData() != -1L && ch.maxCqData() < 0xFFFF_FFFFL) {
                throw new BenchmarkSetupException("writes need 4 bytes of immediate data; "
                        + ch.nic().provider() + " carries " + (64 - Long.numberOfLeadingZeros(ch.maxCqData())) + " bits");
            }
        }
    }

    public static long encode(int kind, int sender, long round) {
        return ((long) kind << KIND_SHIFT) | ((long) sender << SENDER_SHIFT) | (round & ROUND_BITS);
    }

    public static int kind(long data) {
        return (int) (data >>> KIND_SHIFT) & 0x3;
    }

    public static int sender(long data) {
        return (int) (data >>> SENDER_SHIFT) & (MAX_RANKS - 1);
    }

    /** The round's low 20 bits, as carried. */
    public static long roundBits(long data) {
        return data & ROUND_BITS;
    }

    /**
     * How many rounds past {@code next} (the next round the receiver expects) the write's round
     * lies: 0 for {@code next} itself. A write of a round already served reads as about 2^20.
     */
    public static long roundsAhead(long data, long next) {
        return (data - next) & ROUND_BITS;
    }
}

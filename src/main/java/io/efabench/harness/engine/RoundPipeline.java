package io.efabench.harness.engine;

import io.efabench.harness.Deadline;

/**
 * The rounds a rank has in flight, and the rule that makes a timed figure a delivered one:
 * <b>counted = completed</b>. Up to {@code window} rounds are in flight. A timed invocation
 * posts the next round and returns only once the oldest round in flight completed (local or
 * remote completion, as the workload's {@link Port} defines it), so every invocation JMH counts
 * ends at a completion seen inside it. Between iterations, untimed, {@link #fill} posts
 * window - 1 rounds and {@link #drain} waits for every round posted; the rounds drained are
 * never counted and the rounds filled are counted only when a timed invocation sees them
 * complete, so the pipeline is as full at the start of the timed span as at its end and a
 * figure does not depend on the iteration's length.
 *
 * <p>Schedulers (Write's leader-driven rounds, all-to-all's symmetric ones) keep END and their
 * followers; this class keeps only the order of posts and waits, so it is unit-tested against a
 * fake port.
 */
public final class RoundPipeline {
    /** A workload's rounds, as the pipeline drives them. */
    public interface Port {
        /** Posts every write of this rank's round {@code round} (waits on credits or contexts as needed). */
        void post(long round);

        /** True once round {@code round}'s completion was seen. Rounds are awaited in order. */
        boolean complete(long round);

        /** One pass over the completion queues. */
        void progress();

        /** What a wait for a round's completion is for, in a failure ("the ack of a write round"). */
        String awaited();

        /** The peer a wait for {@code round} is on, in a failure. */
        int peerAwaited(long round);
    }

    private final Port port;
    private final int window;
    private final int slots;
    private final Deadline deadline;
    private long posted;

    /**
     * {@code window} rounds in flight over {@code slots} regions per buffer: the window is capped
     * at the slots, so two rounds in flight never write one region ({@link Footprint}).
     */
    public RoundPipeline(Port port, int window, int slots, Deadline deadline) {
        if (window < 1 || slots < 1) {
            throw new IllegalArgumentException("window " + window + ", slots " + slots);
        }
        this.port = port;
        this.window = Math.min(window, slots);
        this.slots = slots;
        this.deadline = deadline;
    }

    /** The region round {@code round} writes: distinct for the rounds in flight. */
    public int slot(long round) {
        return Footprint.slotOf(round, slots);
    }

    /** Rounds in flight: the window asked for, capped at the slots. */
    public int window() {
        return window;
    }

    /** The last round posted (0 before the first). */
    public long posted() {
        return posted;
    }

    /** Posts the next round once the round {@code window} before it completed; returns its number. */
    public long post() {
        long r = posted + 1;
        await(r - window);
        port.post(r);
        posted = r;
        return r;
    }

    /** Untimed: one whole round, posted and completed. */
    public long warm() {
        long r = post();
        await(r);
        return r;
    }

    /**
     * Untimed, at the start of an iteration: window - 1 rounds posted, then {@code window} rounds
     * run as timed ones are, so the timed span starts with a pipeline in its steady state. Rounds
     * just posted have made no progress, and a transport that moves the writes in flight side by
     * side (tcp over loopback does) would complete the first of them only after most of the
     * window's bytes moved: without these rounds a short iteration reads low (256M, window 64:
     * 6.9 Gbps at -r 300ms against 21.5 at -r 2s, docs/PERFORMANCE.md).
     */
    public void fill() {
        for (int k = 1; k < window; k++) {
            post();
        }
        if (window > 1) {
            for (int k = 0; k < window; k++) {
                timed();
            }
        }
    }

    /**
     * One timed invocation: posts the next round and waits for the oldest one in flight. Returns
     * the round whose completion this invocation saw (the one JMH counts).
     */
    public long timed() {
        long r = post();
        long counted = r - window + 1;
        await(counted);
        return counted;
    }

    /** Untimed: waits for every round posted. */
    public void drain() {
        await(posted);
    }

    /** Waits, with progress, until round {@code r} completed; rounds before 1 are complete. */
    public void await(long r) {
        if (r < 1 || port.complete(r)) {
            return;
        }
        deadline.start();
        while (!port.complete(r)) {
            port.progress();
            deadline.check(port.awaited(), port.peerAwaited(r), r);
        }
    }
}

package io.efabench.harness.engine;


/**
 * The rounds a rank has in flight, and the rule that makes a timed figure a delivered one:
 * <b>counted = completed</b>. A timed invocation is one window: it posts {@code window} rounds
 * and returns only once every one of them completed (local or remote completion, as the
 * workload's {@link Port} defines it), as fabtests' bandwidth loop posts a window and waits for
 * it. Nothing is in flight between invocations, so nothing posted in one timed span completes in
 * another, no drain is free, and a figure does not depend on the iteration's length.
 *
 * <p>Not a stream of rounds that each invocation tops up: counting one completion per invocation
 * with a window kept full across invocations depends on how the transport shares bandwidth among
 * the writes in flight. shm and tcp move them side by side, so they complete in bursts of a
 * window, and an iteration read high or low by where it fell in a burst (docs/perf/journal/
 * write-vs-fi_rma_bw.md, "Counted = completed").
 *
 * <p>Schedulers (Write's leader-driven rounds, all-to-all's symmetric ones) keep END and their
 * followers; this class keeps only the order of posts and waits, so it is unit-tested against a
 * fake port.
 */
public final class RoundPipeline {
    /** A workload's rounds, as the pipeline drives them. */
    public interface Port {
        /**
         * Posts every write of this rank's round {@code round} (waits on credits or contexts as
         * needed); {@code closesWindow}: the pipeline awaits it (and the rounds before it) next.
         */
        void post(long round, boolean closesWindow);

        /**
         * Posts rounds {@code first} .. {@code first + rounds - 1} in order, as {@link #post} would
         * one by one; {@code closesLast}: the last of them closes the window. The pipeline hands a
         * timed window over in one call, so a port can post it in one loop: at 64 B the per-round
         * calls between two writes were a measurable part of the write (docs/perf/journal/write-64B-gap.md, "64 B: the leader's per-round calls").
         */
        default void post(long first, int rounds, boolean closesLast) {
            for (int k = 0; k < rounds; k++) {
                post(first + k, closesLast && k == rounds - 1);
            }
        }

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
    /** Every round up to this one was seen complete, awaited in order. */
    private long completedThrough;

    /**
     * {@code window} rounds in flight over {@code slots} regions per buffer; the window is at most
     * the slots ({@link Footprint#roundsInFlight}), so two rounds in flight never write one region.
     */
    public RoundPipeline(Port port, int window, int slots, Deadline deadline) {
        if (window < 1 || window > slots) {
            throw new IllegalArgumentException("window " + window + " over " + slots + " slots");
        }
        this.port = port;
        this.window = window;
        this.slots = slots;
        this.deadline = deadline;
    }

    /** The region round {@code round} writes: distinct for the rounds in flight. */
    public int slot(long round) {
        return Footprint.slotOf(round, slots);
    }

    /** The last round posted (0 before the first). */
    public long posted() {
        return posted;
    }

    /** Posts the next round once the round {@code window} before it completed; returns its number. */
    public long post() {
        return post(false);
    }

    private long post(boolean closesWindow) {
        long r = posted + 1;
        await(r - window);
        port.post(r, 1, closesWindow);
        posted = r;
        return r;
    }

    /** Untimed: one whole round, posted and completed. */
    public long warm() {
        long r = post(true);
        awaitThrough(r);
        return r;
    }

    /**
     * One timed invocation: posts a window of rounds, then waits until each of them completed,
     * in order. Returns the last. Each round of the window needs the round a window before it
     * complete, i.e. every round posted so far: awaited first (after a timed window, an untimed
     * one or a drain they are, and this asks the port nothing), then the window goes to the port
     * in one call.
     */
    public long timed() {
        long first = posted + 1;
        awaitThrough(posted);
        port.post(first, window, true);
        posted = first + window - 1;
        awaitThrough(posted);
        return posted;
    }

    /** Untimed: waits for every round posted. */
    public void drain() {
        awaitThrough(posted);
    }

    /**
     * Awaits each round not yet seen complete up to {@code r}, in order. Every post awaits the
     * round a window before it, so these are at most a window's rounds.
     */
    private void awaitThrough(long r) {
        for (long q = completedThrough + 1; q <= r; q++) {
            await(q);
        }
    }

    /**
     * Waits, with progress, until round {@code r} completed; rounds before 1 are complete, and so
     * is every round up to the last one awaited in order, without asking the port: a post awaits
     * the round a window before it, which in a timed window is always one of those, so posting a
     * window costs no completion check per round.
     */
    public void await(long r) {
        if (r <= completedThrough) { // completedThrough starts at 0: rounds before 1 too
            return;
        }
        if (!port.complete(r)) {
            deadline.start();
            while (!port.complete(r)) {
                port.progress();
                deadline.check(port.awaited(), port.peerAwaited(r), r);
            }
        }
        // In order only (a round's completion does not always imply the earlier ones'), and only
        // rounds wholly posted: a port that awaits its round between its groups (window 1, targets
        // in turn) calls this before the round's last writes are out.
        if (r == completedThrough + 1 && r <= posted) {
            completedThrough = r;
        }
    }
}

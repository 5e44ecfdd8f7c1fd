package io.efabench.harness.engine;

import java.time.Duration;
import java.util.function.BooleanSupplier;

import io.efabench.rank.RankGroup;
import io.efabench.harness.BenchmarkSetupException;

/**
 * A spin-wait budget for busy-poll loops: checks the rank group's liveness on every call
 * (a volatile read) and the clock every 4096 calls, so the hot loop stays cheap and a dead
 * peer or a lost message fails the wait with a message naming rank, peer and operation.
 * Reused in place: {@link #start} rearms it without allocating.
 */
public final class Deadline {
    private static final long UNARMED = Long.MIN_VALUE;

    /**
     * Who hears of a wait that went a quarter of its budget without ending, and of its end: so a
     * link that flapped and came back within the deadline is on record, not only in a low figure.
     * Called off the hot path (once per stall), where allocating is fine.
     */
    public interface Stalls {
        /** The wait for {@code operation} with {@code peer} has gone {@code nanos} without ending. */
        void stalled(String operation, int peer, long round, long nanos);

        /** That wait ended after at least {@code nanos}; the run goes on. */
        void resumed(String operation, int peer, long round, long nanos);
    }

    private final RankGroup group;
    private final long budgetNanos;
    private final Stalls stalls;
    /**
     * More local ranks than CPUs: every rank busy-polls, and a rank that holds the data a peer
     * waits for may sit descheduled for a whole time slice. Waits then give the CPU away every 64
     * spins (as Open MPI does with mpi_yield_when_idle when oversubscribed). The trial says.
     */
    private final boolean yielding;
    private long expiresAt = UNARMED;
    private long armedAt;
    private long lastClock;
    private int spins;
    /** The wait that was reported stalled, until the next start() reports it resumed. */
    private String stalledOp;
    private int stalledPeer;
    private long stalledRound;

    /**
     * With {@code stalls} (may be null) told of a wait past a quarter of the budget and of its end;
     * {@code yieldWhenIdle}: give the CPU away every 64 spins (see {@link #yielding}).
     */
    public Deadline(RankGroup group, Duration budget, Stalls stalls, boolean yieldWhenIdle) {
        this.group = group;
        this.budgetNanos = budget.toNanos();
        this.stalls = stalls;
        this.yielding = yieldWhenIdle;
    }

    /** A budget with no rank group behind it (unit tests of the schedulers): only the clock ends a wait. */
    public static Deadline alone(Duration budget) {
        return new Deadline(null, budget, null, false);
    }

    /**
     * Rearms the budget. The clock is not read here but at the first 4096th spin, so a wait
     * that ends quickly (a ping-pong round trip) costs no clock read at all; the budget then
     * starts at most 4096 spins late (milliseconds of busy polling) against a budget of seconds.
     */
    public Deadline start() {
        if (stalledOp != null) {
            resumed();
        }
        expiresAt = UNARMED;
        spins = 0;
        return this;
    }

    /**
     * The wait-with-deadline loop, once: returns when {@code done} says so, calling {@code
     * progress} between two looks and failing the wait (naming {@code operation}, {@code peer} and
     * {@code round}) when the group fails or the budget is spent. The clock is armed only when the
     * first look says not done. For waits off the per-round path (a post the provider refused, a
     * proxy launch, the end of an iteration). The per-round waits (a round's completion, an ack,
     * arrivals, a ping-pong) keep their loops: through here their condition would be one call site
     * shared by every wait, which C2 profiles as megamorphic (DESIGN, "Waits").
     */
    public void await(BooleanSupplier done, Runnable progress, String operation, int peer, long round) {
        if (done.getAsBoolean()) {
            return;
        }
        start();
        do {
            progress.run();
            check(operation, peer, round);
        } while (!done.getAsBoolean());
    }

    /** True while the wait may go on; throws once the group failed or the budget is spent. */
    public boolean check(String operation, int peer) {
        return check(operation, peer, -1);
    }

    /**
     * As {@link #check(String, int)}; a {@code round} of 0 or more is named in the failure
     * ("... of round 812 ..."), formatted only then, so the spin allocates nothing.
     */
    public boolean check(String operation, int peer, long round) {
        if (group != null) {
            group.checkAlive();
        }
        if (yielding && (spins & 63) == 63) {
            Thread.yield();
        }
        if ((++spins & 4095) == 0) {
            tick(operation, peer, round);
        }
        return true;
    }

    /**
     * Every 4096th spin: the clock. Out of line, so that {@link #check} stays small enough to be
     * inlined into every wait loop (its rare branches grew with the stall notices).
     */
    private void tick(String operation, int peer, long round) {
        long now = System.nanoTime();
        lastClock = now;
        if (expiresAt == UNARMED) {
            armedAt = now;
            expiresAt = now + budgetNanos;
        } else if (now - expiresAt > 0) {
            stalledOp = null; // a failure, not a resumption
            throw new BenchmarkSetupException("rank " + (group != null ? group.rank() : -1) + ": " + operation
                    + (round >= 0 ? " (round " + round + ")" : "") + " with " + peer(peer)
                    + " did not complete within " + budgetNanos / 1_000_000_000L + " s (EFABENCH_TIMEOUT_S)", peer);
        } else if (stalls != null && stalledOp == null && now - armedAt > budgetNanos / 4) {
            stalledOp = operation;
            stalledPeer = peer;
            stalledRound = round;
            stalls.stalled(operation, peer, round, now - armedAt);
        }
    }

    private void resumed() {
        stalls.resumed(stalledOp, stalledPeer, stalledRound, lastClock - armedAt);
        stalledOp = null;
    }

    /** "rank 1 (node n2)", or "rank 1" without a group; "its peers" for a wait on several (peer -1). */
    private String peer(int peer) {
        if (peer < 0) {
            return "its peers";
        }
        return group != null && peer < group.size() ? group.onNode(peer) : "rank " + peer;
    }
}

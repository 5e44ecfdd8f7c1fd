package io.efabench.harness;

import java.time.Duration;

import io.efabench.rank.RankGroup;

/**
 * A spin-wait budget for busy-poll loops: checks the rank group's liveness on every call
 * (a volatile read) and the clock every 4096 calls, so the hot loop stays cheap and a dead
 * peer or a lost message fails the wait with a message naming rank, peer and operation.
 * Reused in place: {@link #start} rearms it without allocating.
 */
public final class Deadline {
    private static final long UNARMED = Long.MIN_VALUE;

    /**
     * More local ranks than CPUs: every rank busy-polls, and a rank that holds the data a peer
     * waits for may sit descheduled for a whole time slice. Waits then give the CPU away every 64
     * spins (as Open MPI does with mpi_yield_when_idle when oversubscribed). Set by the trial.
     */
    private static volatile boolean yieldWhenIdle;

    private final RankGroup group;
    private final long budgetNanos;
    private final boolean yielding = yieldWhenIdle;
    private long expiresAt = UNARMED;
    private int spins;

    public Deadline(RankGroup group, Duration budget) {
        this.group = group;
        this.budgetNanos = budget.toNanos();
    }

    /** A budget with no rank group behind it (unit tests of the schedulers): only the clock ends a wait. */
    public static Deadline alone(Duration budget) {
        return new Deadline(null, budget);
    }

    /** True when this process's ranks outnumber its CPUs: see {@link #yieldWhenIdle}. */
    static void yieldWhenIdle(boolean oversubscribed) {
        yieldWhenIdle = oversubscribed;
    }

    static boolean yieldsWhenIdle() {
        return yieldWhenIdle;
    }

    /**
     * Rearms the budget. The clock is not read here but at the first 4096th spin, so a wait
     * that ends quickly (a ping-pong round trip) costs no clock read at all; the budget then
     * starts at most 4096 spins late (milliseconds of busy polling) against a budget of seconds.
     */
    public Deadline start() {
        expiresAt = UNARMED;
        spins = 0;
        return this;
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
            long now = System.nanoTime();
            if (expiresAt == UNARMED) {
                expiresAt = now + budgetNanos;
            } else if (now - expiresAt > 0) {
                throw new BenchmarkSetupException("rank " + (group != null ? group.rank() : -1) + ": " + operation
                        + (round >= 0 ? " (round " + round + ")" : "") + " with rank " + peer
                        + " did not complete within " + budgetNanos / 1_000_000_000L + " s (EFABENCH_TIMEOUT_S)");
            }
        }
        return true;
    }
}

package io.efabench.harness.engine;

import io.efabench.harness.BenchmarkSetupException;


/**
 * The follower's side of the leader-driven protocol, once for Write and Proxy: serve rounds by
 * counting every planned write's arrival ({@link ArrivalCounter}), ack rank 0 cumulatively, stop
 * at the leader's END, then serve the checked pass. What is checked after it (which bytes, which
 * slots) is the workload's.
 */
public final class Follower implements WriteEngine.Sink {
    private final EngineSite t;
    private final ArrivalCounter arrivals;
    private final WriteEngine engine;
    private final Deadline deadline;
    private final int ackEvery;
    private long lastAcked;
    /** Rounds handed out by invocations (served may run ahead: arrivals are counted as they come). */
    private long handled;
    /** The last round whose writes asked for an ack once served (a window's last, with remote completion). */
    private long ackRequested;

    /**
     * @param fromLeader         writes rank 0's plan sends this rank per round
     * @param lag                most rounds the leader may have in flight to this rank before it waits for an ack
     * @param ackEvery           served rounds between two cumulative acks (a window's last round is acked at once)
     * @param unservedPerChannel as {@link WriteEngine}'s
     */
    public Follower(EngineSite t, int fromLeader, int lag, int ackEvery, long[] unservedPerChannel) {
        this.t = t;
        this.ackEvery = Math.max(1, ackEvery);
        this.deadline = t.deadline();
        int[] expected = new int[t.size()];
        expected[0] = fromLeader;
        // The leader posts round r only once this rank acked r - lag: rounds in flight are
        // served + 1 .. served + lag.
        arrivals = new ArrivalCounter(t.rank(), expected, 2 * lag);
        engine = new WriteEngine(t, new int[t.channelCount()], true, unservedPerChannel, 1, this);
    }

    /** For failure lines: rank 0's plan sends this rank {@code perChannel[c]} writes per round on channel c. */
    public void expectOnChannels(int[] perChannel) {
        int[][] planned = new int[t.size()][perChannel.length];
        planned[0] = perChannel.clone();
        engine.expectArrivals(arrivals, planned);
    }

    /** Untimed, after the start barrier: serve one round and ack everything served. */
    public void warmRound() {
        serve("waiting for the writes of a round", true);
        ackServed();
    }

    /**
     * One follower invocation: waits until round {@code handled + 1} is served (all its planned
     * writes arrived) and acks, cumulatively, once ackEvery rounds arrived since the last ack or
     * the leader asked for it; with {@code stopAtEnd}, returns at once when the leader's END says
     * there is no such round.
     */
    public void serve(String what, boolean stopAtEnd) {
        long next = handled + 1;
        if (arrivals.served() < next) {
            deadline.start();
            try {
                while (arrivals.served() < next) {
                    if (stopAtEnd) {
                        long ended = t.endedRounds();
                        if (ended >= 0 && handled >= ended) {
                            return;
                        }
                    }
                    engine.progress();
                    deadline.check(what, 0, next);
                }
            } catch (BenchmarkSetupException e) {
                throw e.with("; " + arrivals.missing());
            }
        }
        handled = next;
        long served = arrivals.served();
        if (ackDue(served)) {
            ack(served); // the ack arrived() could not post (the previous one still sending, or the provider refused it)
        }
    }

    /** Whether rounds up to {@code served} should be acked now: ackEvery of them unacked, or one the leader asked to hear of. */
    private boolean ackDue(long served) {
        return served - lastAcked >= ackEvery || (ackRequested > lastAcked && served >= ackRequested);
    }

    /**
     * Iteration teardown, first half: serve every round up to the leader's END and ack it;
     * returns END (the last timed round). The workload clears, meets the leader at a barrier,
     * then calls {@link #serveChecked}.
     */
    public long serveToEnd() {
        long ended;
        while ((ended = t.endedRounds()) < 0 || handled < ended) {
            serve("waiting for the writes of a round", true);
        }
        ackServed();
        return ended;
    }

    /** Serves the {@code rounds} rounds of the checked pass, as timed rounds are served, and acks them. */
    public void serveChecked(int rounds) {
        for (int q = 0; q < rounds; q++) {
            serve("waiting for the writes of the checked round", false);
        }
        ackServed();
    }

    private void ackServed() {
        if (lastAcked < arrivals.served()) {
            ack(arrivals.served());
        } else {
            engine.awaitSends(lastAcked); // one posted from arrived(): sent before the iteration's barriers
        }
    }

    private void ack(long r) {
        lastAcked = r;
        engine.ack(r);
    }

    @Override
    public void rmaDone(int tag) {
        throw new BenchmarkSetupException("rank " + t.rank() + ": a local write completion at a target, which posts no writes");
    }

    @Override
    public void arrived(long data) {
        long r = arrivals.arrived(data);
        if (Immediate.kind(data) == Immediate.ACK_ME && r > ackRequested) {
            ackRequested = r;
        }
        // Ack from inside the CQ read that completed the round, before the read and the serve
        // loop unwind: the leader waits for this ack at window 1, and the unwinding held it back
        // (docs/perf/journal/write-64B-gap.md, "The target's turn-around").
        long served = arrivals.served();
        if (ackDue(served) && engine.tryAck(served)) {
            lastAcked = served;
        }
    }
}

package io.efabench.harness;

import io.efabench.harness.engine.ArrivalCounter;
import io.efabench.harness.engine.Footprint;
import io.efabench.harness.engine.Immediate;
import io.efabench.harness.engine.WriteEngine;

/**
 * Ranks 1..N-1 of {@link WriteRounds}: serve rounds by counting every planned write's arrival
 * ({@link ArrivalCounter}), ack cumulatively, and check every slot of the checked pass.
 */
final class WriteTarget implements WriteEngine.Sink {
    private final WriteRounds w;
    private final FabricTrial t;
    private final TrialBuffer dst;
    private final ArrivalCounter arrivals;
    private final WriteEngine engine;
    private final Deadline deadline;
    private long lastAcked;
    /** Rounds handed out by invocations (served may run ahead: arrivals are counted as they come). */
    private long handled;
    /** The last round whose writes asked for an ack once served (a window's last, with remote completion). */
    private long ackRequested;

    WriteTarget(WriteRounds w, TrialBuffer dst) {
        this.w = w;
        this.t = w.t;
        this.dst = dst;
        this.deadline = new Deadline(t.group, t.timeout);
        int[] expected = new int[t.size];
        for (int i = 0; i < w.plan.ops(); i++) {
            expected[0] += w.plan.peer[i] == t.rank ? 1 : 0;
        }
        // The leader posts round r only once this rank acked r - credits: rounds in flight are
        // served + 1 .. served + credits.
        arrivals = new ArrivalCounter(t.rank, expected, 2 * w.credits);
        engine = new WriteEngine(t, new int[t.channels.length], true, w.unservedPerChannel(), 1, this);
    }

    void warmRound() {
        serve("waiting for the writes of a round", true);
        if (lastAcked < arrivals.served()) {
            ack(arrivals.served());
        }
    }

    /**
     * One follower invocation: waits until round {@code handled + 1} is served (all its planned
     * writes arrived) and acks, cumulatively, once ackEvery rounds arrived since the last ack; with
     * {@code stopAtEnd}, returns at once when the leader's END says there is no such round.
     */
    void serve(String what, boolean stopAtEnd) {
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
                throw new BenchmarkSetupException(e.getMessage() + "; " + arrivals.missing());
            }
        }
        handled = next;
        long served = arrivals.served();
        if (served - lastAcked >= w.ackEvery || (ackRequested > lastAcked && served >= ackRequested)) {
            ack(served);
        }
    }

    private void ack(long r) {
        lastAcked = r;
        engine.ack(r);
    }

    /** Iteration teardown: serve up to END, ack it, clear, then serve and verify the checked pass. */
    void endIteration() {
        long ended;
        while ((ended = t.endedRounds()) < 0 || handled < ended) {
            serve("waiting for the writes of a round", true);
        }
        if (lastAcked < arrivals.served()) {
            ack(arrivals.served());
        }
        if (!w.skipClear) {
            dst.clear();
        }
        t.barrier("targets cleared for the checked round");
        for (int q = 1; q <= w.slots; q++) {
            serve("waiting for the writes of the checked round", false);
        }
        if (lastAcked < arrivals.served()) {
            ack(arrivals.served());
        }
        String verdict = null;
        for (int q = 1; q <= w.slots && verdict == null; q++) {
            int slot = Footprint.slotOf(ended + q, w.slots);
            try {
                dst.verify((long) slot * w.size, w.size, 0, t.rank, ended + q);
            } catch (Payload.CorruptionException e) {
                verdict = e.getMessage() + " (slot " + slot + " of " + w.slots + ", " + w.layout + ", " + t.benchmark() + ")";
            }
        }
        t.verdicts("write checked rounds " + (ended + 1) + ".." + (ended + w.slots), verdict);
    }

    @Override
    public void writeDone(int tag) {
        throw new BenchmarkSetupException("rank " + t.rank + ": a local write completion at a target, which posts no writes");
    }

    @Override
    public void arrived(long data) {
        long r = arrivals.arrived(data);
        if (Immediate.kind(data) == Immediate.ACK_ME && r > ackRequested) {
            ackRequested = r;
        }
    }
}

package io.efabench.harness.pingpong;

import io.efabench.fabric.ChannelOps;
import io.efabench.fabric.Completion;
import io.efabench.fabric.MemoryRegion;
import io.efabench.harness.SeedRound;
import io.efabench.harness.TestHooks;
import io.efabench.harness.engine.Deadline;
import io.efabench.harness.memory.Payload;
import io.efabench.harness.memory.TrialBuffer;
import io.efabench.harness.trial.RoundsSite;
import io.efabench.harness.trial.Rounds;
import io.efabench.harness.trial.Side;

/**
 * Two-sided ping-pong, rank 0 with ranks 1..N-1 in turn, on channel 0, in the leader-driven
 * round protocol of docs/DESIGN.md. A round is the leader's send of {@code size} bytes and the
 * target's send back; plain fi_sendmsg/fi_recvmsg without immediate data, like fi_pingpong,
 * so the two can be compared. The target keeps one receive posted at all times and reposts
 * it before answering, so the next ping always finds it.
 */
public final class PingPongRounds implements Rounds {
    private static final int SEND_CTX = 0;
    private static final int RECV_CTX = 1;

    private final RoundsSite t;
    private final long size;
    private final ChannelOps ch;
    /** Ranks of the group, and rank k's address on channel 0: read on every round, asked once. */
    private final int ranks;
    private final long[] peerAddress;
    private final TrialBuffer sendBuf;
    private final TrialBuffer recvBuf;
    private final MemoryRegion sendMr;
    private final MemoryRegion recvMr;
    private final Completion comp;
    private final Deadline deadline;
    /** Test hook, read once: the byte of every checked round's payload this rank flips before sending, or -1. */
    private final long corruptOffset = TestHooks.integer("EFABENCH_CORRUPT_OFFSET");

    private int peerInFlight = -1;
    private boolean sendDone;
    private boolean recvDone;
    private long round;
    private long served;

    public PingPongRounds(RoundsSite t, long size) {
        this.t = t;
        this.size = size;
        this.ch = t.channel(0);
        this.ranks = t.size();
        this.peerAddress = new long[ranks];
        for (int k = 0; k < ranks; k++) {
            peerAddress[k] = t.peer(k, 0);
        }
        this.comp = t.completion();
        this.deadline = t.deadline();
        // One message per transfer: refused where a channel's endpoint cannot send it in one
        // (Channel#maxSendSize: on efa-direct the device MTU, about 8 KiB); trial.rounds fails every rank with it.
        t.requireSendable(size);
        sendBuf = t.buffer(size);
        recvBuf = t.buffer(size);
        sendBuf.fill(t.rank(), t.rank() == 0 ? 1 : 0, 0);
        sendMr = sendBuf.region(0);
        recvMr = recvBuf.region(0);
        if (t.rank() != 0) {
            postRecv(0);
        }
    }

    @Override
    public long bytesPerInvocation() {
        return 2 * size * (t.size() - 1);
    }

    /** One size per round trip: the seed's SendRecv Gbps. */
    @Override
    public long seedBytesPerInvocation() {
        return size * (t.size() - 1);
    }

    /** The seed's SendRecv unit: one ping-pong round trip, one per target per invocation. */
    @Override
    public SeedRound seedRound() {
        return new SeedRound("rtt_us", t.size() - 1);
    }

    /** One-way transfers per invocation: a ping and a pong per target. */
    @Override
    public int transfersPerInvocation() {
        return 2 * (t.size() - 1);
    }

    @Override
    public double linkGbps() {
        return t.linkGbps(0);
    }

    private void pingPong(int k) {
        peerInFlight = k;
        recvDone = false;
        sendDone = false;
        postRecv(k);
        postSend(k);
        deadline.start();
        while (!(recvDone && sendDone)) {
            progress();
            deadline.check("ping-pong (waiting for the pong)", k);
        }
    }

    private void answer() {
        recvDone = false;
        sendDone = false;
        served++;
        postRecv(0);
        postSend(0);
        deadline.start();
        while (!sendDone) {
            progress();
            deadline.check("ping-pong (sending the pong)", 0);
        }
    }

    // Post first and arm the deadline only when the provider pushes back (-FI_EAGAIN): the
    // common case then costs one downcall and no clock read.
    private void postRecv(int peer) {
        if (ch.tryRecv(recvMr, 0, size, RECV_CTX) != 0) {
            deadline.await(() -> ch.tryRecv(recvMr, 0, size, RECV_CTX) == 0, this::progress, "posting a receive", peer, -1);
        }
    }

    private void postSend(int peer) {
        if (ch.trySend(sendMr, 0, size, peerAddress[peer], 0, false, SEND_CTX) != 0) {
            deadline.await(() -> ch.trySend(sendMr, 0, size, peerAddress[peer], 0, false, SEND_CTX) == 0, this::progress,
                    "posting a send", peer, -1);
        }
    }

    // At most one completion per call: every caller loops on its own condition, so it acts on
    // the completion it waited for at once. Draining until the CQ reads empty would put one more
    // fi_cq_read on the critical path, which on tcp is a poll() and a read() of rxm's signal
    // socket before the next message goes out (fi_pingpong reads exactly what it expects).
    private void progress() {
        if (ch.poll(comp) == 1) {
            if (comp.context() == RECV_CTX) {
                recvDone = true;
            } else {
                sendDone = true;
            }
        }
    }

    @Override
    public Side side() {
        return t.rank() == 0 ? new LeaderSide() : new FollowerSide();
    }

    /** Rank 0: pings every target in turn, runs the checked round. */
    private final class LeaderSide extends Sides {
        /** Untimed, after the iteration's start barrier: one ping-pong with every target. */
        @Override
        public void warmRound() {
            round();
        }

        /** One timed round (leader): a ping-pong with every target in turn. */
        @Override
        public void round() {
            round++;
            for (int k = 1; k < ranks; k++) {
                pingPong(k);
            }
        }

        @Override
        public void endIteration() {
            t.signalEnd(round);
            t.barrier("buffers cleared for the checked round");
            String verdict = null;
            for (int k = 1; k < ranks; k++) {
                sendBuf.fill(0, k, round);
                if (corruptOffset >= 0) {
                    sendBuf.corrupt(corruptOffset);
                }
                recvBuf.clear();
                pingPong(k);
                if (verdict == null) {
                    try {
                        recvBuf.verify(k, 0, round);
                    } catch (Payload.CorruptionException e) {
                        verdict = e.getMessage() + " (SendRecv pong)";
                    }
                }
            }
            t.verdicts("ping-pong checked round " + round, verdict);
        }
    }

    /** Ranks 1..N-1: answer each ping until END, then the checked ping. */
    private final class FollowerSide extends Sides {
        @Override
        public void warmRound() {
            round();
        }

        /** One follower invocation: answer the next ping, or return at once after END. */
        @Override
        public void round() {
            deadline.start();
            while (!recvDone) {
                long ended = t.endedRounds();
                if (ended >= 0 && served >= ended) {
                    return;
                }
                progress();
                deadline.check("ping-pong (waiting for the ping)", 0);
            }
            answer();
        }

        @Override
        public void endIteration() {
            // Keep serving: the leader may still be running rounds when this rank's JMH timer ends.
            long ended;
            while ((ended = t.endedRounds()) < 0 || served < ended) {
                round();
            }
            // The receive for the checked ping is already posted: clearing the buffer under it is
            // safe because the leader sends only after this barrier.
            recvBuf.clear();
            t.barrier("buffers cleared for the checked round");
            deadline.await(() -> recvDone, PingPongRounds.this::progress, "waiting for the checked ping", 0, -1);
            String verdict = null;
            try {
                recvBuf.verify(0, t.rank(), ended);
            } catch (Payload.CorruptionException e) {
                verdict = e.getMessage() + " (SendRecv ping)";
            }
            sendBuf.fill(t.rank(), 0, ended);
            if (corruptOffset >= 0) {
                sendBuf.corrupt(corruptOffset); // a corrupted pong: the leader's check must catch it
            }
            answer();
            served--; // the checked round is not a timed round
            t.verdicts("ping-pong checked round " + ended, verdict);
        }
    }

    /** What both sides name in a failure line. */
    private abstract class Sides implements Side {
        @Override
        public int peerInFlight() {
            return peerAwaited();
        }
    }

    /** The peer rank the current wait is for, or -1 (failure lines). */
    private int peerAwaited() {
        return t.rank() == 0 ? peerInFlight : 0;
    }
}

package io.efabench.harness.trial;

import java.time.Duration;

import io.efabench.fabric.Channel;
import io.efabench.fabric.FabricException;
import io.efabench.rank.RankException;
import io.efabench.rank.RankGroup;
import io.efabench.harness.BenchmarkSetupException;

/**
 * How a fabric trial fails: one line, the same on every rank. The failing rank marks the group
 * failed (the others stop at their next wait with this line) and throws a
 * {@link BenchmarkSetupException} carrying it, so JMH prints no stack trace wall.
 */
final class TrialFailure {
    private TrialFailure() {}

    /**
     * Marks the group failed for everyone (best effort) and returns the exception to throw. A
     * fabric error says which peer rank its channel led to (where that is certain: {@code
     * peerHint}, the rank the failed wait was for, else the only other rank of two, or rank 0 for a
     * follower, whose rounds talk to rank 0 only) and, after giving the rendezvous up to a second to
     * notice closed sockets, which ranks died: a peer killed mid-round shows on the fabric first
     * ("Transport endpoint is not connected") and on the rendezvous a moment later. What the
     * providers wrote to the channels' event queues is appended.
     */
    static RuntimeException fail(RuntimeException e, int peerHint, RankGroup group, Channel[] channels, TrialPaths paths) {
        if (channels != null) {
            for (Channel c : channels) {
                if (c != null) {
                    c.endInjectRun(); // the waits below are not a stuck inject
                }
            }
        }
        String message = e.getMessage() != null ? e.getMessage() : e.toString();
        int waitedFor = e instanceof BenchmarkSetupException b ? b.peer() : -1;
        if (paths != null && (waitedFor >= 0 || e instanceof FabricException)) {
            // A wait that ran out, or the provider's error: which channel, which NICs (before the line goes out to the group).
            message += paths.report(waitedFor >= 0 ? waitedFor : peerHint);
        }
        if (e instanceof FabricException) {
            int rank = group.rank();
            int peerRank = peerHint >= 0 ? peerHint : group.size() == 2 ? 1 - rank : rank != 0 ? 0 : -1;
            if (peerRank >= 0 && !message.contains("rank " + peerRank)) {
                message += " (peer: rank " + peerRank + ")";
            }
            message += group.describeLosses(Duration.ofSeconds(1));
        }
        message += providerErrors(channels);
        group.abort(message);
        return e instanceof RankException || e instanceof FabricException || !message.equals(e.getMessage())
                ? new BenchmarkSetupException(message, waitedFor) : e;
    }

    /**
     * What the providers wrote to the channels' event queues (efa's internal errors, see
     * io.efabench.fabric.EventQueue), as "; provider error ..." per entry; empty when none. An
     * operation that met such an error never completes, so it surfaces here, at the failure of
     * the wait for it.
     */
    static String providerErrors(Channel[] channels) {
        StringBuilder s = new StringBuilder();
        if (channels != null) {
            for (Channel c : channels) {
                if (c != null) {
                    c.providerErrors().forEach(line -> s.append("; ").append(line));
                }
            }
        }
        return s.toString();
    }
}

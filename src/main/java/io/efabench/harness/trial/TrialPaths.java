package io.efabench.harness.trial;

import java.util.ArrayList;
import java.util.List;

import io.efabench.rank.RankGroup;
import io.efabench.topology.NicLink;
import io.efabench.topology.Sysfs;
import io.efabench.harness.engine.Deadline;
import io.efabench.harness.engine.StallWitness;

/**
 * Where each channel of a trial runs, for the line of a wait that failed or stalled: channel c is
 * rail c (rail-aligned: channel c of every rank is on its c-th NIC, modulo its NIC count), from
 * this rank's NIC on its node to the peer's NIC on the peer's node. Such a line names the channels
 * the engine saw stall (its {@link StallWitness}), else every channel to the peer, and any NIC of
 * this rank whose link is not up now. A wait past a quarter of its budget is announced once and
 * again when it ends (a link that flapped and came back).
 */
public final class TrialPaths implements Deadline.Stalls, StallWitness.ChannelNames {
    private final RankGroup group;
    /** This rank's NIC (fabric domain) per channel. */
    private final String[] mine;
    /** Rank r's NIC per channel: {@code theirs[r][c]}. */
    private final String[][] theirs;
    private final int rails;
    private final Sysfs sysfs;
    /** A peer's note older than this (the timeout and a little) was of an earlier stall. */
    private final long noteAgeNanos;
    private StallWitness witness;
    /** What the last stall notice saw, for the line saying it ended. */
    private String stallReport = "";

    /** The rail every channel is on where the trial was told it (a sweep's probe), else -1: channel k's is k % rails. */
    private final int rail;

    TrialPaths(RankGroup group, String[] mine, String[][] theirs, int rails, int rail, Sysfs sysfs, java.time.Duration timeout) {
        this.group = group;
        this.noteAgeNanos = timeout.toNanos() + 5_000_000_000L;
        this.mine = mine.clone();
        this.theirs = theirs;
        this.rails = Math.max(1, rails);
        this.rail = rail;
        this.sysfs = sysfs;
    }

    /** The engine of this trial's rounds, asked which channels stalled when a wait fails. */
    public void watch(StallWitness w) {
        witness = w;
    }

    /** "channel 1 (rail 1: NIC rail1 on n1 <-> NIC rail1 on n2)": both ends of channel {@code c} to {@code peer}. */
    @Override
    public String channel(int c, int peer) {
        return "channel " + c + " (rail " + railOf(c) + ": NIC " + mine[c] + " on " + group.host(group.rank()) + " <-> NIC "
                + theirs[peer][c] + " on " + group.host(peer) + ")";
    }

    /**
     * What a failed or stalled wait for {@code peer} (-1: unknown) appends to its line: the
     * channels the witness saw stall with that peer, else with any peer, else every channel to the
     * peer; then "; NIC rail1 on n2 is down (link state now)" for each NIC of this rank not up.
     */
    public String report(int peer) {
        StringBuilder b = new StringBuilder();
        if (witness != null) {
            String seen = witness.stalled(peer, this);
            if (seen.isEmpty() && peer >= 0) {
                seen = witness.stalled(-1, this);
            }
            b.append(seen);
        }
        for (int r = 1; group.rank() == 0 && r < theirs.length; r++) {
            String note = group.noteOf(r, noteAgeNanos);
            if (note != null && (peer < 0 || r == peer)) {
                b.append("; rank ").append(r).append(" said: [").append(note).append(']');
            }
        }
        if (b.isEmpty() && peer >= 0 && peer != group.rank() && peer < theirs.length) {
            List<String> all = new ArrayList<>();
            for (int c = 0; c < mine.length; c++) {
                all.add(channel(c, peer));
            }
            b.append("; no channel to rank ").append(peer).append(" singled out (none holds work posted here and not"
                    + " completed, none owes writes planned to arrive here): ").append(String.join(", ", all));
            if (group.rank() == 0) {
                b.append(noNote(peer));
            }
        }
        for (int c = 0; c < mine.length; c++) {
            String state = NicLink.state(sysfs, mine[c]);
            if (state != null && !state.equals("up") && b.indexOf("NIC " + mine[c] + " on " + group.host(group.rank())
                    + " is ") < 0) {
                b.append("; NIC ").append(mine[c]).append(" on ").append(group.host(group.rank())).append(" is ")
                        .append(state).append(" (rail ").append(railOf(c)).append(", its link state now)");
            }
        }
        return b.toString();
    }

    private int railOf(int c) {
        return rail >= 0 ? rail : c % rails;
    }

    /** Printed, and told rank 0 ({@link RankGroup#note}), whose failure line then carries what this rank saw. */
    @Override
    public void stalled(String operation, int peer, long round, long nanos) {
        stallReport = report(peer);
        String line = wait(operation, peer, round) + ": no progress for " + seconds(nanos) + " s" + stallReport;
        System.out.println("# efabench: " + line);
        group.note(line);
    }

    /** Printed with what the stall notice saw, so a link that flapped and came back is named. */
    @Override
    public void resumed(String operation, int peer, long round, long nanos) {
        String more = stallReport;
        if (group.rank() == 0 && peer > 0 && peer < theirs.length && more.indexOf("rank " + peer + " said") < 0) {
            String note = group.noteOf(peer, nanos + 1_000_000_000L);
            more = note != null ? more.replace(noNote(peer), "") + "; rank " + peer + " said: [" + note + "]" : more;
        }
        System.out.println("# efabench: " + wait(operation, peer, round) + " resumed after " + seconds(nanos)
                + " s or more without progress; the run goes on (the iteration's figure includes the stall)"
                + (more.isEmpty() ? "" : "; during it: " + more.substring(2)));
    }

    private static String noNote(int peer) {
        return "; rank " + peer + " sent no note of a stall over the rendezvous";
    }

    private String wait(String operation, int peer, long round) {
        return "rank " + group.rank() + ": " + operation + (round >= 0 ? " (round " + round + ")" : "") + " with "
                + (peer >= 0 && peer < theirs.length ? group.onNode(peer) : "rank " + peer);
    }

    private static String seconds(long nanos) {
        return String.format(java.util.Locale.ROOT, "%.1f", nanos / 1e9);
    }
}

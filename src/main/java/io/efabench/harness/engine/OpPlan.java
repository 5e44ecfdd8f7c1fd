package io.efabench.harness.engine;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import io.efabench.harness.Layout;


/**
 * The writes one round of a rank is made of: op i writes {@code len[i]} bytes at {@code offset[i]}
 * of a peer's block to rank {@code peer[i]} on channel {@code channel[i]}; ops of group g are
 * {@code groupStart[g]} until {@code groupStart[g + 1]} (Write runs groups one after another at
 * window 1: the seed's targets in turn). Every op is cut at its NIC's max message size and at
 * {@link #MAX_WRITE} ({@link EngineSite#maxWrite}). A plan is a layout, kept apart from the loops that post it, and travels as
 * bytes: Write's targets adopt the leader's plan, so NICs that differ still expect exactly the
 * ops the leader posts.
 */
public final class OpPlan {
    public final int[] peer;
    public final int[] channel;
    public final long[] offset;
    public final long[] len;
    public final int[] groupStart;

    private OpPlan(List<long[]> ops, List<Integer> starts) {
        int n = ops.size();
        peer = new int[n];
        channel = new int[n];
        offset = new long[n];
        len = new long[n];
        for (int i = 0; i < n; i++) {
            long[] op = ops.get(i);
            peer[i] = (int) op[0];
            channel[i] = (int) op[1];
            offset[i] = op[2];
            len[i] = op[3];
        }
        groupStart = starts.stream().mapToInt(Integer::intValue).toArray();
    }

    /** Write, rank 0 to ranks 1..N-1: a group per target (SINGLE, MULTI), one group of all targets (ROUND_ROBIN). */
    public static OpPlan write(EngineSite t, Layout layout, long size) {
        List<long[]> ops = new ArrayList<>();
        List<Integer> starts = new ArrayList<>();
        for (int k = 1; k < t.size(); k++) {
            if (layout != Layout.ROUND_ROBIN || k == 1) {
                starts.add(ops.size());
            }
            addPeerOps(ops, t, layout, k, size);
        }
        starts.add(ops.size());
        return new OpPlan(ops, starts);
    }

    /** All-to-all: this rank to every other, peers from rank + 1 on (so N ranks do not all start on one target). */
    public static OpPlan allToAll(EngineSite t, Layout layout, long size) {
        List<long[]> ops = new ArrayList<>();
        for (int k = 1; k < t.size(); k++) {
            addPeerOps(ops, t, layout, (t.rank() + k) % t.size(), size);
        }
        return new OpPlan(ops, List.of(0, ops.size()));
    }

    /**
     * What every rank's all-to-all plan sends this rank per round, by sender and channel,
     * allgathered: NICs (max message size) may differ between ranks.
     */
    public static int[][] incoming(EngineSite t, OpPlan mine) {
        int nch = t.channelCount();
        int[][] out = new int[t.size()][nch];
        for (int i = 0; i < mine.ops(); i++) {
            out[mine.peer[i]][mine.channel[i]]++;
        }
        ByteBuffer b = ByteBuffer.allocate(4 * t.size() * nch);
        for (int[] perChannel : out) {
            for (int k : perChannel) {
                b.putInt(k);
            }
        }
        List<byte[]> all = t.allgather("all-to-all op plans", b.array());
        for (int s = 0; s < t.size(); s++) {
            ByteBuffer theirs = ByteBuffer.wrap(all.get(s));
            for (int p = 0; p < t.size(); p++) {
                for (int c = 0; c < nch; c++) {
                    int k = theirs.getInt();
                    if (p == t.rank()) {
                        out[s][c] = s == t.rank() ? 0 : k;
                    }
                }
            }
        }
        return out;
    }

    public int ops() {
        return peer.length;
    }

    public int groups() {
        return groupStart.length - 1;
    }

    /** Ops per channel of {@code channels}. */
    public int[] perChannel(int channels) {
        int[] n = new int[channels];
        for (int c : channel) {
            n[c]++;
        }
        return n;
    }

    /** Most ops of one peer on one channel. */
    public int maxPerPeerChannel(int ranks, int channels) {
        int[][] n = new int[ranks][channels];
        int max = 0;
        for (int i = 0; i < ops(); i++) {
            max = Math.max(max, ++n[peer[i]][channel[i]]);
        }
        return max;
    }

    /**
     * The writes {peer, channel, offset, length} that carry {@code size} bytes to {@code peer}
     * under {@code layout}, by the rule every plan uses ({@link #addPeerOps}); none for 0 bytes.
     * For workloads whose blocks differ per peer and round (MoE's all-to-all-v).
     */
    public static List<long[]> peerOps(EngineSite t, Layout layout, int peer, long size) {
        List<long[]> ops = new ArrayList<>();
        addPeerOps(ops, t, layout, peer, size);
        return ops;
    }

    /**
     * The ops {peer, channel, offset in the block, length} that write one {@code size}-byte block
     * to {@code peer} under {@code layout}, as rank {@code t.rank()} plans them: SINGLE on channel 0,
     * MULTI one stripe per channel, ROUND_ROBIN on channel (peer + rank) % channels.
     */
    static void addPeerOps(List<long[]> ops, EngineSite t, Layout layout, int peer, long size) {
        int nch = t.channelCount();
        switch (layout) {
            case SINGLE -> addChunks(ops, t.maxWrite(0), peer, 0, 0, size);
            case MULTI -> {
                for (int c = 0; c < nch; c++) {
                    addChunks(ops, t.maxWrite(c), peer, c, Stripes.offset(size, nch, c), Stripes.length(size, nch, c));
                }
            }
            case ROUND_ROBIN -> {
                int c = (peer + t.rank()) % nch;
                addChunks(ops, t.maxWrite(c), peer, c, 0, size);
            }
        }
    }

    private static void addChunks(List<long[]> ops, long max, int peer, int channel, long off, long len) {
        for (long done = 0; done < len; ) {
            long n = Math.min(max, len - done);
            ops.add(new long[] {peer, channel, off + done, n});
            done += n;
        }
    }

    public byte[] encode() {
        ByteBuffer b = ByteBuffer.allocate(8 + 24 * ops() + 4 * groupStart.length);
        b.putInt(ops()).putInt(groupStart.length);
        for (int i = 0; i < ops(); i++) {
            b.putInt(peer[i]).putInt(channel[i]).putLong(offset[i]).putLong(len[i]);
        }
        for (int g : groupStart) {
            b.putInt(g);
        }
        return b.array();
    }

    public static OpPlan decode(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        int n = b.getInt();
        int g = b.getInt();
        List<long[]> ops = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            ops.add(new long[] {b.getInt(), b.getInt(), b.getLong(), b.getLong()});
        }
        List<Integer> starts = new ArrayList<>(g);
        for (int i = 0; i < g; i++) {
            starts.add(b.getInt());
        }
        return new OpPlan(ops, starts);
    }
}

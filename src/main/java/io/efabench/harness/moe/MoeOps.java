package io.efabench.harness.moe;

import java.util.ArrayList;
import java.util.List;

import io.efabench.harness.Layout;
import io.efabench.harness.engine.EngineSite;
import io.efabench.harness.engine.OpPlan;

/**
 * The writes of one phase of one routing that this rank posts: op i carries {@code len[i]} bytes
 * from {@code src[i]} of its source buffer to {@code dst[i]} of rank {@code peer[i]}'s
 * destination on channel {@code channel[i]}, cut by the rule of every plan ({@link OpPlan#peerOps}).
 * Every other rank gets at least one write a phase: one of 0 bytes where it gets no token (the
 * count DeepEP and pplx send every expert, zero or not), so each round hears from every peer and
 * a rank that posts round r + 1 knows all of round r is done with its buffers. Peers from this
 * rank + 1 on, as the all-to-all's.
 */
final class MoeOps {
    final int[] peer;
    final int[] channel;
    final long[] src;
    final long[] dst;
    final long[] len;

    private MoeOps(List<long[]> ops) {
        int n = ops.size();
        peer = new int[n];
        channel = new int[n];
        src = new long[n];
        dst = new long[n];
        len = new long[n];
        for (int i = 0; i < n; i++) {
            long[] op = ops.get(i);
            peer[i] = (int) op[0];
            channel[i] = (int) op[1];
            src[i] = op[2];
            dst[i] = op[3];
            len[i] = op[4];
        }
    }

    int ops() {
        return peer.length;
    }

    /** Dispatch of routing p: this rank's tokens for each rank, from its segment to where it lands there. */
    static MoeOps dispatch(EngineSite t, Layout layout, MoePlan plan, int p) {
        return of(t, layout, plan.shape.dispatchTokenBytes(), plan.sendCount[p], plan.sendStart[p], plan.landAt[p]);
    }

    /** Combine of routing p: each owner's tokens back, from where they arrived here to its segment there. */
    static MoeOps combine(EngineSite t, Layout layout, MoePlan plan, int p) {
        return of(t, layout, plan.shape.combineTokenBytes(), plan.recvCount[p], plan.recvStart[p], plan.returnAt[p]);
    }

    /** To each other rank q: {@code count[q]} tokens of {@code tokenBytes} from token {@code from[q]} here to token {@code to[q]} there. */
    private static MoeOps of(EngineSite t, Layout layout, long tokenBytes, int[] count, int[] from, int[] to) {
        List<long[]> ops = new ArrayList<>();
        for (int k = 1; k < t.size(); k++) {
            int q = (t.rank() + k) % t.size();
            add(ops, t, layout, q, from[q] * tokenBytes, to[q] * tokenBytes, count[q] * tokenBytes);
        }
        return new MoeOps(ops);
    }

    private static void add(List<long[]> ops, EngineSite t, Layout layout, int peer, long src, long dst, long bytes) {
        for (long[] op : OpPlan.peerOps(t, layout, peer, bytes)) {
            ops.add(new long[] {peer, op[1], src + op[2], dst + op[2], op[3]});
        }
        if (bytes == 0) {
            int c = layout == Layout.ROUND_ROBIN ? (peer + t.rank()) % t.channelCount() : 0;
            ops.add(new long[] {peer, c, 0, 0, 0});
        }
    }

    /** Writes a sender posts for {@code bytes} to one rank: what a receiver counts ({@link PhaseArrivals}). */
    static int writes(EngineSite t, Layout layout, int peer, long bytes) {
        return bytes == 0 ? 1 : OpPlan.peerOps(t, layout, peer, bytes).size();
    }

    /** Writes of this phase on each channel. */
    int[] perChannel(int channels) {
        int[] n = new int[channels];
        for (int c : channel) {
            n[c]++;
        }
        return n;
    }
}

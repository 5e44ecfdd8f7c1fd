package io.efabench.harness.moe;

import io.efabench.fabric.MemoryRegion;
import io.efabench.fabric.RemoteRegion;
import io.efabench.harness.TestHooks;
import io.efabench.harness.memory.Payload;
import io.efabench.harness.memory.TrialBuffer;
import io.efabench.harness.trial.RoundsSite;

/**
 * The four buffers of a MoE layer on this rank, sized for the routing that needs most, and what
 * the checked round does with them ({@link MoePlan} gives the layout): the tokens to dispatch
 * (one segment per destination rank), the tokens dispatched here (one per sender), the expert
 * outputs to return (laid out as the tokens that came) and the returns (laid out as the tokens
 * sent). Before a checked round every segment a rank sends gets the pattern of (this rank, the
 * peer, the round and phase), word by word from the segment's start, so a token's bytes are a
 * function of its sender, its place in the segment (hence which token it is) and its offset;
 * the destinations are cleared. After it every segment that came is checked, every byte; a bad
 * one is named by rank, token, expert and offset.
 */
final class MoeBlocks {
    private final RoundsSite t;
    private final MoePlan plan;
    private final int me;
    private final long dispatchBytes;
    private final long combineBytes;
    final TrialBuffer dispatchSrc;
    final TrialBuffer dispatchDst;
    final TrialBuffer combineSrc;
    final TrialBuffer combineDst;
    final MemoryRegion[] dispatchSrcMr;
    final MemoryRegion[] combineSrcMr;
    final RemoteRegion[][] dispatchDstOf;
    final RemoteRegion[][] combineDstOf;

    /** Test hook, applied by rank N-1: EFABENCH_CORRUPT_OFFSET flips that byte of the first token segment it dispatches. */
    private final long corruptOffset = TestHooks.integer("EFABENCH_CORRUPT_OFFSET");

    MoeBlocks(RoundsSite t, MoePlan plan) {
        this.t = t;
        this.plan = plan;
        this.me = t.rank();
        this.dispatchBytes = plan.shape.dispatchTokenBytes();
        this.combineBytes = plan.shape.combineTokenBytes();
        dispatchSrc = t.buffer(atLeastOne(plan.maxSent * dispatchBytes));
        dispatchDst = t.buffer(atLeastOne(plan.maxReceived * dispatchBytes));
        combineSrc = t.buffer(atLeastOne(plan.maxReceived * combineBytes));
        combineDst = t.buffer(atLeastOne(plan.maxSent * combineBytes));
        dispatchSrcMr = dispatchSrc.regions();
        combineSrcMr = combineSrc.regions();
        dispatchDstOf = t.exchange("MoE dispatch destination regions", dispatchDst.regions());
        combineDstOf = t.exchange("MoE combine destination regions", combineDst.regions());
    }

    /** A buffer of no token still registers (a rank whose experts get nothing): one cache line. */
    private static long atLeastOne(long bytes) {
        return Math.max(64, bytes);
    }

    /** Payload bytes of the four buffers. */
    long bytes() {
        return dispatchSrc.byteSize() + dispatchDst.byteSize() + combineSrc.byteSize() + combineDst.byteSize();
    }

    /** The pattern round of a phase of round {@code r}: dispatch 2r, combine 2r + 1. */
    private static long key(long r, boolean combine) {
        return 2 * r + (combine ? 1 : 0);
    }

    /** Before checked round {@code r}: every segment this rank sends gets its pattern; destinations cleared. */
    void prepareCheck(long r) {
        int p = MoePlan.routingOf(r);
        int corruptFor = -1;
        for (int d = 0; d < plan.ranks; d++) {
            if (d == me) {
                continue;
            }
            if (plan.sendCount[p][d] > 0) {
                dispatchSrc.fill(plan.sendStart[p][d] * dispatchBytes, plan.sendCount[p][d] * dispatchBytes, me, d, key(r, false));
                corruptFor = corruptFor < 0 ? d : corruptFor;
            }
            if (plan.recvCount[p][d] > 0) {
                combineSrc.fill(plan.recvStart[p][d] * combineBytes, plan.recvCount[p][d] * combineBytes, me, d, key(r, true));
            }
        }
        if (corruptOffset >= 0 && me == plan.ranks - 1 && corruptFor >= 0
                && corruptOffset < plan.sendCount[p][corruptFor] * dispatchBytes) {
            dispatchSrc.corrupt(plan.sendStart[p][corruptFor] * dispatchBytes + corruptOffset);
        }
        dispatchDst.clear();
        combineDst.clear();
    }

    /** "expected 0x.., got 0x.." and any device detail of a corruption, without its pattern round. */
    private static String expectedGot(Payload.CorruptionException e) {
        String m = e.getMessage();
        int at = m.indexOf("expected");
        return at >= 0 ? m.substring(at) : m;
    }

    /** After checked round {@code r}: null if every token that came holds its pattern, else the line naming the first bad one. */
    String verify(long r) {
        int p = MoePlan.routingOf(r);
        for (int s = 0; s < plan.ranks; s++) {
            if (s == me) {
                continue;
            }
            if (plan.recvCount[p][s] > 0) {
                try {
                    dispatchDst.verify(plan.recvStart[p][s] * dispatchBytes, plan.recvCount[p][s] * dispatchBytes, s, me,
                            key(r, false));
                } catch (Payload.CorruptionException e) {
                    int k = (int) (e.offset / dispatchBytes);
                    int token = plan.tokensTo(p, s, me)[k];
                    return "rank " + me + ": MoE dispatch of round " + r + ": token " + token + " of rank " + s + " (for expert "
                            + plan.expertOf(p, s, token, me) + " on rank " + me + ") corrupted at byte " + e.offset % dispatchBytes
                            + " of its " + dispatchBytes + ": " + expectedGot(e);
                }
            }
            if (plan.sendCount[p][s] > 0) {
                try {
                    combineDst.verify(plan.sendStart[p][s] * combineBytes, plan.sendCount[p][s] * combineBytes, s, me,
                            key(r, true));
                } catch (Payload.CorruptionException e) {
                    int k = (int) (e.offset / combineBytes);
                    int token = plan.tokensTo(p, me, s)[k];
                    return "rank " + me + ": MoE combine of round " + r + ": token " + token + " of rank " + me
                            + " returned by rank " + s + " (expert " + plan.expertOf(p, me, token, s) + ") corrupted at byte "
                            + e.offset % combineBytes + " of its " + combineBytes + ": " + expectedGot(e);
                }
            }
        }
        return null;
    }
}

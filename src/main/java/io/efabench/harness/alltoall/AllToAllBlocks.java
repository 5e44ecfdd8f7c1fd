package io.efabench.harness.alltoall;

import io.efabench.fabric.MemoryRegion;
import io.efabench.fabric.RemoteRegion;
import io.efabench.harness.Layout;
import io.efabench.harness.TestHooks;
import io.efabench.harness.engine.Footprint;
import io.efabench.harness.memory.Payload;
import io.efabench.harness.memory.TrialBuffer;
import io.efabench.harness.trial.RoundsSite;

/**
 * The memory of {@link AllToAllRounds} and what the checked pass does with it: {@code slots}
 * slots of one {@code size} block per rank in both buffers; in round r (slot r mod slots) rank s
 * writes its source block (slot, p) into destination block (slot, s) of rank p. Before a checked
 * pass every slot's source blocks get the pattern of (this rank, peer, that slot's round) and the
 * destination is cleared; after it every peer's block of every slot is verified.
 */
final class AllToAllBlocks {
    private final RoundsSite t;
    private final long size;
    private final int slots;
    private final int ranks;
    private final int me;
    private final TrialBuffer src;
    private final TrialBuffer dst;
    final MemoryRegion[] srcMr;
    final RemoteRegion[][] dstOf;

    /** Test hook, applied by rank N-1: EFABENCH_CORRUPT_OFFSET flips that byte of its checked block for one peer. */
    private final long corruptOffset = TestHooks.integer("EFABENCH_CORRUPT_OFFSET");

    AllToAllBlocks(RoundsSite t, long size, int slots) {
        this.t = t;
        this.size = size;
        this.slots = slots;
        this.ranks = t.size();
        this.me = t.rank();
        long perSlot = Footprint.bufferBytes(ranks, size);
        src = t.buffer(Footprint.bufferBytes(slots, perSlot));
        dst = t.buffer(Footprint.bufferBytes(slots, perSlot));
        srcMr = src.regions();
        dstOf = t.exchange("all-to-all destination regions", dst.regions());
        for (int s = 0; s < slots; s++) {
            fillSources(s, 0);
        }
    }

    /** The source buffer: slots x N blocks, block (slot, p) sent to rank p. */
    TrialBuffer source() {
        return src;
    }

    /** The destination buffer: slots x N blocks, block (slot, s) written by rank s. */
    TrialBuffer destination() {
        return dst;
    }

    /** Offset of block (slot, rank) in either buffer. */
    long block(int slot, int rank) {
        return ((long) slot * ranks + rank) * size;
    }

    private void fillSources(int slot, long round) {
        for (int p = 0; p < ranks; p++) {
            if (p != me) {
                src.fill(block(slot, p), size, me, p, round);
            }
        }
    }

    /** Before the checked rounds end + 1 .. end + slots: patterns in, destination cleared. */
    void prepareCheck(long end) {
        for (int q = 1; q <= slots; q++) {
            fillSources(Footprint.slotOf(end + q, slots), end + q);
        }
        int corruptFor = ranks == 2 ? 0 : 1;
        if (corruptOffset >= 0 && me == ranks - 1 && corruptOffset < size) {
            src.corrupt(block(Footprint.slotOf(end + 1, slots), corruptFor) + corruptOffset);
        }
        dst.clear();
    }

    /** After the checked rounds: null if every peer's block of every slot holds its pattern, else why not. */
    String verify(long end, Layout layout) {
        for (int q = 1; q <= slots; q++) {
            int slot = Footprint.slotOf(end + q, slots);
            for (int s = 0; s < ranks; s++) {
                try {
                    if (s != me) {
                        dst.verify(block(slot, s), size, s, me, end + q);
                    }
                } catch (Payload.CorruptionException e) {
                    return e.getMessage() + " (" + t.benchmark() + " " + layout + ", block of rank " + s + ", slot " + slot
                            + " of " + slots + ")";
                }
            }
        }
        return null;
    }
}

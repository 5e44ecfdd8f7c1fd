package io.efabench.harness.engine;

import io.efabench.harness.BenchmarkSetupException;


/**
 * How many distinct regions ({@code slots}) the rounds in flight write, like the peers: fabtests'
 * bandwidth loop advances its offset by the transfer size for every write of a window, and
 * perftest does the same, so W writes in flight touch W regions on each side. Rewriting one
 * region keeps it in cache and reads faster than the peer for reasons that are not the transport
 * (docs/perf/journal/write-vs-fi_rma_bw.md). Round r uses slot r mod slots, on the source and the target alike.
 *
 * <p>{@code auto} is one slot per round of the window, capped so that one buffer spans at most
 * {@link #AUTO_CAP_BYTES}: 1 GiB is several times the last-level cache one core reaches on
 * every CPU of the p5 family (and 4x the largest, a Milan socket's 256 MiB), so the cap changes
 * no cache behaviour; and the seed's largest size (1G) gets one slot, 2 GiB per rank with
 * source and target, which fits a p5's 80 GB GPU with room for every rank's buffers.
 */
public final class Footprint {
    /** Most bytes one payload buffer spans under {@code slots=auto}. */
    public static final long AUTO_CAP_BYTES = 1L << 30;
    /** Most slots that can be asked for. */
    public static final int MAX_SLOTS = 256;

    private Footprint() {}

    /**
     * Slots for {@code param} ("auto" or a whole number from 1 to {@link #MAX_SLOTS}), where one
     * slot of one buffer holds {@code bytesPerSlot} bytes and {@code window} rounds may be in flight.
     */
    public static int slots(String param, int window, long bytesPerSlot) {
        if (param == null || param.equals("auto")) {
            long fit = Math.max(1, AUTO_CAP_BYTES / Math.max(1, bytesPerSlot));
            return (int) Math.min(window, fit);
        }
        try {
            int n = Integer.parseInt(param.trim());
            if (n >= 1 && n <= MAX_SLOTS) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // the one-line error below
        }
        throw new BenchmarkSetupException("slots=" + param + ": must be 'auto' or a whole number from 1 to " + MAX_SLOTS);
    }

    /** Rounds in flight for a {@code window} asked for over {@code slots}: capped, so no two share a region. */
    public static int roundsInFlight(int window, int slots) {
        return Math.min(window, slots);
    }

    /**
     * The slot round {@code round} writes. A power-of-two count (the default's, and every window
     * that is one) takes a mask: this runs once per write, and a 64-bit division costs tens of
     * cycles, a tenth of a 64-byte write's whole time.
     */
    public static int slotOf(long round, int slots) {
        if ((slots & (slots - 1)) == 0) {
            return (int) (round & (slots - 1));
        }
        return (int) Math.floorMod(round, (long) slots);
    }

    /** Bytes of a buffer of {@code slots} slots of {@code bytesPerSlot} each; a one-line error on overflow. */
    public static long bufferBytes(int slots, long bytesPerSlot) {
        try {
            return Math.multiplyExact(slots, bytesPerSlot);
        } catch (ArithmeticException e) {
            throw new BenchmarkSetupException(slots + " slots of " + bytesPerSlot + " bytes overflow a buffer");
        }
    }
}

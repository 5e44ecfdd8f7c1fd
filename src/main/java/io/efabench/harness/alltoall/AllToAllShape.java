package io.efabench.harness.alltoall;

import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.SeedRound;
import io.efabench.harness.engine.Footprint;
import io.efabench.harness.trial.Rounds;

/**
 * What one all-to-all invocation is, whichever way its bytes move ({@link AllToAllRounds} over the
 * fabric, {@link NvlinkAllToAllRounds} over NVLink): {@code size} bytes to each of the N-1 peers
 * per round, a window of rounds per invocation, the slots they write, and the byte counts the
 * metrics divide by. One place, so a figure means the same on both paths.
 */
abstract class AllToAllShape implements Rounds {
    /** Most rounds in flight per rank. */
    static final int MAX_WINDOW = 64;

    final long size;
    final int ranks;
    final int window;
    final int slots;

    AllToAllShape(long size, int ranks, int windowParam, String slotsParam) {
        if (windowParam < 1 || windowParam > MAX_WINDOW) {
            throw new BenchmarkSetupException("window=" + windowParam + ": must be from 1 to " + MAX_WINDOW + " rounds");
        }
        this.size = size;
        this.ranks = ranks;
        this.slots = Footprint.slots(slotsParam, windowParam, Footprint.bufferBytes(ranks, size));
        this.window = Footprint.roundsInFlight(windowParam, slots);
    }

    /** Bytes this rank sends to other ranks per invocation: size x (N-1) x the rounds of a window. */
    @Override
    public long bytesPerInvocation() {
        return size * (ranks - 1) * window;
    }

    /** Size x N per round: nccl-tests' algbw numerator. */
    @Override
    public long algbwBytesPerInvocation() {
        return size * ranks * window;
    }

    /** One peer's size per round: the seed's all2all Gbps. */
    @Override
    public long seedBytesPerInvocation() {
        return size * window;
    }

    /** The seed's all2all unit: one round, at window 1 (pipelined rounds have no round time of their own). */
    @Override
    public SeedRound seedRound() {
        return window == 1 ? new SeedRound("round_us", 1) : null;
    }

    /** One all-to-all is one latency, whatever the rank count. */
    @Override
    public int transfersPerInvocation() {
        return 1;
    }

    @Override
    public boolean invocationIsLatency() {
        return window == 1;
    }

    @Override
    public int slots() {
        return slots;
    }

    @Override
    public int roundsInFlight() {
        return window;
    }
}

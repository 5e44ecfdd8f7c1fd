package io.efabench.harness.engine;

import java.lang.foreign.MemorySegment;
import java.util.List;

import io.efabench.fabric.ChannelOps;
import io.efabench.fabric.Completion;
import io.efabench.fabric.MemoryRegion;

/**
 * What the engine needs of the trial it runs in, asked through an interface it owns: the trial
 * implements it, unit tests pass a fake (no processes, no provider). Channel c of this rank talks
 * to channel c of every peer (rail-aligned).
 */
public interface EngineSite {
    int rank();

    int size();

    int channelCount();

    /** This rank's channel {@code c}. */
    ChannelOps channel(int c);

    /** fi_addr of rank {@code r}'s channel {@code c}, as inserted into this rank's channel {@code c}. */
    long peer(int r, int c);

    /** The CQ entries this rank's polling thread reads into. */
    Completion completion();

    /** Largest write carrying data that channel {@code c} posts in one operation. */
    long maxWrite(int c);

    /** A fresh deadline for one wait of the rounds (the trial's timeout; stalls announced). */
    Deadline deadline();

    /** The number of rounds the leader ran in this iteration once it signalled END, else -1. */
    long endedRounds();

    /** A buffer of {@code bytes} that lives as long as the trial. */
    MemorySegment allocate(long bytes);

    /** {@code buf} registered on channel {@code c}, closed with the trial. */
    MemoryRegion register(int c, MemorySegment buf);

    /** Every rank's {@code mine}, in rank order (a collective: every rank calls it). */
    List<byte[]> allgather(String what, byte[] mine);

    /** The engine holds {@code held} operations a channel where the plan wanted {@code wanted}: it paces. */
    void notePaced(int wanted, int held);

    /** {@code witness} is asked what it holds when a wait fails or stalls. */
    void watch(StallWitness witness);
}

package io.efabench.harness.trial;

import java.time.Duration;

import io.efabench.fabric.Channel.InjectTarget;
import io.efabench.fabric.MemoryRegion;
import io.efabench.fabric.RemoteRegion;
import io.efabench.harness.Layout;
import io.efabench.harness.MemoryKind;
import io.efabench.harness.MetricsSink;
import io.efabench.harness.engine.Deadline;
import io.efabench.harness.engine.EngineSite;
import io.efabench.harness.memory.TrialBuffer;

/**
 * What a workload's rounds (Write, Read, AllToAll, SendRecv) need of the trial they run in, beyond
 * what the engine asks ({@link EngineSite}): payload buffers, the exchange of their regions, the
 * group's barrier, END and verdicts, and the checks and link speeds of its channels.
 * {@link FabricTrial} implements it; unit tests run the workloads' real round logic against a fake
 * (ranks as threads of one JVM, no process, no provider).
 */
public interface RoundsSite extends EngineSite {
    /** A host or device payload buffer (the trial's memory kind) of {@code bytes}, registered on every channel. */
    TrialBuffer buffer(long bytes);

    MemoryKind memory();

    /** Every rank's regions (as registered per channel): {@code result[rank][channel]}. A collective. */
    RemoteRegion[][] exchange(String what, MemoryRegion[] local);

    /** Barrier whose deadline covers a peer still running out its iteration time. */
    void barrier(String what);

    /**
     * The end of a checked round: every rank passes null (fine) or its one-line failure; every
     * rank throws the first failure, so all fail together with the same text.
     */
    void verdicts(String what, String mine);

    /** Leader: this iteration ran {@code rounds} rounds (END); followers read it as {@link #endedRounds}. */
    void signalEnd(long rounds);

    /** The deadline of a wait that may span a peer's whole iteration: the timeout plus the iteration time. */
    Duration waitBudget();

    /** A deadline of {@code budget} that announces no stall (a wait that may rightly last an iteration). */
    Deadline deadline(Duration budget);

    /** Largest write {@link InjectTarget#tryInject} takes on channel {@code c}; 0 where none. */
    long injectRmaSize(int c);

    /** Where injected writes from {@code src} to rank {@code peer}'s {@code target} go on channel {@code c}. */
    InjectTarget injectTarget(int c, MemoryRegion src, int peer, RemoteRegion target);

    /** Refuses, in one line, channels whose writes cannot carry the immediates a target counts. */
    void requireImmediates();

    /** Refuses, in one line, a message of {@code bytes} that a channel cannot send in one. */
    void requireSendable(long bytes);

    /** Link speed in Gbps of the distinct NICs behind the given channels; 0 when any is unknown. */
    double linkGbps(int... channelIndexes);

    /** The seed's BusBW(%) denominator for {@code layout}. */
    double seedLinkGbps(Layout layout);

    /** Every rank's host name, in rank order (ranks on one host share its NICs). */
    java.util.List<String> hosts();

    /** The benchmark's name, for failure lines. */
    String benchmark();

    /** Where measuring code reports what {@code MetricsProfiler} turns into metrics. */
    MetricsSink metrics();
}

package io.efabench.harness.trial;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;

import io.efabench.fabric.Channel;
import io.efabench.fabric.Channel.InjectTarget;
import io.efabench.fabric.Completion;
import io.efabench.fabric.Discovery;
import io.efabench.fabric.FabricException;
import io.efabench.fabric.MemlockBudget;
import io.efabench.fabric.MemoryRegion;
import io.efabench.fabric.NicInfo;
import io.efabench.fabric.NicPath;
import io.efabench.fabric.RemoteRegion;
import io.efabench.rank.RankEnv;
import io.efabench.rank.RankException;
import io.efabench.rank.RankGroup;
import io.efabench.topology.NicCounters;
import io.efabench.topology.Sysfs;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.Layout;
import io.efabench.harness.MemoryKind;
import io.efabench.harness.MetricsSink;
import io.efabench.harness.Sizes;
import io.efabench.harness.TestHooks;
import io.efabench.harness.engine.Deadline;
import io.efabench.harness.engine.Immediate;
import io.efabench.harness.engine.StallWitness;
import io.efabench.harness.memory.TrialBuffer;
import io.efabench.harness.memory.TrialGpu;

/**
 * One trial of a fabric benchmark on this rank: the rank group, the channels (one endpoint
 * each, rail-aligned: local channel c talks to channel c of every peer), their peers'
 * addresses, and the bookkeeping of the leader-driven round protocol (docs/DESIGN.md).
 * Opened in {@code @Setup(Level.Trial)}, closed in {@code @TearDown(Level.Trial)}.
 */
public final class FabricTrial implements RoundsSite, AutoCloseable {
    public final RankGroup group;
    public final int rank;
    public final int size;
    public final Duration timeout;
    private Discovery discovery;
    private Channel[] channels;
    /** fi_addr of rank r's channel c, as inserted into local channel c's AV: {@code peer[r][c]}. */
    private long[][] peer;
    private NicInfo[] nicOf;
    /** Both ends of every channel to every peer, for failure and stall lines; null until the addresses are swapped. */
    private TrialPaths paths;
    NicPath path;
    TrialLocality locality;
    private final Completion completion = new Completion();
    /** More local ranks than CPUs: waits yield (TrialChecks.yieldWhenIdle). */
    private boolean yieldWhenIdle;
    /** This rank's GPU: always with device buffers, and on a machine with a GPU to pin host buffers; else null. */
    private TrialGpu gpu;
    final MemoryKind memory;
    private final Arena arena = Arena.ofShared();
    private final TrialResources resources = new TrialResources();
    final List<TrialBuffer> buffers = new ArrayList<>();
    final RankEnv env;
    final String benchmark;
    final String config;
    /** This trial's provenance fragments carry it, so a later trial of the run cannot overwrite them. */
    final String trialTag;
    /** The iteration count, its time and the leader's END. */
    public final TrialIterations iterations;
    /** This node's EC2 instance type, which confirms efa's link speeds (or not). */
    final io.efabench.topology.InstanceType instance = io.efabench.topology.InstanceType.of(Sysfs.fromEnvironment());
    /** Rank 0 on efa/verbs with sysfs byte counters: nic_bytes_ratio per iteration; else null. */
    NicCounters nicCounters;
    /** What this trial reports to {@code MetricsProfiler}; the fork's sink from the trial's start. */
    private final MetricsSink metrics = MetricsSink.open();

    private FabricTrial(TrialIdentity id, TrialSpec spec) {
        benchmark = id.benchmark();
        this.memory = spec.memory();
        config = benchmark + (spec.config() != null ? " config=" + spec.config() : "");
        trialTag = id.tag();
        if (id.threads() != 1) {
            throw new BenchmarkSetupException(benchmark + " runs one thread per rank; drop -t " + id.threads());
        }
        resources.push(TrialResources.Tier.MEMORY, arena);
        long opened = System.nanoTime();
        int requested = TrialChecks.parseChannels(spec.channels());
        TrialJoin joined = TrialJoin.join(benchmark, spec.minRanks(), id.key(),
                "start it with ./run-jmh.sh --ranks N or under srun/mpirun/torchrun", id.env(), id.timeout());
        env = joined.env();
        timeout = joined.timeout();
        group = joined.group();
        joinedNanos = System.nanoTime() - opened;
        openedAt = opened;
        rank = group.rank();
        size = group.size();
        iterations = new TrialIterations(group);
        TrialOpening.identifyOnCallBoard(group, timeout);
        try {
            gpu = TrialOpening.gpu(memory, env, timeout, config, rank, spec.gpu());
            if (gpu != null) {
                resources.push(TrialResources.Tier.GPU, gpu);
            }
            path = spec.path() != null ? NicPath.parse(spec.path(), "path") : NicPath.fromEnvironment();
            discovery = resources.push(TrialResources.Tier.FABRIC, TrialOpening.discover(memory == MemoryKind.DEVICE, path,
                    config, spec.nic()));
            TrialChecks.requireSignalChaining(discovery.provider());
            // Before the channels and buffers exist: binding must precede their first touch.
            locality = TrialLocality.establish(group, timeout, discovery.nics(), gpu != null ? gpu.device.pciBusId() : null,
                    Sysfs.system());
            yieldWhenIdle = TrialChecks.yieldWhenIdle(locality.oversubscribed());
            List<NicInfo> mine = spec.nic() == null ? locality.nics : discovery.nics();
            int n = requested > 0 ? requested : mine.size();
            channels = new Channel[n];
            nicOf = new NicInfo[n];
            for (int c = 0; c < n; c++) {
                nicOf[c] = mine.get(c % mine.size());
                channels[c] = resources.push(TrialResources.Tier.ENDPOINT, Channel.open(discovery, nicOf[c], 4096));
            }
            TrialExchange.Peers peers = TrialExchange.addresses(group, channels, locality.hosts, timeout);
            peer = peers.addresses();
            String[] myNics = new String[n];
            for (int c = 0; c < n; c++) {
                myNics[c] = nicOf[c].domainName();
            }
            paths = new TrialPaths(group, myNics, peers.nics(), mine.size(), spec.rail(), Sysfs.fromEnvironment(), timeout);
            // A node cut off runs out in an allgather as often as in a fabric wait: either line names its NICs.
            group.explainTimeoutsWith(paths::report);
            if (TestHooks.integer("EFABENCH_TEST_EQ_ERROR") == 1) {
                channels[0].reportProviderErrorForTest(5 /* EIO */, 4102);
            }
            nicCounters = rank == 0 ? TrialOpening.nicCounters(discovery.provider(), nicOf) : null;
        } catch (RuntimeException e) {
            String errors = TrialFailure.providerErrors(channels); // before the channels close
            group.abort((e.getMessage() != null ? e.getMessage() : e.toString()) + errors);
            resources.closeAll();
            throw e instanceof FabricException || !errors.isEmpty() ? new BenchmarkSetupException(e.getMessage() + errors) : e;
        }
        if (rank != 0 && id.jmh()) {
            System.out.println("# efabench: rank " + rank + " of " + size + " is a FOLLOWER: its JMH scores only mirror"
                    + " rank 0's rounds and are not results");
        }
    }

    /** Forms the group and opens the channels of the trial {@code spec} asks for. */
    public static FabricTrial open(BenchmarkParams bp, TrialSpec spec) {
        return open(TrialIdentity.of(bp), spec);
    }

    /** As {@link #open(BenchmarkParams, TrialSpec)} for a trial outside JMH (the sweep), which names itself. */
    public static FabricTrial open(TrialIdentity id, TrialSpec spec) {
        try {
            return new FabricTrial(id, spec);
        } catch (RankException | FabricException e) {
            throw new BenchmarkSetupException(e.getMessage());
        }
    }

    /** Link speed in Gbps of the distinct NICs behind the given channels; 0 when any is unknown. */
    @Override
    public double linkGbps(int... channelIndexes) {
        List<NicInfo> used = new ArrayList<>();
        for (int c : channelIndexes) {
            used.add(nicOf[c]);
        }
        return TrialChecks.linkGbps(used, TrialChecks.linkOverrideGbps(), instance);
    }

    /**
     * The seed's BusBW(%) denominator for a layout: one NIC's link for Single, every channel's
     * NIC for Multi and RoundRobin (the seed divided RoundRobin by all of the rank's NICs, used or not).
     */
    @Override
    public double seedLinkGbps(Layout layout) {
        if (layout == Layout.SINGLE) {
            return linkGbps(0);
        }
        return linkGbps(java.util.stream.IntStream.range(0, channels.length).toArray());
    }

    /** Closes {@code resource} with the trial (in reverse order of ownership). */
    public void own(AutoCloseable resource) {
        resources.push(TrialResources.Tier.OWNED, resource);
    }

    /** Closes {@code mapping} (other ranks' memory mapped here) before the end-of-trial barrier. */
    public void ownPeerMapping(AutoCloseable mapping) {
        resources.push(TrialResources.Tier.PEER_MAPPINGS, mapping);
    }

    /** Stops {@code worker} (a thread driving the channels) first when the trial closes, before the endpoints. */
    public void ownWorker(AutoCloseable worker) {
        resources.push(TrialResources.Tier.WORKER, worker);
    }

    /**
     * Largest write carrying data that {@code channel} posts in one operation: the endpoint's RMA
     * limit and at most {@link Channel#MAX_WRITE} ({@link Channel#maxWrite}).
     */
    @Override
    public long maxWrite(int channel) {
        return channels[channel].maxWrite();
    }

    /** Allocates a page-aligned buffer owned by this trial. */
    @Override
    public MemorySegment allocate(long bytes) {
        try {
            return arena.allocate(bytes, 4096);
        } catch (OutOfMemoryError e) {
            throw new BenchmarkSetupException("rank " + rank + ": cannot allocate " + Sizes.label(bytes) + " of host memory");
        }
    }

    /**
     * A payload buffer of the trial's memory kind, registered on every channel and owned by
     * this trial.
     */
    @Override
    public TrialBuffer buffer(long bytes) {
        // efa and verbs pin registered host pages, once per channel (each has its own domain).
        if (memory == MemoryKind.HOST && NicPath.isNicProvider(discovery.provider())) {
            try {
                MemlockBudget.require(Math.multiplyExact(bytes, (long) channels.length));
            } catch (FabricException e) {
                throw new BenchmarkSetupException("rank " + rank + ": " + e.getMessage());
            }
        }
        TrialBuffer b = memory == MemoryKind.DEVICE
                ? TrialBuffer.device(bytes, gpu, channels, rank)
                : TrialBuffer.host(arena, bytes, gpu, channels, rank);
        buffers.add(resources.push(TrialResources.Tier.BUFFER, b));
        return b;
    }

    @Override
    public MemoryKind memory() {
        return memory;
    }

    /** Every rank's regions (as registered per channel): {@code result[rank][channel]}. */
    @Override
    public RemoteRegion[][] exchange(String what, MemoryRegion[] local) {
        return TrialExchange.regions(group, what, local, timeout);
    }

    /**
     * Iteration start: remembers the iteration time (for barrier deadlines) and lines up all
     * ranks; {@code RoundDriver.beginIteration} then runs the warm round.
     */
    void startIteration(IterationParams ip) {
        long n = iterations.start(ip);
        group.barrier("start of iteration " + n, waitBudget());
    }

    /**
     * {@link #startIteration} for a driver outside JMH (the sweep): an iteration of {@code length},
     * its start barrier; the driver then runs the side's warm round, its rounds and its end.
     */
    public void startIteration(Duration length) {
        long n = iterations.start(length);
        group.barrier("start of iteration " + n, waitBudget());
    }

    /** The provider discovery this trial's channels came from. */
    public Discovery discovery() {
        return discovery;
    }

    /** This rank's channel {@code c} (0 .. {@link #channelCount()} - 1). */
    @Override
    public Channel channel(int c) {
        return channels[c];
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public Completion completion() {
        return completion;
    }

    @Override
    public long endedRounds() {
        return iterations.endedRounds();
    }

    @Override
    public MemoryRegion register(int c, MemorySegment buf) {
        MemoryRegion mr = channels[c].register(buf);
        own(mr);
        return mr;
    }

    @Override
    public List<byte[]> allgather(String what, byte[] mine) {
        return group.allgather(what, mine, timeout);
    }

    @Override
    public void watch(StallWitness witness) {
        paths.watch(witness);
    }

    @Override
    public int channelCount() {
        return channels.length;
    }

    /** A copy of this rank's channels, in channel order. */
    public Channel[] channels() {
        return channels.clone();
    }

    /** fi_addr of rank {@code r}'s channel {@code c}, as inserted into this rank's channel {@code c}. */
    @Override
    public long peer(int r, int c) {
        return peer[r][c];
    }

    /** This rank's GPU: always with device buffers, and on a machine with a GPU to pin host buffers; else null. */
    public TrialGpu gpu() {
        return gpu;
    }

    /** Where this trial's measuring code reports what {@code MetricsProfiler} turns into metrics. */
    @Override
    public MetricsSink metrics() {
        return metrics;
    }

    /** The deadline of a wait that may span a peer's whole iteration: the timeout plus the iteration time. */
    @Override
    public java.time.Duration waitBudget() {
        return timeout.plus(iterations.time());
    }

    @Override
    public void signalEnd(long rounds) {
        iterations.signalEnd(rounds);
    }

    @Override
    public long injectRmaSize(int c) {
        return channels[c].injectRmaSize();
    }

    @Override
    public InjectTarget injectTarget(int c, MemoryRegion src, int peerRank, RemoteRegion target) {
        return channels[c].injectTarget(src, peer[peerRank][c], target);
    }

    @Override
    public void requireImmediates() {
        Immediate.requireCarried(channels, size);
    }

    @Override
    public void requireSendable(long bytes) {
        for (Channel c : channels) {
            String refusal = TrialChecks.sendTooLarge(bytes, c.maxSendSize(), c.nic());
            if (refusal != null) {
                throw new BenchmarkSetupException(refusal);
            }
        }
    }

    /** Barrier whose deadline covers a peer still running out its JMH iteration time. */
    @Override
    public void barrier(String what) {
        group.barrier(what, waitBudget());
    }

    /**
     * Exchanges verdicts of a checked round: every rank passes null (fine) or its one-line
     * failure; every rank throws the first failure, so all fail together with the same text.
     */
    @Override
    public void verdicts(String what, String mine) {
        Verdicts.exchange(group, what, mine, waitBudget(), metrics);
    }

    /**
     * Marks the group failed for everyone (best effort) and returns the exception to throw: one
     * line, naming the peer of a fabric error and the providers' own errors ({@link TrialFailure}).
     */
    public RuntimeException fail(RuntimeException e) {
        return fail(e, -1);
    }

    /** As {@link #fail(RuntimeException)}; {@code peerHint} is the rank the failed wait was for, or -1. */
    RuntimeException fail(RuntimeException e, int peerHint) {
        return TrialFailure.fail(e, peerHint, group, channels, paths);
    }

    /** How long forming the rank group took (the rendezvous: every rank started and joined), and when the trial began. */
    final long joinedNanos;
    final long openedAt;

    /** "wanted / held": writes the plan would have in flight per channel and what the engine holds (paced); null when not paced. */
    String paced;

    /**
     * The engine holds {@code held} writes in flight per channel where the plan (window x targets
     * x chunks) would have {@code wanted}: it paces, posting the rest as completions come back.
     * Said once, by rank 0, and in provenance as writes_in_flight.
     */
    @Override
    public void notePaced(int wanted, int held) {
        if (paced == null && rank == 0) {
            System.out.println("# efabench: " + config + ": the window would put " + wanted + " operations in flight on a channel"
                    + " (window x targets x chunks); the engine holds at most " + held + " and posts the rest as completions"
                    + " free room (paced)");
        }
        paced = wanted + " planned, " + held + " held (paced)";
    }

    /** A deadline of {@link #timeout} for one wait of this trial's rounds; a stall past a quarter of it is announced. */
    @Override
    public Deadline deadline() {
        return new Deadline(group, timeout, paths, yieldWhenIdle);
    }

    /**
     * A deadline of {@code budget} for a wait that may rightly last a peer's whole iteration (its
     * budget is {@link #waitBudget}): no stall is announced, since a quarter of it passing is no sign of
     * a fault.
     */
    @Override
    public Deadline deadline(Duration budget) {
        return new Deadline(group, budget, null, yieldWhenIdle);
    }

    /** Whether waits give the CPU away (this process's ranks outnumber its CPUs): see {@link Deadline}. */
    public boolean yieldsWhenIdle() {
        return yieldWhenIdle;
    }

    /** Rank 0's NIC byte counters (efa, verbs: sysfs), or null where there are none. */
    public NicCounters nicCounters() {
        return nicCounters;
    }

    /** Both ends of every channel, and the line a stalled wait adds ({@link TrialPaths}). */
    public TrialPaths paths() {
        return paths;
    }

    @Override
    public String benchmark() {
        return benchmark;
    }

    @Override
    public List<String> hosts() {
        return locality.hosts;
    }

    @Override
    public void close() {
        try {
            resources.close(TrialResources.Tier.PEER_MAPPINGS); // every rank unmaps before anyone frees
            group.barrier("end of trial", waitBudget());
        } finally {
            resources.closeAll();
            group.close();
            // The metrics sink stays the fork's current one: JMH runs profilers' afterIteration
            // for the last iteration after the trial teardown.
        }
    }
}

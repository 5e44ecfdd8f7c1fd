package io.efabench.harness;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;

import io.efabench.fabric.Channel;
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
import io.efabench.report.Provenance;
import io.efabench.topology.NicCounters;
import io.efabench.topology.Sysfs;

/**
 * One trial of a fabric benchmark on this rank: the rank group, the channels (one endpoint
 * each, rail-aligned: local channel c talks to channel c of every peer), their peers'
 * addresses, and the bookkeeping of the leader-driven round protocol (docs/DESIGN.md).
 * Opened in {@code @Setup(Level.Trial)}, closed in {@code @TearDown(Level.Trial)}.
 */
public final class FabricTrial implements AutoCloseable {
    /** Signal slot carrying END = (iteration << 40) | rounds the leader ran in it. */
    private static final int END_SLOT = 0;
    private static final long ROUNDS_MASK = (1L << 40) - 1;

    public final RankGroup group;
    public final int rank;
    public final int size;
    public final Duration timeout;
    public Discovery discovery;
    public Channel[] channels;
    /** fi_addr of rank r's channel c, as inserted into local channel c's AV: {@code peer[r][c]}. */
    public long[][] peer;
    private NicInfo[] nicOf;
    private NicPath path;
    private TrialLocality locality;
    public final Completion completion = new Completion();
    /** This rank's GPU: always with device buffers, and on a machine with a GPU to pin host buffers; else null. */
    public TrialGpu gpu;
    private final MemoryKind memory;
    private final Arena arena = Arena.ofShared();
    private final List<AutoCloseable> owned = new ArrayList<>();
    /** Threads that drive the channels (the proxy): stopped before anything closes. */
    private final List<AutoCloseable> workers = new ArrayList<>();
    private final List<TrialBuffer> buffers = new ArrayList<>();
    private final RankEnv env;
    private final String benchmark;
    private final String config;
    private Duration iterationTime = Duration.ZERO;
    private long iteration;
    /** Rank 0 on efa/verbs with sysfs byte counters: nic_bytes_ratio per iteration; else null. */
    private NicCounters nicCounters;
    private long nicBytesAtStart = -1;
    private long invocations;

    private FabricTrial(BenchmarkParams bp, String channelsParam, int minRanks, MemoryKind memory) {
        benchmark = simpleName(bp.getBenchmark());
        this.memory = memory;
        String configParam = bp.getParamsKeys().contains("config") ? bp.getParam("config") : null;
        config = benchmark + (configParam != null ? " config=" + configParam : "");
        if (bp.getThreads() != 1) {
            throw new BenchmarkSetupException(benchmark + " runs one thread per rank; drop -t " + bp.getThreads());
        }
        int requested = parseChannels(channelsParam);
        env = RankEnv.fromEnvironment();
        if (env.worldSize() < minRanks) {
            throw new BenchmarkSetupException(benchmark + " needs at least " + minRanks + " ranks but WORLD_SIZE is "
                    + env.worldSize() + " (source: " + env.source() + "); start it with ./run-jmh.sh --ranks N or under srun/mpirun/torchrun");
        }
        timeout = RankGroup.defaultTimeout();
        group = RankGroup.join(env, TrialKey.of(bp), timeout);
        rank = group.rank();
        size = group.size();
        try {
            gpu = openGpu();
            path = bp.getParamsKeys().contains("path") ? NicPath.parse(bp.getParam("path"), "path") : NicPath.fromEnvironment();
            discovery = discover(memory == MemoryKind.DEVICE);
            requireSignalChaining(discovery.provider());
            // Before the channels and buffers exist: binding must precede their first touch.
            locality = TrialLocality.establish(group, timeout, discovery.nics(), gpu != null ? gpu.device.pciBusId() : null,
                    Sysfs.system());
            Deadline.yieldWhenIdle(yieldWhenIdle(locality.oversubscribed()));
            List<NicInfo> mine = locality.nics;
            int n = requested > 0 ? requested : mine.size();
            channels = new Channel[n];
            nicOf = new NicInfo[n];
            for (int c = 0; c < n; c++) {
                nicOf[c] = mine.get(c % mine.size());
                channels[c] = Channel.open(discovery, nicOf[c], 4096);
            }
            peer = exchangeAddresses();
            // Test hook EFABENCH_TEST_SYSFS_ROOT: the counters of a fixture sysfs tree, for any provider
            // (tcp and shm have no RDMA counters), so a test sees nic_bytes_ratio reach the results.
            String counterRoot = System.getenv("EFABENCH_TEST_SYSFS_ROOT");
            if (rank == 0 && (counterRoot != null || NicPath.isNicProvider(discovery.provider()))) {
                nicCounters = NicCounters.of(counterRoot != null ? new Sysfs(java.nio.file.Path.of(counterRoot)) : Sysfs.system(),
                        java.util.Arrays.stream(nicOf).map(NicInfo::domainName).distinct().toList()).orElse(null);
            }
        } catch (RuntimeException e) {
            group.abort(e.getMessage() != null ? e.getMessage() : e.toString());
            closeQuietly();
            throw e instanceof FabricException ? new BenchmarkSetupException(e.getMessage()) : e;
        }
        if (rank != 0) {
            System.out.println("# efabench: rank " + rank + " of " + size + " is a FOLLOWER: its JMH scores only mirror"
                    + " rank 0's rounds and are not results");
        }
    }

    /**
     * Busy-polling waits yield ({@link Deadline}) when this host's ranks outnumber the CPUs they
     * may run on together ({@link TrialLocality#oversubscribed}); EFABENCH_YIELD=0/1 overrides.
     * Recorded in provenance.
     */
    static boolean yieldWhenIdle(boolean oversubscribed) {
        String v = System.getenv("EFABENCH_YIELD");
        if (v != null && !v.isBlank()) {
            return v.trim().equals("1");
        }
        return oversubscribed;
    }

    /**
     * Device buffers need this rank's GPU; host buffers are page-locked on it where a GPU is
     * present, like the seed's pinned buffers. Ranks of a node share GPUs when there are fewer
     * GPUs than local ranks (provenance says so).
     */
    private TrialGpu openGpu() {
        if (memory == MemoryKind.DEVICE) {
            try {
                return TrialGpu.open(env, TrialGpu.Sharing.ALLOWED, timeout);
            } catch (BenchmarkSetupException | io.efabench.cuda.CudaException e) {
                throw new BenchmarkSetupException(config + " moves GPU memory, but rank " + rank + " has no usable GPU: "
                        + e.getMessage());
            }
        }
        return TrialGpu.present() ? TrialGpu.open(env, TrialGpu.Sharing.ALLOWED, timeout) : null;
    }

    /** fi_getinfo for this trial; FI_HMEM is asked for only when device buffers are used. */
    private Discovery discover(boolean hmem) {
        try {
            return Discovery.discover(hmem, path);
        } catch (FabricException e) {
            if (!hmem) {
                throw e;
            }
            String provider = System.getenv("FI_PROVIDER");
            throw new BenchmarkSetupException(config + " moves GPU memory, but provider "
                    + (provider == null || provider.isBlank() ? "(any)" : provider)
                    + " offers no FI_HMEM (device memory) with FI_EP_RDM and FI_MSG|FI_RMA here; needs a libfabric built"
                    + " with CUDA and a provider with FI_HMEM (efa, shm; see docs/DESIGN.md) (" + e.getMessage() + ")");
        }
    }

    /**
     * libfabric's shm provider (also loaded by efa for peers on the same node) installs its
     * own SIGSEGV/SIGBUS handlers, which replace the JVM's and crash it at the next implicit
     * null check. Preloading the JDK's libjsig.so chains the handlers; run-jmh.sh does it.
     */
    private static void requireSignalChaining(String provider) {
        String preload = System.getenv("LD_PRELOAD");
        boolean chained = preload != null && preload.contains("libjsig");
        if (!chained && (provider.equals("shm") || provider.equals("efa"))
                && !"1".equals(System.getenv("EFABENCH_ALLOW_NO_JSIG"))) {
            throw new BenchmarkSetupException("provider " + provider + " replaces the JVM's signal handlers; run with"
                    + " LD_PRELOAD=$JAVA_HOME/lib/libjsig.so (run-jmh.sh sets it)");
        }
    }

    /**
     * Forms the group and opens the channels; {@code channelsParam} is "auto" or a positive
     * count; {@code memory} is the kind of the benchmark's payload buffers.
     */
    public static FabricTrial open(BenchmarkParams bp, String channelsParam, int minRanks, MemoryKind memory) {
        try {
            return new FabricTrial(bp, channelsParam, minRanks, memory);
        } catch (RankException | FabricException e) {
            throw new BenchmarkSetupException(e.getMessage());
        }
    }

    static int parseChannels(String p) {
        if (p == null || p.equals("auto")) {
            return 0;
        }
        try {
            int n = Integer.parseInt(p.trim());
            if (n >= 1 && n <= 64) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // falls through to the one-line error
        }
        throw new BenchmarkSetupException("channels=" + p + ": must be 'auto' or a whole number from 1 to 64");
    }

    private static double linkOverrideGbps() {
        String v = System.getenv("FABRIC_LINK_GBPS");
        if (v == null || v.isBlank()) {
            return 0;
        }
        try {
            double g = Double.parseDouble(v.trim());
            if (g > 0 && !Double.isInfinite(g)) {
                return g;
            }
        } catch (NumberFormatException ignored) {
            // one-line error below
        }
        throw new BenchmarkSetupException("FABRIC_LINK_GBPS=" + v + ": must be a positive number (Gbps per NIC)");
    }

    /** Link speed in Gbps of the distinct NICs behind the given channels; 0 when any is unknown. */
    public double linkGbps(int... channelIndexes) {
        List<NicInfo> used = new ArrayList<>();
        for (int c : channelIndexes) {
            used.add(nicOf[c]);
        }
        return linkGbps(used, linkOverrideGbps());
    }

    /**
     * Sum over the distinct NICs of {@code nics} of {@code overrideGbps} (FABRIC_LINK_GBPS, per
     * NIC, replacing what the provider reports) when positive, else of the reported speed where
     * plausible ({@link NicInfo#plausibleLinkGbps()}); 0 (unknown: no busbw_pct) when any is not.
     */
    static double linkGbps(List<NicInfo> nics, double overrideGbps) {
        Set<String> seen = new LinkedHashSet<>();
        double sum = 0;
        for (NicInfo nic : nics) {
            if (seen.add(nic.domainName())) {
                double g = overrideGbps > 0 ? overrideGbps : nic.plausibleLinkGbps();
                if (g <= 0) {
                    return 0;
                }
                sum += g;
            }
        }
        return sum;
    }

    private long[][] exchangeAddresses() {
        ByteBuffer mine = encodeChunks(channels.length, c -> channels[c].name());
        List<byte[]> all = group.allgather("fabric addresses", mine.array(), timeout);
        long[][] addr = new long[size][];
        for (int r = 0; r < size; r++) {
            byte[][] names = decodeChunks(all.get(r));
            if (names.length != channels.length) {
                throw new BenchmarkSetupException("rank " + r + " opened " + names.length + " channels but rank " + rank
                        + " opened " + channels.length + "; use the same -p channels on every rank");
            }
            addr[r] = new long[channels.length];
            if (r == rank) {
                continue;
            }
            for (int c = 0; c < channels.length; c++) {
                addr[r][c] = channels[c].insertPeer(names[c]);
            }
        }
        return addr;
    }

    /** Closes {@code resource} with the trial (in reverse order of ownership). */
    public void own(AutoCloseable resource) {
        owned.add(resource);
    }

    /** Stops {@code worker} (a thread driving the channels) first when the trial closes, before the endpoints. */
    public void ownWorker(AutoCloseable worker) {
        workers.add(worker);
    }

    /** Largest message the NIC behind {@code channel} takes in one operation. */
    public long maxMessageSize(int channel) {
        return nicOf[channel].maxMsgSize();
    }

    /**
     * Refuses two-sided messages of {@code bytes} that some channel's endpoint cannot send in one
     * message ({@link Channel#maxSendSize()}: on efa-direct the device MTU, about 8 KiB), with one
     * line; SendRecv calls it once its size is known.
     */
    public void requireSendFits(long bytes) {
        for (Channel c : channels) {
            String refusal = sendTooLarge(bytes, c.maxSendSize(), c.nic());
            if (refusal != null) {
                throw fail(new BenchmarkSetupException(refusal)); // every rank fails with this line
            }
        }
    }

    /** The one-line refusal of a {@code bytes} message on {@code nic} whose sends stop at {@code max}, else null. */
    static String sendTooLarge(long bytes, long max, NicInfo nic) {
        if (max <= 0 || bytes <= max) {
            return null;
        }
        return "size=" + Sizes.format(bytes) + " is larger than the " + max + " bytes one message takes on " + nic.provider()
                + " " + nic.domainName() + " (fabric " + nic.fabricName() + "); use sizes up to " + Sizes.format(max)
                + (nic.fabricName().equals("efa-direct") ? " or the efa fabric (unset EFABENCH_FABRIC)" : "");
    }

    /** Allocates a page-aligned buffer owned by this trial. */
    public MemorySegment allocate(long bytes) {
        try {
            return arena.allocate(bytes, 4096);
        } catch (OutOfMemoryError e) {
            throw new BenchmarkSetupException("rank " + rank + ": cannot allocate " + Sizes.format(bytes) + " of host memory");
        }
    }

    /**
     * A payload buffer of the trial's memory kind, registered on every channel and owned by
     * this trial.
     */
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
        buffers.add(b);
        return b;
    }

    public MemoryKind memory() {
        return memory;
    }

    /** Every rank's regions (as registered per channel): {@code result[rank][channel]}. */
    public RemoteRegion[][] exchange(String what, MemoryRegion[] local) {
        ByteBuffer mine = encodeChunks(local.length, c -> local[c].remote().encode());
        List<byte[]> all = group.allgather(what, mine.array(), timeout);
        RemoteRegion[][] out = new RemoteRegion[size][];
        for (int r = 0; r < size; r++) {
            byte[][] chunks = decodeChunks(all.get(r));
            out[r] = new RemoteRegion[chunks.length];
            for (int c = 0; c < chunks.length; c++) {
                out[r][c] = RemoteRegion.decode(chunks[c]);
            }
        }
        return out;
    }

    /**
     * Iteration setup: remembers the iteration time (for barrier deadlines), lines up all ranks,
     * then runs one untimed round ({@link Rounds#leaderWarmRound}): a rank leaves the barrier at
     * its own pace, and the first timed round would otherwise wait for the slowest one to get
     * back into its polling loop (in {@code -bm ss} with small batches that is most of the score).
     */
    public void beginIteration(IterationParams ip, Rounds r) {
        iteration++;
        long ms = ip.getTime().convertTo(java.util.concurrent.TimeUnit.MILLISECONDS);
        iterationTime = Duration.ofMillis(Math.max(0, ms));
        group.barrier("start of iteration " + iteration, timeout.plus(iterationTime));
        try {
            if (rank == 0) {
                r.leaderWarmRound();
            } else {
                r.followerWarmRound();
            }
        } catch (RuntimeException e) {
            throw fail(e, r.peerInFlight());
        }
        invocations = 0;
        nicBytesAtStart = nicCounters != null ? nicCounters.bytes() : -1;
    }

    public long iteration() {
        return iteration;
    }

    /** Leader: announces that this iteration's rounds are over and how many there were. */
    public void signalEnd(long rounds) {
        group.signal(END_SLOT, (iteration << 40) | (rounds & ROUNDS_MASK));
    }

    /**
     * Follower: the number of rounds the leader ran in this iteration, or -1 while it has not
     * signalled END yet. A volatile read; no allocation.
     */
    public long endedRounds() {
        long v = group.signalled(END_SLOT);
        return v != Long.MIN_VALUE && (v >>> 40) == iteration ? v & ROUNDS_MASK : -1;
    }

    /** Barrier whose deadline covers a peer still running out its JMH iteration time. */
    public void barrier(String what) {
        group.barrier(what, timeout.plus(iterationTime));
    }

    /**
     * Exchanges verdicts of a checked round: every rank passes null (fine) or its one-line
     * failure; every rank throws the first failure, so all fail together with the same text.
     */
    public void verdicts(String what, String mine) {
        Verdicts.exchange(group, what, mine, timeout.plus(iterationTime));
    }

    /**
     * Builds the benchmark's rounds on this trial and publishes their traffic for
     * {@link MetricsProfiler}; a failure fails the whole group.
     */
    public <R extends Rounds> R rounds(Function<FabricTrial, R> make) {
        try {
            R r = make.apply(this);
            Traffic.publish(r.bytesPerInvocation(), r.transfersPerInvocation(), r.linkGbps(), rank,
                    r.invocationIsLatency());
            Traffic.publishAlgbwBytes(r.algbwBytesPerInvocation());
            recordProvenance(r);
            return r;
        } catch (RuntimeException e) {
            throw fail(e);
        }
    }

    /** One {@code @Benchmark} invocation: the leader's round on rank 0, a follower's elsewhere. */
    public void round(Rounds r) {
        try {
            if (rank == 0) {
                r.leaderRound();
                invocations++;
            } else {
                r.followerRound();
            }
        } catch (RuntimeException e) {
            throw fail(e, r.peerInFlight());
        }
    }

    /** Iteration teardown: drain, END and the checked round, on the leader's or a follower's side. */
    public void endIteration(Rounds r) {
        if (nicBytesAtStart >= 0) {
            // Read before the drain and the checked round: their bytes are not in the timed count.
            long now = nicCounters.bytes();
            if (now >= 0) {
                Traffic.publishNicBytesRatio(Metrics.nicBytesRatio(now - nicBytesAtStart,
                        invocations * r.nicBytesPerInvocation()));
            }
        }
        try {
            if (rank == 0) {
                r.leaderEndIteration();
            } else {
                r.followerEndIteration();
            }
        } catch (RuntimeException e) {
            throw fail(e, r.peerInFlight());
        }
    }

    /**
     * Marks the group failed for everyone (best effort) and returns the exception to throw. A
     * fabric error says which peer rank its channel led to (where that is certain: the only other
     * rank of two, or rank 0 for a follower, whose rounds talk to rank 0 only) and, after giving
     * the rendezvous up to a second to notice closed sockets, which ranks died: a peer killed
     * mid-round shows on the fabric first ("Transport endpoint is not connected") and on the
     * rendezvous a moment later.
     */
    public RuntimeException fail(RuntimeException e) {
        return fail(e, -1);
    }

    /** As {@link #fail(RuntimeException)}; {@code peerHint} is the rank the failed wait was for, or -1. */
    RuntimeException fail(RuntimeException e, int peerHint) {
        String message = e.getMessage() != null ? e.getMessage() : e.toString();
        if (e instanceof FabricException) {
            int peerRank = peerHint >= 0 ? peerHint : size == 2 ? 1 - rank : rank != 0 ? 0 : -1;
            if (peerRank >= 0 && !message.contains("rank " + peerRank)) {
                message += " (peer: rank " + peerRank + ")";
            }
            message += group.describeLosses(Duration.ofSeconds(1));
        }
        group.abort(message);
        // Rank-group and fabric failures are one-line stories too: no stack trace wall.
        return e instanceof RankException || e instanceof FabricException
                ? new BenchmarkSetupException(message) : e;
    }

    public String benchmark() {
        return benchmark;
    }

    /**
     * Rank 0 records the fabric facts of the run; every rank with a GPU records its GPU (which
     * one, shared or not), and device buffers say how they were registered.
     */
    private void recordProvenance(Rounds rounds) {
        // Every buffer of a trial is registered alike (one provider), so the first one speaks for all.
        String registration = buffers.isEmpty() ? "none" : buffers.get(0).registration().name().toLowerCase(java.util.Locale.ROOT);
        String refusal = buffers.isEmpty() ? null : buffers.get(0).dmaBufRefusal();
        if (gpu != null) {
            Map<String, Object> g = gpu.provenance();
            g.put("rank", rank);
            g.put("memory", memory.name().toLowerCase(java.util.Locale.ROOT));
            if (memory == MemoryKind.DEVICE) {
                g.put("registration", registration);
                if (refusal != null) {
                    g.put("dmabuf_refused", refusal);
                }
            }
            Provenance.record("cuda-rank" + rank, g);
        }
        Provenance.record("locality-rank" + rank, locality.provenance(rank));
        Map<String, Object> footprint = new LinkedHashMap<>();
        footprint.put("benchmark", config);
        footprint.put("slots", rounds.slots());
        footprint.put("rounds_in_flight", rounds.roundsInFlight());
        footprint.put("payload_bytes", buffers.stream().mapToLong(TrialBuffer::byteSize).sum());
        Provenance.record("footprint-rank" + rank, footprint);
        if (rank != 0) {
            return;
        }
        int[] pairs = locality.rankZeroPairs();
        String via = !discovery.pathApplies() ? discovery.provider() + " (no NIC path choice)"
                : path == NicPath.NIC ? "the NIC (FI_REMOTE_COMM only)" : discovery.provider() + "'s own choice (efa: shm)";
        System.out.println("# efabench: path=" + path.label() + ": rank 0's " + (pairs[0] + pairs[1]) + " peer(s): "
                + pairs[0] + " on its node, through " + via + "; " + pairs[1] + " on other nodes");
        if (memory == MemoryKind.DEVICE) {
            System.out.println("# efabench: " + config + ": device buffers on " + gpu.device.name() + " " + gpu.device.pciBusId()
                    + (gpu.shared ? " (shared by the ranks of this node)" : "") + ", registered through "
                    + registration + (refusal == null ? "" : " (DMA-BUF refused: " + refusal + ")"));
        }
        Map<String, Object> facts = new LinkedHashMap<>();
        facts.put("provider", discovery.provider());
        facts.put("libfabric_header", Discovery.headerVersion());
        facts.put("libfabric_runtime", discovery.runtimeVersion());
        facts.put("libfabric_api", Discovery.apiVersion());
        facts.put("memory", memory.name().toLowerCase(java.util.Locale.ROOT));
        if (memory == MemoryKind.DEVICE) {
            facts.put("registration", registration);
        }
        List<Map<String, Object>> nics = new ArrayList<>();
        for (NicInfo nic : discovery.nics()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", nic.nicName());
            m.put("domain", nic.domainName());
            m.put("link_gbps", nic.linkSpeedBps() / 1e9);
            if (nic.plausibleLinkGbps() == 0) {
                m.put("link", "unknown (reported speed outside 1 Gbps..10 Tbps)");
            }
            if (nic.pci() != null) {
                m.put("pci", nic.pci().toString());
            }
            nics.add(m);
        }
        facts.put("nics", nics);
        facts.put("channels", channels.length);
        facts.put("path", path.label());
        facts.put("path_applies", discovery.pathApplies());
        facts.put("pairs_same_node", pairs[0]);
        facts.put("pairs_cross_node", pairs[1]);
        facts.put("nic_counters", nicCounters != null ? nicCounters.describe()
                : "none (tcp/shm, or no RDMA byte counters in sysfs for these NICs): no nic_bytes_ratio");
        facts.put("ranks", size);
        facts.put("waits_yield", Deadline.yieldsWhenIdle());
        facts.put("rank_source", env.source());
        Provenance.record("fabric-" + benchmark, facts);
    }

    @Override
    public void close() {
        try {
            group.barrier("end of trial", timeout.plus(iterationTime));
        } finally {
            closeQuietly();
            group.close();
            // Traffic stays published: JMH runs profilers' afterIteration for the last
            // iteration after the trial teardown.
        }
    }

    /**
     * Endpoints close first (Channel.close: endpoint, then its memory regions, CQ, AV, domain):
     * closing a region under a posted receive is undefined behaviour (fi_efa(7)). The memory
     * behind the regions is freed after that, the GPU context last.
     */
    private void closeQuietly() {
        for (int i = workers.size() - 1; i >= 0; i--) {
            quietly(workers.get(i));
        }
        workers.clear();
        if (channels != null) {
            for (Channel c : channels) {
                if (c != null) {
                    quietly(c);
                }
            }
        }
        for (int i = owned.size() - 1; i >= 0; i--) {
            quietly(owned.get(i));
        }
        owned.clear();
        for (int i = buffers.size() - 1; i >= 0; i--) {
            quietly(buffers.get(i));
        }
        buffers.clear();
        if (discovery != null) {
            quietly(discovery);
        }
        arena.close();
        if (gpu != null) {
            quietly(gpu);
        }
    }

    private static void quietly(AutoCloseable resource) {
        try {
            resource.close();
        } catch (Exception ignored) {
            // closing on the way out of a failure: the first error is the one reported
        }
    }

    private static String simpleName(String benchmark) {
        int m = benchmark.lastIndexOf('.');
        int c = benchmark.lastIndexOf('.', m - 1);
        return benchmark.substring(c + 1, m);
    }

    private interface Chunk {
        byte[] get(int i);
    }

    private static ByteBuffer encodeChunks(int n, Chunk chunk) {
        byte[][] parts = new byte[n][];
        int len = 4;
        for (int i = 0; i < n; i++) {
            parts[i] = chunk.get(i);
            len += 4 + parts[i].length;
        }
        ByteBuffer b = ByteBuffer.allocate(len).putInt(n);
        for (byte[] p : parts) {
            b.putInt(p.length).put(p);
        }
        return b;
    }

    private static byte[][] decodeChunks(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        byte[][] parts = new byte[b.getInt()][];
        for (int i = 0; i < parts.length; i++) {
            parts[i] = new byte[b.getInt()];
            b.get(parts[i]);
        }
        return parts;
    }
}

package io.efabench.harness.ipc;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.efabench.cuda.Cuda;
import io.efabench.cuda.CudaContext;
import io.efabench.cuda.CudaDevice;
import io.efabench.cuda.CudaEvent;
import io.efabench.cuda.CudaException;
import io.efabench.cuda.CudaModule;
import io.efabench.cuda.CudaStream;
import io.efabench.cuda.DeviceBuffer;
import io.efabench.cuda.DeviceMemory;
import io.efabench.cuda.IpcHandle;
import io.efabench.cuda.Kernel;
import io.efabench.cuda.KernelArgs;
import io.efabench.cuda.KernelCompiler;
import io.efabench.cuda.NvLink;
import io.efabench.cuda.PatternKernels;
import io.efabench.cuda.PinnedHostBuffer;
import org.openjdk.jmh.infra.BenchmarkParams;
import io.efabench.harness.trial.TrialResources.Tier;
import io.efabench.rank.RankEnv;
import io.efabench.rank.RankException;
import io.efabench.rank.RankGroup;
import io.efabench.provenance.JavaFootprint;
import io.efabench.provenance.JvmLayout;
import io.efabench.provenance.ProvenanceFragments;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.MetricsSink;
import io.efabench.harness.memory.IpcMesh;
import io.efabench.harness.memory.TrialGpu;
import io.efabench.harness.trial.TrialJoin;
import io.efabench.harness.trial.TrialKey;
import io.efabench.harness.trial.TrialResources;
import io.efabench.harness.trial.Verdicts;

/**
 * What every IpcBenchmark state shares: the rank group, this rank's GPU and stream, each rank's
 * "inbox" (device memory the other ranks write into, exchanged as {@link IpcHandle}s and mapped
 * by the writers), the timing gate and per-peer events, and the checked round.
 *
 * <p>Timed transfers are enqueued behind a gate kernel that spins until the host opens it, so
 * the CUDA events bracket only GPU work, not the host's enqueueing (nvbandwidth does the same).
 */
public final class IpcRig implements AutoCloseable {
    /** Inboxes start this far into their allocation, so the IPC offset is exercised (the reference loses it). */
    static final long INBOX_OFFSET = 4096;
    public static final long KERNEL_TIMEOUT_NS = 10_000_000_000L;
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    private static final long GATE_VALUE = 0;
    private static final long GATE_STATUS = 4;
    /** Status words of other kernels (ping, pong) in the pinned host page. */
    public static final long STATUS_A = 8;
    public static final long STATUS_B = 12;

    public final RankGroup group;
    public final int rank;
    public final int world;
    public final boolean leader;
    public final Duration timeout;
    public final long timeoutNanos;
    /** This trial's name in provenance file names ({@link TrialKey#tag}), as the fabric trials'. */
    private final String tag;
    /** This rank's GPU, context, stream and pattern kernels (the harness's GPU part of a trial). */
    TrialGpu gpu;
    public CudaDevice device;
    public CudaContext context;
    public CudaStream stream;
    public PatternKernels pattern;
    public CudaModule flags;
    private Kernel gate;
    private KernelArgs gateArgs;
    public PinnedHostBuffer host;
    /** This rank's inbox, or null. */
    public DeviceMemory inbox;
    /** Other ranks' inboxes mapped here, by rank (null where none). */
    public IpcHandle.PeerMapping[] peers;
    String[] busIds;
    /** Leader: events around the transfer to each peer, by rank. */
    CudaEvent[] start;
    CudaEvent[] stop;
    private int gateSeq;
    /** What this trial reports to the metrics profiler: its traffic, CUDA-event times and checked rounds. */
    public final MetricsSink metrics = MetricsSink.open();
    /** Everything setUp opens, closed in tiers: events and mappings, then memory, then the GPU. */
    private final TrialResources resources = new TrialResources();

    private IpcRig(RankGroup group, Duration timeout, String tag) {
        this.tag = tag;
        this.group = group;
        this.rank = group.rank();
        this.world = group.size();
        this.leader = group.isLeader();
        this.timeout = timeout;
        this.timeoutNanos = timeout.toNanos();
    }

    /**
     * Joins the group and sets everything up; any failure is one line on every rank.
     *
     * @param leaderInbox   bytes of rank 0's inbox (0: none)
     * @param followerInbox bytes of every other rank's inbox (0: none)
     */
    public static IpcRig open(BenchmarkParams bp, long leaderInbox, long followerInbox) {
        return open(TrialKey.of(bp), TrialKey.tag(bp), leaderInbox, followerInbox);
    }

    /** {@link #open(BenchmarkParams, long, long)} with the trial's key and file-name tag given. */
    public static IpcRig open(String key, String tag, long leaderInbox, long followerInbox) {
        Cuda.unavailableReason().ifPresent(reason -> {
            throw new BenchmarkSetupException(reason);
        });
        TrialJoin joined = TrialJoin.join("IpcBenchmark", 2, key,
                "it runs on one node with one GPU per rank: ./run-jmh.sh --ranks 2 IpcBenchmark");
        RankEnv env = joined.env();
        RankGroup group = joined.group();
        Duration timeout = joined.timeout();
        IpcRig rig = new IpcRig(group, timeout, tag);
        try {
            rig.setUp(env, leaderInbox, followerInbox);
            return rig;
        } catch (RuntimeException e) {
            String line = e instanceof CudaException || e instanceof BenchmarkSetupException || e instanceof RankException
                    ? e.getMessage() : e.toString();
            group.abort(line);
            rig.closeQuietly();
            throw new BenchmarkSetupException("rank " + env.rank() + ": " + line);
        }
    }

    private void setUp(RankEnv env, long leaderInbox, long followerInbox) {
        // Ranks may share a GPU (fewer visible than local ranks): IPC within one device, which keeps
        // the IPC paths tested where one GPU is lent; rank 0 says so and the figures are not NVLink's.
        gpu = resources.push(Tier.GPU, TrialGpu.open(env, TrialGpu.Sharing.ALLOWED, timeout));
        device = gpu.device;
        context = gpu.context;
        stream = gpu.stream;
        pattern = gpu.pattern;
        flags = resources.push(Tier.OWNED, KernelCompiler.load(context, "flag.cu"));
        gate = flags.kernel("wait_host_flag");
        host = resources.push(Tier.BUFFER, PinnedHostBuffer.allocate(context, 4096));
        host.segment().fill((byte) 0);
        gateArgs = new KernelArgs(4).pointer(0, host.slice(GATE_VALUE, 4)).u32(1, 0).u64(2, KERNEL_TIMEOUT_NS)
                .pointer(3, host.slice(GATE_STATUS, 4));
        long mine = leader ? leaderInbox : followerInbox;
        if (mine > 0) {
            DeviceBuffer allocation = resources.push(Tier.BUFFER, DeviceBuffer.allocate(context, mine + INBOX_OFFSET));
            inbox = allocation.slice(INBOX_OFFSET, mine);
        }
        List<byte[]> all = group.allgather("ipc: host, GPU and inbox of every rank", describeSelf(), timeout);
        String[] hosts = new String[world];
        busIds = new String[world];
        IpcHandle[] handles = new IpcHandle[world];
        for (int r = 0; r < world; r++) {
            try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(all.get(r)))) {
                hosts[r] = in.readUTF();
                busIds[r] = in.readUTF();
                int n = in.readInt();
                handles[r] = n == 0 ? null : IpcHandle.fromBytes(in.readNBytes(n));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        boolean sharedGpu = false; // said once, for the first peer on rank 0's GPU
        for (int r = 1; r < world; r++) {
            if (!hosts[r].equals(hosts[0])) {
                throw new BenchmarkSetupException("IpcBenchmark runs on one node: rank " + r + " is on " + hosts[r]
                        + ", rank 0 on " + hosts[0]);
            }
            if (leader && busIds[r].equalsIgnoreCase(busIds[0]) && !sharedGpu) {
                sharedGpu = true;
                System.out.println("# efabench: ipc: rank " + r + " shares GPU " + busIds[r] + " with rank 0 (fewer GPUs visible"
                        + " than local ranks): IPC within one device, not NVLink; busbw_pct is left out. For NVLink, one GPU"
                        + " per rank (LOCAL_RANK selects it among CUDA_VISIBLE_DEVICES)");
            }
        }
        peers = new IpcHandle.PeerMapping[world];
        for (int r = 0; r < world; r++) {
            boolean wanted = leader ? r != 0 : r == 0;
            if (wanted && handles[r] != null) {
                try {
                    peers[r] = resources.push(Tier.OWNED, handles[r].open(context));
                } catch (CudaException e) {
                    throw new BenchmarkSetupException("cannot map rank " + r + "'s memory on GPU " + busIds[r] + " into GPU "
                            + device.pciBusId() + ": " + e.getMessage() + IpcMesh.visibleNote());
                }
            }
        }
        if (leader) {
            start = new CudaEvent[world];
            stop = new CudaEvent[world];
            for (int r = 1; r < world; r++) {
                start[r] = resources.push(Tier.OWNED, CudaEvent.create(context));
                stop[r] = resources.push(Tier.OWNED, CudaEvent.create(context));
            }
        }
        recordProvenance();
        group.barrier("ipc: inboxes mapped", timeout);
    }

    private byte[] describeSelf() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeUTF(RankGroup.hostname());
            out.writeUTF(device.pciBusId());
            byte[] h = inbox == null ? new byte[0] : IpcHandle.export(inbox).toBytes();
            out.writeInt(h.length);
            out.write(h);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /** Enqueues one transfer to {@code peer} on {@link #stream}. */
    @FunctionalInterface
    public interface Transfer {
        void enqueue(int peer);
    }

    /**
     * Leader: one timed round: the transfer to each peer in turn, each between its events,
     * all held behind the gate until enqueued. Adds the summed GPU time to the trial's {@link MetricsSink}.
     */
    public void timedRound(Transfer transfer) {
        context.makeCurrent();
        int seq = ++gateSeq;
        gateArgs.u32(1, seq);
        gate.launch(stream, 1, 1, 0, gateArgs);
        for (int p = 1; p < world; p++) {
            start[p].record(stream);
            transfer.enqueue(p);
            stop[p].record(stream);
        }
        INT.setVolatile(host.segment(), GATE_VALUE, seq);
        stop[world - 1].await(timeoutNanos, "rank 0: timed transfer");
        if ((int) INT.getVolatile(host.segment(), GATE_STATUS) != 0) {
            throw new IllegalStateException("rank 0: the timing gate was not opened within 10 s");
        }
        double ms = 0;
        for (int p = 1; p < world; p++) {
            ms += stop[p].millisSince(start[p]);
        }
        metrics.deviceSeconds(ms / 1e3);
    }

    /** Status word written by a kernel into the pinned host page (0 = fine). */
    public int status(long offset) {
        return (int) INT.getVolatile(host.segment(), offset);
    }

    public void clearStatus(long offset) {
        INT.setVolatile(host.segment(), offset, 0);
    }

    /**
     * The checked round (iteration teardown, every rank): followers clear their inbox, rank 0
     * writes the pattern of (rank 0, peer, round) to each peer with {@code transfer}, after
     * {@code prepare} for that peer (may be null), followers verify every byte
     * on their GPU, and every rank learns every verdict; a mismatch throws naming rank, round
     * and offset.
     *
     * @param prepare rank 0's preparation per peer (fill a source buffer), may be null
     */
    public void checkedRound(long round, String what, Transfer prepare, Transfer transfer) {
        context.makeCurrent();
        if (!leader && inbox != null) {
            inbox.fill((byte) 0);
        }
        group.barrier("ipc: round " + round + " cleared", timeout);
        if (leader) {
            // one stream: each peer's preparation runs after the previous peer's transfer
            for (int p = 1; p < world; p++) {
                if (prepare != null) {
                    prepare.enqueue(p);
                }
                transfer.enqueue(p);
            }
            stream.await(timeoutNanos, "rank 0: checked round " + round);
        }
        group.barrier("ipc: round " + round + " written", timeout);
        String verdict = null;
        if (!leader && inbox != null) {
            PatternKernels.Verdict v = pattern.verify(stream, inbox, 0, rank, round, timeoutNanos);
            if (!v.ok()) {
                verdict = "rank " + rank + ": round " + round + " from rank 0 (" + what + ") is corrupted: "
                        + v.describe(inbox.byteSize() / 4);
            }
        }
        Verdicts.exchange(group, "ipc: round " + round + " verdicts", verdict, timeout, metrics);
    }

    /** Summed one-direction NVLink speed from rank 0 to every peer, as Gbps for busbw_pct; 0 when any is unknown. */
    public double linkGbps(long bytesPerPeer) {
        double idealSeconds = 0;
        for (int p = 1; p < world; p++) {
            NvLink link = NvLink.between(device, busIds[p]);
            if (!link.known() || busIds[p].equalsIgnoreCase(busIds[0])) {
                return 0;
            }
            idealSeconds += bytesPerPeer * 8.0 / (link.gbps() * 1e9);
        }
        // the rate at which the whole invocation would run if every pair ran at its link speed
        return bytesPerPeer * 8.0 * (world - 1) / idealSeconds / 1e9;
    }

    /** Records this rank's GPU, driver and (rank 0) NVLink facts in the run's provenance. */
    void recordProvenance() {
        Map<String, Object> facts = gpu.provenance();
        if (leader) {
            List<String> links = new ArrayList<>();
            for (int p = 1; p < world; p++) {
                links.add("rank 0 -> rank " + p + ": " + NvLink.between(device, busIds[p]).detail());
            }
            facts.put("nvlink", links);
        }
        facts.putAll(JavaFootprint.factsOf(this));
        facts.put(JvmLayout.KEY, JvmLayout.facts());
        ProvenanceFragments.record("cuda-rank" + rank + "-" + tag, facts);
    }

    /** One line for the log: GPUs, driver, NVLink per pair. */
    public String provenance() {
        StringBuilder s = new StringBuilder(String.format(Locale.ROOT, "ipc: rank 0 on %s %s (%d SMs, %s), driver %s (CUDA %s), NVRTC %s",
                device.name(), device.pciBusId(), device.smCount(), device.arch(), NvLink.driverVersion(),
                Cuda.driverVersionText(), KernelCompiler.nvrtcDescription()));
        for (int p = 1; p < world; p++) {
            s.append("; to rank ").append(p).append(" (").append(busIds[p]).append("): ")
                    .append(NvLink.between(device, busIds[p]).detail());
        }
        return s.toString();
    }

    public void barrier(String what) {
        group.barrier(what, timeout);
    }

    /** Trial teardown: everyone unmaps, then everyone frees, so nobody frees memory a peer still maps. */
    @Override
    public void close() {
        try {
            if (context != null) {
                context.makeCurrent();
                stream.await(timeoutNanos, "rank " + rank + ": trial teardown");
            }
            closeMappings();
            group.barrier("ipc: unmapped", timeout);
        } finally {
            closeQuietly();
        }
    }

    private void closeMappings() {
        if (peers != null) {
            for (int r = 0; r < world; r++) {
                if (peers[r] != null) {
                    peers[r].close();
                    peers[r] = null;
                }
            }
        }
    }

    /** Closes everything setUp opened (every close attempted), then leaves the group. */
    private void closeQuietly() {
        resources.closeAll();
        try {
            group.close();
        } catch (RuntimeException ignored) {
            // leaving the group on the way out: the first failure was already reported
        }
    }
}

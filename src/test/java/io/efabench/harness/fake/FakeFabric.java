package io.efabench.harness.fake;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import io.efabench.fabric.Channel.InjectTarget;
import io.efabench.fabric.ChannelOps;
import io.efabench.fabric.Completion;
import io.efabench.fabric.MemoryRegion;
import io.efabench.fabric.RemoteRegion;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.Layout;
import io.efabench.harness.MemoryKind;
import io.efabench.harness.MetricsSink;
import io.efabench.harness.engine.Deadline;
import io.efabench.harness.engine.StallWitness;
import io.efabench.harness.memory.TrialBuffer;
import io.efabench.harness.trial.Rounds;
import io.efabench.harness.trial.RoundsSite;
import io.efabench.harness.trial.Side;

/**
 * Ranks and their channels in one JVM, for unit tests of the engine and of the workloads' rounds:
 * a write lands at once, its bytes copied into the peer's region named by its key, as a
 * remote-write completion (with its immediate) on the peer's same channel and a local completion
 * here; a read copies the peer's bytes here; a send lands in the peer's oldest posted receive. No
 * provider, no process. A channel can be told to refuse posts (-FI_EAGAIN) for a while, as a
 * provider whose queue is full does.
 *
 * <p>{@link #FakeFabric(int, int)}: one thread drives every rank's engine (collectives answer at
 * once). {@link #threaded}: each rank runs on its own thread ({@link #run}), collectives wait for
 * every rank, and one rank's failure fails the others' next poll, as a real group's would.
 */
public final class FakeFabric {
    public static final int EAGAIN = -11;

    public final int ranks;
    public final int channels;
    public final Site[] sites;
    /** Checked rounds every rank passed ({@code checked_rounds}). */
    public final MetricsSink metrics = MetricsSink.open();
    private final Arena arena = Arena.ofAuto();
    private final boolean threaded;
    private final CyclicBarrier meet;
    private final byte[][] gathered;
    private final Map<Long, MemorySegment> regions = new HashMap<>();
    private long nextKey = 1;
    private volatile String failed;
    /** Writes and messages landing at this rank get their first byte flipped (a fault checked rounds must catch), or -1. */
    public volatile int flipBytesTo = -1;
    /** Most remote-write completions a rank's channel held unread, per rank. */
    public final int[] mostUnread;

    public FakeFabric(int ranks, int channels) {
        this(ranks, channels, false);
    }

    private FakeFabric(int ranks, int channels, boolean threaded) {
        this.ranks = ranks;
        this.channels = channels;
        this.threaded = threaded;
        this.meet = new CyclicBarrier(ranks);
        this.gathered = new byte[ranks][];
        this.mostUnread = new int[ranks];
        sites = new Site[ranks];
        for (int r = 0; r < ranks; r++) {
            sites[r] = new Site(r);
        }
    }

    /** Ranks that each run on a thread of their own ({@link #run}). */
    public static FakeFabric threaded(int ranks, int channels) {
        return new FakeFabric(ranks, channels, true);
    }

    /**
     * Every rank on its own thread: builds its rounds with {@code make}, then {@code iterations}
     * times the driver's order (start barrier, warm round, {@code rounds} rounds, end of
     * iteration). Returns each rank's failure, or null where it finished.
     */
    public Throwable[] run(Function<RoundsSite, Rounds> make, int iterations, int rounds) throws InterruptedException {
        Throwable[] failures = new Throwable[ranks];
        Thread[] threads = new Thread[ranks];
        for (int r = 0; r < ranks; r++) {
            Site site = sites[r];
            threads[r] = Thread.ofPlatform().name("fake-rank-" + r).start(() -> {
                try {
                    Side side = make.apply(site).side();
                    for (int i = 0; i < iterations; i++) {
                        site.ended = -1;
                        site.barrier("start of iteration " + i);
                        side.warmRound();
                        for (int n = 0; n < rounds; n++) {
                            side.round();
                        }
                        side.endIteration();
                    }
                } catch (Throwable e) {
                    failures[site.rank] = e;
                    fail("rank " + site.rank + " failed: " + e.getMessage());
                }
            });
        }
        for (Thread t : threads) {
            t.join(60_000);
            if (t.isAlive()) {
                throw new AssertionError(t.getName() + " still running after 60 s");
            }
        }
        return failures;
    }

    /**
     * {@link #run}, then fails where any rank failed or any iteration's checked round was not
     * passed by every rank ({@code checked_rounds} short of {@code iterations}).
     */
    public void runChecked(Function<RoundsSite, Rounds> make, int iterations, int rounds) throws InterruptedException {
        assertAllPassed(run(make, iterations, rounds));
        if (metrics.checkedRounds() != iterations) {
            throw new AssertionError(metrics.checkedRounds() + " checked rounds passed in " + iterations + " iterations");
        }
    }

    /**
     * {@link #run}, which must fail on every rank with one and the same line (a group fails
     * together); returns the line.
     */
    public String runFailing(Function<RoundsSite, Rounds> make, int iterations, int rounds) throws InterruptedException {
        Throwable[] failed = run(make, iterations, rounds);
        for (int r = 0; r < ranks; r++) {
            if (failed[r] == null) {
                throw new AssertionError("rank " + r + " passed");
            }
            if (!failed[r].getMessage().equals(failed[0].getMessage())) {
                throw new AssertionError("rank " + r + " failed with \"" + failed[r].getMessage() + "\", rank 0 with \""
                        + failed[0].getMessage() + "\"");
            }
        }
        return failed[0].getMessage();
    }

    /** Fails with the first rank's failure (its stack as the cause) where any rank failed. */
    public static void assertAllPassed(Throwable[] failures) {
        for (int r = 0; r < failures.length; r++) {
            if (failures[r] != null) {
                throw new AssertionError("rank " + r + " failed: " + failures[r], failures[r]);
            }
        }
    }

    private void fail(String why) {
        if (failed == null) {
            failed = why;
        }
        meet.reset();
    }

    private record Entry(Completion.Kind kind, int ctx, long len, long data) {}

    private record Posted(int ctx, MemorySegment into) {}

    private record Message(FakeChannel from, MemorySegment bytes, int sendCtx) {}

    private static void flip(MemorySegment s, long at) {
        s.set(ValueLayout.JAVA_BYTE, at, (byte) ~s.get(ValueLayout.JAVA_BYTE, at));
    }

    private MemorySegment regionOf(RemoteRegion r) {
        MemorySegment s = regions.get(r.key());
        if (s == null) {
            throw new IllegalStateException("no region with key " + r.key());
        }
        return s;
    }

    /** One rank's channel c. */
    public final class FakeChannel implements ChannelOps {
        final int rank;
        final int index;
        private final ArrayDeque<Entry> cq = new ArrayDeque<>();
        private final ArrayDeque<Posted> receives = new ArrayDeque<>();
        private final ArrayDeque<Message> unexpected = new ArrayDeque<>();
        /** Posts still to refuse with -FI_EAGAIN. */
        public int refuse;
        /** Writes and reads this channel posted (and the provider took). */
        public int posted;

        FakeChannel(int rank, int index) {
            this.rank = rank;
            this.index = index;
        }

        private FakeChannel peer(long dest) {
            return sites[(int) dest].lanes[index];
        }

        @Override
        public int tryWrite(MemoryRegion mr, long off, long len, long dest, RemoteRegion target, long targetOffset,
                long data, boolean withData, int ctx) {
            synchronized (FakeFabric.this) {
                if (refuse > 0) {
                    refuse--;
                    return EAGAIN;
                }
                posted++;
                FakeChannel to = peer(dest);
                if (mr != null) {
                    MemorySegment into = regionOf(target);
                    MemorySegment.copy(mr.segment(), off, into, targetOffset, len);
                    if (flipBytesTo == to.rank) {
                        flip(into, targetOffset);
                    }
                }
                cq.add(new Entry(Completion.Kind.WRITE, ctx, len, 0));
                if (withData) {
                    to.cq.add(new Entry(Completion.Kind.REMOTE_WRITE, -1, len, data));
                    mostUnread[to.rank] = Math.max(mostUnread[to.rank], to.cq.size());
                }
                return 0;
            }
        }

        @Override
        public int tryRead(MemoryRegion mr, long off, long len, long dest, RemoteRegion source, long sourceOffset,
                int ctx) {
            synchronized (FakeFabric.this) {
                if (refuse > 0) {
                    refuse--;
                    return EAGAIN;
                }
                posted++;
                if (mr != null) {
                    MemorySegment.copy(regionOf(source), sourceOffset, mr.segment(), off, len);
                }
                cq.add(new Entry(Completion.Kind.READ, ctx, len, 0));
                return 0;
            }
        }

        @Override
        public int trySend(MemoryRegion mr, long off, long len, long dest, long data, boolean withData, int ctx) {
            synchronized (FakeFabric.this) {
                if (refuse > 0) {
                    refuse--;
                    return EAGAIN;
                }
                MemorySegment bytes = mr == null ? null : MemorySegment.ofArray(mr.segment().asSlice(off, len).toArray(ValueLayout.JAVA_BYTE));
                peer(dest).deliver(new Message(this, bytes, ctx), len);
                return 0;
            }
        }

        private void deliver(Message m, long len) {
            Posted p = receives.poll();
            if (p == null) {
                unexpected.add(m);
                return;
            }
            if (m.bytes != null && p.into != null) {
                MemorySegment.copy(m.bytes, 0, p.into, 0, m.bytes.byteSize());
                if (flipBytesTo == rank) {
                    flip(p.into, 0);
                }
            }
            long n = m.bytes == null ? len : m.bytes.byteSize();
            cq.add(new Entry(Completion.Kind.RECV, p.ctx, n, 0));
            m.from.cq.add(new Entry(Completion.Kind.SEND, m.sendCtx, n, 0));
        }

        @Override
        public int tryRecv(MemoryRegion mr, long off, long len, int ctx) {
            synchronized (FakeFabric.this) {
                receives.add(new Posted(ctx, mr == null ? null : mr.segment().asSlice(off, len)));
                Message waiting = unexpected.poll();
                if (waiting != null) {
                    deliver(waiting, len);
                }
                return 0;
            }
        }

        @Override
        public int poll(Completion c) {
            return read(c, 1);
        }

        @Override
        public int pollBatch(Completion c) {
            return read(c, Completion.BATCH);
        }

        private int read(Completion c, int most) {
            if (sites[rank].pollPauseMicros > 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(sites[rank].pollPauseMicros * 1000L);
            }
            String why = failed;
            if (why != null) {
                throw new BenchmarkSetupException("rank " + rank + ": the group failed (" + why + ")");
            }
            synchronized (FakeFabric.this) {
                int n = 0;
                while (n < most && !cq.isEmpty()) {
                    Entry e = cq.poll();
                    c.fill(n++, e.kind, e.ctx, e.len, e.data);
                }
                c.select(0);
                return n;
            }
        }

        @Override
        public boolean rxCqDataConsumesRecv() {
            return false;
        }

        @Override
        public String describe() {
            return "fake rank " + rank + " channel " + index;
        }
    }

    /** What one rank sees of its trial: the engine's questions and the workloads'. */
    public final class Site implements RoundsSite {
        public final int rank;
        public final FakeChannel[] lanes;
        final Completion completion = new Completion();
        public Duration timeout = Duration.ofSeconds(10);
        public volatile long ended = -1;
        /** Every poll of this rank first sleeps this long: a slow rank. */
        public volatile int pollPauseMicros;
        public long maxWrite = 1L << 30;
        public int pacedWanted = -1;
        public int pacedHeld = -1;
        public StallWitness witness;
        /** One thread only: what allgather answers, set by the test; null answers {@code mine} for every rank. */
        public List<byte[]> gathered;

        Site(int rank) {
            this.rank = rank;
            lanes = new FakeChannel[channels];
            for (int c = 0; c < channels; c++) {
                lanes[c] = new FakeChannel(rank, c);
            }
        }

        @Override
        public int rank() {
            return rank;
        }

        @Override
        public int size() {
            return ranks;
        }

        @Override
        public int channelCount() {
            return channels;
        }

        @Override
        public ChannelOps channel(int c) {
            return lanes[c];
        }

        @Override
        public long peer(int r, int c) {
            return r;
        }

        @Override
        public Completion completion() {
            return completion;
        }

        @Override
        public long maxWrite(int c) {
            return maxWrite;
        }

        @Override
        public Deadline deadline() {
            return deadline(timeout);
        }

        @Override
        public Deadline deadline(Duration budget) {
            return new Deadline(null, budget, null, threaded);
        }

        @Override
        public long endedRounds() {
            return ended;
        }

        @Override
        public void signalEnd(long rounds) {
            for (Site s : sites) {
                s.ended = rounds;
            }
        }

        @Override
        public MemorySegment allocate(long bytes) {
            return arena.allocate(bytes, 4096);
        }

        @Override
        public MemoryRegion register(int c, MemorySegment buf) {
            synchronized (FakeFabric.this) {
                long key = nextKey++;
                regions.put(key, buf);
                return MemoryRegion.standIn(buf, new RemoteRegion(0, buf.byteSize(), key));
            }
        }

        @Override
        public TrialBuffer buffer(long bytes) {
            MemorySegment seg = allocate(bytes);
            MemoryRegion[] mrs = new MemoryRegion[channels];
            for (int c = 0; c < channels; c++) {
                mrs[c] = register(c, seg);
            }
            return TrialBuffer.ofRegistered(seg, mrs);
        }

        @Override
        public MemoryKind memory() {
            return MemoryKind.HOST;
        }

        @Override
        public RemoteRegion[][] exchange(String what, MemoryRegion[] local) {
            byte[] mine = new byte[local.length * RemoteRegion.ENCODED_SIZE];
            for (int c = 0; c < local.length; c++) {
                System.arraycopy(local[c].remote().encode(), 0, mine, c * RemoteRegion.ENCODED_SIZE, RemoteRegion.ENCODED_SIZE);
            }
            List<byte[]> all = allgather(what, mine);
            RemoteRegion[][] out = new RemoteRegion[ranks][local.length];
            for (int r = 0; r < ranks; r++) {
                for (int c = 0; c < local.length; c++) {
                    int at = c * RemoteRegion.ENCODED_SIZE;
                    out[r][c] = RemoteRegion.decode(Arrays.copyOfRange(all.get(r), at, at + RemoteRegion.ENCODED_SIZE));
                }
            }
            return out;
        }

        @Override
        public List<byte[]> allgather(String what, byte[] mine) {
            if (!threaded) {
                if (gathered != null) {
                    return gathered;
                }
                List<byte[]> all = new ArrayList<>();
                for (int r = 0; r < ranks; r++) {
                    all.add(mine);
                }
                return all;
            }
            FakeFabric.this.gathered[rank] = mine;
            barrier(what);
            List<byte[]> all = List.of(FakeFabric.this.gathered.clone());
            barrier(what + " (read)");
            return all;
        }

        @Override
        public void barrier(String what) {
            if (!threaded) {
                return;
            }
            try {
                meet.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException | BrokenBarrierException | TimeoutException e) {
                throw new BenchmarkSetupException("rank " + rank + ": " + what + ": " + (failed != null ? failed : e));
            }
        }

        @Override
        public void verdicts(String what, String mine) {
            byte[] b = mine == null ? new byte[0] : mine.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            for (byte[] v : allgather(what, b)) {
                if (v.length > 0) {
                    throw new BenchmarkSetupException(new String(v, java.nio.charset.StandardCharsets.UTF_8));
                }
            }
            if (rank == 0) {
                metrics.checkedRoundPassed();
            }
        }

        @Override
        public Duration waitBudget() {
            return timeout;
        }

        /** No injected writes: every write posts and completes (the inject path needs a real channel). */
        @Override
        public long injectRmaSize(int c) {
            return 0;
        }

        @Override
        public InjectTarget injectTarget(int c, MemoryRegion src, int peer, RemoteRegion target) {
            throw new UnsupportedOperationException("the fake fabric injects nothing");
        }

        @Override
        public void requireImmediates() {}

        @Override
        public void requireSendable(long bytes) {}

        @Override
        public double linkGbps(int... channelIndexes) {
            return 0;
        }

        @Override
        public double seedLinkGbps(Layout layout) {
            return 0;
        }

        @Override
        public String benchmark() {
            return "fake";
        }

        /** Every rank on a host of its own. */
        @Override
        public List<String> hosts() {
            List<String> h = new ArrayList<>();
            for (int r = 0; r < ranks; r++) {
                h.add("fake-host-" + r);
            }
            return h;
        }

        @Override
        public MetricsSink metrics() {
            return metrics;
        }

        @Override
        public void notePaced(int wanted, int held) {
            pacedWanted = wanted;
            pacedHeld = held;
        }

        @Override
        public void watch(StallWitness w) {
            witness = w;
        }
    }
}

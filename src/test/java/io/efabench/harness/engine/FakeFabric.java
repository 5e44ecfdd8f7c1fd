package io.efabench.harness.engine;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import io.efabench.fabric.ChannelOps;
import io.efabench.fabric.Completion;
import io.efabench.fabric.MemoryRegion;
import io.efabench.fabric.RemoteRegion;

/**
 * Ranks and their channels in one JVM, for unit tests of the engine: a write lands at once as a
 * remote-write completion (with its immediate) on the peer's same channel and a local completion
 * here; a send lands in the peer's oldest posted receive, its bytes copied from this channel's
 * registered buffer into the peer's. No provider, no process. A channel can be told to refuse
 * posts (-FI_EAGAIN) for a while, as a provider whose queue is full does.
 */
final class FakeFabric {
    static final int EAGAIN = -11;

    final int ranks;
    final int channels;
    final Site[] sites;
    private final Arena arena = Arena.ofAuto();

    FakeFabric(int ranks, int channels) {
        this.ranks = ranks;
        this.channels = channels;
        sites = new Site[ranks];
        for (int r = 0; r < ranks; r++) {
            sites[r] = new Site(r);
        }
    }

    private record Entry(Completion.Kind kind, int ctx, long len, long data) {}

    private record Posted(int ctx, long off, long len) {}

    private record Message(FakeChannel from, long off, long len, int sendCtx) {}

    /** One rank's channel c. */
    final class FakeChannel implements ChannelOps {
        final int rank;
        final int index;
        private final ArrayDeque<Entry> cq = new ArrayDeque<>();
        private final ArrayDeque<Posted> receives = new ArrayDeque<>();
        private final ArrayDeque<Message> unexpected = new ArrayDeque<>();
        MemorySegment registered;
        /** Posts still to refuse with -FI_EAGAIN. */
        int refuse;
        /** Writes and reads this channel posted (and the provider took). */
        int posted;

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
            if (refuse > 0) {
                refuse--;
                return EAGAIN;
            }
            posted++;
            cq.add(new Entry(Completion.Kind.WRITE, ctx, len, 0));
            if (withData) {
                peer(dest).cq.add(new Entry(Completion.Kind.REMOTE_WRITE, -1, len, data));
            }
            return 0;
        }

        @Override
        public int tryRead(MemoryRegion mr, long off, long len, long dest, RemoteRegion source, long sourceOffset,
                int ctx) {
            if (refuse > 0) {
                refuse--;
                return EAGAIN;
            }
            posted++;
            cq.add(new Entry(Completion.Kind.READ, ctx, len, 0));
            return 0;
        }

        @Override
        public int trySend(MemoryRegion mr, long off, long len, long dest, long data, boolean withData, int ctx) {
            if (refuse > 0) {
                refuse--;
                return EAGAIN;
            }
            peer(dest).deliver(new Message(this, off, len, ctx));
            return 0;
        }

        private void deliver(Message m) {
            Posted p = receives.poll();
            if (p == null) {
                unexpected.add(m);
                return;
            }
            MemorySegment.copy(m.from.registered, m.off, registered, p.off, m.len);
            cq.add(new Entry(Completion.Kind.RECV, p.ctx, m.len, 0));
            m.from.cq.add(new Entry(Completion.Kind.SEND, m.sendCtx, m.len, 0));
        }

        @Override
        public int tryRecv(MemoryRegion mr, long off, long len, int ctx) {
            receives.add(new Posted(ctx, off, len));
            Message waiting = unexpected.poll();
            if (waiting != null) {
                deliver(waiting);
            }
            return 0;
        }

        @Override
        public int pollBatch(Completion c) {
            int n = 0;
            while (n < Completion.BATCH && !cq.isEmpty()) {
                Entry e = cq.poll();
                c.fill(n++, e.kind, e.ctx, e.len, e.data);
            }
            return n;
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

    /** What the engine of one rank sees of its trial. */
    final class Site implements EngineSite {
        final int rank;
        final FakeChannel[] lanes;
        final Completion completion = new Completion();
        Duration timeout = Duration.ofSeconds(5);
        long ended = -1;
        long maxWrite = 1L << 30;
        int pacedWanted = -1;
        int pacedHeld = -1;
        StallWitness witness;
        /** What allgather answers: every rank's bytes, set by the test; null answers {@code mine} for every rank. */
        List<byte[]> gathered;

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
            return Deadline.alone(timeout);
        }

        @Override
        public long endedRounds() {
            return ended;
        }

        @Override
        public MemorySegment allocate(long bytes) {
            return arena.allocate(bytes, 4096);
        }

        @Override
        public MemoryRegion register(int c, MemorySegment buf) {
            lanes[c].registered = buf;
            return null;
        }

        @Override
        public List<byte[]> allgather(String what, byte[] mine) {
            if (gathered != null) {
                return gathered;
            }
            List<byte[]> all = new ArrayList<>();
            for (int r = 0; r < ranks; r++) {
                all.add(mine);
            }
            return all;
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

package io.efabench.fabric;

import io.efabench.fabric.generated.LibFabric;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Two channels of one real provider in one process, talking to each other. */
class ChannelTest {
    private static final long DEADLINE_NANOS = 10_000_000_000L;

    private final Arena arena = Arena.ofConfined();
    private Discovery discovery;
    private Channel a;
    private Channel b;
    private long aToB;
    private long bToA;

    /** Closes everything even when one close fails: buffers must outlive every open endpoint. */
    @AfterEach
    void close() {
        try (arena; Discovery d = discovery; Channel cb = b; Channel ca = a) {
            // closed in reverse order: a, b, discovery, then the buffers
        }
    }

    /** Opens a and b on {@code provider}, or skips the test where this machine lacks it. */
    private void open(String provider) {
        try {
            discovery = Discovery.discover(false, provider);
        } catch (FabricException e) {
            assumeTrue(e.errno() != -LibFabric.FI_ENODATA(), provider + " is not available here: " + e.getMessage());
            throw e;
        }
        // In one process any interface works; loopback keeps the test off the real network.
        NicInfo nic = discovery.nics().stream().filter(n -> n.fabricName().startsWith("127."))
                .findFirst().orElse(discovery.nics().getFirst());
        a = Channel.open(discovery, nic, 64);
        b = Channel.open(discovery, nic, 64);
        aToB = a.insertPeer(b.name());
        bToA = b.insertPeer(a.name());
    }

    private MemorySegment pattern(long size, int seed) {
        MemorySegment s = arena.allocate(size, 4096);
        for (long i = 0; i < size; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + seed));
        }
        return s;
    }

    /** One completion copied out of the reusable {@link Completion}. */
    record Seen(int ctx, long flags, long len, long data, boolean send, boolean recv, boolean write,
                boolean remoteWrite, boolean remoteData) {
        static Seen of(Completion c) {
            return new Seen(c.context(), c.flags(), c.len(), c.data(), c.isSend(), c.isRecv(), c.isWrite(),
                    c.isRemoteWrite(), c.hasRemoteData());
        }
    }

    private final List<Seen> seenA = new ArrayList<>();
    private final List<Seen> seenB = new ArrayList<>();
    private final Completion completion = new Completion();

    /** Reads both CQs once; reading is also what makes tcp and shm progress. */
    private void progress() {
        if (a.poll(completion) == 1) {
            seenA.add(Seen.of(completion));
        }
        if (b.poll(completion) == 1) {
            seenB.add(Seen.of(completion));
        }
    }

    private void pumpUntil(String what, BooleanSupplier done) {
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        while (!done.getAsBoolean()) {
            progress();
            if (System.nanoTime() > deadline) {
                fail("timed out after 10 s waiting for " + what + "; a saw " + seenA + ", b saw " + seenB);
            }
        }
    }

    /** Retries a post while it answers -FI_EAGAIN, progressing both channels in between. */
    private void post(String what, IntSupplier op) {
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        while (op.getAsInt() == -LibFabric.FI_EAGAIN()) {
            progress();
            if (System.nanoTime() > deadline) {
                fail("timed out after 10 s posting " + what + " (-FI_EAGAIN)");
            }
        }
    }

    /**
     * Every provider call is bracketed on the call board, so the stuck-call watchdog sees it: after
     * some calls the channel's slot counts them and is out of the provider; a closed channel frees it.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void everyProviderCallShowsOnTheCallBoard(String provider) {
        open(provider);
        MemorySegment board = CallBoard.forThisProcess().memory;
        List<Long> before = slotStates(board, provider);
        for (int i = 0; i < 5; i++) {
            a.poll(completion);
        }
        List<Long> after = slotStates(board, provider);
        assertTrue(after.size() >= 2, "a and b each hold a slot naming " + provider + ": " + after);
        long calls = after.stream().mapToLong(st -> st >>> 8).sum() - before.stream().mapToLong(st -> st >>> 8).sum();
        assertEquals(5, calls, "five fi_cq_read calls counted: " + before + " -> " + after);
        assertTrue(after.stream().noneMatch(CallBoardLayout::inCall), "no call is in progress: " + after);
        b.close();
        b = null;
        assertEquals(after.size() - 1, slotStates(board, provider).size(), "closing b freed its slot");
    }

    private static List<Long> slotStates(MemorySegment board, String provider) {
        List<Long> states = new ArrayList<>();
        for (int s = 0; s < CallBoardLayout.SLOTS; s++) {
            String name = board.asSlice(CallBoardLayout.slotAt(s) + 8, CallBoardLayout.PROVIDER_BYTES)
                    .getString(0, java.nio.charset.StandardCharsets.US_ASCII);
            long state = board.get(ValueLayout.JAVA_LONG, CallBoardLayout.slotAt(s));
            if (name.contains(provider) && state != 0) { // tcp is "tcp;ofi_rxm"
                states.add(state);
            }
        }
        return states;
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void sendRecvMovesTheBytesAndTheImmediate(String provider) {
        open(provider);
        int size = 64 * 1024;
        MemoryRegion src = a.register(pattern(size, 7));
        MemoryRegion dst = b.register(arena.allocate(size, 4096));
        post("recv", () -> b.tryRecv(dst, 0, size, 11));
        post("send", () -> a.trySend(src, 0, size, aToB, 0x5eed, true, 3));

        pumpUntil("send and recv completions", () -> !seenA.isEmpty() && !seenB.isEmpty());

        Seen sent = seenA.getFirst();
        Seen received = seenB.getFirst();
        assertTrue(sent.send(), "a: expected a send completion: " + sent);
        assertEquals(3, sent.ctx(), "send context");
        assertTrue(received.recv() && received.remoteData(), "b: expected a recv with CQ data: " + received);
        assertEquals(11, received.ctx(), "recv context");
        assertEquals(size, received.len(), "received length");
        assertEquals(0x5eed, received.data(), "immediate data carried by the send");
        assertArrayEquals(src.segment().toArray(ValueLayout.JAVA_BYTE), dst.segment().toArray(ValueLayout.JAVA_BYTE));
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void writeWithDataLandsAndNotifiesTheTarget(String provider) {
        open(provider);
        int size = 8192;
        int at = 256;
        MemoryRegion src = a.register(pattern(size, 3));
        MemoryRegion dst = b.register(arena.allocate(at + size + 64, 4096));
        MemoryRegion spare = b.register(arena.allocate(64));
        // What a peer would receive over the rendezvous.
        RemoteRegion target = RemoteRegion.decode(dst.remote().encode());
        assertEquals(dst.remote(), target);
        if (b.rxCqDataConsumesRecv()) {
            post("recv for the immediate", () -> b.tryRecv(spare, 0, 64, 1));
        }
        post("write", () -> a.tryWrite(src, 0, size, aToB, target, at, 0xcafe, true, 5));

        pumpUntil("write completion and remote CQ data", () -> !seenA.isEmpty() && !seenB.isEmpty());

        Seen written = seenA.getFirst();
        Seen notified = seenB.getFirst();
        assertTrue(written.write(), "a: expected a write completion: " + written);
        assertEquals(5, written.ctx(), "write context");
        assertTrue(notified.remoteWrite() && notified.remoteData(),
                "b: expected FI_REMOTE_WRITE with FI_REMOTE_CQ_DATA: " + notified);
        assertEquals(0xcafe, notified.data(), "remote CQ data");
        assertEquals(b.rxCqDataConsumesRecv() ? 1 : -1, notified.ctx(), "context of the CQ data completion");
        MemorySegment landed = dst.segment();
        assertArrayEquals(src.segment().toArray(ValueLayout.JAVA_BYTE),
                landed.asSlice(at, size).toArray(ValueLayout.JAVA_BYTE), "written bytes");
        assertTrue(isZero(landed.asSlice(0, at)) && isZero(landed.asSlice(at + size)),
                "bytes outside the written range changed");
    }

    /** fi_readmsg: the peer's bytes arrive at the offset asked, the reader alone sees a completion. */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void readBringsThePeersBytesAndCompletesLocally(String provider) {
        open(provider);
        int size = 8192;
        int at = 512;
        MemoryRegion source = b.register(pattern(at + size, 9));
        MemoryRegion dst = a.register(arena.allocate(size + 128, 4096));
        RemoteRegion remote = RemoteRegion.decode(source.remote().encode());
        post("read", () -> a.tryRead(dst, 64, size, aToB, remote, at, 7));

        pumpUntil("read completion", () -> !seenA.isEmpty());

        Seen read = seenA.getFirst();
        assertTrue(completionIsRead(read), "a: expected a read completion: " + read);
        assertEquals(7, read.ctx(), "read context");
        assertArrayEquals(source.segment().asSlice(at, size).toArray(ValueLayout.JAVA_BYTE),
                dst.segment().asSlice(64, size).toArray(ValueLayout.JAVA_BYTE), "read bytes");
        assertTrue(isZero(dst.segment().asSlice(0, 64)) && isZero(dst.segment().asSlice(64 + size)),
                "bytes outside the read range changed");
        for (int i = 0; i < 100; i++) {
            progress();
        }
        assertTrue(seenB.isEmpty(), "the peer sees no completion of a read: " + seenB);
        assertThrows(IndexOutOfBoundsException.class, () -> a.tryRead(dst, 0, size, aToB, remote, at + 1024, 1));
    }

    private static boolean completionIsRead(Seen s) {
        return (s.flags() & LibFabric.FI_READ()) != 0;
    }

    /** fi_inject_writedata: the bytes and the immediate land, and the sender sees no completion for it. */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void injectedWriteLandsWithoutALocalCompletion(String provider) {
        open(provider);
        int size = (int) Math.min(64, a.nic().injectSize());
        assumeTrue(size > 0, provider + " injects nothing (inject_size 0)");
        int at = 128;
        MemoryRegion src = a.register(pattern(size, 5));
        MemoryRegion dst = b.register(arena.allocate(at + size + 64, 4096));
        MemoryRegion spare = b.register(arena.allocate(64));
        RemoteRegion target = dst.remote();
        if (b.rxCqDataConsumesRecv()) {
            post("recv for the immediate", () -> b.tryRecv(spare, 0, 64, 1));
        }
        Channel.InjectTarget toB = a.injectTarget(src, aToB, target);
        post("inject write", () -> toB.tryInject(0, size, at, 0xbeef));

        pumpUntil("remote CQ data of the injected write", () -> !seenB.isEmpty());
        for (int i = 0; i < 1000; i++) {
            progress(); // a late local completion would show here
        }
        assertTrue(seenA.isEmpty(), "an injected write generates no local completion: " + seenA);
        Seen notified = seenB.getFirst();
        assertTrue(notified.remoteWrite() && notified.remoteData(), "b: expected FI_REMOTE_WRITE with data: " + notified);
        assertEquals(0xbeef, notified.data(), "remote CQ data");
        assertArrayEquals(src.segment().toArray(ValueLayout.JAVA_BYTE),
                dst.segment().asSlice(at, size).toArray(ValueLayout.JAVA_BYTE), "injected bytes");
        assertThrows(IndexOutOfBoundsException.class, () -> toB.tryInject(0, a.nic().injectSize() + 1, 0, 0),
                "more than the inject size is refused before the provider");
        assertThrows(IndexOutOfBoundsException.class, () -> toB.tryInject(1, size, 0, 0),
                "a source span past the local region is refused");
        assertThrows(IndexOutOfBoundsException.class, () -> toB.tryInject(0, size, target.length() - size + 1, 0),
                "a target span past the remote region is refused");
        assertThrows(IndexOutOfBoundsException.class, () -> toB.tryInject(-1, size, 0, 0), "a negative offset is refused");
    }

    private static boolean isZero(MemorySegment s) {
        for (long i = 0; i < s.byteSize(); i++) {
            if (s.get(ValueLayout.JAVA_BYTE, i) != 0) {
                return false;
            }
        }
        return true;
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void truncatedReceiveIsAFabricExceptionWithTheProviderText(String provider) {
        open(provider);
        MemoryRegion src = a.register(pattern(1024, 1));
        MemoryRegion dst = b.register(arena.allocate(1024));
        post("recv", () -> b.tryRecv(dst, 0, 16, 9));
        post("send", () -> a.trySend(src, 0, 1024, aToB, 0, false, 2));

        FabricException error = assertThrows(FabricException.class,
                () -> pumpUntil("the truncation error", () -> false));
        assertEquals(-LibFabric.FI_ETRUNC(), error.errno(), error.getMessage());
        String text = error.getMessage();
        assertTrue(text.startsWith("completion error on recv ctx 9"), text);
        assertTrue(text.contains(Fi.strerror(LibFabric.FI_ETRUNC())), text);
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void postsOutsideTheRegionAreRejectedBeforeTheProvider(String provider) {
        open(provider);
        MemoryRegion src = a.register(arena.allocate(128));
        RemoteRegion target = new RemoteRegion(0, 64, 1);
        assertThrows(IndexOutOfBoundsException.class, () -> a.trySend(src, 64, 128, aToB, 0, false, 0));
        assertThrows(IndexOutOfBoundsException.class, () -> a.tryWrite(src, 0, 128, aToB, target, 0, 0, false, 0));
        assertThrows(IndexOutOfBoundsException.class, () -> a.tryRecv(src, 0, 8, Channel.CONTEXT_SLOTS));
        MemoryRegion other = b.register(arena.allocate(128));
        assertThrows(IllegalArgumentException.class, () -> a.trySend(other, 0, 8, aToB, 0, false, 0));
    }

    /**
     * Every endpoint has an event queue bound, and what a provider writes there as efa does on an
     * internal error (efa_base_ep_write_eq_error: fi_eq_write with UTIL_FLAG_ERROR) comes back as one
     * line with the error and prov_errno, once. Without the queue efa-rdm calls abort().
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void providerErrorsOnTheEventQueueAreReadBackAsOneLine(String provider) {
        open(provider);
        assertEquals("bound", a.eventQueueState());
        assertEquals(List.of(), a.providerErrors());
        a.reportProviderErrorForTest(5, 4102);
        List<String> errors = a.providerErrors();
        assertEquals(1, errors.size(), errors.toString());
        String line = errors.getFirst();
        assertTrue(line.startsWith("provider error on " + provider), line);
        assertTrue(line.endsWith("(event queue): " + Fi.strerror(5) + " (prov_errno 4102)"), line);
        assertEquals(List.of(), a.providerErrors(), "read once");
        assertEquals(List.of(), b.providerErrors(), "b's queue is its own");
    }

    /**
     * Where the endpoint does not answer FI_OPT_INJECT_RMA_SIZE (API 1.x, or a provider without
     * it), the inject limit is tx_attr->inject_size; the writes' limit is at most 1 GiB.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void injectAndWriteLimitsComeFromTheEndpoint(String provider) {
        open(provider);
        if (!Fi.atLeast(a.apiVersion(), EndpointOptions.SIZE_OPTIONS_VERSION)) {
            assertEquals(a.nic().injectSize(), a.injectRmaSize());
        }
        assertTrue(a.injectRmaSize() >= 0 && a.injectRmaSize() <= a.nic().injectSize(), "" + a.injectRmaSize());
        assertTrue(a.maxWrite() > 0 && a.maxWrite() <= Channel.MAX_WRITE);
        assertEquals("not set (host memory channel)", a.cudaApiPermitted());
    }
}

package io.efabench.rank;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Ranks as threads of one JVM, talking over real loopback sockets: the protocol logic. */
class RankGroupTest {
    private static final Duration LONG = Duration.ofSeconds(10);
    private static final Duration SHORT = Duration.ofMillis(500);

    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final List<RankGroup> groups = new ArrayList<>();

    @AfterEach
    void tearDown() throws InterruptedException {
        groups.forEach(RankGroup::close);
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static RankEnv env(int rank, int size, int port) {
        return new RankEnv(rank, size, rank, size, "127.0.0.1", port, "test");
    }

    /** Joins ranks 0..size-1 concurrently; the list is indexed by rank. */
    private List<RankGroup> form(int size, String key) throws Exception {
        return form(size, key, freePort());
    }

    private List<RankGroup> form(int size, String key, int port) throws Exception {
        List<Future<RankGroup>> joins = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            RankEnv env = env(r, size, port);
            joins.add(pool.submit(() -> RankGroup.join(env, key, LONG)));
        }
        List<RankGroup> formed = new ArrayList<>();
        for (Future<RankGroup> f : joins) {
            formed.add(f.get(20, TimeUnit.SECONDS));
        }
        groups.addAll(formed);
        return formed;
    }

    private <T> List<Future<T>> onEach(List<RankGroup> g, GroupCall<T> call) {
        List<Future<T>> futures = new ArrayList<>();
        for (RankGroup group : g) {
            futures.add(pool.submit((Callable<T>) () -> call.apply(group)));
        }
        return futures;
    }

    interface GroupCall<T> {
        T apply(RankGroup g) throws Exception;
    }

    private static String failure(Future<?> f) throws Exception {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof RankException, () -> "not a RankException: " + e.getCause());
        return e.getCause().getMessage();
    }

    /**
     * The failure a rank that is in no collective learns of: its reader thread delivers it
     * asynchronously, so wait for it, but no longer than {@code within}.
     */
    private static String failureHeardBy(RankGroup group, Duration within) {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            try {
                group.checkAlive();
            } catch (RankException e) {
                return e.getMessage();
            }
            assertTrue(System.nanoTime() < deadline, "rank " + group.rank() + " never heard of the failure");
            Thread.onSpinWait();
        }
    }

    @Test
    void allgatherReturnsEveryRanksBytesInRankOrder() throws Exception {
        List<RankGroup> g = form(4, "AllgatherTest");
        for (int round = 0; round < 3; round++) {
            int r0 = round;
            List<Future<List<byte[]>>> results = onEach(g, group -> group.allgather("addresses " + r0,
                    ("rank" + group.rank() + "/" + r0).repeat(group.rank() + 1).getBytes(StandardCharsets.UTF_8), LONG));
            for (Future<List<byte[]>> f : results) {
                List<byte[]> all = f.get(20, TimeUnit.SECONDS);
                assertEquals(4, all.size());
                for (int r = 0; r < 4; r++) {
                    assertArrayEquals(("rank" + r + "/" + r0).repeat(r + 1).getBytes(StandardCharsets.UTF_8), all.get(r));
                }
            }
        }
        assertEquals(List.of(0, 1, 2, 3), g.stream().map(RankGroup::rank).toList());
        assertTrue(g.get(0).isLeader());
        assertTrue(g.get(2).describe(1).startsWith("rank 1 (host "), g.get(2).describe(1));
    }

    @Test
    void barrierHoldsEveryoneUntilTheLastArrives() throws Exception {
        List<RankGroup> g = form(3, "BarrierTest");
        List<Future<Long>> early = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            RankGroup group = g.get(r);
            early.add(pool.submit(() -> {
                group.barrier("iteration 1", LONG);
                return System.nanoTime();
            }));
        }
        Thread.sleep(300);
        long released = System.nanoTime();
        assertTrue(early.stream().noneMatch(Future::isDone), "a rank left the barrier before rank 2 arrived");
        g.get(2).barrier("iteration 1", LONG);
        for (Future<Long> f : early) {
            assertTrue(f.get(20, TimeUnit.SECONDS) >= released);
        }
    }

    @Test
    void signalsReachFollowersInOrder() throws Exception {
        List<RankGroup> g = form(3, "SignalTest");
        assertEquals(Long.MIN_VALUE, g.get(1).signalled(3));
        Future<Long> waiting = pool.submit(() -> g.get(2).awaitSignal(3, 40, LONG, "END of iteration 1"));
        g.get(0).signal(3, 17);
        g.get(0).signal(3, 42);
        g.get(0).signal(5, -9);
        assertEquals(42, waiting.get(20, TimeUnit.SECONDS));
        assertEquals(-9, g.get(1).awaitSignal(5, -100, LONG, "slot 5"));
        assertEquals(42, g.get(1).signalled(3));
        assertEquals(42, g.get(0).signalled(3));
        assertEquals("rank 1: signal(3) is for rank 0 only",
                assertThrows(RankException.class, () -> g.get(1).signal(3, 1)).getMessage());
        assertThrows(RankException.class, () -> g.get(0).signal(16, 1));
        String timedOut = assertThrows(RankException.class,
                () -> g.get(1).awaitSignal(7, 1, Duration.ofMillis(200), "END")).getMessage();
        assertEquals("rank 1: no signal END (slot 7 >= 1) from rank 0 within 0.2 s (latest: none)", timedOut);
    }

    @Test
    void keyMismatchIsRefusedNamingBothKeys() throws Exception {
        int port = freePort();
        Future<RankGroup> leader = pool.submit(() -> RankGroup.join(env(0, 2, port), "WriteBenchmark size=4K", LONG));
        Future<RankGroup> follower = pool.submit(() -> RankGroup.join(env(1, 2, port), "WriteBenchmark size=2K", LONG));
        String expected = "rank 1 runs \"WriteBenchmark size=2K\" but rank 0 runs \"WriteBenchmark size=4K\"";
        assertEquals(expected, failure(leader));
        assertEquals(expected, failure(follower));
    }

    @Test
    void missingRanksAreNamedAtTheDeadline() throws Exception {
        int port = freePort();
        Future<RankGroup> leader = pool.submit(() -> RankGroup.join(env(0, 4, port), "K", Duration.ofSeconds(1)));
        Future<RankGroup> follower = pool.submit(() -> RankGroup.join(env(1, 4, port), "K", Duration.ofSeconds(1)));
        String expected = "rendezvous for K: ranks [2, 3] did not join within 1 s (joined: 0, 1)";
        assertEquals(expected, failure(leader));
        assertEquals(expected, failure(follower));
    }

    @Test
    void aTakenPortIsOneLine() throws Exception {
        try (ServerSocket squatter = new ServerSocket(0)) {
            int port = squatter.getLocalPort();
            String message = assertThrows(RankException.class,
                    () -> RankGroup.join(env(0, 2, port), "K", SHORT)).getMessage();
            assertEquals("MASTER_PORT " + port + " on 127.0.0.1 is already in use (another job or a stale rank?)",
                    message);
        }
    }

    @Test
    void aForeignServiceOnThePortIsRecognised() throws Exception {
        try (ServerSocket web = new ServerSocket(0)) {
            int port = web.getLocalPort();
            pool.submit(() -> {
                try (Socket s = web.accept(); InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
                    in.readNBytes(8);
                    out.write("HTTP/1.1 400 Bad Request\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    in.read();
                }
                return null;
            });
            String message = assertThrows(RankException.class,
                    () -> RankGroup.join(env(1, 2, port), "K", LONG)).getMessage();
            assertEquals("rank 1: MASTER_ADDR:MASTER_PORT 127.0.0.1:" + port
                    + " answered but is not an efabench rendezvous", message);
        }
    }

    /**
     * A stranger that connects first and trickles a byte every 2 s (each read is quick, the
     * handshake never ends) holds up no rank: rank 1, arriving a second later, joins within 2 s;
     * the stranger is dropped at the handshake deadline with one line.
     */
    @Test
    void aSlowStrangerDelaysNoRankAndIsDroppedAtTheHandshakeDeadline() throws Exception {
        int port = freePort();
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        java.io.PrintStream stderr = System.err;
        System.setErr(new java.io.PrintStream(err, true));
        Socket stranger = null;
        try {
            Future<RankGroup> leader = pool.submit(() -> RankGroup.join(env(0, 2, port), "K", LONG));
            for (int tries = 0; stranger == null; tries++) {
                try {
                    stranger = new Socket("127.0.0.1", port);
                } catch (IOException e) {
                    assertTrue(tries < 200, "rank 0 never listened: " + e);
                    Thread.sleep(10);
                }
            }
            long connected = System.nanoTime();
            Socket s = stranger;
            Future<Long> droppedAfter = pool.submit(() -> {
                OutputStream out = s.getOutputStream();
                InputStream in = s.getInputStream();
                s.setSoTimeout(2000);
                for (int i = 0; i < 20; i++) {
                    try {
                        out.write('x');
                        out.flush();
                        if (in.read() < 0) {
                            return System.nanoTime() - connected;
                        }
                    } catch (java.net.SocketTimeoutException e) {
                        // rank 0 still holds the connection: trickle on
                    } catch (IOException e) {
                        return System.nanoTime() - connected;
                    }
                }
                return -1L;
            });
            Thread.sleep(1000);
            long arrived = System.nanoTime();
            RankGroup follower = RankGroup.join(env(1, 2, port), "K", LONG);
            groups.add(follower);
            long joinedIn = System.nanoTime() - arrived;
            groups.add(leader.get(20, TimeUnit.SECONDS));
            assertTrue(joinedIn < Duration.ofSeconds(2).toNanos(), "rank 1 joined after " + joinedIn / 1e9 + " s");
            long dropped = droppedAfter.get(30, TimeUnit.SECONDS);
            long deadline = Duration.ofMillis(RendezvousLeader.HANDSHAKE_MILLIS).toNanos();
            assertTrue(dropped >= deadline - Duration.ofMillis(100).toNanos() && dropped < deadline + Duration.ofSeconds(3).toNanos(),
                    "the stranger was dropped after " + dropped / 1e9 + " s");
            // The handshake's thread prints its line once its read failed, just after the close the stranger saw.
            for (int i = 0; i < 200 && !err.toString().contains("dropped a connection"); i++) {
                Thread.sleep(10);
            }
        } finally {
            System.setErr(stderr);
            if (stranger != null) {
                stranger.close();
            }
        }
        List<String> lines = err.toString().lines().filter(l -> l.contains("127.0.0.1")).toList();
        assertEquals(1, lines.size(), err.toString());
        assertTrue(lines.get(0).startsWith("efabench rank 0: dropped a connection from 127.0.0.1 that did not complete the"
                + " handshake by its deadline"), lines.get(0));
    }

    @Test
    void aFollowerWithoutLeaderGivesUpAtItsDeadline() throws Exception {
        int port = freePort();
        long start = System.nanoTime();
        String message = assertThrows(RankException.class,
                () -> RankGroup.join(env(1, 2, port), "K", SHORT)).getMessage();
        assertTrue(message.startsWith("rank 1: could not reach rank 0 at 127.0.0.1:" + port
                + " for K within 0.5 s (last error: "), message);
        assertTrue(System.nanoTime() - start < Duration.ofSeconds(3).toNanos());
    }

    @Test
    void aFollowerStartedFirstWaitsForTheLeader() throws Exception {
        int port = freePort();
        Future<RankGroup> follower = pool.submit(() -> RankGroup.join(env(1, 2, port), "K", LONG));
        Thread.sleep(700);
        try (RankGroup leader = RankGroup.join(env(0, 2, port), "K", LONG);
             RankGroup f = follower.get(20, TimeUnit.SECONDS)) {
            assertEquals(1, f.rank());
            assertEquals(2, leader.size());
        }
    }

    @Test
    void aLateRankIsNamedByTheLeaderAndTheOthersHearOfItAtOnce() throws Exception {
        List<RankGroup> g = form(3, "K");
        Future<Void> leader = pool.submit(() -> {
            g.get(0).barrier("iteration 2", SHORT);
            return null;
        });
        Future<Void> follower = pool.submit(() -> {
            g.get(1).barrier("iteration 2", LONG);
            return null;
        });
        String expected = "rank 0: barrier \"iteration 2\": rank 2 (node " + g.get(0).host(2)
                + ") did not arrive within 0.5 s (arrived: 0, 1)";
        assertEquals(expected, failure(leader));
        long start = System.nanoTime();
        assertEquals("rank 1: barrier \"iteration 2\" failed: " + expected, failure(follower));
        assertTrue(System.nanoTime() - start < Duration.ofSeconds(3).toNanos(), "rank 1 waited for its own deadline");
        assertEquals(expected, failureHeardBy(g.get(2), Duration.ofSeconds(3)));
    }

    /**
     * A wait on the group that runs out carries what the layer above says of this rank's links
     * (a node cut off times out in an allgather as often as in a fabric wait), asked for the peer
     * waited on: rank 0 for a follower, the one missing rank for the leader.
     */
    @Test
    void aTimedOutWaitCarriesWhatTheLayerAboveSaysOfItsLinks() throws Exception {
        List<RankGroup> g = form(3, "K");
        for (RankGroup group : g) {
            group.explainTimeoutsWith(peer -> "; rank " + group.rank() + " asked about " + peer);
        }
        String timedOut = assertThrows(RankException.class,
                () -> g.get(1).awaitSignal(7, 1, Duration.ofMillis(200), "END")).getMessage();
        assertEquals("rank 1: no signal END (slot 7 >= 1) from rank 0 within 0.2 s (latest: none); rank 1 asked about 0",
                timedOut);
        List<RankGroup> h = form(3, "K2");
        for (RankGroup group : h) {
            group.explainTimeoutsWith(peer -> "; rank " + group.rank() + " asked about " + peer);
        }
        Future<Void> leader = pool.submit(() -> {
            h.get(0).barrier("iteration 2", SHORT);
            return null;
        });
        Future<Void> follower = pool.submit(() -> {
            h.get(1).barrier("iteration 2", LONG);
            return null;
        });
        assertEquals("rank 0: barrier \"iteration 2\": rank 2 (node " + h.get(0).host(2) + ") did not arrive within 0.5 s"
                + " (arrived: 0, 1); rank 0 asked about 2", failure(leader));
        failure(follower);
    }

    @Test
    void ranksInDifferentCollectivesAreNamed() throws Exception {
        List<RankGroup> g = form(2, "K");
        Future<Void> leader = pool.submit(() -> {
            g.get(0).barrier("trial teardown", LONG);
            return null;
        });
        Future<Void> follower = pool.submit(() -> {
            g.get(1).allgather("addresses", new byte[] {1}, LONG);
            return null;
        });
        String expected = "rank 1 is in allgather \"addresses\" (#1) but rank 0 is in barrier \"trial teardown\" (#1)";
        assertEquals(expected, failure(leader));
        assertTrue(failure(follower).endsWith(expected));
    }

    @Test
    void abortReachesEveryRankAndWakesWaiters() throws Exception {
        List<RankGroup> g = form(3, "K");
        Future<Void> waiting = pool.submit(() -> {
            g.get(2).barrier("iteration 3", LONG);
            return null;
        });
        Thread.sleep(200);
        long start = System.nanoTime();
        g.get(1).abort("payload mismatch at round 7 offset 12");
        String expected = g.get(0).onNode(1) + " aborted: payload mismatch at round 7 offset 12";
        assertEquals("rank 2: barrier \"iteration 3\" failed: " + expected, failure(waiting));
        assertTrue(System.nanoTime() - start < Duration.ofSeconds(3).toNanos());
        for (RankGroup group : g) {
            assertEquals(expected, failureHeardBy(group, Duration.ofSeconds(5)));
        }
    }

    @Test
    void aNormalCloseIsNotADeath() throws Exception {
        List<RankGroup> g = form(3, "K");
        for (Future<Void> f : this.<Void>onEach(g, group -> {
            group.barrier("trial teardown", LONG);
            group.close();
            group.close();
            return null;
        })) {
            f.get(20, TimeUnit.SECONDS);
        }
        for (RankGroup group : g) {
            group.checkAlive();
        }
    }

    @Test
    void aRankThatClosedEarlyIsNamedByTheNextCollective() throws Exception {
        List<RankGroup> g = form(2, "K");
        g.get(1).close();
        String message = assertThrows(RankException.class, () -> g.get(0).barrier("iteration 4", LONG)).getMessage();
        assertTrue(message.matches("rank 0: rank 1 \\(host .* pid \\d+\\) closed the group before barrier \"iteration 4\""),
                message);
    }

    @Test
    void theNextForkRebindsThePortAtOnce() throws Exception {
        int port = freePort();
        for (int fork = 0; fork < 3; fork++) {
            List<RankGroup> g = form(3, "fork " + fork, port);
            // rank 0 closes first, so its accepted sockets on MASTER_PORT sit in TIME_WAIT
            g.forEach(RankGroup::close);
        }
    }

    @Test
    void aGroupOfOneNeedsNoNetwork() {
        try (RankGroup alone = RankGroup.join(RankEnv.single(), "K", SHORT)) {
            assertEquals(1, alone.allgather("x", new byte[] {7}, SHORT).size());
            alone.barrier("x", SHORT);
            alone.signal(0, 5);
            assertEquals(5, alone.signalled(0));
            alone.checkAlive();
        }
    }

    @Test
    void checkAliveAndSignalledAllocateNothing() throws Exception {
        List<RankGroup> g = form(2, "K");
        RankGroup follower = g.get(1);
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().threadId();
        g.get(0).signal(4, 1);
        follower.awaitSignal(4, 1, LONG, "slot 4");
        long sum = 0;
        for (int warm = 0; warm < 200_000; warm++) {
            follower.checkAlive();
            sum += follower.signalled(warm & 15) == 1 ? 1 : 0;
        }
        long before = threads.getThreadAllocatedBytes(id);
        for (int i = 0; i < 1_000_000; i++) {
            follower.checkAlive();
            sum += follower.signalled(i & 15) == 1 ? 1 : 0;
        }
        long allocated = threads.getThreadAllocatedBytes(id) - before;
        assertTrue(allocated < 4096, "checkAlive/signalled allocated " + allocated + " bytes over 1e6 calls");
        assertEquals(200_000 / 16 + 1_000_000 / 16, sum);
    }
}

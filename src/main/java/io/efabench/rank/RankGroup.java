package io.efabench.rank;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.IntFunction;

/**
 * The ranks of one job, joined over a TCP rendezvous hosted by rank 0 (a star: followers talk
 * only to rank 0). It carries control traffic only: the trial key, fabric addresses and memory
 * keys (allgather), barriers, leader-to-follower signals and liveness. Data goes over the fabric.
 *
 * <p>Each socket has a daemon reader thread. A peer whose socket ends without BYE, an
 * {@link #abort} anywhere, or a deadline that passes marks the group failed; rank 0 forwards
 * the reason to every follower, so every rank's next {@link #checkAlive()} or wait throws it at
 * once. Collectives are called by one thread at a time, in the same order on every rank.
 */
public final class RankGroup implements AutoCloseable {
    public static final int SLOTS = 16;
    private static final long ABORT_SEND_WAIT_NANOS = Duration.ofSeconds(1).toNanos();
    private static final byte OP_ALLGATHER = 'G';
    private static final byte OP_BARRIER = 'B';
    /**
     * Test hook (FailuresIT): milliseconds a reader thread waits before reporting a socket that
     * ended without BYE, so that a fabric error on the same death surely comes first, the order
     * that FabricTrial.fail must handle. 0 (unset) in real runs.
     */
    private static final long NOTICE_DELAY_MS = noticeDelayMs(System.getenv("EFABENCH_TEST_NOTICE_DELAY_MS"));

    private final RankEnv env;
    private final String key;
    /** Leader: one per follower (index 0 null). Follower: index 0 is the leader, the rest null. */
    private final Link[] links;
    private final String[] names;
    /** Each rank's host, as it reported itself. */
    private final String[] hosts;
    /** Each rank's pid where it shares this host, else -1: what the call board lists. */
    private final long[] pidsOnThisHost;
    private final AtomicLongArray signals = new AtomicLongArray(SLOTS);
    /** Rank 0: each follower's latest note ({@link #note}). */
    private final java.util.concurrent.atomic.AtomicReferenceArray<Note> notes;
    /** Published failure reason: what checkAlive() and the waits throw. */
    private volatile String failure;
    /** What a wait on the group that ran out appends about this rank's links ({@link #explainTimeoutsWith}). */
    private volatile IntFunction<String> timeoutContext = peer -> "";

    /** Serialises collectives on this rank, so two threads cannot interleave their frames. */
    private final Object collectiveLock = new Object();
    /** Guards everything below; waits block on it and reader threads notify it. */
    private final Object lock = new Object();
    private final Collective[] arrived;
    private final boolean[] left;
    /** Ranks whose rendezvous socket ended without BYE (only peers with a socket: a star). */
    private final boolean[] dead;
    private Collective answer;
    /** The first failure reason, set before its ABORT frames go out; {@link #failure} follows. */
    private String claimedFailure;
    private int seq;
    private boolean closed;

    private record Collective(int seq, byte op, String what, byte[] payload, List<byte[]> all) {
        String describe() {
            return (op == OP_BARRIER ? "barrier \"" : "allgather \"") + what + "\"";
        }
    }

    /** Forms the group; blocks until every rank joined, or throws naming who did not. */
    public static RankGroup join(RankEnv env, String key, Duration timeout) {
        if (key == null || key.isBlank()) {
            throw new RankException("rank " + env.rank() + ": the rendezvous key is empty");
        }
        if (env.worldSize() == 1) {
            return new RankGroup(env, key, new Link[1], new Rendezvous.Member[] {Rendezvous.self(env, key)});
        }
        Rendezvous.Joined joined = env.isLeader() ? RendezvousLeader.lead(env, key, timeout) : Rendezvous.follow(env, key, timeout);
        return new RankGroup(env, key, joined.links(), joined.members());
    }

    /** EFABENCH_TIMEOUT_S (a positive integer), else 60 s: the deadline for every rendezvous wait. */
    public static Duration defaultTimeout() {
        return timeoutFrom(System.getenv("EFABENCH_TIMEOUT_S"));
    }

    private static long noticeDelayMs(String value) {
        try {
            return value == null || value.isBlank() ? 0 : Math.min(5000, Math.max(0, Long.parseLong(value.strip())));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    static Duration timeoutFrom(String value) {
        if (value == null || value.isBlank()) {
            return Duration.ofSeconds(60);
        }
        long seconds;
        try {
            seconds = Long.parseLong(value.strip());
        } catch (NumberFormatException e) {
            throw new RankException("EFABENCH_TIMEOUT_S=\"" + value + "\" is not a positive integer (seconds)");
        }
        if (seconds < 1 || seconds > 31_536_000) {
            throw new RankException("EFABENCH_TIMEOUT_S=" + seconds + " is outside 1..31536000 seconds");
        }
        return Duration.ofSeconds(seconds);
    }

    RankGroup(RankEnv env, String key, Link[] links, Rendezvous.Member[] members) {
        this.env = env;
        this.key = key;
        this.links = links;
        int n = env.worldSize();
        this.names = new String[n];
        this.hosts = new String[n];
        this.notes = new java.util.concurrent.atomic.AtomicReferenceArray<>(n);
        this.pidsOnThisHost = new long[n];
        String here = hostname();
        for (int r = 0; r < n; r++) {
            pidsOnThisHost[r] = members[r].host().equals(here) ? members[r].pid() : -1;
            hosts[r] = members[r].host();
            names[r] = r == 0 && !env.isLeader()
                    ? "rank 0 (leader) at " + env.masterAddr() + ":" + env.masterPort()
                    : members[r].who();
        }
        this.arrived = new Collective[n];
        this.left = new boolean[n];
        this.dead = new boolean[n];
        for (int slot = 0; slot < SLOTS; slot++) {
            signals.set(slot, Long.MIN_VALUE);
        }
        for (int r = 0; r < n; r++) {
            if (links[r] != null) {
                int peer = r;
                Thread.ofPlatform().daemon().name("efabench-rank" + env.rank() + "-reader-" + r)
                        .start(() -> read(peer));
            }
        }
    }

    public int rank() {
        return env.rank();
    }

    public int size() {
        return env.worldSize();
    }

    public boolean isLeader() {
        return env.isLeader();
    }

    public RankEnv env() {
        return env;
    }

    public String key() {
        return key;
    }

    /** This host's name as the rendezvous reports it (from /proc: InetAddress can stall on DNS). */
    public static String hostname() {
        return Rendezvous.hostname();
    }

    /** The pid of {@code rank} when it runs on this host (as the rendezvous reported it), else -1. */
    public long pidOnThisHost(int rank) {
        return pidsOnThisHost[rank];
    }

    /** The host {@code rank} runs on, as it reported itself to the rendezvous. */
    public String host(int rank) {
        return hosts[rank];
    }

    /**
     * This rank's address as the group reached it, an IP literal: the local end of its socket to
     * rank 0 (a follower) or to rank 1 (rank 0: the address the followers connected to); null in
     * a group of one. Two ranks can meet there without resolving a host name.
     */
    public String address() {
        Link link = isLeader() ? (links.length > 1 ? links[1] : null) : links[0];
        if (link == null) {
            return null;
        }
        java.net.InetAddress a = link.socket().getLocalAddress();
        return a == null || a.isAnyLocalAddress() ? null : a.getHostAddress();
    }

    /** "rank 1 (node h)": a peer and its node, for failure and stall lines. */
    public String onNode(int rank) {
        return "rank " + rank + " (node " + hosts[rank] + ")";
    }

    /** "rank 1 (host h pid 123)", for messages about a peer. */
    public String describe(int rank) {
        return names[rank];
    }

    /**
     * What the rendezvous knows about ranks that are gone, for a failure message: after waiting at
     * most {@code grace} for a reader thread to notice a closed socket (it does within
     * milliseconds of a process's death; the wait ends as soon as a rank is known dead or the group
     * failed), {@code "; rank 1 (host h pid 123) died (its rendezvous connection closed)"} for every rank whose
     * socket to this rank ended without BYE, then the group's failure reason when the group failed
     * for another reason (on a follower: rank 0 telling of a follower's death). Empty when nothing
     * is known. Never throws.
     */
    public String describeLosses(Duration grace) {
        long deadline = System.nanoTime() + grace.toNanos();
        StringBuilder s = new StringBuilder();
        synchronized (lock) {
            while (!anyDead() && failure == null && !closed) {
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    break;
                }
                try {
                    lock.wait(Math.max(1, remaining / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            for (int r = 0; r < dead.length; r++) {
                if (dead[r]) {
                    s.append("; ").append(names[r]).append(" died (its rendezvous connection closed)");
                }
            }
            String f = failure;
            if (f != null && !f.startsWith(abortedBy(rank())) && !mentionsDeadRank(f)) {
                s.append("; ").append(f);
            }
        }
        return s.toString();
    }

    /** Ranks whose rendezvous socket to this rank ended without BYE, so far. */
    public List<Integer> deadRanks() {
        List<Integer> out = new ArrayList<>();
        synchronized (lock) {
            for (int r = 0; r < dead.length; r++) {
                if (dead[r]) {
                    out.add(r);
                }
            }
        }
        return out;
    }

    /** Called holding {@link #lock}. */
    private boolean anyDead() {
        for (boolean d : dead) {
            if (d) {
                return true;
            }
        }
        return false;
    }

    /** Called holding {@link #lock}: whether {@code reason} is this rank's own news of a death it already lists. */
    private boolean mentionsDeadRank(String reason) {
        for (int r = 0; r < dead.length; r++) {
            if (dead[r] && reason.startsWith(names[r] + " disconnected")) {
                return true;
            }
        }
        return false;
    }

    /** Every rank's bytes, indexed by rank. */
    public List<byte[]> allgather(String what, byte[] mine, Duration timeout) {
        return collective(OP_ALLGATHER, what, mine, timeout);
    }

    public void barrier(String what, Duration timeout) {
        collective(OP_BARRIER, what, new byte[0], timeout);
    }

    /** Rank 0 only: sets {@code slot} to {@code value} on every rank, in order with other frames. */
    public void signal(int slot, long value) {
        if (!isLeader()) {
            throw new RankException("rank " + rank() + ": signal(" + slot + ") is for rank 0 only");
        }
        checkSlot(slot);
        throwIfFailed("signal " + slot);
        signals.set(slot, value);
        byte[] body = Link.body(out -> {
            out.writeByte(slot);
            out.writeLong(value);
        });
        for (int r = 1; r < links.length; r++) {
            if (!hasLeft(r) && !sendTo(r, Link.SIGNAL, body)) {
                throw failed("rank 0: signal " + slot + " could not reach " + names[r], -1);
            }
        }
    }

    /**
     * A follower tells rank 0 what a wait of its that stalled sees (which channel, which NIC is
     * down), so rank 0's failure line can carry it. Best effort, off the hot path; rank 0's own
     * note goes nowhere.
     */
    public void note(String text) {
        if (!isLeader()) {
            sendTo(0, Link.NOTE, Link.text(text));
        }
    }

    /** Rank 0: the latest note of {@code rank} if it came at most {@code maxAgeNanos} ago, else null. */
    public String noteOf(int rank, long maxAgeNanos) {
        Note n = notes.get(rank);
        return n == null || System.nanoTime() - n.at() > maxAgeNanos ? null : n.text();
    }

    private record Note(String text, long at) {}

    /**
     * Lets the layer above (a trial, which knows its NICs) say what this rank's links look like
     * when a wait on the group runs out: a node cut off from the network runs out in an allgather
     * as often as in a fabric wait, and its line should name its NICs that are down either way.
     * {@code context} gets the peer waited on (-1: several) and returns text starting "; ", or "";
     * null restores the default (nothing).
     */
    public void explainTimeoutsWith(IntFunction<String> context) {
        timeoutContext = context == null ? peer -> "" : context;
    }

    /**
     * "; this rank's socket to rank 0 leaves through NIC mgmt0 (198.19.0.2), whose link is down"
     * (said only when it is down), then the context the layer above gives: what a timed-out wait
     * on {@code peer} (-1: several) appends. Asks the socket, not the name service, so it cannot
     * block on a name.
     */
    private String timeoutContext(int peer) {
        StringBuilder b = new StringBuilder();
        Link link = peer >= 0 && peer < links.length ? links[peer] : null;
        if (link != null) {
            try {
                java.net.InetAddress local = link.socket().getLocalAddress();
                java.net.NetworkInterface nic = java.net.NetworkInterface.getByInetAddress(local);
                if (nic != null && !nic.isUp()) {
                    b.append("; this rank's socket to rank ").append(peer).append(" leaves through ")
                            .append(Rendezvous.describe(nic, local));
                }
            } catch (java.io.IOException | RuntimeException e) {
                // the line goes out without it
            }
        }
        try {
            b.append(timeoutContext.apply(peer));
        } catch (RuntimeException e) {
            b.append("; (what this rank's links look like could not be read: ").append(e).append(')');
        }
        return b.toString();
    }

    /** The latest value of {@code slot}, or Long.MIN_VALUE before the first signal. A volatile read. */
    public long signalled(int slot) {
        return signals.get(slot);
    }

    /** Waits until {@code slot} holds at least {@code atLeast}; returns the value seen. */
    public long awaitSignal(int slot, long atLeast, Duration timeout, String what) {
        checkSlot(slot);
        long deadline = System.nanoTime() + timeout.toNanos();
        String timedOut;
        synchronized (lock) {
            while (true) {
                long value = signals.get(slot);
                if (value >= atLeast) {
                    return value;
                }
                String doing = "waiting for signal " + what + " (slot " + slot + " >= " + atLeast + ")";
                throwIfFailed(doing);
                throwIfClosed(doing);
                if (left[0] && !isLeader()) {
                    throw new RankException(prefix() + names[0] + " closed the group while rank " + rank()
                            + " was " + doing);
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    timedOut = prefix() + "no signal " + what + " (slot " + slot + " >= " + atLeast + ") from rank 0"
                            + " within " + Rendezvous.seconds(timeout) + " (latest: " + describeSignal(value) + ")";
                    break;
                }
                waitNanos(remaining);
            }
        }
        throw failed(timedOut + timeoutContext(0), -1);
    }

    /**
     * Throws if the group failed. For busy-poll loops: one volatile read, no allocation while alive.
     */
    public void checkAlive() {
        String f = failure;
        if (f != null) {
            throw new RankException(f);
        }
    }

    /**
     * Fails the group on every rank (best effort) with "rank N (node h) aborted: reason": the peers'
     * lines name the rank that gave up and its node, as their own deadlines' lines do.
     */
    public void abort(String reason) {
        fail(abortedBy(rank()) + reason, -1);
    }

    /** How an abort by {@code rank} begins: "rank 1 (node h) aborted: ". */
    private String abortedBy(int rank) {
        return onNode(rank) + " aborted: ";
    }

    /**
     * Says BYE, so peers do not take this close for a death, then closes the sockets. Idempotent.
     * It does not wait for the peers: their BYE or EOF after ours is expected, and data they sent
     * before our FIN stays readable on their side even if our close resets the connection.
     */
    @Override
    public void close() {
        boolean graceful;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            lock.notifyAll();
            // Let a reader thread finish forwarding an ABORT before the sockets go.
            long deadline = System.nanoTime() + ABORT_SEND_WAIT_NANOS;
            while (claimedFailure != null && failure == null && System.nanoTime() < deadline) {
                try {
                    lock.wait(10);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            graceful = claimedFailure == null;
        }
        for (Link link : links) {
            if (link != null) {
                if (graceful) {
                    link.trySend(Link.BYE, new byte[0]);
                }
                link.shutdownOutput();
                link.close();
            }
        }
    }

    private List<byte[]> collective(byte op, String what, byte[] mine, Duration timeout) {
        synchronized (collectiveLock) {
            return collectiveInOrder(op, what, mine, timeout);
        }
    }

    private List<byte[]> collectiveInOrder(byte op, String what, byte[] mine, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Collective my;
        synchronized (lock) {
            if (closed) {
                throw new RankException(prefix() + "the group is closed");
            }
            my = new Collective(++seq, op, what, mine, null);
        }
        throwIfFailed(my.describe());
        if (size() == 1) {
            return List.of(mine);
        }
        return isLeader() ? leaderCollective(my, deadline, timeout) : followerCollective(my, deadline, timeout);
    }

    private List<byte[]> leaderCollective(Collective my, long deadline, Duration timeout) {
        byte[][] all = new byte[size()][];
        all[0] = my.payload();
        String error = null;
        int timedOutOn = Integer.MIN_VALUE;
        synchronized (lock) {
            while (error == null) {
                throwIfFailed(my.describe());
                throwIfClosed(my.describe());
                List<Integer> missing = new ArrayList<>();
                for (int r = 1; r < size() && error == null; r++) {
                    Collective c = arrived[r];
                    if (c == null && left[r]) {
                        error = "rank 0: " + names[r] + " closed the group before " + my.describe();
                    } else if (c == null) {
                        missing.add(r);
                    } else if (c.seq() != my.seq() || c.op() != my.op() || !c.what().equals(my.what())) {
                        error = "rank " + r + " is in " + c.describe() + " (#" + c.seq() + ") but rank 0 is in "
                                + my.describe() + " (#" + my.seq() + ")";
                    }
                }
                if (error != null || missing.isEmpty()) {
                    break;
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    String who = missing.size() == 1 ? "rank " + missing.get(0) + " (node " + host(missing.get(0)) + ")"
                            : "ranks " + missing;
                    error = "rank 0: " + my.describe() + ": " + who + " did not arrive within "
                            + Rendezvous.seconds(timeout) + " (arrived: " + arrivedList(missing) + ")";
                    timedOutOn = missing.size() == 1 ? missing.get(0) : -1;
                    break;
                }
                waitNanos(remaining);
            }
            if (error == null) {
                for (int r = 1; r < size(); r++) {
                    all[r] = arrived[r].payload();
                    arrived[r] = null;
                }
            }
        }
        if (error != null) {
            throw failed(timedOutOn == Integer.MIN_VALUE ? error : error + timeoutContext(timedOutOn), -1);
        }
        byte op = my.op();
        byte[] body = Link.body(out -> {
            out.writeInt(my.seq());
            out.writeInt(op == OP_BARRIER ? 0 : all.length);
            if (op != OP_BARRIER) {
                for (byte[] b : all) {
                    Link.writeBytes(out, b);
                }
            }
        });
        for (int r = 1; r < size(); r++) {
            if (!sendTo(r, Link.GATHERED, body)) {
                throw failed("rank 0: " + my.describe() + ": could not answer " + names[r]
                        + " (disconnected: its process probably died)", -1);
            }
        }
        return Collections.unmodifiableList(Arrays.asList(all));
    }

    private List<byte[]> followerCollective(Collective my, long deadline, Duration timeout) {
        byte[] body = Link.body(out -> {
            out.writeInt(my.seq());
            out.writeByte(my.op());
            Link.writeString(out, my.what());
            Link.writeBytes(out, my.payload());
        });
        if (!sendTo(0, Link.GATHER, body)) {
            throw failed(prefix() + my.describe() + ": " + names[0] + " disconnected", -1);
        }
        Collective reply = null;
        synchronized (lock) {
            while (answer == null) {
                throwIfFailed(my.describe());
                throwIfClosed(my.describe());
                if (left[0]) {
                    throw new RankException(prefix() + names[0] + " closed the group while rank " + rank()
                            + " was in " + my.describe());
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    break;
                }
                waitNanos(remaining);
            }
            if (answer != null) {
                reply = answer;
                answer = null;
            }
        }
        if (reply == null) {
            throw failed(prefix() + my.describe() + ": no answer from rank 0 (leader) within "
                    + Rendezvous.seconds(timeout) + timeoutContext(0), -1);
        }
        if (reply.seq() != my.seq()) {
            throw failed(prefix() + my.describe() + " is collective #" + my.seq() + " but rank 0 answered #"
                    + reply.seq(), -1);
        }
        return my.op() == OP_BARRIER ? List.of() : reply.all();
    }

    /** Reader thread for one socket: decodes frames into state and turns a silent EOF into a failure. */
    private void read(int peer) {
        Link link = links[peer];
        String cause;
        try {
            while (true) {
                Link.Frame frame = link.read();
                DataInputStream in = frame.data();
                switch (frame.kind()) {
                    case Link.GATHER -> onGather(peer, in);
                    case Link.GATHERED -> onGathered(in);
                    case Link.SIGNAL -> onSignal(in);
                    case Link.ABORT -> fail(Link.readString(in), peer);
                    case Link.BYE -> onBye(peer);
                    case Link.NOTE -> notes.set(peer, new Note(Link.readString(in), System.nanoTime()));
                    default -> throw new IOException("unknown frame kind " + frame.kind());
                }
            }
        } catch (EOFException e) {
            cause = null;
        } catch (IOException | RuntimeException e) {
            cause = e.getMessage() == null ? e.toString() : e.getMessage();
        }
        if (NOTICE_DELAY_MS > 0) {
            try {
                Thread.sleep(NOTICE_DELAY_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (lock) {
            if (closed || left[peer]) {
                lock.notifyAll();
                return;
            }
            dead[peer] = true;
        }
        String how = cause == null ? "" : " (" + cause + ")";
        fail(peer == 0 && !isLeader()
                ? names[0] + " disconnected" + how
                : names[peer] + " disconnected" + how + ": its process probably died", peer);
    }

    private void onGather(int peer, DataInputStream in) throws IOException {
        Collective c = new Collective(in.readInt(), in.readByte(), Link.readString(in), Link.readBytes(in), null);
        synchronized (lock) {
            if (arrived[peer] != null) {
                throw new IOException(names[peer] + " started " + c.describe() + " before " + arrived[peer].describe()
                        + " completed");
            }
            arrived[peer] = c;
            lock.notifyAll();
        }
    }

    private void onGathered(DataInputStream in) throws IOException {
        int s = in.readInt();
        int n = in.readInt();
        byte[][] all = new byte[n][];
        for (int r = 0; r < n; r++) {
            all[r] = Link.readBytes(in);
        }
        synchronized (lock) {
            answer = new Collective(s, (byte) 0, "", null, Collections.unmodifiableList(Arrays.asList(all)));
            lock.notifyAll();
        }
    }

    private void onSignal(DataInputStream in) throws IOException {
        int slot = in.readUnsignedByte();
        long value = in.readLong();
        if (slot >= SLOTS) {
            throw new IOException("signal slot " + slot + " is outside 0.." + (SLOTS - 1));
        }
        signals.set(slot, value);
        synchronized (lock) {
            lock.notifyAll();
        }
    }

    private void onBye(int peer) {
        synchronized (lock) {
            left[peer] = true;
            lock.notifyAll();
        }
    }

    /**
     * Marks the group failed (the first reason wins) and passes the reason on: rank 0 to every
     * follower but the one it came from, a follower to rank 0 unless rank 0 told it. The reason
     * is sent before it is published, so no local waiter can wake up, throw and close the sockets
     * while the ABORT frames are still unsent.
     */
    private void fail(String reason, int fromPeer) {
        synchronized (lock) {
            if (claimedFailure != null) {
                return;
            }
            claimedFailure = reason;
        }
        byte[] body = Link.text(reason);
        for (int r = 0; r < links.length; r++) {
            if (links[r] != null && r != fromPeer && !hasLeft(r)) {
                links[r].trySend(Link.ABORT, body);
            }
        }
        synchronized (lock) {
            failure = reason;
            lock.notifyAll();
        }
    }

    /** Fails the group with {@code reason}; the exception carries whichever reason came first. */
    private RankException failed(String reason, int fromPeer) {
        fail(reason, fromPeer);
        synchronized (lock) {
            return new RankException(claimedFailure);
        }
    }

    private void throwIfFailed(String doing) {
        String f = failure;
        if (f != null) {
            throw new RankException(prefix() + doing + " failed: " + f);
        }
    }

    /** Called holding {@link #lock}. */
    private void throwIfClosed(String doing) {
        if (closed) {
            throw new RankException(prefix() + "the group was closed during " + doing);
        }
    }

    private boolean sendTo(int r, byte kind, byte[] body) {
        return links[r] != null && links[r].trySend(kind, body);
    }

    private boolean hasLeft(int r) {
        synchronized (lock) {
            return left[r];
        }
    }

    private String arrivedList(List<Integer> missing) {
        StringBuilder s = new StringBuilder("0");
        for (int r = 1; r < size(); r++) {
            if (!missing.contains(r)) {
                s.append(", ").append(r);
            }
        }
        return s.toString();
    }

    private static String describeSignal(long value) {
        return value == Long.MIN_VALUE ? "none" : Long.toString(value);
    }

    private String prefix() {
        return "rank " + rank() + ": ";
    }

    private static void checkSlot(int slot) {
        if (slot < 0 || slot >= SLOTS) {
            throw new RankException("signal slot " + slot + " is outside 0.." + (SLOTS - 1));
        }
    }

    /** Called holding {@link #lock}. */
    private void waitNanos(long nanos) {
        try {
            lock.wait(Math.max(1, nanos / 1_000_000), 0);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RankException(prefix() + "interrupted while waiting on the rank group");
        }
    }
}

package io.efabench.rank;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Forms a group: rank 0 listens on MASTER_PORT, the others connect, everyone says who it is,
 * and rank 0 answers WELCOME once all ranks are in (or REFUSE/ABORT with the reason).
 */
final class Rendezvous {
    /** Followers wait this much longer than rank 0 for WELCOME, so rank 0's reason arrives first. */
    static final long FOLLOWER_GRACE_NANOS = Duration.ofSeconds(2).toNanos();
    /**
     * A follower that asks before rank 0 listens (a sweep's pair trials, opened at once on both
     * nodes) retries after this, doubling: at 50 ms a third of a pair trial's opening was the
     * follower asleep after rank 0 was ready (the sweep's profile, 2026-12-02).
     */
    private static final long BACKOFF_MIN_MILLIS = 5;
    private static final long BACKOFF_MAX_MILLIS = 200;

    private Rendezvous() {
    }

    record Member(int rank, int worldSize, String key, String host, long pid) {
        byte[] encode() {
            return Link.body(out -> {
                out.writeInt(rank);
                out.writeInt(worldSize);
                Link.writeString(out, key);
                Link.writeString(out, host);
                out.writeLong(pid);
            });
        }

        static Member decode(DataInputStream in) throws IOException {
            return new Member(in.readInt(), in.readInt(), Link.readString(in), Link.readString(in), in.readLong());
        }

        String who() {
            return "rank " + rank + " (host " + host + " pid " + pid + ")";
        }
    }

    /** What a rendezvous hands the group it formed: a link per peer rank (null where none) and every member. */
    record Joined(Link[] links, Member[] members) {}

    /**
     * "; the route to it leaves through NIC mgmt0 (198.19.0.2), whose link is down": the local
     * interface the kernel picks for {@code host} (a UDP connect sends nothing) and its state, for
     * the line of a rendezvous that could not be reached; empty when unknown.
     */
    static String route(String host) {
        try (java.net.DatagramSocket probe = new java.net.DatagramSocket()) {
            probe.connect(new InetSocketAddress(java.net.InetAddress.getByName(host), 9));
            java.net.InetAddress local = probe.getLocalAddress();
            java.net.NetworkInterface nic = local == null ? null : java.net.NetworkInterface.getByInetAddress(local);
            if (nic == null) {
                return "; no route to it from this node";
            }
            return "; the route to it leaves through " + describe(nic, local);
        } catch (IOException | RuntimeException e) {
            return "; no route to it from this node (" + (e.getMessage() != null ? e.getMessage() : e) + ")";
        }
    }

    /** "NIC mgmt0 (198.19.0.2), whose link is down": {@code nic}, which holds {@code local}, and its state. */
    static String describe(java.net.NetworkInterface nic, java.net.InetAddress local) throws java.net.SocketException {
        return "NIC " + nic.getName() + " (" + local.getHostAddress() + "), whose link is " + (nic.isUp() ? "up" : "down");
    }

    static Member self(RankEnv env, String key) {
        return new Member(env.rank(), env.worldSize(), key, hostname(), ProcessHandle.current().pid());
    }

    static Joined follow(RankEnv env, String key, Duration timeout) {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        String where = env.masterAddr() + ":" + env.masterPort();
        String prefix = "rank " + env.rank() + ": ";
        String lastError = "none";
        long backoff = BACKOFF_MIN_MILLIS;
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new RankException(prefix + "could not reach rank 0 at " + where + " for " + key
                        + " within " + seconds(timeout) + " (last error: " + lastError + ")" + route(env.masterAddr()));
            }
            Socket socket = new Socket();
            Link link = null;
            boolean kept = false;
            try {
                socket.connect(new InetSocketAddress(env.masterAddr(), env.masterPort()),
                        (int) Math.max(1, Math.min(2_000, left / 1_000_000)));
                link = new Link(socket);
                link.sendPreamble();
                link.setReadTimeoutMillis(Math.max(1, left / 1_000_000));
                int version;
                try {
                    version = link.readPreamble();
                } catch (SocketTimeoutException e) {
                    throw new RankException(prefix + where + " accepted the connection but did not answer the"
                            + " efabench handshake within " + seconds(timeout) + " (is it an efabench rendezvous?)");
                }
                if (version < 0) {
                    throw new RankException(prefix + "MASTER_ADDR:MASTER_PORT " + where
                            + " answered but is not an efabench rendezvous");
                }
                if (version != Link.VERSION) {
                    throw new RankException(prefix + "rank 0 at " + where + " speaks rendezvous protocol v" + version
                            + " but rank " + env.rank() + " speaks v" + Link.VERSION + " (different efabench builds?)");
                }
                link.send(Link.HELLO, self(env, key).encode());
                Joined joined = awaitWelcome(link, env, key, deadline + FOLLOWER_GRACE_NANOS, timeout);
                kept = true;
                return joined;
            } catch (UnknownHostException e) {
                lastError = "unknown host " + env.masterAddr();
            } catch (ConnectException | NoRouteToHostException | SocketTimeoutException e) {
                lastError = e.getMessage() == null ? e.toString() : e.getMessage();
            } catch (IOException e) {
                // A listener that closed while we sat in its backlog; the next rank 0 may bind soon.
                lastError = "the connection closed during the handshake (" + e + ")";
            } finally {
                if (!kept) {
                    closeQuietly(socket);
                }
            }
            sleepMillis(Math.min(backoff, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)));
            backoff = Math.min(backoff * 2, BACKOFF_MAX_MILLIS);
        }
    }

    /** After HELLO a retry would make rank 0 see this rank twice, so every failure here is final. */
    private static Joined awaitWelcome(Link link, RankEnv env, String key, long deadline, Duration timeout) {
        try {
            return readWelcome(link, env, key, deadline, timeout);
        } catch (IOException e) {
            throw new RankException("rank " + env.rank() + ": bad WELCOME from rank 0 at " + env.masterAddr() + ":"
                    + env.masterPort() + " (" + e + ")");
        }
    }

    private static Joined readWelcome(Link link, RankEnv env, String key, long deadline, Duration timeout)
            throws IOException {
        String prefix = "rank " + env.rank() + ": ";
        link.setReadTimeoutMillis(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
        Link.Frame frame;
        try {
            frame = link.read();
        } catch (SocketTimeoutException e) {
            throw new RankException(prefix + "the group for " + key + " did not form within " + seconds(timeout)
                    + " (rank 0 at " + env.masterAddr() + ":" + env.masterPort()
                    + " did not confirm; its log names the missing ranks)");
        } catch (IOException e) {
            throw new RankException(prefix + "rank 0 at " + env.masterAddr() + ":" + env.masterPort()
                    + " closed the connection before the group formed (" + e + ")");
        }
        DataInputStream in = frame.data();
        switch (frame.kind()) {
            case Link.WELCOME -> {
                int n = in.readInt();
                if (n != env.worldSize()) {
                    throw new RankException(prefix + "rank 0 formed a group of " + n + " but this rank expects "
                            + env.worldSize());
                }
                Member[] members = new Member[n];
                for (int r = 0; r < n; r++) {
                    members[r] = new Member(r, n, key, Link.readString(in), in.readLong());
                }
                link.setReadTimeoutMillis(0);
                Link[] links = new Link[n];
                links[0] = link;
                return new Joined(links, members);
            }
            case Link.REFUSE, Link.ABORT -> throw new RankException(Link.readString(in));
            default -> throw new RankException(prefix + "rank 0 sent frame kind " + frame.kind()
                    + " instead of WELCOME (a different efabench build?)");
        }
    }

    static void abortAll(Link[] links, String message) {
        byte[] body = Link.text(message);
        for (Link link : links) {
            if (link != null) {
                link.trySend(Link.ABORT, body);
            }
        }
    }

    static List<Integer> missing(Member[] members) {
        List<Integer> ranks = new ArrayList<>();
        for (int r = 0; r < members.length; r++) {
            if (members[r] == null) {
                ranks.add(r);
            }
        }
        return ranks;
    }

    static String present(Member[] members) {
        StringBuilder s = new StringBuilder();
        for (int r = 0; r < members.length; r++) {
            if (members[r] != null) {
                s.append(s.isEmpty() ? "" : ", ").append(r);
            }
        }
        return s.toString();
    }

    static String seconds(Duration d) {
        long millis = d.toMillis();
        return millis % 1000 == 0 ? (millis / 1000) + " s" : String.format("%.1f s", millis / 1000.0);
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // never connected, or already gone
        }
    }

    private static void sleepMillis(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RankException("interrupted while waiting for rank 0");
        }
    }

    /** /proc is instant; InetAddress.getLocalHost() can stall on DNS. */
    static String hostname() {
        try {
            String name = Files.readString(Path.of("/proc/sys/kernel/hostname")).strip();
            if (!name.isEmpty()) {
                return name;
            }
        } catch (IOException | RuntimeException ignored) {
            // not Linux
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "unknown-host";
        }
    }
}

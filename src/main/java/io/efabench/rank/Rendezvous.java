package io.efabench.rank;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.BindException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.NoRouteToHostException;
import java.net.ServerSocket;
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
    /** A connection that sends no preamble this fast is not a rank (ranks send it at once). */
    private static final long PREAMBLE_WAIT_MILLIS = 5_000;
    private static final long BACKOFF_MIN_MILLIS = 50;
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

    static Member self(RankEnv env, String key) {
        return new Member(env.rank(), env.worldSize(), key, hostname(), ProcessHandle.current().pid());
    }

    static RankGroup lead(RankEnv env, String key, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        int n = env.worldSize();
        Member[] members = new Member[n];
        members[0] = self(env, key);
        Link[] links = new Link[n];
        boolean formed = false;
        warnIfNotLocal(env);
        try (ServerSocket server = bind(env)) {
            int joined = 1;
            while (joined < n) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new RankException("rendezvous for " + key + ": ranks " + missing(members)
                            + " did not join within " + seconds(timeout) + " (joined: " + present(members) + ")");
                }
                server.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, left / 1_000_000)));
                Socket socket;
                try {
                    socket = server.accept();
                } catch (SocketTimeoutException e) {
                    continue;
                }
                Member m = greet(new Link(socket), env, key, members, links, left);
                if (m != null) {
                    joined++;
                }
            }
            byte[] welcome = Link.body(out -> {
                out.writeInt(n);
                for (Member m : members) {
                    Link.writeString(out, m.host());
                    out.writeLong(m.pid());
                }
            });
            for (int r = 1; r < n; r++) {
                if (!links[r].trySend(Link.WELCOME, welcome)) {
                    throw new RankException("rendezvous for " + key + ": " + members[r].who()
                            + " disconnected before the group formed");
                }
            }
            formed = true;
            return new RankGroup(env, key, links, members);
        } catch (RankException e) {
            abortAll(links, e.getMessage());
            throw e;
        } catch (IOException e) {
            String message = "rank 0: rendezvous for " + key + " on port " + env.masterPort() + " failed: " + e;
            abortAll(links, message);
            throw new RankException(message, e);
        } finally {
            if (!formed) {
                for (Link link : links) {
                    if (link != null) {
                        link.close();
                    }
                }
            }
        }
    }

    /**
     * Takes one incoming connection: returns the member it admitted, or null for a connection that
     * is not an efabench rank. Throws when the rank must be refused; the refusal fails the group.
     */
    private static Member greet(Link link, RankEnv env, String key, Member[] members, Link[] links, long leftNanos)
            throws IOException {
        Member hello;
        try {
            link.setReadTimeoutMillis(Math.max(1, Math.min(PREAMBLE_WAIT_MILLIS, leftNanos / 1_000_000)));
            int version = link.readPreamble();
            if (version < 0) {
                System.err.println("efabench rank 0: ignored a connection from " + link.remote()
                        + " on port " + env.masterPort() + ": not an efabench rank");
                link.close();
                return null;
            }
            link.sendPreamble();
            if (version != Link.VERSION) {
                String message = "a rank on " + link.remote() + " speaks rendezvous protocol v" + version
                        + " but rank 0 speaks v" + Link.VERSION + " (different efabench builds?)";
                link.trySend(Link.REFUSE, Link.text(message));
                link.close();
                throw new RankException(message);
            }
            Link.Frame frame = link.read();
            if (frame.kind() != Link.HELLO) {
                throw new IOException("expected HELLO, got frame kind " + frame.kind());
            }
            hello = Member.decode(frame.data());
            link.setReadTimeoutMillis(0);
        } catch (IOException e) {
            // Also a rank whose connection broke mid-handshake: it reconnects and says HELLO again.
            System.err.println("efabench rank 0: dropped a connection from " + link.remote()
                    + " that did not complete the handshake: " + e);
            link.close();
            return null;
        }
        String problem = refusal(hello, env, key, members);
        if (problem != null) {
            link.trySend(Link.REFUSE, Link.text(problem));
            link.close();
            throw new RankException(problem);
        }
        members[hello.rank()] = hello;
        links[hello.rank()] = link;
        return hello;
    }

    private static String refusal(Member hello, RankEnv env, String key, Member[] members) {
        if (hello.worldSize() != env.worldSize()) {
            return hello.who() + " has world size " + hello.worldSize() + " but rank 0 has " + env.worldSize();
        }
        if (hello.rank() < 0 || hello.rank() >= env.worldSize()) {
            return hello.who() + " is outside 0.." + (env.worldSize() - 1);
        }
        if (hello.rank() == 0) {
            return "two processes claim rank 0: " + members[0].who() + " (the leader) and host "
                    + hello.host() + " pid " + hello.pid();
        }
        Member earlier = members[hello.rank()];
        if (earlier != null) {
            return "rank " + hello.rank() + " joined twice: host " + earlier.host() + " pid " + earlier.pid()
                    + " and host " + hello.host() + " pid " + hello.pid();
        }
        if (!hello.key().equals(key)) {
            return "rank " + hello.rank() + " runs \"" + hello.key() + "\" but rank 0 runs \"" + key + "\"";
        }
        return null;
    }

    private static ServerSocket bind(RankEnv env) throws IOException {
        ServerSocket server = new ServerSocket();
        // Consecutive JMH forks rebind the same port at once while the last one's sockets sit in TIME_WAIT.
        server.setReuseAddress(true);
        try {
            // The wildcard: under Slurm MASTER_ADDR is a host name that may resolve to any of this node's addresses.
            server.bind(new InetSocketAddress(env.masterPort()), 128);
        } catch (BindException e) {
            server.close();
            throw new RankException("MASTER_PORT " + env.masterPort() + " on " + env.masterAddr()
                    + " is already in use (another job or a stale rank?)");
        }
        return server;
    }

    /**
     * Rank 0 binds the wildcard, so a MASTER_ADDR naming another host binds fine here and the
     * followers then time out looking for rank 0 there; say so up front.
     */
    private static void warnIfNotLocal(RankEnv env) {
        try {
            for (InetAddress a : InetAddress.getAllByName(env.masterAddr())) {
                if (a.isLoopbackAddress() || a.isAnyLocalAddress() || NetworkInterface.getByInetAddress(a) != null) {
                    return;
                }
            }
            System.err.println("efabench rank 0: warning: MASTER_ADDR " + env.masterAddr()
                    + " is not an address of this host (" + hostname() + "); the other ranks will look for rank 0 there");
        } catch (IOException e) {
            System.err.println("efabench rank 0: warning: MASTER_ADDR " + env.masterAddr()
                    + " does not resolve here (" + e.getMessage() + "); the other ranks may not find rank 0");
        }
    }

    static RankGroup follow(RankEnv env, String key, Duration timeout) {
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
                        + " within " + seconds(timeout) + " (last error: " + lastError + ")");
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
                RankGroup group = awaitWelcome(link, env, key, deadline + FOLLOWER_GRACE_NANOS, timeout);
                kept = true;
                return group;
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
    private static RankGroup awaitWelcome(Link link, RankEnv env, String key, long deadline, Duration timeout) {
        try {
            return readWelcome(link, env, key, deadline, timeout);
        } catch (IOException e) {
            throw new RankException("rank " + env.rank() + ": bad WELCOME from rank 0 at " + env.masterAddr() + ":"
                    + env.masterPort() + " (" + e + ")");
        }
    }

    private static RankGroup readWelcome(Link link, RankEnv env, String key, long deadline, Duration timeout)
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
                return new RankGroup(env, key, links, members);
            }
            case Link.REFUSE, Link.ABORT -> throw new RankException(Link.readString(in));
            default -> throw new RankException(prefix + "rank 0 sent frame kind " + frame.kind()
                    + " instead of WELCOME (a different efabench build?)");
        }
    }

    private static void abortAll(Link[] links, String message) {
        byte[] body = Link.text(message);
        for (Link link : links) {
            if (link != null) {
                link.trySend(Link.ABORT, body);
            }
        }
    }

    private static List<Integer> missing(Member[] members) {
        List<Integer> ranks = new ArrayList<>();
        for (int r = 0; r < members.length; r++) {
            if (members[r] == null) {
                ranks.add(r);
            }
        }
        return ranks;
    }

    private static String present(Member[] members) {
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

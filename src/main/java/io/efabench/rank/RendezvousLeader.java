package io.efabench.rank;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

import io.efabench.rank.Rendezvous.Member;

/** Rank 0's side of the rendezvous (docs/RANKS.md): bind, take every rank's handshake, welcome them. */
final class RendezvousLeader {
    /** A connection that has not said HELLO this long after it connected is not a rank (ranks send it at once). */
    static final long HANDSHAKE_MILLIS = 5_000;
    /** The leader's accept wait between two looks at the handshakes' outcomes. */
    private static final long ACCEPT_POLL_MILLIS = 50;

    private RendezvousLeader() {}

    /**
     * Rank 0: accepts connections until every rank said HELLO, within one deadline for the whole
     * join. Each handshake runs on its own virtual thread with its own deadline
     * ({@link #HANDSHAKE_MILLIS}, at most the join's): a stranger that connects and then sends
     * nothing, or trickles bytes, is dropped at it with one line and never holds up a rank.
     */
    static Rendezvous.Joined lead(RankEnv env, String key, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        int n = env.worldSize();
        Member[] members = new Member[n];
        members[0] = Rendezvous.self(env, key);
        Link[] links = new Link[n];
        BlockingQueue<Object> outcomes = new LinkedBlockingQueue<>();
        boolean formed = false;
        warnIfNotLocal(env);
        try (ServerSocket server = bind(env)) {
            int joined = 1;
            while (joined < n) {
                for (Object o; (o = outcomes.poll()) != null; ) {
                    if (o instanceof RankException refused) {
                        throw refused;
                    }
                    joined++;
                }
                if (joined == n) {
                    break;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    synchronized (members) {
                        throw new RankException("rendezvous for " + key + ": ranks " + Rendezvous.missing(members)
                                + " did not join within " + Rendezvous.seconds(timeout) + " (joined: " + Rendezvous.present(members)
                                + ")");
                    }
                }
                // Short accepts: the loop also collects the handshakes' outcomes.
                server.setSoTimeout((int) Math.max(1, Math.min(ACCEPT_POLL_MILLIS, left / 1_000_000)));
                Socket socket;
                try {
                    socket = server.accept();
                } catch (SocketTimeoutException e) {
                    continue;
                }
                Link link = new Link(socket);
                long handshakeEnds = System.nanoTime() + Math.min(left, HANDSHAKE_MILLIS * 1_000_000L);
                Thread.ofVirtual().name("efabench-handshake").start(() -> {
                    try {
                        if (greet(link, env, key, members, links, handshakeEnds) != null) {
                            outcomes.add(Boolean.TRUE);
                        }
                    } catch (RankException e) {
                        outcomes.add(e);
                    }
                });
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
            return new Rendezvous.Joined(links, members);
        } catch (RankException e) {
            synchronized (members) {
                Rendezvous.abortAll(links, e.getMessage());
            }
            throw e;
        } catch (IOException e) {
            String message = "rank 0: rendezvous for " + key + " on port " + env.masterPort() + " failed: " + e;
            synchronized (members) {
                Rendezvous.abortAll(links, message);
            }
            throw new RankException(message, e);
        } finally {
            if (!formed) {
                synchronized (members) {
                    for (Link link : links) {
                        if (link != null) {
                            link.close();
                        }
                    }
                }
            }
        }
    }

    /**
     * One incoming connection's handshake, on its own thread, ended by closing the link at
     * {@code endsAt} if not done by then: returns the member it admitted, or null for a connection
     * that is not an efabench rank or did not finish in time (one line each). Throws when the rank
     * must be refused; the refusal fails the group. Admission is under the lock of {@code members}.
     */
    private static Member greet(Link link, RankEnv env, String key, Member[] members, Link[] links, long endsAt) {
        java.util.concurrent.atomic.AtomicBoolean expired = new java.util.concurrent.atomic.AtomicBoolean();
        Thread closer = Thread.ofVirtual().name("efabench-handshake-deadline").start(() -> {
            try {
                Thread.sleep(Math.max(1, (endsAt - System.nanoTime() + 999_999) / 1_000_000));
                expired.set(true);
                link.close(); // wakes the handshake's blocked read: it is dropped below
            } catch (InterruptedException e) {
                // the handshake finished in time
            }
        });
        Member hello;
        try {
            link.setReadTimeoutMillis(Math.max(1, (endsAt - System.nanoTime()) / 1_000_000));
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
            closer.interrupt();
            closer.join();
            if (expired.get()) {
                throw new IOException("the handshake deadline passed");
            }
            link.setReadTimeoutMillis(0);
        } catch (IOException | InterruptedException e) {
            // Also a rank whose connection broke mid-handshake: it reconnects and says HELLO again.
            closer.interrupt();
            System.err.println("efabench rank 0: dropped a connection from " + link.remote() + " that did not complete the"
                    + " handshake" + (expired.get() ? " by its deadline (" + HANDSHAKE_MILLIS / 1000 + " s)" : "") + ": " + e);
            link.close();
            return null;
        }
        synchronized (members) {
            String problem = refusal(hello, env, key, members);
            if (problem != null) {
                link.trySend(Link.REFUSE, Link.text(problem));
                link.close();
                throw new RankException(problem);
            }
            members[hello.rank()] = hello;
            links[hello.rank()] = link;
        }
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
                    + " is not an address of this host (" + Rendezvous.hostname() + "); the other ranks will look for rank 0 there");
        } catch (IOException e) {
            System.err.println("efabench rank 0: warning: MASTER_ADDR " + env.masterAddr()
                    + " does not resolve here (" + e.getMessage() + "); the other ranks may not find rank 0");
        }
    }
}

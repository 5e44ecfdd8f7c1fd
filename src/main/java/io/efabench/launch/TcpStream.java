package io.efabench.launch;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Locale;

/**
 * A plain TCP stream, the ground truth a link is held against (the testbed's {@code links}): what a
 * kernel TCP connection delivers over it, measured at the receiver from its first byte to the
 * sender's close. Not a benchmark: one connection, 1 MiB writes, no tuning.
 *
 * <pre>
 * java -cp benchmarks.jar io.efabench.launch.TcpStream receive ADDR PORT TIMEOUT_S
 *     -> "delivered BYTES bytes in SECONDS s: GBPS Gbps" (Gbps = 1e9 bit/s, payload only)
 * java -cp benchmarks.jar io.efabench.launch.TcpStream send ADDR PORT SECONDS [FROM_ADDR]
 * </pre>
 * Exit 0; 2 with one line on bad arguments; 1 with one line when the stream fails or times out.
 */
public final class TcpStream {
    private static final int CHUNK = 1 << 20;

    private TcpStream() {
    }

    public static void main(String[] args) {
        try {
            if (args.length == 4 && args[0].equals("receive")) {
                System.out.println(receive(InetAddress.getByName(args[1]), port(args[2]), seconds(args[3])));
            } else if ((args.length == 4 || args.length == 5) && args[0].equals("send")) {
                send(InetAddress.getByName(args[1]), port(args[2]), seconds(args[3]),
                        args.length == 5 ? InetAddress.getByName(args[4]) : null);
            } else {
                System.err.println("usage: TcpStream receive ADDR PORT TIMEOUT_S | send ADDR PORT SECONDS [FROM_ADDR]");
                System.exit(2);
            }
        } catch (IllegalArgumentException e) {
            System.err.println("TcpStream: " + e.getMessage());
            System.exit(2);
        } catch (IOException e) {
            System.err.println("TcpStream " + args[0] + " " + args[1] + ":" + args[2] + ": " + e);
            System.exit(1);
        }
    }

    private static int port(String s) {
        int p = Integer.parseInt(s);
        if (p < 1 || p > 65535) {
            throw new IllegalArgumentException("port " + s + " is not 1-65535");
        }
        return p;
    }

    private static double seconds(String s) {
        double v = Double.parseDouble(s);
        if (!(v > 0 && v <= 3600)) {
            throw new IllegalArgumentException("seconds " + s + " is not in (0, 3600]");
        }
        return v;
    }

    /** Accepts one sender on {@code addr:port}, reads to its close, and says what it delivered. */
    static String receive(InetAddress addr, int port, double timeoutS) throws IOException {
        int timeoutMs = (int) (timeoutS * 1000);
        try (ServerSocket server = new ServerSocket()) {
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(addr, port), 1);
            server.setSoTimeout(timeoutMs);
            try (Socket s = server.accept()) {
                s.setSoTimeout(timeoutMs);
                InputStream in = s.getInputStream();
                byte[] buf = new byte[CHUNK];
                int n = in.read(buf);
                long first = System.nanoTime();
                long bytes = 0;
                long last = first;
                while (n >= 0) {
                    n = in.read(buf);
                    if (n > 0) {
                        bytes += n;
                        last = System.nanoTime();
                    }
                }
                // The first read's bytes arrived before the clock started: not counted.
                double secs = (last - first) / 1e9;
                return String.format(Locale.ROOT, "delivered %d bytes in %.3f s: %.4f Gbps", bytes, secs,
                        secs > 0 ? bytes * 8 / secs / 1e9 : 0);
            }
        }
    }

    /** Writes to {@code addr:port} (from {@code from} when given) for {@code seconds}, then closes. */
    static void send(InetAddress addr, int port, double seconds, InetAddress from) throws IOException {
        try (Socket s = connect(addr, port, from)) {
            OutputStream out = s.getOutputStream();
            byte[] buf = new byte[CHUNK];
            long end = System.nanoTime() + (long) (seconds * 1e9);
            while (System.nanoTime() < end) {
                out.write(buf);
            }
        }
    }

    /** The receiver may still be starting: refused connections are retried for 20 s. */
    private static Socket connect(InetAddress addr, int port, InetAddress from) throws IOException {
        long end = System.nanoTime() + 20_000_000_000L;
        while (true) {
            Socket s = new Socket();
            try {
                if (from != null) {
                    s.bind(new InetSocketAddress(from, 0));
                }
                s.connect(new InetSocketAddress(addr, port), 10_000);
                return s;
            } catch (java.net.ConnectException e) {
                s.close();
                if (System.nanoTime() > end) {
                    throw e;
                }
                try {
                    Thread.sleep(100);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }
}

package io.efabench.rank;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;

/**
 * One rendezvous TCP connection carrying length-prefixed frames:
 * {@code int length, byte kind, body[length - 1]}. Before the first frame each side sends
 * {@link #MAGIC} and {@link #VERSION} so a foreign service on the port is recognised.
 */
final class Link implements AutoCloseable {
    /** "EFAB" */
    static final int MAGIC = 0x45464142;
    static final int VERSION = 1;
    /** Frames are control messages and fabric addresses; anything larger is a broken stream. */
    static final int MAX_FRAME = 64 << 20;

    /** follower -> leader: rank, world size, key, host, pid */
    static final byte HELLO = 1;
    /** leader -> follower: the group formed; host and pid of every rank */
    static final byte WELCOME = 2;
    /** leader -> follower: this rank may not join; one-line reason */
    static final byte REFUSE = 3;
    /** follower -> leader: seq, op, what, payload of one collective */
    static final byte GATHER = 4;
    /** leader -> follower: seq, every rank's payload */
    static final byte GATHERED = 5;
    /** leader -> follower: slot, value */
    static final byte SIGNAL = 6;
    /** either way: the group failed; one-line reason */
    static final byte ABORT = 7;
    /** either way: a normal close follows, so the EOF after it is not a death */
    static final byte BYE = 8;
    /** follower -> leader: what a stalled wait of the follower sees */
    static final byte NOTE = 9;

    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;

    Link(Socket socket) throws IOException {
        this.socket = socket;
        socket.setTcpNoDelay(true);
        socket.setKeepAlive(true);
        this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
        this.out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
    }

    Socket socket() {
        return socket;
    }

    String remote() {
        return socket.getInetAddress() == null ? "?" : socket.getInetAddress().getHostAddress();
    }

    void setReadTimeoutMillis(long millis) throws SocketException {
        socket.setSoTimeout((int) Math.clamp(millis, 0, Integer.MAX_VALUE));
    }

    synchronized void sendPreamble() throws IOException {
        out.writeInt(MAGIC);
        out.writeInt(VERSION);
        out.flush();
    }

    /** Reads the peer's preamble; returns its version, or -1 when the magic is wrong. */
    int readPreamble() throws IOException {
        if (in.readInt() != MAGIC) {
            return -1;
        }
        return in.readInt();
    }

    synchronized void send(byte kind, byte[] body) throws IOException {
        out.writeInt(body.length + 1);
        out.writeByte(kind);
        out.write(body);
        out.flush();
    }

    /** Best effort: for ABORT and BYE, where the peer may already be gone. */
    boolean trySend(byte kind, byte[] body) {
        try {
            send(kind, body);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Blocks for the next frame; {@link java.io.EOFException} when the peer closed cleanly. */
    Frame read() throws IOException {
        int length = in.readInt();
        if (length < 1 || length > MAX_FRAME) {
            throw new IOException("bad frame length " + length + " (not an efabench peer, or a corrupt stream)");
        }
        byte kind = in.readByte();
        byte[] body = new byte[length - 1];
        in.readFully(body);
        return new Frame(kind, body);
    }

    void shutdownOutput() {
        try {
            socket.shutdownOutput();
        } catch (IOException ignored) {
            // the peer is gone already; close() follows
        }
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // nothing left to release
        }
    }

    record Frame(byte kind, byte[] body) {
        DataInputStream data() {
            return new DataInputStream(new ByteArrayInputStream(body));
        }
    }

    /** Frame bodies are built on the control path only; allocation here is fine. */
    interface BodyWriter {
        void write(DataOutputStream out) throws IOException;
    }

    static byte[] body(BodyWriter writer) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            writer.write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return bytes.toByteArray();
    }

    static byte[] text(String message) {
        return body(out -> writeString(out, message));
    }

    static void writeString(DataOutputStream out, String s) throws IOException {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(utf8.length);
        out.write(utf8);
    }

    static String readString(DataInputStream in) throws IOException {
        return new String(readBytes(in), StandardCharsets.UTF_8);
    }

    static void writeBytes(DataOutputStream out, byte[] b) throws IOException {
        out.writeInt(b.length);
        out.write(b);
    }

    static byte[] readBytes(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > MAX_FRAME) {
            throw new IOException("bad field length " + n);
        }
        byte[] b = new byte[n];
        in.readFully(b);
        return b;
    }
}

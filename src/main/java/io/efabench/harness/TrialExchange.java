package io.efabench.harness;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;

import io.efabench.fabric.Channel;
import io.efabench.fabric.MemoryRegion;
import io.efabench.fabric.RemoteRegion;
import io.efabench.rank.RankGroup;

/**
 * What the ranks of a trial swap over the rank group at setup: every channel's fabric address
 * (inserted into the local channel's AV) and every buffer's regions. A message is a list of byte
 * strings: count, then (length, bytes) each.
 */
final class TrialExchange {
    private TrialExchange() {}

    /** fi_addr of rank r's channel c, as inserted into local channel c's AV: {@code result[r][c]} (own rank: zeros). */
    static long[][] addresses(RankGroup group, Channel[] channels, Duration timeout) {
        int rank = group.rank();
        ByteBuffer mine = encode(channels.length, c -> channels[c].name());
        List<byte[]> all = group.allgather("fabric addresses", mine.array(), timeout);
        long[][] addr = new long[group.size()][];
        for (int r = 0; r < addr.length; r++) {
            byte[][] names = decode(all.get(r));
            if (names.length != channels.length) {
                throw new BenchmarkSetupException("rank " + r + " opened " + names.length + " channels but rank " + rank
                        + " opened " + channels.length + "; use the same -p channels on every rank");
            }
            addr[r] = new long[channels.length];
            if (r == rank) {
                continue;
            }
            for (int c = 0; c < channels.length; c++) {
                addr[r][c] = channels[c].insertPeer(names[c]);
            }
        }
        return addr;
    }

    /** Every rank's regions (as registered per channel): {@code result[rank][channel]}. */
    static RemoteRegion[][] regions(RankGroup group, String what, MemoryRegion[] local, Duration timeout) {
        ByteBuffer mine = encode(local.length, c -> local[c].remote().encode());
        List<byte[]> all = group.allgather(what, mine.array(), timeout);
        RemoteRegion[][] out = new RemoteRegion[group.size()][];
        for (int r = 0; r < out.length; r++) {
            byte[][] chunks = decode(all.get(r));
            out[r] = new RemoteRegion[chunks.length];
            for (int c = 0; c < chunks.length; c++) {
                out[r][c] = RemoteRegion.decode(chunks[c]);
            }
        }
        return out;
    }

    private interface Chunk {
        byte[] get(int i);
    }

    private static ByteBuffer encode(int n, Chunk chunk) {
        byte[][] parts = new byte[n][];
        int len = 4;
        for (int i = 0; i < n; i++) {
            parts[i] = chunk.get(i);
            len += 4 + parts[i].length;
        }
        ByteBuffer b = ByteBuffer.allocate(len).putInt(n);
        for (byte[] p : parts) {
            b.putInt(p.length).put(p);
        }
        return b;
    }

    private static byte[][] decode(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        byte[][] parts = new byte[b.getInt()][];
        for (int i = 0; i < parts.length; i++) {
            parts[i] = new byte[b.getInt()];
            b.get(parts[i]);
        }
        return parts;
    }
}

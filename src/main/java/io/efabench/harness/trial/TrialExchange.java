package io.efabench.harness.trial;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;

import io.efabench.fabric.Channel;
import io.efabench.fabric.MemoryRegion;
import io.efabench.fabric.RemoteRegion;
import io.efabench.rank.RankGroup;
import io.efabench.harness.BenchmarkSetupException;

/**
 * What the ranks of a trial swap over the rank group at setup: every channel's fabric address
 * (inserted into the local channel's AV) and every buffer's regions. A message is a list of byte
 * strings: count, then (length, bytes) each.
 */
final class TrialExchange {
    private TrialExchange() {}

    /**
     * fi_addr of rank r's channel c, as inserted into local channel c's AV: {@code result[r][c]}
     * (own rank: zeros). Channel c of every rank talks to channel c of every other, so before any
     * address is inserted each channel's NIC and fabric travel too and a mis-railed plan fails with
     * one line ({@link #requireRailAligned}); {@code hosts} (by rank) names the nodes in it.
     */
    static Peers addresses(RankGroup group, Channel[] channels, List<String> hosts, Duration timeout) {
        int rank = group.rank();
        int n = channels.length;
        ByteBuffer mine = encode(2 * n, i -> i < n ? channels[i].name()
                : (channels[i - n].nic().fabricName() + "\n" + channels[i - n].nic().domainName()).getBytes(UTF_8));
        List<byte[]> all = group.allgather("fabric addresses", mine.array(), timeout);
        String[][] rails = new String[group.size()][];
        byte[][][] names = new byte[group.size()][][];
        for (int r = 0; r < names.length; r++) {
            byte[][] parts = decode(all.get(r));
            if (parts.length != 2 * n) {
                throw new BenchmarkSetupException("rank " + r + " opened " + parts.length / 2 + " channels but rank " + rank
                        + " opened " + n + "; use the same -p channels on every rank");
            }
            names[r] = java.util.Arrays.copyOfRange(parts, 0, n);
            rails[r] = new String[n];
            for (int c = 0; c < n; c++) {
                rails[r][c] = new String(parts[n + c], UTF_8);
            }
        }
        requireRailAligned(rank, rails, hosts);
        long[][] addr = new long[group.size()][n];
        String[][] nics = new String[group.size()][n];
        for (int r = 0; r < addr.length; r++) {
            for (int c = 0; c < n; c++) {
                nics[r][c] = nic(rails[r][c]);
                if (r != rank) {
                    addr[r][c] = channels[c].insertPeer(names[r][c]);
                }
            }
        }
        return new Peers(addr, nics);
    }

    /**
     * @param addresses fi_addr of rank r's channel c in local channel c's AV: {@code addresses[r][c]} (own rank: 0)
     * @param nics      rank r's NIC (fabric domain) of channel c: {@code nics[r][c]}
     */
    record Peers(long[][] addresses, String[][] nics) {}

    /**
     * Channel c of {@code rank} and of each peer must be on one rail. A rail is a fabric as the
     * provider names it (tcp: the NIC's subnet; efa: "efa" for every NIC). Peers whose channel c is
     * on another fabric are refused only where that peer has this rank's fabric of channel c on
     * another of its channels: the same rails in another order (a mis-railed plan: its traffic would
     * cross rails, or wait on a route that is not there). A peer with no channel on that fabric is
     * routed to (tcp across subnets), not mis-railed.
     *
     * @param rails {@code rails[r][c]}: rank r's channel c as "fabric\nnic"
     */
    static void requireRailAligned(int rank, String[][] rails, List<String> hosts) {
        String[] mine = rails[rank];
        for (int r = 0; r < rails.length; r++) {
            for (int c = 0; r != rank && c < mine.length; c++) {
                String fabric = fabric(mine[c]);
                if (fabric.equals(fabric(rails[r][c]))) {
                    continue;
                }
                for (int other = 0; other < rails[r].length; other++) {
                    if (fabric(rails[r][other]).equals(fabric)) {
                        throw new BenchmarkSetupException("mis-railed: rank " + rank + " (node " + hosts.get(rank) + ") channel "
                                + c + " is on NIC " + nic(mine[c]) + " (fabric " + fabric + ") but rank " + r + " (node "
                                + hosts.get(r) + ") channel " + c + " is on NIC " + nic(rails[r][c]) + " (fabric "
                                + fabric(rails[r][c]) + "), its NIC " + nic(rails[r][other]) + " on channel " + other
                                + "; channel k must be on rail k on every node: list the NICs in rail order (EFABENCH_NICS)");
                    }
                }
            }
        }
    }

    private static String fabric(String rail) {
        return rail.substring(0, rail.indexOf('\n'));
    }

    private static String nic(String rail) {
        return rail.substring(rail.indexOf('\n') + 1);
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

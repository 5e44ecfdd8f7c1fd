package io.efabench.harness.engine;

import io.efabench.harness.fake.FakeFabric;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.efabench.harness.Layout;

/** Op plans on a fake site: every byte of every peer's block once, on the layout's channels, cut at the write cap. */
class OpPlanTest {
    /** Bytes of {@code plan} to {@code peer}, and that its ops tile [0, size) without a gap or an overlap. */
    private static long covered(OpPlan plan, int peer, long size) {
        List<long[]> ops = new ArrayList<>();
        for (int i = 0; i < plan.ops(); i++) {
            if (plan.peer[i] == peer) {
                ops.add(new long[] {plan.offset[i], plan.len[i]});
            }
        }
        ops.sort((a, b) -> Long.compare(a[0], b[0]));
        long at = 0;
        for (long[] op : ops) {
            assertEquals(at, op[0], "ops to rank " + peer + " tile the block");
            at += op[1];
        }
        assertEquals(size, at);
        return at;
    }

    @Test
    void writeSinglePutsEveryTargetOnChannelZeroInTurn() {
        FakeFabric f = new FakeFabric(4, 2);
        OpPlan p = OpPlan.write(f.sites[0], Layout.SINGLE, 1000);
        assertEquals(3, p.groups(), "one group a target: the seed's targets in turn");
        assertArrayEquals(new int[] {3, 0}, p.perChannel(2));
        for (int k = 1; k < 4; k++) {
            covered(p, k, 1000);
        }
    }

    @Test
    void multiStripesEachBlockOverEveryChannelTheLastTakingTheRest() {
        FakeFabric f = new FakeFabric(2, 3);
        OpPlan p = OpPlan.write(f.sites[0], Layout.MULTI, 1000);
        assertEquals(3, p.ops());
        assertArrayEquals(new long[] {0, 333, 666}, p.offset);
        assertArrayEquals(new long[] {333, 333, 334}, p.len);
        assertArrayEquals(new int[] {0, 1, 2}, p.channel);
    }

    @Test
    void roundRobinIsOneGroupWithTargetKOnChannelKPlusRank() {
        FakeFabric f = new FakeFabric(4, 2);
        OpPlan p = OpPlan.write(f.sites[0], Layout.ROUND_ROBIN, 64);
        assertEquals(1, p.groups());
        assertArrayEquals(new int[] {1, 0, 1}, p.channel);
    }

    @Test
    void writesAreCutAtTheChannelsCap() {
        FakeFabric f = new FakeFabric(2, 2);
        f.sites[0].maxWrite = 100;
        OpPlan p = OpPlan.write(f.sites[0], Layout.MULTI, 1000);
        assertEquals(10, p.ops(), "two stripes of 500, five writes of 100 each");
        assertEquals(5, p.maxPerPeerChannel(2, 2));
        covered(p, 1, 1000);
        OpPlan again = OpPlan.decode(p.encode());
        assertArrayEquals(p.len, again.len);
        assertArrayEquals(p.offset, again.offset);
        assertArrayEquals(p.groupStart, again.groupStart);
    }

    @Test
    void allToAllStartsAtTheNextRankAndIncomingCountsWhatEachSenderPlansHere() {
        FakeFabric f = new FakeFabric(3, 1);
        OpPlan[] plans = new OpPlan[3];
        List<byte[]> gathered = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            f.sites[r].maxWrite = r == 2 ? 40 : 1 << 20; // rank 2's NIC cuts its writes smaller
            plans[r] = OpPlan.allToAll(f.sites[r], Layout.SINGLE, 100);
        }
        assertArrayEquals(new int[] {2, 0}, new int[] {plans[1].peer[0], plans[1].peer[1]});
        for (int r = 0; r < 3; r++) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(4 * 3);
            for (int p = 0; p < 3; p++) {
                int n = 0;
                for (int i = 0; i < plans[r].ops(); i++) {
                    n += plans[r].peer[i] == p ? 1 : 0;
                }
                b.putInt(n);
            }
            gathered.add(b.array());
        }
        f.sites[0].gathered = gathered;
        int[][] in = OpPlan.incoming(f.sites[0], plans[0]);
        assertArrayEquals(new int[] {0}, in[0]);
        assertArrayEquals(new int[] {1}, in[1]);
        assertArrayEquals(new int[] {3}, in[2], "rank 2 sends rank 0 its 100 bytes in writes of at most 40");
    }
}

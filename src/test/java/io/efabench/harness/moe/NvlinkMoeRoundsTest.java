package io.efabench.harness.moe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.efabench.harness.nvlink.NvlinkPush;

/**
 * The NVLink path's launches carry what the checked round verifies: each sender's entry for a
 * receiver is the bytes the receiver checks, from where they sit to where it reads them, in the
 * buffers it reads them from (dispatch into the dispatch destination, combine into the returns).
 */
class NvlinkMoeRoundsTest {
    private static final MoeShape FP8 = new MoeShape(64, 7168, 8, 256, Dtype.FP8);

    @ParameterizedTest(name = "{0} over {1} ranks")
    @CsvSource({"uniform, 4", "lognormal:2.0, 8", "hot:0.5, 3"})
    void everyEntryLandsWhereItsReceiverVerifies(String routing, int ranks) {
        MoePlan[] plan = new MoePlan[ranks];
        List<List<NvlinkPush.Phase>> phases = new java.util.ArrayList<>();
        for (int r = 0; r < ranks; r++) {
            plan[r] = new MoePlan(FP8, Routing.parse(routing), 3, ranks, r);
            phases.add(NvlinkMoeRounds.phases(plan[r], r));
        }
        long dB = FP8.dispatchTokenBytes();
        long cB = FP8.combineTokenBytes();
        for (int p = 0; p < MoePlan.ROUNDS; p++) {
            for (int s = 0; s < ranks; s++) {
                NvlinkPush.Phase dispatch = phases.get(s).get(2 * p);
                NvlinkPush.Phase combine = phases.get(s).get(2 * p + 1);
                assertEquals(0, dispatch.source());
                assertEquals(0, dispatch.destination());
                assertEquals(1, combine.source());
                assertEquals(1, combine.destination());
                for (int d = 0; d < ranks; d++) {
                    if (d == s) {
                        continue;
                    }
                    // what MoeBlocks.verify reads on d for sender s, and what prepareCheck filled on s for d
                    assertEquals(plan[d].recvCount[p][s] * dB, dispatch.length()[d], "dispatch bytes " + s + " -> " + d);
                    assertEquals(plan[d].recvStart[p][s] * dB, dispatch.destinationOffset()[d], "dispatch lands " + s + " -> " + d);
                    assertEquals(plan[s].sendStart[p][d] * dB, dispatch.sourceOffset()[d], "dispatch source " + s + " -> " + d);
                    assertEquals(plan[d].sendCount[p][s] * cB, combine.length()[d], "combine bytes " + s + " -> " + d);
                    assertEquals(plan[d].sendStart[p][s] * cB, combine.destinationOffset()[d], "combine lands " + s + " -> " + d);
                    assertEquals(plan[s].recvStart[p][d] * cB, combine.sourceOffset()[d], "combine source " + s + " -> " + d);
                }
            }
        }
    }

    @ParameterizedTest(name = "launch {0}")
    @CsvSource({"1, round 1 dispatch", "2, round 1 combine", "13, round 7 dispatch", "14, round 7 combine"})
    void aLaunchIsNamedByItsRoundAndPhase(long launch, String name) {
        assertEquals(name, NvlinkMoeRounds.launchName(launch));
    }
}

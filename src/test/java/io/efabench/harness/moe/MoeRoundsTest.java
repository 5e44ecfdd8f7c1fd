package io.efabench.harness.moe;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.efabench.harness.Layout;
import io.efabench.harness.fake.FakeFabric;

/** MoE's round logic (dispatch, then combine, END, the checked round) on a fake fabric: no process. */
class MoeRoundsTest {
    private static final MoeShape SMALL = new MoeShape(24, 96, 4, 16, Dtype.FP8);

    @ParameterizedTest(name = "{0} {1} over {2} ranks")
    @CsvSource({"SINGLE, uniform, 4", "MULTI, hot:0.5, 4", "ROUND_ROBIN, lognormal:1.5, 5", "SINGLE, hot:0.9, 3"})
    void everyTokenOfBothPhasesVerifies(Layout layout, String routing, int ranks) throws Exception {
        FakeFabric f = FakeFabric.threaded(ranks, 2);
        f.runChecked(t -> new MoeRounds(t, layout, SMALL, Routing.parse(routing), 11), 3, 20);
    }

    @Test
    void aCorruptedTokenIsNamedByRankTokenAndExpert() throws Exception {
        FakeFabric f = FakeFabric.threaded(4, 1);
        f.flipBytesTo = 2;
        String line = f.runFailing(t -> new MoeRounds(t, Layout.SINGLE, SMALL, Routing.parse("uniform"), 11), 1, 5);
        assertTrue(line.contains("rank 2: MoE") && line.contains("token") && line.contains("expert"), line);
    }
}

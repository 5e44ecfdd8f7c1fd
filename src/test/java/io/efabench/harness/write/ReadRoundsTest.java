package io.efabench.harness.write;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.efabench.harness.Layout;
import io.efabench.harness.fake.FakeFabric;

/** Read's round logic (rank 0 reads every target's blocks, END, the checked pass) on a fake fabric. No process. */
class ReadRoundsTest {
    @ParameterizedTest(name = "{0} window={1}")
    @CsvSource({"SINGLE, 1", "SINGLE, 8", "MULTI, 4", "ROUND_ROBIN, 1", "ROUND_ROBIN, 4"})
    void everyCheckedRoundVerifiesAtTheLeader(Layout layout, int window) throws Exception {
        FakeFabric.threaded(3, 2).runChecked(t -> new ReadRounds(t, layout, 4096, window, "auto"), 2, 25);
    }
}

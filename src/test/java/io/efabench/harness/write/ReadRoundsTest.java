package io.efabench.harness.write;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.efabench.harness.Layout;
import io.efabench.harness.fake.FakeFabric;

/** Read's round logic (rank 0 reads every target's blocks, END, the checked pass) on a fake fabric. No process. */
class ReadRoundsTest {
    @ParameterizedTest(name = "{0} window={1}")
    @CsvSource({"SINGLE, 1", "SINGLE, 8", "MULTI, 4", "ROUND_ROBIN, 1", "ROUND_ROBIN, 4"})
    void everyCheckedRoundVerifiesAtTheLeader(Layout layout, int window) throws Exception {
        FakeFabric f = FakeFabric.threaded(3, 2);
        Throwable[] failed = f.run(t -> new ReadRounds(t, layout, 4096, window, "auto"), 2, 25);
        FakeFabric.assertAllPassed(failed);
        assertEquals(2, f.metrics.checkedRounds());
    }
}

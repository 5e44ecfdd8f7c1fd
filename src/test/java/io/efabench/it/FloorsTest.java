package io.efabench.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

/** What {@link Floors#hold} promises the testbed tests: bounded attempts, every one said, upper bounds never retried. */
class FloorsTest {

    private static Floors.Measured measured(double value) {
        return new Floors.Measured(List.of(new Floors.Floor("figure", value, 0.85, "0.85 x truth")), "context " + value);
    }

    @Test
    void aFloorThatHoldsIsMeasuredOnce() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        Floors.hold("f", 3, attempt -> {
            runs.incrementAndGet();
            return measured(0.9);
        });
        assertEquals(1, runs.get());
    }

    @Test
    void aMissIsMeasuredAgainUntilItHolds() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        Floors.hold("f", 3, attempt -> measured(runs.incrementAndGet() < 3 ? 0.5 : 0.9));
        assertEquals(3, runs.get());
    }

    @Test
    void missingEveryAttemptFailsWithEachAttemptAndTheLastContext() {
        AtomicInteger runs = new AtomicInteger();
        AssertionError e = assertThrows(AssertionError.class, () -> Floors.hold("f", 3, attempt -> measured(0.5 + 0.01
                * runs.incrementAndGet())));
        assertEquals(3, runs.get());
        String m = e.getMessage();
        assertTrue(m.contains("attempt 1/3") && m.contains("attempt 2/3") && m.contains("attempt 3/3"), m);
        assertTrue(m.contains("figure 0.5300 BELOW 0.8500 (0.85 x truth)") && m.contains("context 0.53"), m);
    }

    @Test
    void anUpperBoundThatFailsIsNotRetried() {
        AtomicInteger runs = new AtomicInteger();
        AssertionError above = new AssertionError("above the links");
        AssertionError e = assertThrows(AssertionError.class, () -> Floors.hold("f", 3, attempt -> {
            runs.incrementAndGet();
            throw above;
        }));
        assertSame(above, e);
        assertEquals(1, runs.get());
    }
}

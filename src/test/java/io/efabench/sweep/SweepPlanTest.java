package io.efabench.sweep;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@code sweep --plan}: the schedule's steps for a fleet and the wall time it expects, against the goals. */
class SweepPlanTest {
    @Test
    void aP5FleetIsSweptWithinTheGoals() {
        SweepPlan full = SweepPlan.parse(new String[] {"--plan", "--nodes", "128", "--rails", "32"});
        assertEquals(127, full.firstPassSteps(), "a step per round, every rail at once");
        assertTrue(full.expectedSeconds() <= 15 * 60, "tournament: " + String.join("\n", full.describe()));
        SweepPlan quick = SweepPlan.parse(new String[] {"--plan", "--nodes", "128", "--rails", "32", "--quick"});
        assertEquals(3, quick.firstPassSteps());
        assertTrue(quick.expectedSeconds() <= 2 * 60, "--quick: " + String.join("\n", quick.describe()));
        assertTrue(full.describe().getFirst().contains("8128 pairs x 32 rails = 260096 pair-rails"), full.describe().getFirst());
    }

    @Test
    void theStepCostIsTheMeasuredOneUnlessGiven() {
        assertTrue(Double.isFinite(SweepPlan.MEASURED_OVERHEAD_S) && SweepPlan.MEASURED_OVERHEAD_S > 0);
        SweepPlan p = SweepPlan.parse(new String[] {"--plan", "--nodes", "4", "--rails", "4", "--seconds", "0.5"});
        assertEquals(SweepPlan.TIMED_SECONDS_PER_SECOND * 0.5 + SweepPlan.MEASURED_OVERHEAD_S, p.stepSeconds(), 1e-9);
        SweepPlan given = SweepPlan.parse(new String[] {"--plan", "--nodes", "16", "--rails", "1", "--step-seconds", "10"});
        assertEquals((15 + SweepPlan.SECOND_PASS_STEPS) * 10, given.expectedSeconds(), 1e-9);
        assertTrue(p.describe().get(1).contains("as measured on the testbed"), p.describe().get(1));
        // A given step that happens to equal the measured one is still the user's, not the testbed's.
        String same = Double.toString(SweepPlan.TIMED_SECONDS_PER_SECOND * 0.5 + SweepPlan.MEASURED_OVERHEAD_S);
        SweepPlan asGiven = SweepPlan.parse(new String[] {"--plan", "--nodes", "4", "--rails", "4", "--seconds", "0.5",
            "--step-seconds", same});
        assertTrue(!asGiven.describe().get(1).contains("as measured"), asGiven.describe().get(1));
    }

    @Test
    void badInputIsOneLine() {
        for (String[] bad : new String[][] {{"--plan", "--nodes", "128"}, {"--plan", "--nodes", "1", "--rails", "2"},
                {"--plan", "--nodes", "2.5", "--rails", "2"}, {"--plan", "--nodes", "4", "--rails", "2", "--what"}}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SweepPlan.parse(bad));
            assertTrue(e.getMessage().matches("(?s)(sweep: )?--[a-z]+.*"), e.getMessage());
        }
    }
}

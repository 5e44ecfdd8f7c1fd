package io.efabench.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** -p inject=yes is an error, not false (JMH's Boolean.valueOf would take it as false). */
class FlagsTest {
    @Test
    void onlyTrueAndFalseAreFlags() {
        assertTrue(Flags.parse("inject", "true"));
        assertFalse(Flags.parse("inject", "false"));
        for (String bad : new String[] {"yes", "TRUE", "1", "", "no"}) {
            BenchmarkSetupException e = assertThrows(BenchmarkSetupException.class, () -> Flags.parse("inject", bad));
            assertEquals("inject=" + bad + ": must be true or false", e.getMessage());
        }
    }
}

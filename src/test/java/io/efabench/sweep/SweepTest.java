package io.efabench.sweep;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** The sweep's refusals that need no fabric: one line each. */
class SweepTest {
    @Test
    void fewerThanTwoNodesIsOneLine() {
        Assumptions.assumeTrue(System.getenv("RANK") == null && System.getenv("SLURM_PROCID") == null
                && System.getenv("OMPI_COMM_WORLD_RANK") == null, "a launcher's variables are set here");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Sweep.run(new String[0]));
        assertTrue(e.getMessage().startsWith("fewer than 2 nodes"), e.getMessage());
        assertEquals(-1, e.getMessage().indexOf('\n'), e.getMessage());
    }

    @Test
    void pairPortsStayInRangeAndMoveOnEachStep() {
        for (int rails : new int[] {1, 2, 32}) {
            int used = Sweep.PORTS_PER_RAIL * rails;
            for (int master : new int[] {1024, 29500, 65535}) {
                for (int step = 0; step < 5000; step++) {
                    int p = Sweep.pairPort(master, step, rails);
                    assertTrue(p >= 1024 && p + used - 1 <= 65535, master + " step " + step + ": " + p);
                }
                int a = Sweep.pairPort(master, 0, rails);
                int b = Sweep.pairPort(master, 1, rails);
                assertTrue(Math.abs(b - a) >= used, "step 1's ports clear of step 0's: " + a + ", " + b);
                assertTrue(master < a || master >= a + used, "the sweep's own port is none of a step's");
            }
        }
    }

    @Test
    void helpIsTheUsage() {
        assertEquals(0, Sweep.run(new String[] {"--help"}));
    }
}

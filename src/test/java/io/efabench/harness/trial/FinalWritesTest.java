package io.efabench.harness.trial;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

import io.efabench.harness.engine.Immediate;

/** What a FINAL write tells a follower of END; the protocol around it runs in AllToAllRoundsTest and MoeRoundsTest. */
class FinalWritesTest {

    /** Rank 0 posts round r only after r - W ended, so a FINAL round r bounds END by r - 1 + W; the smallest bound stays. */
    @Test
    void aFinalRoundBoundsEndAndTheSmallestBoundStays() {
        FinalWrites end = new FinalWrites(null, 4);
        assertEquals(Immediate.DATA, end.kind());
        end.arrived(103); // a later FINAL round overtook the first: END <= 106
        assertEquals(106, end.heard());
        end.arrived(101); // the first FINAL round, END - W + 1
        assertEquals(104, end.heard());
        end.arrived(102);
        assertEquals(104, end.heard());
        end.forget();
        assertEquals(-1, end.heard());
    }
}

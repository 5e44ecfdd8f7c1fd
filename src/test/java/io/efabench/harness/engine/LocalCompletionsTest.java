package io.efabench.harness.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class LocalCompletionsTest {
    @Test
    void aRoundIsCompleteWhenItsLastWriteCompletedAndThePeersLastWriteIsNamed() {
        LocalCompletions l = new LocalCompletions(3, 4);
        l.begin(7);
        int a = l.posted(7, 1);
        int b = l.posted(7, 1);
        int c = l.posted(7, 2);
        l.begin(8);
        int d = l.posted(8, 1);
        assertEquals(4, l.inFlight());
        assertEquals(-1, l.done(b), "rank 1 still has a write of round 7 in flight");
        assertEquals(2, l.done(c), "the last write of round 7 to rank 2");
        assertFalse(l.complete(7));
        assertEquals(1, l.done(a));
        assertTrue(l.complete(7));
        assertFalse(l.complete(8), "round 8 is counted apart from round 7");
        assertEquals(1, l.done(d));
        assertEquals(0, l.inFlight());
        assertEquals(l.index(8), l.roundIndex(d));
        assertTrue(l.ring() >= 5, "4 rounds in flight plus the one that starts have distinct entries");
    }
}

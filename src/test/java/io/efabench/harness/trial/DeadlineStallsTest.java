package io.efabench.harness.trial;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.engine.Deadline;

/**
 * A wait past a quarter of its budget is announced once, and its end once the next wait starts
 * (a link that flapped and came back is on record); a wait that runs out is a failure carrying its peer.
 */
class DeadlineStallsTest {
    private final List<String> heard = new ArrayList<>();

    private final Deadline.Stalls stalls = new Deadline.Stalls() {
        @Override
        public void stalled(String operation, int peer, long round, long nanos) {
            heard.add("stalled " + operation + " " + peer + " " + round);
        }

        @Override
        public void resumed(String operation, int peer, long round, long nanos) {
            heard.add("resumed " + operation + " " + peer + " " + round + (nanos >= 100_000_000L ? " long" : " short"));
        }
    };

    private static void spinFor(Deadline d, long millis) {
        long end = System.nanoTime() + millis * 1_000_000L;
        while (System.nanoTime() < end) {
            d.check("waiting for the ack", 3, 12);
        }
    }

    @Test
    void aStallIsAnnouncedOnceAndItsEndSaid() {
        Deadline d = new Deadline(null, Duration.ofMillis(800), stalls, false).start();
        spinFor(d, 400); // past a quarter (200 ms), within the budget
        assertEquals(List.of("stalled waiting for the ack 3 12"), heard);
        d.start(); // the next wait: the last one ended
        assertEquals(List.of("stalled waiting for the ack 3 12", "resumed waiting for the ack 3 12 long"), heard);
        d.start();
        assertEquals(2, heard.size(), "said once");
    }

    @Test
    void aShortWaitIsNotAStall() {
        Deadline d = new Deadline(null, Duration.ofSeconds(4), stalls, false).start();
        spinFor(d, 100);
        d.start();
        assertEquals(List.of(), heard);
    }

    @Test
    void aWaitThatRunsOutFailsNamingItsPeerAndIsNotResumed() {
        Deadline d = new Deadline(null, Duration.ofMillis(200), stalls, false).start();
        BenchmarkSetupException e = assertThrows(BenchmarkSetupException.class, () -> spinFor(d, 5_000));
        assertEquals(3, e.peer());
        assertTrue(e.getMessage().contains("waiting for the ack (round 12) with rank 3 did not complete"), e.getMessage());
        d.start();
        assertEquals(List.of("stalled waiting for the ack 3 12"), heard);
    }
}

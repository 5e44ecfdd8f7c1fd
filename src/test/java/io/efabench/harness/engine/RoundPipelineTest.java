package io.efabench.harness.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.Deadline;

/**
 * The scheduler against a fake port: a serial link on a virtual clock that takes
 * {@code SERVICE} ticks per round (one tick per progress pass), rounds completing in order.
 * No fabric, no processes: the rules of counting live here and are checked here.
 */
class RoundPipelineTest {
    private static final int SERVICE = 10;

    /** A link that moves one round at a time; records what was in flight at every post. */
    static class SerialLink implements RoundPipeline.Port {
        final ArrayDeque<Long> inFlight = new ArrayDeque<>();
        RoundPipeline pipeline;
        long now;
        long headSince;
        long completedUpTo;
        int maxInFlight;


        @Override
        public void post(long round) {
            if (inFlight.isEmpty()) {
                headSince = now;
            }
            inFlight.add(round);
            maxInFlight = Math.max(maxInFlight, inFlight.size());
            Set<Integer> used = new HashSet<>();
            for (long r : inFlight) {
                assertTrue(used.add(pipeline.slot(r)), "two rounds in flight write one slot: " + inFlight);
            }
        }

        @Override
        public boolean complete(long round) {
            return round <= completedUpTo;
        }

        @Override
        public void progress() {
            now++;
            if (!inFlight.isEmpty() && now - headSince >= SERVICE) {
                completedUpTo = inFlight.poll();
                headSince = now;
            }
        }

        @Override
        public String awaited() {
            return "the fake link's round";
        }

        @Override
        public int peerAwaited(long round) {
            return 1;
        }
    }

    /** A pipeline of {@code window} rounds in flight over as many slots, driving {@code link}. */
    private static RoundPipeline pipeline(SerialLink link, int window) {
        link.pipeline = new RoundPipeline(link, window, window, Deadline.alone(Duration.ofSeconds(10)));
        return link.pipeline;
    }

    /**
     * Every timed invocation counts the round it saw complete, one per invocation and in order,
     * and never more than the window is in flight; every slot in flight is distinct.
     */
    @ParameterizedTest(name = "window {0}")
    @ValueSource(ints = {1, 2, 8, 64})
    void anInvocationCountsTheRoundItSawComplete(int window) {
        SerialLink link = new SerialLink();
        RoundPipeline p = pipeline(link, window);
        long warm = p.warm();
        assertTrue(link.complete(warm));
        p.fill();
        assertEquals(window - 1, link.inFlight.size(), "fill leaves window - 1 in flight");
        long filled = link.completedUpTo;
        assertEquals(window == 1 ? warm : warm + window, filled, "fill ran window rounds to completion past the warm one");
        for (int i = 1; i <= 500; i++) {
            long counted = p.timed();
            assertEquals(filled + i, counted, "one round counted per invocation, in order");
            assertTrue(link.complete(counted), "counted round " + counted + " not complete");
            assertEquals(window - 1, link.inFlight.size() + (link.completedUpTo - counted), "window - 1 left in flight");
        }
        assertEquals(window, link.maxInFlight);
        p.drain();
        assertTrue(link.inFlight.isEmpty());
        assertEquals(p.posted(), link.completedUpTo);
    }

    /**
     * The figure does not depend on the iteration's length: rounds counted over the timed span
     * are the link's rate (1 per SERVICE ticks) for a span of 3 rounds and of 3000, at any
     * window. Counting posts instead (returning after the post, the drain untimed) reads
     * window x the rate in a short span.
     */
    @ParameterizedTest(name = "window {0}")
    @ValueSource(ints = {1, 16, 64})
    void theRateIsTheSameForShortAndLongIterations(int window) {
        double shortSpan = rate(window, 3 * SERVICE);
        double longSpan = rate(window, 3000 * SERVICE);
        assertEquals(1.0 / SERVICE, longSpan, 0.02 / SERVICE);
        assertEquals(longSpan, shortSpan, 0.15 * longSpan, "short " + shortSpan + " vs long " + longSpan);
    }

    /** One JMH-style iteration: untimed warm and fill, timed invocations for {@code span} ticks, untimed drain. */
    private static double rate(int window, long span) {
        SerialLink link = new SerialLink();
        RoundPipeline p = pipeline(link, window);
        double total = 0;
        for (int iteration = 0; iteration < 3; iteration++) {
            p.warm();
            p.fill();
            long start = link.now;
            long invocations = 0;
            while (link.now - start < span) {
                p.timed();
                invocations++;
            }
            total += (double) invocations / (link.now - start);
            p.drain();
        }
        return total / 3;
    }

    @ParameterizedTest(name = "window {0}")
    @ValueSource(ints = {1, 4})
    void aRoundThatNeverCompletesFailsNamingWhatPeerAndRound(int window) {
        SerialLink stuck = new SerialLink() {
            @Override
            public void progress() {
                // nothing ever completes
            }
        };
        RoundPipeline p = new RoundPipeline(stuck, window, window, Deadline.alone(Duration.ofMillis(50)));
        stuck.pipeline = p;
        BenchmarkSetupException e = assertThrows(BenchmarkSetupException.class, p::warm);
        assertTrue(e.getMessage().contains("the fake link's round (round 1) with rank 1 did not complete"), e.getMessage());
    }
}

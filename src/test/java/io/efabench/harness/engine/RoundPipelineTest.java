package io.efabench.harness.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import io.efabench.harness.BenchmarkSetupException;


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
        final Set<Long> closers = new HashSet<>();
        long now;
        long headSince;
        long completedUpTo;
        int maxInFlight;
        int completeCalls;
        int completeCallsAtLastPost;


        @Override
        public void post(long round, boolean closesWindow) {
            if (closesWindow) {
                closers.add(round);
            }
            if (inFlight.isEmpty()) {
                headSince = now;
            }
            inFlight.add(round);
            maxInFlight = Math.max(maxInFlight, inFlight.size());
            completeCallsAtLastPost = completeCalls;
            Set<Integer> used = new HashSet<>();
            for (long r : inFlight) {
                assertTrue(used.add(pipeline.slot(r)), "two rounds in flight write one slot: " + inFlight);
            }
        }

        @Override
        public boolean complete(long round) {
            completeCalls++;
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
     * Every timed invocation is a whole window: it posts window rounds, returns only when each one
     * completed, and leaves nothing in flight; never more than the window is in flight, and every
     * slot in flight is distinct.
     */
    @ParameterizedTest(name = "window {0}")
    @ValueSource(ints = {1, 2, 8, 64})
    void anInvocationCountsOnlyRoundsItSawComplete(int window) {
        SerialLink link = new SerialLink();
        RoundPipeline p = pipeline(link, window);
        long warm = p.warm();
        assertTrue(link.complete(warm));
        for (int i = 1; i <= 100; i++) {
            long last = p.timed();
            assertEquals(warm + (long) i * window, last, "a window of rounds per invocation");
            assertTrue(link.complete(last), "round " + last + " not complete");
            assertTrue(link.inFlight.isEmpty(), "nothing in flight between invocations");
            assertTrue(link.closers.contains(last), "the window's last round is posted as the one that closes it");
            assertTrue(window == 1 || !link.closers.contains(last - 1), "only the last round closes the window");
        }
        assertEquals(window, link.maxInFlight);
        p.drain();
        assertEquals(p.posted(), link.completedUpTo);
    }

    /**
     * The figure does not depend on the iteration's length: rounds counted over the timed span,
     * over the span, are the link's rate (1 per SERVICE ticks) for spans of 3 rounds and of 3000,
     * at any window. Counting posts instead (returning after the posts, the drain untimed) reads
     * about window x the rate in a short span, and fails here.
     */
    @ParameterizedTest(name = "window {0}")
    @ValueSource(ints = {1, 16, 64})
    void theRateIsTheSameForShortAndLongIterations(int window) {
        double shortSpan = rate(window, 3 * SERVICE);
        double longSpan = rate(window, 3000 * SERVICE);
        assertEquals(1.0 / SERVICE, longSpan, 0.02 / SERVICE);
        assertEquals(longSpan, shortSpan, 0.15 * longSpan, "short " + shortSpan + " vs long " + longSpan);
    }

    /** JMH-style iterations: an untimed warm round, timed invocations for {@code span} ticks, an untimed drain. */
    private static double rate(int window, long span) {
        SerialLink link = new SerialLink();
        RoundPipeline p = pipeline(link, window);
        long rounds = 0;
        long ticks = 0;
        for (int iteration = 0; iteration < 3; iteration++) {
            p.warm();
            long start = link.now;
            long invocations = 0;
            while (link.now - start < span && invocations < 100_000) {
                p.timed();
                invocations++;
            }
            rounds += invocations * window;
            ticks += link.now - start;
            p.drain();
        }
        return (double) rounds / ticks;
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

    /**
     * Posting a timed window asks the port nothing: the round a window before each post was
     * already awaited in order (at 64 B a completion check per write was a measurable part of
     * the write's time). Fails if posts check completions again.
     */
    @ParameterizedTest(name = "window {0}")
    @ValueSource(ints = {2, 64})
    void postingATimedWindowChecksNoCompletion(int window) {
        SerialLink link = new SerialLink();
        RoundPipeline p = pipeline(link, window);
        p.warm();
        p.timed();
        int before = link.completeCalls;
        link.completeCallsAtLastPost = -1;
        p.timed();
        assertEquals(before, link.completeCallsAtLastPost, "completion checks while posting the window");
        assertTrue(link.completeCalls > before, "the window's own rounds are awaited");
    }

    /**
     * A timed window reaches the port in one call, its last round closing it, so a port can post
     * it in one loop (at 64 B the per-round calls cost a measurable part of a write); an untimed
     * post is one round. Fails if timed() hands the rounds over one by one.
     */
    @ParameterizedTest(name = "window {0}")
    @ValueSource(ints = {1, 8})
    void aTimedWindowReachesThePortInOneCall(int window) {
        List<String> calls = new ArrayList<>();
        SerialLink batches = new SerialLink() {
            @Override
            public void post(long first, int rounds, boolean closesLast) {
                calls.add(first + "+" + rounds + (closesLast ? " closes" : ""));
                super.post(first, rounds, closesLast);
            }
        };
        RoundPipeline p = pipeline(batches, window);
        p.warm();
        p.timed();
        p.post();
        assertEquals(List.of("1+1 closes", 2 + "+" + window + " closes", (2 + window) + "+1"), calls);
        p.drain();
    }

    /**
     * A drain waits for every round posted, also where the last one completes first (local
     * completions need not come in order): awaiting only the last round would return with
     * earlier ones in flight, and the next window could then reuse their slots.
     */
    @ParameterizedTest(name = "window {0}")
    @ValueSource(ints = {2, 8})
    void aDrainWaitsForEveryRoundWhenTheyCompleteOutOfOrder(int window) {
        Set<Long> done = new HashSet<>();
        ArrayDeque<Long> posted = new ArrayDeque<>();
        long[] ticks = {0};
        SerialLink lastFirst = new SerialLink() {
            @Override
            public void post(long round, boolean closesWindow) {
                posted.add(round);
            }

            @Override
            public boolean complete(long round) {
                return done.contains(round);
            }

            @Override
            public void progress() {
                // the newest round in flight completes first, one per 10 passes
                if (++ticks[0] % SERVICE == 0 && !posted.isEmpty()) {
                    done.add(posted.pollLast());
                }
            }
        };
        RoundPipeline p = new RoundPipeline(lastFirst, window, window, Deadline.alone(Duration.ofSeconds(10)));
        lastFirst.pipeline = p;
        for (int i = 0; i < 3 * window; i++) {
            p.post();
        }
        p.drain();
        for (long r = 1; r <= p.posted(); r++) {
            assertTrue(done.contains(r), "round " + r + " still in flight after the drain");
        }
    }

    /**
     * Window 1 with targets in turn: the port awaits its round between the round's groups (Write's
     * and Read's leaders do). That wait must not mark the round complete, or the invocation
     * would return with the last group in flight (ReadIT's fault test caught it once).
     */
    @Test
    void aRoundAwaitedBetweenItsGroupsCompletesOnlyWithItsLastGroup() {
        Map<Long, Integer> pending = new HashMap<>();
        ArrayDeque<Long> queue = new ArrayDeque<>();
        long[] ticks = {0};
        RoundPipeline[] p = new RoundPipeline[1];
        SerialLink twoGroups = new SerialLink() {
            @Override
            public void post(long round, boolean closesWindow) {
                for (int group = 0; group < 2; group++) {
                    if (group > 0) {
                        p[0].await(round);
                    }
                    pending.merge(round, 1, Integer::sum);
                    queue.add(round);
                }
            }

            @Override
            public boolean complete(long round) {
                return pending.getOrDefault(round, 0) == 0;
            }

            @Override
            public void progress() {
                if (++ticks[0] % SERVICE == 0 && !queue.isEmpty()) {
                    pending.merge(queue.poll(), -1, Integer::sum);
                }
            }
        };
        p[0] = new RoundPipeline(twoGroups, 1, 1, Deadline.alone(Duration.ofSeconds(10)));
        p[0].warm();
        for (int i = 0; i < 5; i++) {
            long r = p[0].timed();
            assertTrue(queue.isEmpty(), "round " + r + " returned with a group in flight");
        }
    }
}

package io.efabench.harness.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import io.efabench.harness.BenchmarkSetupException;


/**
 * A receive the provider refuses (-FI_EAGAIN) until it progresses, as efa does when its receive
 * queue is full: the repost must not spin inside completion handling (where nothing progresses
 * the CQ) but wait for the next CQ read (efa-desk-check.md item 7).
 */
class ControlSlotsTest {
    private static final int EAGAIN = -11;

    /** A provider that refuses every receive until {@link #progress} is called, then takes them. */
    private static final class FullQueue implements ControlSlots.ReceivePoster {
        boolean full;
        final List<Integer> posted = new ArrayList<>();

        @Override
        public int tryRecv(long offset, long length, int ctx) {
            if (full) {
                return EAGAIN;
            }
            posted.add(ctx);
            return 0;
        }

        void progress() {
            full = false;
        }
    }

    private final MemorySegment buf = Arena.ofAuto().allocate(5 * ControlSlots.SLOT_BYTES);

    @Test
    void aRefusedRepostWaitsForTheNextCqReadInsteadOfSpinning() {
        FullQueue provider = new FullQueue();
        ControlSlots slots = new ControlSlots(buf, null, provider, 100, 4);
        assertEquals(List.of(100, 101, 102, 103), provider.posted);
        provider.full = true;
        assertTimeoutPreemptively(Duration.ofSeconds(1), () -> slots.repost(102),
                "a refused repost returns at once: spinning here cannot progress the CQ");
        assertEquals(1, slots.pendingReposts());
        slots.retryPending();
        assertEquals(1, slots.pendingReposts(), "still refused: no progress yet");
        provider.progress();
        slots.retryPending();
        assertEquals(0, slots.pendingReposts());
        assertEquals(List.of(100, 101, 102, 103, 102), provider.posted);
    }

    @Test
    void aSlotRepostedLaterGoesBackToTheProviderOnlyAtTheNextRepostDeferred() {
        FullQueue provider = new FullQueue();
        ControlSlots slots = new ControlSlots(buf, null, provider, 100, 4);
        slots.repostLater(101);
        slots.repostLater(103);
        assertEquals(List.of(100, 101, 102, 103), provider.posted, "nothing posted inside completion handling");
        assertEquals(2, slots.deferredReposts());
        slots.repostDeferred();
        assertEquals(List.of(100, 101, 102, 103, 101, 103), provider.posted);
        assertEquals(0, slots.deferredReposts());
        provider.full = true;
        slots.repostLater(100);
        slots.repostDeferred();
        assertEquals(1, slots.pendingReposts(), "a refused deferred repost waits for the next CQ read, as any");
        provider.progress();
        slots.retryPending();
        assertEquals(List.of(100, 101, 102, 103, 101, 103, 100), provider.posted);
    }

    @Test
    void aReceiveRefusedForTenSecondsOfCqReadsFailsWithOneLine() throws Exception {
        FullQueue provider = new FullQueue();
        provider.full = true;
        ControlSlots slots = new ControlSlots(buf, null, provider, 0, 1);
        assertEquals(1, slots.pendingReposts());
        java.lang.reflect.Field since = ControlSlots.class.getDeclaredField("refusedSince");
        since.setAccessible(true);
        since.setLong(slots, System.nanoTime() - 11_000_000_000L);
        BenchmarkSetupException e = assertThrows(BenchmarkSetupException.class, slots::retryPending);
        assertEquals("the provider kept refusing a receive (-FI_EAGAIN) for 10 s while its completion queue was read",
                e.getMessage());
    }
}

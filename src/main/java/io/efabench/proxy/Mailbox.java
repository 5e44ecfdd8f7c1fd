package io.efabench.proxy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

import io.efabench.cuda.CudaContext;
import io.efabench.cuda.PinnedHostBuffer;

/**
 * The words the host and the proxy kernels share besides the ring, in mapped pinned host memory,
 * each on its own 128-byte line: the kernel's status (why it stopped early, and at which ticket),
 * the host's abort word (raised when the trial fails, so no kernel spins on a dead proxy), and
 * the doorbell of the ping kernel and of the resident producer, the ping's answer and GPU-side
 * round-trip times, and the producer's push and quiet counters.
 */
public final class Mailbox implements AutoCloseable {
    public static final int RTT_SLOTS = 4096;
    /** Status codes: proxy.cu's ST_* (ProxyKernelsTest compares them). */
    static final int RING_FULL = 1;
    static final int QUIET = 2;
    static final int ABORTED = 3;
    static final int IDLE = 4;
    static final long STATUS = 0;
    static final long ABORT = 128;
    static final long DOORBELL = 256;
    static final long ANSWER = 384;
    static final long RTT = 512;
    /** The producer's counters, summed over launches: pushes, quiets, ns in pushes, ns in blocking quiets. */
    static final long COUNTS = RTT + 8L * RTT_SLOTS;
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    private final PinnedHostBuffer memory;
    private final MemorySegment words;

    public Mailbox(CudaContext context) {
        memory = PinnedHostBuffer.allocate(context, COUNTS + 128);
        words = memory.segment();
        words.fill((byte) 0);
        VarHandle.fullFence();
    }

    /** 0 while no kernel failed; else proxy.cu's ST_* code. */
    public int status() {
        return (int) INT.getAcquire(words, STATUS);
    }

    /** The ticket (or doorbell) the failed kernel was at. */
    public long statusAt() {
        return (long) LONG.getAcquire(words, STATUS + 8);
    }

    /** One line for a kernel's early stop, or null while none stopped. */
    public String failure() {
        int code = status();
        return switch (code) {
            case 0 -> null;
            case RING_FULL -> "the producer kernel gave up pushing request " + statusAt()
                    + ": its ring cell stayed full (the proxy stopped draining the ring)";
            case QUIET -> "the producer kernel gave up waiting for request " + statusAt()
                    + " to complete (quiet): the proxy never reported its writes complete";
            case ABORTED -> "the producer kernel stopped at request " + statusAt() + ": the host aborted the trial";
            case IDLE -> "the ping or resident producer kernel saw no doorbell after " + statusAt() + " within its idle timeout";
            default -> "the producer kernel stopped with status " + code;
        };
    }

    /** Clears the status before a launch. */
    public void resetStatus() {
        LONG.setRelease(words, STATUS + 8, 0L);
        INT.setRelease(words, STATUS, 0);
    }

    /** Tells every kernel spinning on this mailbox to stop (their waits read it). */
    public void abort() {
        INT.setRelease(words, ABORT, 1);
    }

    /** Before a ping or resident producer kernel starts: doorbell and answer back to 0, status cleared. */
    public void resetPing() {
        LONG.setRelease(words, DOORBELL, 0L);
        LONG.setRelease(words, ANSWER, 0L);
        resetStatus();
    }

    public void ring(long doorbell) {
        LONG.setRelease(words, DOORBELL, doorbell);
    }

    /** Requests the resident producer pushed so far (it adds them once per launch). */
    public long pushes() {
        return (long) LONG.getAcquire(words, COUNTS);
    }

    /** Quiets the resident producer waited in so far (added once per launch). */
    public long quiets() {
        return (long) LONG.getAcquire(words, COUNTS + 8);
    }

    /** GPU-side ns the resident producer spent inside its pushes (ticket, the cell's words), summed per launch. */
    public long pushNanos() {
        return (long) LONG.getAcquire(words, COUNTS + 16);
    }

    /** GPU-side ns the resident producer spent in blocking quiets (push published -> completion seen). */
    public long quietNanos() {
        return (long) LONG.getAcquire(words, COUNTS + 24);
    }

    /** Stops the ping kernel, or the resident producer. */
    public void stopPing() {
        ring(-1L);
    }

    public long answer() {
        return (long) LONG.getAcquire(words, ANSWER);
    }

    /** GPU-measured push -> completed-seen time of doorbell {@code d}, in ns. */
    public long rttNanos(long d) {
        return (long) LONG.getAcquire(words, RTT + 8 * Math.floorMod(d, (long) RTT_SLOTS));
    }

    long statusDevice() {
        return memory.deviceAddress() + STATUS;
    }

    long abortDevice() {
        return memory.deviceAddress() + ABORT;
    }

    long doorbellDevice() {
        return memory.deviceAddress() + DOORBELL;
    }

    long answerDevice() {
        return memory.deviceAddress() + ANSWER;
    }

    long countsDevice() {
        return memory.deviceAddress() + COUNTS;
    }

    long rttDevice() {
        return memory.deviceAddress() + RTT;
    }

    @Override
    public void close() {
        memory.close();
    }
}

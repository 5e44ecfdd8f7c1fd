package io.efabench.proxy;

import io.efabench.cuda.CudaContext;
import io.efabench.cuda.CudaModule;
import io.efabench.cuda.CudaStream;
import io.efabench.cuda.Kernel;
import io.efabench.cuda.KernelArgs;
import io.efabench.cuda.KernelCompiler;

/**
 * The producer kernels of {@code kernels/proxy.cu}, loaded once per trial, each with its
 * argument block allocated once and mutated per launch (a launch allocates nothing).
 */
public final class ProxyKernels implements AutoCloseable {
    /** Flags of {@link #put}: quiet once at the end (else after every push); fill the pattern before pushing. */
    public static final int FLAG_NBI = 1;
    public static final int FLAG_FILL = 2;
    /** {@code corrupt} values of {@link #put} (test hook): request 0 carries a wrong target, size or op. */
    public static final int CORRUPT_TARGET = 1;
    public static final int CORRUPT_BYTES = 2;
    public static final int CORRUPT_OP = 3;

    private final CudaModule module;
    private final Kernel put;
    private final Kernel flood;
    private final Kernel ping;
    private final KernelArgs putArgs = new KernelArgs(22);
    private final KernelArgs floodArgs = new KernelArgs(6);
    private final KernelArgs pingArgs = new KernelArgs(9);

    public ProxyKernels(CudaContext context) {
        this.module = KernelCompiler.load(context, "proxy.cu");
        this.put = module.kernel("proxy_put");
        this.flood = module.kernel("proxy_flood");
        this.ping = module.kernel("proxy_ping");
    }

    /**
     * Parameters of {@link #put} that stay the same for a trial. Round r writes slot r % slots:
     * the i-th target's source block of the slot at slot x slotStride + i x stride ({@code stride}
     * a multiple of 4), the target's block of the slot at slot x stride. {@code immBase} is the
     * immediate data of round 0 (kind and sender); the kernel ors each round's low bits into it.
     */
    public record PutShape(long srcDevice, long size, long stride, long slotStride, long chunk, int requests, int world,
                           int me, int channel, long immBase, int rounds, int slots, int grid, int block) {
        public PutShape {
            if (slots < 1 || slots > MAX_SLOTS) {
                throw new IllegalArgumentException("slots=" + slots + ": the producer kernel cycles through 1.." + MAX_SLOTS);
            }
        }
    }

    /** Most slots {@link #put} cycles through (proxy.cu's MAX_SLOTS, its shared array of last tickets). */
    public static final int MAX_SLOTS = 256;

    /**
     * Enqueues the resident producer (proxy_put) for one JMH iteration: it waits on the mailbox's
     * doorbell, and each value d the host rings ({@link Mailbox#ring}) is a launch of {@code
     * s.rounds()} rounds d, d + 1, ... ({@link Mailbox#stopPing} ends it). Blocking quiets after
     * every push, {@link #FLAG_NBI} once per launch and before reusing a slot still in flight.
     * {@code corrupt} (test hook) falsifies the first request of every launch.
     */
    public void put(CudaStream stream, RequestRing ring, Mailbox mailbox, PutShape s, int flags, int corrupt,
            long timeoutNanos, long idleTimeoutNanos) {
        mailbox.resetPing();
        putArgs.u64(0, ring.deviceAddress()).u64(1, ring.capacity() - 1L).u64(2, s.srcDevice()).u64(3, s.size())
                .u64(4, s.stride()).u64(5, s.slotStride()).u64(6, s.chunk()).u32(7, s.requests()).u32(8, s.world())
                .u32(9, s.me()).u32(10, s.channel()).u64(11, s.immBase()).u32(12, s.rounds()).u32(13, s.slots())
                .u32(14, flags).u32(15, corrupt).u64(16, timeoutNanos).u64(17, idleTimeoutNanos)
                .u64(18, mailbox.doorbellDevice()).u64(19, mailbox.countsDevice()).u64(20, mailbox.statusDevice())
                .u64(21, mailbox.abortDevice());
        put.launch(stream, s.grid(), s.block(), 0, putArgs);
    }

    /** Enqueues proxy_flood: grid x block threads push {@code perThread} requests each (block: a multiple of 32). */
    public void flood(CudaStream stream, RequestRing ring, Mailbox mailbox, int grid, int block, int perThread,
            long timeoutNanos) {
        if (block % 32 != 0) {
            throw new IllegalArgumentException("block=" + block + ": the flood kernel takes whole warps (a multiple of 32)");
        }
        floodArgs.u64(0, ring.deviceAddress()).u64(1, ring.capacity() - 1L).u32(2, perThread).u64(3, timeoutNanos)
                .u64(4, mailbox.statusDevice()).u64(5, mailbox.abortDevice());
        flood.launch(stream, grid, block, 0, floodArgs);
    }

    /** Enqueues the persistent one-thread proxy_ping; it runs until the doorbell reads ~0 ({@link Mailbox#stopPing}). */
    public void ping(CudaStream stream, RequestRing ring, Mailbox mailbox, long idleTimeoutNanos) {
        pingArgs.u64(0, ring.deviceAddress()).u64(1, ring.capacity() - 1L).u64(2, mailbox.doorbellDevice())
                .u64(3, mailbox.answerDevice()).u64(4, mailbox.rttDevice()).u32(5, Mailbox.RTT_SLOTS)
                .u64(6, idleTimeoutNanos).u64(7, mailbox.statusDevice()).u64(8, mailbox.abortDevice());
        ping.launch(stream, 1, 1, 0, pingArgs);
    }

    @Override
    public void close() {
        module.close();
    }
}

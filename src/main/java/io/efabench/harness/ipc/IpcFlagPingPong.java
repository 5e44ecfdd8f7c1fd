package io.efabench.harness.ipc;

import org.openjdk.jmh.infra.BenchmarkParams;

import io.efabench.cuda.Kernel;
import io.efabench.cuda.KernelArgs;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.Traffic;

/**
 * A GPU flag ping-pong between rank 0 and each peer over CUDA IPC (IpcBenchmark's {@code
 * flagLatency}): rank 0's kernel writes a flag into the peer's inbox and waits for the peer's
 * kernel to write it back into its own, {@link #ROUNDS} times a peer an invocation; {@code lat_us}
 * is half the round trip. Every kernel wait ends at a deadline and says which round it missed.
 */
public final class IpcFlagPingPong implements AutoCloseable {
    /** Round trips per peer in one invocation. */
    public static final int ROUNDS = 1000;
    static final int STOP = -1;
    private final IpcRig rig;
    private final Kernel ping;
    private final Kernel pong;
    private KernelArgs[] pingArgs;
    private KernelArgs pongArgs;
    private int invocation;
    private IpcRig.Transfer timed;

    private IpcFlagPingPong(IpcRig r) {
        rig = r;
        ping = r.flags.kernel("flag_ping");
        pong = r.flags.kernel("flag_pong");
        if (r.leader) {
            pingArgs = new KernelArgs[r.world];
            for (int p = 1; p < r.world; p++) {
                pingArgs[p] = new KernelArgs(6).pointer(0, r.peers[p]).pointer(1, r.inbox.slice(4L * p, 4))
                        .u32(2, 1).u32(3, ROUNDS).u64(4, IpcRig.KERNEL_TIMEOUT_NS)
                        .pointer(5, r.host.slice(IpcRig.STATUS_A, 4));
            }
            timed = p -> ping.launch(r.stream, 1, 1, 0, pingArgs[p].u32(2, 1 + invocation * ROUNDS));
            r.metrics.traffic(new Traffic(8L * ROUNDS * (r.world - 1), 2 * ROUNDS * (r.world - 1), 0, r.rank));
            System.out.println(r.provenance());
        } else {
            pongArgs = new KernelArgs(5).pointer(0, r.peers[0].slice(4L * r.rank, 4)).pointer(1, r.inbox)
                    .u32(2, STOP).u64(3, r.timeoutNanos).pointer(4, r.host.slice(IpcRig.STATUS_B, 4));
            r.metrics.traffic(new Traffic(8L * ROUNDS, 2 * ROUNDS, 0, r.rank));
        }
    }

    /** Joins the group and maps the flags (up to 64 ranks: rank 0's inbox has a word per peer). */
    public static IpcFlagPingPong open(BenchmarkParams bp) {
        IpcRig r = IpcRig.open(bp, 4L * 64, 4);
        if (r.world > 64) {
            r.group.abort("flagLatency supports up to 64 ranks");
            r.close();
            throw new BenchmarkSetupException("flagLatency supports up to 64 ranks");
        }
        try {
            return new IpcFlagPingPong(r);
        } catch (RuntimeException e) {
            r.close();
            throw e;
        }
    }

    /** Iteration start: flags cleared, every peer's pong kernel running, then a barrier. */
    public void startIteration() {
        rig.context.makeCurrent();
        rig.inbox.fill((byte) 0);
        invocation = 0;
        if (!rig.leader) {
            rig.clearStatus(IpcRig.STATUS_B);
            pong.launch(rig.stream, 1, 1, 0, pongArgs);
        }
        rig.barrier("ipc latency: pong running");
    }

    /** One invocation: rank 0's {@link #ROUNDS} round trips with every peer; a follower checks the group. */
    public void invoke() {
        if (rig.leader) {
            rig.timedRound(timed);
            int failed = rig.status(IpcRig.STATUS_A);
            if (failed != 0) {
                throw new IllegalStateException("rank 0: flag ping-pong: no echo of round " + failed
                        + " within 10 s from a peer");
            }
            invocation++;
        } else {
            rig.group.checkAlive();
        }
    }

    /** Iteration end: rank 0 stops the pongs; each peer waits for its kernel and says if it saw no flag. */
    public void endIteration() {
        rig.context.makeCurrent();
        if (rig.leader) {
            for (int p = 1; p < rig.world; p++) {
                rig.peers[p].fillWords(STOP);
            }
        } else {
            rig.stream.await(rig.timeoutNanos, "rank " + rig.rank + ": flag_pong after rank 0's stop");
            if (rig.status(IpcRig.STATUS_B) != 0) {
                throw new IllegalStateException("rank " + rig.rank + ": flag_pong saw no flag from rank 0 for "
                        + rig.timeout.toSeconds() + " s");
            }
        }
        rig.barrier("ipc latency: pong stopped");
    }

    @Override
    public void close() {
        rig.close();
    }
}

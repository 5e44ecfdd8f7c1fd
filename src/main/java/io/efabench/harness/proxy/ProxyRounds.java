package io.efabench.harness.proxy;

import java.nio.ByteBuffer;

import io.efabench.fabric.RemoteRegion;
import io.efabench.proxy.ProxyKernels;
import io.efabench.harness.BenchmarkSetupException;
import io.efabench.harness.Layout;
import io.efabench.harness.SeedRound;
import io.efabench.harness.engine.Footprint;
import io.efabench.harness.engine.WriteEngine;
import io.efabench.harness.memory.TrialBuffer;
import io.efabench.harness.trial.FabricTrial;
import io.efabench.harness.trial.Rounds;
import io.efabench.harness.trial.Side;

/**
 * GPU-initiated writes through a CPU proxy (seed: experiments/proxy), in the leader-driven round
 * protocol of docs/DESIGN.md, on the shared engine: the proxy thread ({@link ProxyLoop}) posts
 * through a {@code WriteEngine}, the targets serve and ack with the {@link Follower} that Write's
 * targets use.
 *
 * <p>As the seed's kernel, one producer loops over many rounds: a resident kernel (proxy.cu's
 * {@code proxy_put}, started at the iteration's warm round, stopped at its end) waits on a
 * doorbell, and one leader invocation rings it once: a launch of {@code rounds} rounds, each
 * writing {@code size} bytes to every target in turn as {@code requests} requests, pushed into the
 * request ring by one thread per block once the block's data is ready. Blocking configs quiet
 * after every push; NBI configs once at the end of the launch (and before a round reuses a slot
 * still in flight), so their rounds overlap as the seed's NBI iterations do. Round r writes slot
 * r mod {@code slots} on both sides ({@link Footprint}). The invocation ends when every target
 * acked the launch's last round (it counted every write's immediate data of every round against
 * the leader's plan): counted = completed, and nothing is in flight between invocations.
 *
 * <p>The Direct configs are the same launch made on the proxy thread itself ({@link
 * HostProducer}): same requests, same waits, same proxy; only the GPU is not in the loop.
 *
 * <p>This class holds what both sides share (the shape, the plan, the metrics); {@link
 * ProxyLeader} is rank 0's side, {@link ProxyTarget} the targets'.
 *
 * <p>Checked launch: after every iteration, one more launch through the same kernel (or host
 * producer), flags and proxy path; each slot's source block holds the pattern of (rank 0, target,
 * the last round of the launch that writes the slot), written by the host before the launch, or
 * by the kernel itself in every round with {@code fill}. Every target checks every byte of every
 * slot written on its GPU.
 */
public final class ProxyRounds implements Rounds {
    /** Most requests per target and round. */
    public static final int MAX_REQUESTS = 256;
    /** Most rounds per launch. */
    public static final int MAX_ROUNDS = 4096;

    final FabricTrial t;
    private final ProxyShape shape;
    private final ProxyLeader leader;
    private final ProxyTarget target;

    /**
     * @param direct     the Direct baseline: the proxy thread makes the requests (no kernel)
     * @param rounds     rounds per launch (one invocation)
     * @param slotsParam "auto" or a count ({@link Footprint})
     */
    public ProxyRounds(FabricTrial t, Layout layout, boolean nbi, boolean direct, long size, int requests, int grid,
            int block, boolean fill, int rounds, String slotsParam) {
        this.t = t;
        long stride = (size + 3) & ~3L;
        if (t.gpu() == null) {
            throw new BenchmarkSetupException("the proxy experiment needs a GPU on every rank");
        }
        if (layout == Layout.ROUND_ROBIN) {
            throw new BenchmarkSetupException("the proxy experiment has Single and Multi layouts, not RoundRobin");
        }
        if (requests < 1 || requests > MAX_REQUESTS) {
            throw new BenchmarkSetupException("requests=" + requests + ": must be from 1 to " + MAX_REQUESTS);
        }
        if (grid < 1 || block < 1 || block > 1024) {
            throw new BenchmarkSetupException("grid=" + grid + " block=" + block + ": need grid >= 1 and 1 <= block <= 1024");
        }
        if (rounds < 1 || rounds > MAX_ROUNDS) {
            throw new BenchmarkSetupException("rounds=" + rounds + ": must be from 1 to " + MAX_ROUNDS + " per launch");
        }
        if (direct && fill) {
            throw new BenchmarkSetupException("fill=true is the kernel writing the payload: the Direct configs have no kernel");
        }
        t.requireImmediates();
        int targets = t.size - 1;
        int slots = Math.min(ProxyKernels.MAX_SLOTS, Footprint.slots(slotsParam, rounds, stride * targets));
        shape = new ProxyShape(t, layout, nbi, fill, size, stride, rounds, slots);
        long chunk = (size + requests - 1) / requests;
        chunk = (chunk + 3) & ~3L; // whole 4-byte words: the kernel fills the pattern word by word
        int nreq = (int) ((size + chunk - 1) / chunk);
        // The leader reads slots x targets source blocks; a target receives slots blocks; the
        // leader's own target region is never written (one page, for the exchange).
        TrialBuffer src = t.rank == 0 ? t.buffer(Footprint.bufferBytes(slots, stride * targets)) : null;
        TrialBuffer dst = t.buffer(t.rank == 0 ? 4096 : Footprint.bufferBytes(slots, stride));
        RemoteRegion[][] dstOf = t.exchange("proxy target regions", dst.regions());

        int channelHint = layout == Layout.MULTI ? ProxyRequests.ALL_CHANNELS : 0;
        long[] maxWrite = new long[t.channelCount()];
        for (int c = 0; c < maxWrite.length; c++) {
            maxWrite[c] = t.maxWrite(c);
        }
        int planned = 0;
        for (int j = 0; j < nreq; j++) {
            planned += ProxyRequests.writesFor(Math.min(chunk, size - (long) j * chunk), channelHint, maxWrite);
        }
        byte[] mine = t.rank == 0 ? ByteBuffer.allocate(4).putInt(planned).array() : new byte[0];
        int writesPerTarget = ByteBuffer.wrap(t.group.allgather("proxy write plan", mine, t.timeout).get(0)).getInt();
        if (writesPerTarget > WriteEngine.SLOTS) {
            throw new BenchmarkSetupException(writesPerTarget + " writes per target and round: at most " + WriteEngine.SLOTS
                    + " (fewer requests, or larger writes)");
        }
        if (t.rank == 0) {
            leader = new ProxyLeader(shape, src, dstOf, direct, chunk, nreq, channelHint, grid, block);
            target = null;
        } else {
            leader = null;
            target = new ProxyTarget(shape, dst, writesPerTarget);
        }
    }

    @Override
    public long bytesPerInvocation() {
        return shape.size * (t.size - 1) * shape.rounds;
    }

    /** An invocation is a launch of {@code rounds} rounds: {@code lat_us} is the time per round. */
    @Override
    public int transfersPerInvocation() {
        return shape.rounds;
    }

    /**
     * Blocking rounds run one after another: a launch's time over its rounds is a round's
     * latency. NBI rounds overlap, so they report rates only (as Write with window > 1).
     */
    @Override
    public boolean invocationIsLatency() {
        return !shape.nbi;
    }

    /** The seed's Gbps counts one buffer per round (its size x iters x 8 / time). */
    @Override
    public long seedBytesPerInvocation() {
        return shape.size * shape.rounds;
    }

    /** The seed's unit: a launch's time over its rounds ({@code round_us}), blocking or NBI. */
    @Override
    public SeedRound seedRound() {
        return new SeedRound("round_us", shape.rounds);
    }

    @Override
    public int slots() {
        return shape.slots;
    }

    @Override
    public int roundsInFlight() {
        return shape.nbi ? Math.min(shape.rounds, shape.slots) : 1;
    }

    @Override
    public double linkGbps() {
        if (shape.layout == Layout.SINGLE) {
            return t.linkGbps(0);
        }
        int[] all = new int[t.channelCount()];
        for (int c = 0; c < all.length; c++) {
            all[c] = c;
        }
        return t.linkGbps(all);
    }

    @Override
    public double seedLinkGbps() {
        return t.seedLinkGbps(shape.layout);
    }

    /** The iteration's first launch, untimed: starts the resident kernel (JMH may use another thread). */

    @Override
    public Side side() {
        return leader != null ? leader : target;
    }
}

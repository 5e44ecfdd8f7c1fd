package io.efabench.fabric;

import io.efabench.fabric.generated.LibFabric;
import io.efabench.fabric.generated.fi_av_attr;
import io.efabench.fabric.generated.fi_domain_attr;
import io.efabench.fabric.generated.fi_info;
import io.efabench.fabric.generated.fi_ops_av;
import io.efabench.fabric.generated.fi_ops_cm;
import io.efabench.fabric.generated.fi_ops_domain;
import io.efabench.fabric.generated.fi_ops_fabric;
import io.efabench.fabric.generated.fi_ops_msg;
import io.efabench.fabric.generated.fi_ops_rma;
import io.efabench.fabric.generated.fid_av;
import io.efabench.fabric.generated.fid_domain;
import io.efabench.fabric.generated.fid_ep;
import io.efabench.fabric.generated.fid_fabric;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One NIC's fabric, domain, completion queue, address vector and RDM endpoint.
 *
 * <p>Not thread-safe: one thread posts and polls at a time (the domain is opened with
 * FI_THREAD_DOMAIN). The post and poll methods allocate nothing: the message structs are
 * preallocated per channel and mutated in place, and the provider's function pointers are
 * resolved once at open and called through {@code static final} critical downcall handles.
 */
public final class Channel implements ChannelOps, AutoCloseable {
    /** Operation context slots per channel: {@code ctx} arguments are indexes into them ({@link OpContexts}). */
    public static final int CONTEXT_SLOTS = OpContexts.SLOTS;
    static final long CONTEXT_SIZE = OpContexts.SIZE;

    /**
     * Open channels stay strongly reachable, so their automatic arena (context slots the provider
     * may write to, message structs) cannot be freed under an endpoint that was never closed.
     */
    private static final Set<Channel> OPEN = ConcurrentHashMap.newKeySet();

    /**
     * ssize_t (*)(struct fid_ep *, const void *buf, size_t len, uint64_t data, fi_addr_t dest,
     * uint64_t addr, uint64_t key): ops->rma.injectdata. The buffer pointer is passed as a long
     * (the same integer register under the C ABI), so a call makes no segment.
     */
    private static final MethodHandle INJECT_DATA = Linker.nativeLinker().downcallHandle(
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG),
            Linker.Option.critical(false));

    private final NicInfo nic;
    private final long mrMode;
    /**
     * Pass memory descriptors with every operation: required under FI_MR_LOCAL, and under
     * FI_MR_HMEM for device memory (without a descriptor shm takes a device pointer for host
     * memory and memcpy()s from it: a SIGSEGV that its signal handler turns into a JVM crash).
     */
    private final boolean passDescriptors;
    private final boolean rxCqDataConsumesRecv;
    private final long cqDataMask;
    private int apiVersion;
    private final Registrations registrations;

    // Native objects, NULL once closed.
    private MemorySegment fabric = MemorySegment.NULL;
    private MemorySegment domain = MemorySegment.NULL;
    /** Null until opened, and once closed. */
    private CompletionQueue cq;
    private MemorySegment av = MemorySegment.NULL;
    private MemorySegment ep = MemorySegment.NULL;
    /** Bound to the endpoint where the provider accepts it (see {@link EventQueue}); else null. */
    private EventQueue events;
    private String eventQueueState = "not opened";
    private byte[] name;
    // What the endpoint answered at open (EndpointOptions): read once, off the hot path.
    private long injectRmaSize;
    private long maxRmaAnswer = -1;
    private String cudaApiPermitted = "not set (host memory channel)";
    private Boolean writesEmulated;

    // Hot path: provider function pointers and preallocated structs owned by this channel.
    private MemorySegment sendFn;
    private MemorySegment recvFn;
    private MemorySegment writeFn;
    private MemorySegment readFn;
    private MemorySegment injectDataFn;
    private final MemorySegment contexts;
    private final long contextBase;
    private final MessageDescriptors.Msg sendMsg;
    private final MessageDescriptors.Msg recvMsg;
    private final MessageDescriptors.Rma writeMsg;
    private final MessageDescriptors.Rma readMsg;
    /** This channel's line on the call board: which provider call its thread is inside. */
    private final CallBoard.Slot calls;

    private Channel(NicInfo nic) {
        this.nic = nic;
        this.calls = CallBoard.forThisProcess().claim(nic.provider());
        this.mrMode = nic.mrMode();
        this.registrations = new Registrations(nic, mrMode);
        this.passDescriptors = (mrMode & (Fi.MR_LOCAL | Fi.MR_HMEM)) != 0 || (nic.caps() & Fi.HMEM) != 0;
        this.rxCqDataConsumesRecv = (nic.mode() & Fi.RX_CQ_DATA) != 0;
        this.cqDataMask = nic.cqDataSize() >= 8 ? -1L : (1L << (8 * nic.cqDataSize())) - 1;
        // An automatic arena: owned by this channel alone, freed when the channel is unreachable,
        // and as cheap to pass to a critical downcall as global memory.
        Arena arena = Arena.ofAuto();
        contexts = arena.allocate(CONTEXT_SIZE * CONTEXT_SLOTS, 64);
        contextBase = contexts.address();
        sendMsg = new MessageDescriptors.Msg(arena, passDescriptors);
        recvMsg = new MessageDescriptors.Msg(arena, passDescriptors);
        writeMsg = new MessageDescriptors.Rma(arena, passDescriptors);
        readMsg = new MessageDescriptors.Rma(arena, passDescriptors);
    }

    /**
     * Opens fabric, domain, CQ ({@code FI_CQ_FORMAT_DATA}, at least {@code depth} entries,
     * no wait object), AV and an enabled RDM endpoint on {@code nic}.
     */
    public static Channel open(Discovery discovery, NicInfo nic, int depth) {
        if (depth < 1) {
            throw new IllegalArgumentException("depth must be positive: " + depth);
        }
        MemorySegment info = discovery.info(nic);
        if (nic.provider().equals("shm") || nic.provider().equals("efa")) {
            ShmLeftovers.removeOwnOnce(); // efa opens shm for peers on its node
        }
        Channel c = new Channel(nic);
        OPEN.add(c);
        try {
            c.openObjects(info, depth);
            return c;
        } catch (RuntimeException e) {
            try {
                c.close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** {@link #open(Discovery, NicInfo, int)} on the NIC at {@code nicIndex} of {@code discovery}. */
    public static Channel open(Discovery discovery, int nicIndex, int depth) {
        List<NicInfo> nics = discovery.nics();
        if (nicIndex < 0 || nicIndex >= nics.size()) {
            throw new IllegalArgumentException("NIC index " + nicIndex + " out of range: "
                    + discovery.provider() + " has " + nics.size() + " NIC(s)");
        }
        return open(discovery, nics.get(nicIndex), depth);
    }

    private void openObjects(MemorySegment info, int depth) {
        String where = " on " + nic.provider() + " " + nic.domainName();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);

            Fi.check("fi_fabric" + where, LibFabric.fi_fabric(fi_info.fabric_attr(info), out, MemorySegment.NULL));
            fabric = out.get(ValueLayout.ADDRESS, 0).reinterpret(fid_fabric.sizeof());
            events = EventQueue.open(fabric, where);
            // fi_fabric copies fabric_attr->api_version (what fi_getinfo was asked for) here;
            // providers gate version-dependent behaviour (FI_MR_DMABUF...) on this value.
            apiVersion = fid_fabric.api_version(fabric);
            MemorySegment fabricOps = fid_fabric.ops(fabric).reinterpret(fi_ops_fabric.sizeof());
            Fi.check("fi_domain" + where, fi_ops_fabric.domain.invoke(fi_ops_fabric.domain(fabricOps),
                    fabric, info, out, MemorySegment.NULL));
            domain = out.get(ValueLayout.ADDRESS, 0).reinterpret(fid_domain.sizeof());
            MemorySegment domainOps = fid_domain.ops(domain).reinterpret(fi_ops_domain.sizeof());

            cq = CompletionQueue.open(domain, domainOps, depth, where, nic, calls, contextBase);

            MemorySegment avAttr = arena.allocate(fi_av_attr.layout());
            fi_av_attr.type(avAttr, fi_domain_attr.av_type(fi_info.domain_attr(info)));
            Fi.check("fi_av_open" + where, fi_ops_domain.av_open.invoke(fi_ops_domain.av_open(domainOps),
                    domain, avAttr, out, MemorySegment.NULL));
            av = out.get(ValueLayout.ADDRESS, 0).reinterpret(fid_av.sizeof());

            Fi.check("fi_endpoint" + where, fi_ops_domain.endpoint.invoke(fi_ops_domain.endpoint(domainOps),
                    domain, info, out, MemorySegment.NULL));
            ep = out.get(ValueLayout.ADDRESS, 0).reinterpret(fid_ep.sizeof());
            sendFn = fi_ops_msg.sendmsg(fid_ep.msg(ep).reinterpret(fi_ops_msg.sizeof()));
            recvFn = fi_ops_msg.recvmsg(fid_ep.msg(ep).reinterpret(fi_ops_msg.sizeof()));
            writeFn = fi_ops_rma.writemsg(fid_ep.rma(ep).reinterpret(fi_ops_rma.sizeof()));
            readFn = fi_ops_rma.readmsg(fid_ep.rma(ep).reinterpret(fi_ops_rma.sizeof()));
            injectDataFn = fi_ops_rma.injectdata(fid_ep.rma(ep).reinterpret(fi_ops_rma.sizeof()));

            Fi.bind("fi_ep_bind(cq)" + where, ep, cq.fid(), Fi.TRANSMIT | Fi.RECV);
            Fi.bind("fi_ep_bind(av)" + where, ep, av, 0);
            bindEventQueue();
            if (nic.offersHmem()) {
                // Before fi_enable, as aws-ofi-nccl: no CUDA call from the provider's progress while a kernel spins.
                cudaApiPermitted = EndpointOptions.forbidCudaApi(ep, apiVersion);
            }
            Fi.enable("fi_enable" + where, ep);
            name = getname(arena, where);
            injectRmaSize = EndpointOptions.injectRmaSize(
                    EndpointOptions.size(ep, apiVersion, EndpointOptions.INJECT_RMA_SIZE), nic.injectSize());
            maxRmaAnswer = EndpointOptions.size(ep, apiVersion, EndpointOptions.MAX_RMA_SIZE);
            if (nic.provider().equals("efa")) {
                // Local side only: efa-rdm also emulates toward a peer that lacks RDMA write (efa_rdm_ep.h:422-427).
                writesEmulated = EndpointOptions.bool(ep, EndpointOptions.EFA_EMULATED_WRITE);
            }
        }
    }

    /**
     * Binds the event queue; a provider that refuses it (none known) keeps its endpoint without
     * one, as before, and says so in {@link #eventQueueState()}.
     */
    private void bindEventQueue() {
        int rc = Fi.bindReturning(ep, events.fid(), 0);
        if (rc == 0) {
            eventQueueState = "bound";
            return;
        }
        eventQueueState = "refused by " + nic.provider() + ": " + Fi.strerror(rc) + " (" + rc + ")";
        events.close();
        events = null;
    }

    private byte[] getname(Arena arena, String where) {
        MemorySegment cmOps = fid_ep.cm(ep).reinterpret(fi_ops_cm.sizeof());
        MemorySegment len = arena.allocate(ValueLayout.JAVA_LONG);
        len.set(ValueLayout.JAVA_LONG, 0, 0);
        // A first call with no room reports the size (-FI_ETOOSMALL).
        int rc = fi_ops_cm.getname.invoke(fi_ops_cm.getname(cmOps), ep, MemorySegment.NULL, len);
        if (rc != 0 && rc != -LibFabric.FI_ETOOSMALL()) {
            Fi.check("fi_getname" + where, rc);
        }
        MemorySegment addr = arena.allocate(Math.max(1, len.get(ValueLayout.JAVA_LONG, 0)));
        Fi.check("fi_getname" + where, fi_ops_cm.getname.invoke(fi_ops_cm.getname(cmOps), ep, addr, len));
        return addr.asSlice(0, len.get(ValueLayout.JAVA_LONG, 0)).toArray(ValueLayout.JAVA_BYTE);
    }

    @Override
    public String describe() {
        return nic.provider() + " " + nic.domainName();
    }

    public NicInfo nic() {
        return nic;
    }

    /** This endpoint's address (fi_getname), to hand to peers for {@link #insertPeer(byte[])}. */
    public byte[] name() {
        return name.clone();
    }

    /** Inserts a peer's {@link #name()} into the AV and returns its fi_addr_t. */
    public long insertPeer(byte[] peerName) {
        requireOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment addr = arena.allocate(Math.max(1, peerName.length));
            addr.copyFrom(MemorySegment.ofArray(peerName));
            MemorySegment out = arena.allocate(ValueLayout.JAVA_LONG);
            MemorySegment avOps = fid_av.ops(av).reinterpret(fi_ops_av.sizeof());
            calls.enter(CallBoardLayout.AV_INSERT);
            int rc;
            try {
                rc = fi_ops_av.insert.invoke(fi_ops_av.insert(avOps), av, addr, 1, out, 0, MemorySegment.NULL);
            } finally {
                calls.exit();
            }
            if (rc != 1) {
                throw rc < 0 ? Fi.failure("fi_av_insert", rc)
                        : new FabricException("fi_av_insert: peer address of " + peerName.length
                        + " bytes not accepted by " + nic.provider());
            }
            return out.get(ValueLayout.JAVA_LONG, 0);
        }
    }

    /** Registers host memory for send, receive and RMA in both directions. */
    public MemoryRegion register(MemorySegment buf) {
        requireOpen();
        return registrations.register(this, domain, ep, apiVersion, buf, Registrations.Source.HOST, 0, -1, 0);
    }

    /**
     * Registers CUDA device memory by virtual address ({@code FI_HMEM_CUDA}); {@code deviceBuf}
     * wraps the device pointer and its length ({@code MemorySegment.ofAddress(ptr).reinterpret(len)})
     * and is never dereferenced from Java. Needs a discovery with hmem.
     */
    public MemoryRegion registerCuda(MemorySegment deviceBuf, int cudaDevice) {
        requireOpen();
        return registrations.register(this, domain, ep, apiVersion, deviceBuf, Registrations.Source.CUDA_VA, cudaDevice, -1, 0);
    }

    /**
     * Registers CUDA device memory through a DMA-BUF: {@code fi_mr_regattr} with
     * {@code FI_MR_DMABUF}, {@code attr.dmabuf = {fd, offset, len, base_addr}}, {@code FI_HMEM_CUDA}
     * on {@code cudaDevice}. {@code dmabufFd} exports a device range that starts
     * {@code dmabufOffset} bytes before {@code deviceBuf} (as {@code cuMemGetHandleForAddressRange}
     * on a page-aligned range gives it); {@code base_addr} is that range's device VA, so that
     * {@code base_addr + offset} is {@code deviceBuf}'s address, which peers then use as the remote
     * address under FI_MR_VIRT_ADDR, as with {@link #registerCuda}. The fd stays the caller's:
     * close it after the region. {@code deviceBuf} is never dereferenced.
     *
     * @throws DmaBufUnsupportedException when the API in use is older than 1.20 (checked before
     *         any native call) or the provider refuses DMA-BUF for lack of support; the caller
     *         may fall back to {@link #registerCuda}
     * @throws FabricException for any other failure (no FI_HMEM, a bad fd...)
     */
    public MemoryRegion registerCudaDmaBuf(MemorySegment deviceBuf, int dmabufFd, long dmabufOffset, int cudaDevice) {
        if (dmabufFd < 0) {
            throw new IllegalArgumentException("DMA-BUF fd must not be negative: " + dmabufFd);
        }
        if (dmabufOffset < 0 || Long.compareUnsigned(dmabufOffset, deviceBuf.address()) > 0) {
            throw new IllegalArgumentException("DMA-BUF offset " + dmabufOffset
                    + " must lie between 0 and the device address 0x" + Long.toHexString(deviceBuf.address()));
        }
        requireOpen();
        return registrations.register(this, domain, ep, apiVersion, deviceBuf, Registrations.Source.CUDA_DMABUF, cudaDevice,
                dmabufFd, dmabufOffset);
    }

    /** True when the provider granted FI_HMEM on this channel's NIC. */
    public boolean offersHmem() {
        return nic.offersHmem();
    }

    /** FI_VERSION this channel's fabric was opened with ({@code fid_fabric.api_version}). */
    int apiVersion() {
        return apiVersion;
    }

    /**
     * Largest two-sided message this endpoint sends: {@code fi_getopt(FI_OPT_MAX_MSG_SIZE)} where
     * the provider answers it (efa and efa-direct in 2.x; efa-direct's is the device MTU, while
     * fi_getinfo's {@code max_msg_size} is its RMA limit once FI_RMA is asked for), else
     * {@code ep_attr->max_msg_size}. Only asked at API 2.0 or newer: the option does not exist before.
     */
    public long maxSendSize() {
        long v = EndpointOptions.size(ep, apiVersion, EndpointOptions.MAX_MSG_SIZE);
        return v > 0 ? v : nic.maxMsgSize();
    }

    /**
     * Writes carrying data are cut here at most (and at the endpoint's RMA limit where lower):
     * efa-rdm splits larger writes into segments of min(1 GiB, the device's max_rdma_size)
     * (efa_env.c:35, a constant, no environment variable; efa_rdm_ope.c:1570).
     */
    public static final long MAX_WRITE = 1L << 30;

    /** Largest write carrying data to post in one operation: see {@link EndpointOptions#maxWrite}, at most {@link #MAX_WRITE}. */
    public long maxWrite() {
        return EndpointOptions.maxWrite(maxRmaAnswer, nic.maxMsgSize(), MAX_WRITE);
    }

    /** Largest write {@link InjectTarget#tryInject} takes: see {@link EndpointOptions#injectRmaSize}. */
    public long injectRmaSize() {
        return injectRmaSize;
    }

    /** What FI_OPT_CUDA_API_PERMITTED=false came to ({@link EndpointOptions#cudaApiPermittedOutcome}). */
    public String cudaApiPermitted() {
        return cudaApiPermitted;
    }

    /** efa: FI_OPT_EFA_EMULATED_WRITE, true when efa-rdm sends writes as messages; null elsewhere or unanswered. */
    public Boolean writesEmulated() {
        return writesEmulated;
    }

    /** "bound", or why this endpoint has no event queue. */
    public String eventQueueState() {
        return eventQueueState;
    }

    /**
     * What the provider reported on this endpoint's event queue since the last call (see
     * {@link EventQueue}): one text per error, empty when none. For failure paths only.
     */
    public List<String> providerErrors() {
        return events != null ? events.drainErrors() : List.of();
    }

    /** Test hooks: writes an error entry into the event queue, as efa does on an internal error. */
    public void reportProviderErrorForTest(int err, int provErrno) {
        if (events == null) {
            throw new IllegalStateException("no event queue: " + eventQueueState);
        }
        events.writeError(err, provErrno);
    }

    /** True when remote CQ data (write with immediate) consumes a posted receive (FI_RX_CQ_DATA). */
    @Override
    public boolean rxCqDataConsumesRecv() {
        return rxCqDataConsumesRecv;
    }

    /** FI_MR_* bits the provider asked for. */
    public long mrMode() {
        return mrMode;
    }

    /** Largest immediate value the provider carries ({@code cq_data_size} bytes). */
    public long maxCqData() {
        return cqDataMask;
    }

    // ---- hot path ------------------------------------------------------------------------

    /**
     * Posts a send of {@code len} bytes at {@code off} of {@code mr} to {@code dest}.
     * Returns 0, or {@code -FI_EAGAIN} when the provider is out of resources: poll, then retry.
     */
    @Override
    public int trySend(MemoryRegion mr, long off, long len, long dest, long data, boolean withData, int ctx) {
        checkLocal(mr, off, len);
        checkContext(ctx);
        MemorySegment msg = sendMsg.set(mr.address() + off, len, mr.desc(), dest, context(ctx), data);
        return posted(call(CallBoardLayout.SEND, sendFn, ep, msg, flags(withData)), CallBoardLayout.SEND, ctx);
    }

    /** Posts a receive of up to {@code len} bytes into {@code off} of {@code mr}, from any peer. */
    @Override
    public int tryRecv(MemoryRegion mr, long off, long len, int ctx) {
        checkLocal(mr, off, len);
        checkContext(ctx);
        MemorySegment msg = recvMsg.set(mr.address() + off, len, mr.desc(), Fi.ADDR_UNSPEC, context(ctx), 0);
        return posted(call(CallBoardLayout.RECV, recvFn, ep, msg, Fi.COMPLETION), CallBoardLayout.RECV, ctx);
    }

    /**
     * Posts an RMA write of {@code len} bytes at {@code off} of {@code mr} to
     * {@code targetOffset} of the peer's {@code target} region; with {@code withData} the
     * target gets a completion carrying {@code data}.
     */
    @Override
    public int tryWrite(MemoryRegion mr, long off, long len, long dest, RemoteRegion target, long targetOffset,
                        long data, boolean withData, int ctx) {
        checkLocal(mr, off, len);
        checkContext(ctx);
        checkRemote("write", target, targetOffset, len);
        MemorySegment msg = writeMsg.set(mr.address() + off, len, mr.desc(), dest, target.base() + targetOffset, target.key(),
                context(ctx), data);
        return posted(call(CallBoardLayout.WRITE, writeFn, ep, msg, flags(withData)), CallBoardLayout.WRITE, ctx);
    }

    /**
     * Posts an RMA read of {@code len} bytes at {@code sourceOffset} of the peer's {@code source}
     * region into {@code off} of {@code mr}; the local completion says the bytes have arrived. The
     * peer sees no completion (no FI_RMA_EVENT), but tcp and shm serve a read in its progress.
     */
    @Override
    public int tryRead(MemoryRegion mr, long off, long len, long dest, RemoteRegion source, long sourceOffset, int ctx) {
        checkLocal(mr, off, len);
        checkContext(ctx);
        checkRemote("read", source, sourceOffset, len);
        MemorySegment msg = readMsg.set(mr.address() + off, len, mr.desc(), dest, source.base() + sourceOffset, source.key(),
                context(ctx), 0);
        return posted(call(CallBoardLayout.READ, readFn, ep, msg, Fi.COMPLETION), CallBoardLayout.READ, ctx);
    }

    /**
     * Where {@code fi_inject_writedata} writes from {@code src} go to {@code target} of the peer at
     * {@code dest}: an RMA write with immediate data that generates no local completion, the source
     * reusable as soon as the post returns (what fi_rma_bw posts for every write that fits the
     * inject size). Host memory only; a write at most {@link #injectRmaSize()} bytes.
     */
    public InjectTarget injectTarget(MemoryRegion src, long dest, RemoteRegion target) {
        checkLocal(src, 0, 0);
        return new InjectTarget(this, src, dest, target, injectRmaSize);
    }

    /**
     * Ends a run of injected writes on the call board ({@link CallBoard.Slot#enterRun}): this
     * channel is in no native call. For a failure after an inject, before the waits of the
     * teardown: an open run would read as a stuck inject to the watchdog.
     */
    public void endInjectRun() {
        calls.endRun();
    }

    /** {@link InjectTarget#tryInject}, its addresses checked there; opens (or goes on with) a run on the call board. */
    int injectWrite(long src, long len, long dest, long dst, long key, long data) {
        long rc;
        calls.enterRun(CallBoardLayout.INJECT_WRITE); // no exit: the run ends at the channel's next bracketed call
        try {
            rc = (long) INJECT_DATA.invokeExact(injectDataFn, ep, src, len, data, dest, dst, key);
        } catch (Throwable t) {
            throw new AssertionError("downcall failed", t);
        }
        return posted(rc, CallBoardLayout.INJECT_WRITE, -1);
    }

    /**
     * Reads at most one completion into {@code c}: 1 when one was read, 0 when the CQ is empty.
     * An error entry becomes a {@link FabricException} with the provider's text. Reading the CQ
     * is also what drives progress for providers with manual progress.
     */
    @Override
    public int poll(Completion c) {
        return cq.read(c, 1);
    }

    /**
     * Reads up to {@link Completion#BATCH} completions in one {@code fi_cq_read}: libfabric's
     * util CQ runs the provider's progress once per call, so a target taking many small writes
     * pays it once per batch instead of once per write. Returns how many were read (select each
     * with {@link Completion#select}); errors as {@link #poll}.
     */
    @Override
    public int pollBatch(Completion c) {
        return cq.read(c, Completion.READ_COUNT);
    }

    /** The address of context slot {@code ctx}: what a completion hands back as op_context. */
    private long context(int ctx) {
        return contextBase + ctx * CONTEXT_SIZE;
    }

    private static long flags(boolean withData) {
        return withData ? Fi.COMPLETION | Fi.REMOTE_CQ_DATA : Fi.COMPLETION;
    }

    /** One provider call, bracketed on this channel's call-board line ({@link ProviderCall}). */
    private long call(int op, MemorySegment fn, MemorySegment fid, MemorySegment arg, long n) {
        return ProviderCall.op(calls, op, fn, fid, arg, n);
    }

    private int posted(long rc, int op, int ctx) {
        if (rc == 0 || rc == -Fi.EAGAIN) {
            return (int) rc;
        }
        throw Fi.failure(CallBoardLayout.OPS[op] + " (ctx " + ctx + ") on " + nic.provider() + " " + nic.domainName(), rc);
    }

    private void checkLocal(MemoryRegion mr, long off, long len) {
        if (mr.owner() != this) {
            throw new IllegalArgumentException("memory region is registered with another channel");
        }
        if (off < 0 || len < 0 || len > mr.length() - off) {
            throw new IndexOutOfBoundsException(len + " bytes at offset " + off + " exceed the region of "
                    + mr.length() + " bytes");
        }
    }

    private static void checkRemote(String op, RemoteRegion remote, long offset, long len) {
        if (offset < 0 || len > remote.length() - offset) {
            throw new IndexOutOfBoundsException(op + " of " + len + " bytes at offset " + offset
                    + " exceeds the remote region of " + remote.length() + " bytes");
        }
    }

    private static void checkContext(int ctx) {
        if (ctx < 0 || ctx >= CONTEXT_SLOTS) {
            throw new IndexOutOfBoundsException("ctx " + ctx + " outside 0.." + (CONTEXT_SLOTS - 1));
        }
    }

    private void requireOpen() {
        if (ep.address() == 0) {
            throw new IllegalStateException("channel on " + nic.domainName() + " is closed");
        }
    }

    /** Closes endpoint, AV, CQ, event queue, memory regions, domain and fabric, in that order. */
    @Override
    public void close() {
        FabricException first = null;
        calls.enter(CallBoardLayout.CLOSE);
        first = closeFid(ep, "endpoint", first);
        ep = MemorySegment.NULL;
        first = closeFid(av, "av", first);
        av = MemorySegment.NULL;
        first = closeFid(cq != null ? cq.fid() : MemorySegment.NULL, "cq", first);
        cq = null;
        if (events != null) {
            try {
                events.close();
            } catch (FabricException e) {
                first = first != null ? first : e;
            }
            events = null;
        }
        first = registrations.closeAll(first);
        first = closeFid(domain, "domain", first);
        domain = MemorySegment.NULL;
        first = closeFid(fabric, "fabric", first);
        fabric = MemorySegment.NULL;
        calls.release();
        OPEN.remove(this);
        if (first != null) {
            throw first;
        }
    }

    private static FabricException closeFid(MemorySegment fidPtr, String what, FabricException first) {
        if (fidPtr.address() == 0) {
            return first;
        }
        int rc = Fi.close(fidPtr);
        return rc == 0 || first != null ? first : Fi.failure("fi_close(" + what + ")", rc);
    }

    /**
     * A peer's registered region as the target of injected writes from one local region, resolved
     * and checked once ({@link Channel#injectTarget}): a post then checks only its own offsets and
     * length. At 64 B a write of a window costs little on shm, so the lookups and region checks
     * a general post makes per write (which channel owns the source, the peer's address, the target's
     * base and key) were a measurable part of it (docs/perf/journal/write-vs-fi_rma_bw.md, issue 19).
     */
    public static final class InjectTarget {
        private final Channel channel;
        private final long srcAddress;
        private final long srcLength;
        private final long dest;
        private final long dstBase;
        private final long dstLength;
        private final long key;
        private final long maxLength;

        private InjectTarget(Channel channel, MemoryRegion src, long dest, RemoteRegion target, long maxLength) {
            this.channel = channel;
            this.srcAddress = src.address();
            this.srcLength = src.length();
            this.dest = dest;
            this.dstBase = target.base();
            this.dstLength = target.length();
            this.key = target.key();
            this.maxLength = maxLength;
        }

        /**
         * {@code fi_inject_writedata} of {@code len} bytes at {@code srcOff} of the source region to
         * {@code dstOff} of the target region, with immediate {@code data}; the source may be reused
         * once it returns 0. Returns 0 or {@code -FI_EAGAIN}.
         */
        public int tryInject(long srcOff, long len, long dstOff, long data) {
            if (srcOff < 0 || dstOff < 0 || len < 0 || len > maxLength || len > srcLength - srcOff || len > dstLength - dstOff) {
                throw new IndexOutOfBoundsException("inject write of " + len + " bytes from offset " + srcOff + " of "
                        + srcLength + " to offset " + dstOff + " of " + dstLength + " (inject size " + maxLength + ")");
            }
            return channel.injectWrite(srcAddress + srcOff, len, dest, dstBase + dstOff, key, data);
        }
    }
}

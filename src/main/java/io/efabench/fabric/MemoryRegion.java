package io.efabench.fabric;

import java.lang.foreign.MemorySegment;
import java.util.function.Consumer;

/** A buffer registered with one channel's domain. Closing it deregisters (fi_close on the fid_mr). */
public final class MemoryRegion implements AutoCloseable {
    /** The channel it was registered with: a post checks that the region is its own. */
    private final Object owner;
    /** Its registrations' deregistration (fi_close and their bookkeeping). */
    private final Consumer<MemoryRegion> deregister;
    private final MemorySegment segment;
    private final long address;
    private final long desc;
    private final RemoteRegion remote;
    private MemorySegment mr;

    MemoryRegion(Object owner, Consumer<MemoryRegion> deregister, MemorySegment segment, MemorySegment mr, long desc,
            RemoteRegion remote) {
        this.owner = owner;
        this.deregister = deregister;
        this.segment = segment;
        this.address = segment.address();
        this.mr = mr;
        this.desc = desc;
        this.remote = remote;
    }

    /**
     * A region no domain registered, with {@code remote} as what peers are told: what a fake of
     * {@link ChannelOps} hands out in unit tests. A {@link Channel} refuses it (it is no channel's
     * own); closing it does nothing.
     */
    public static MemoryRegion standIn(MemorySegment segment, RemoteRegion remote) {
        return new MemoryRegion(STAND_IN, r -> {}, segment, MemorySegment.NULL, 0, remote);
    }

    private static final Object STAND_IN = new Object();

    /** The registered memory (host memory, or a device pointer wrapped as a segment for HMEM). */
    public MemorySegment segment() {
        return segment;
    }

    public long length() {
        return remote.length();
    }

    /** Base, length and key to hand to peers ({@link RemoteRegion#encode()}). */
    public RemoteRegion remote() {
        return remote;
    }

    long address() {
        return address;
    }

    /** fi_mr_desc(mr) as a raw pointer value; passed per operation under FI_MR_LOCAL. */
    long desc() {
        return desc;
    }

    Object owner() {
        return owner;
    }

    boolean isOpen() {
        return mr.address() != 0;
    }

    /** Closes the fid; the channel's bookkeeping is done by the caller. */
    int closeFid() {
        if (mr.address() == 0) {
            return 0;
        }
        int rc = Fi.close(mr);
        mr = MemorySegment.NULL;
        return rc;
    }

    @Override
    public void close() {
        deregister.accept(this);
    }
}

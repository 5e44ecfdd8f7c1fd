package io.efabench.harness.memory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import io.efabench.cuda.PinnedHostBuffer;

/**
 * Host payload memory: a page-aligned segment of the trial's arena (which frees it), page-locked
 * on the rank's GPU where there is one (as the seed's pinned buffers), pageable otherwise (as
 * fabtests' buffers). Filled and checked by the CPU.
 */
final class HostPayload implements PayloadMemory {
    final MemorySegment segment;
    /** The page-locking registration on the rank's GPU, or null. */
    private final PinnedHostBuffer pinned;

    HostPayload(MemorySegment segment, PinnedHostBuffer pinned) {
        this.segment = segment;
        this.pinned = pinned;
    }

    @Override
    public void fill(long offset, long length, int sender, int receiver, long round) {
        Payload.fill(segment.asSlice(offset, length), sender, receiver, round);
    }

    @Override
    public void clear() {
        segment.fill((byte) 0);
    }

    @Override
    public void verify(long offset, long length, int sender, int receiver, long round) {
        Payload.verify(segment.asSlice(offset, length), sender, receiver, round);
    }

    @Override
    public void corrupt(long offset) {
        segment.set(ValueLayout.JAVA_BYTE, offset, (byte) ~segment.get(ValueLayout.JAVA_BYTE, offset));
    }

    @Override
    public long deviceAddress() {
        throw new IllegalStateException("a host buffer has no device address here");
    }

    @Override
    public String describe() {
        return pinned != null ? "host, page-locked (cuMemHostRegister)" : "host, pageable";
    }

    @Override
    public void close() {
        if (pinned != null) {
            pinned.close();
        }
    }
}

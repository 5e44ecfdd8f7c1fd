package io.efabench.harness.memory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import io.efabench.cuda.DeviceBuffer;
import io.efabench.cuda.DmaBuf;
import io.efabench.cuda.PatternKernels;

/**
 * Device payload memory on the rank's GPU, with its DMA-BUF export where the registration used
 * one. Filled and checked by the GPU's pattern kernels on the trial's stream; nothing here
 * dereferences a device pointer on the host.
 */
final class DevicePayload implements PayloadMemory {
    private final TrialGpu gpu;
    final DeviceBuffer memory;
    /** The export the regions were registered through, or null (registered by virtual address). */
    private DmaBuf dmaBuf;

    DevicePayload(TrialGpu gpu, DeviceBuffer memory) {
        this.gpu = gpu;
        this.memory = memory;
    }

    /** Keeps {@code export} open as long as the memory (the regions registered through it need it). */
    void keep(DmaBuf export) {
        this.dmaBuf = export;
    }

    @Override
    public void fill(long offset, long length, int sender, int receiver, long round) {
        gpu.context.makeCurrent();
        gpu.pattern.fill(gpu.stream, memory.slice(offset, length), sender, receiver, round);
        gpu.await("rank " + receiver + "'s pattern fill from rank " + sender);
    }

    @Override
    public void clear() {
        gpu.await("clearing a device buffer: earlier work");
        memory.fill((byte) 0);
    }

    @Override
    public void verify(long offset, long length, int sender, int receiver, long round) {
        PatternKernels.Verdict v = gpu.pattern.verify(gpu.stream, memory.slice(offset, length), sender, receiver, round,
                gpu.timeoutNanos);
        if (!v.ok()) {
            throw Payload.CorruptionException.onDevice(receiver, sender, round, v.firstBadWord(), v.expected(), v.actual(),
                    v.mismatchedWords(), length / 4);
        }
    }

    @Override
    public void corrupt(long offset) {
        gpu.context.makeCurrent();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment one = a.allocate(1);
            memory.slice(offset, 1).copyTo(one);
            one.set(ValueLayout.JAVA_BYTE, 0, (byte) ~one.get(ValueLayout.JAVA_BYTE, 0));
            memory.slice(offset, 1).copyFrom(one);
        }
    }

    @Override
    public long deviceAddress() {
        return memory.deviceAddress();
    }

    @Override
    public String describe() {
        return dmaBuf != null ? "device, dmabuf" : "device, va";
    }

    @Override
    public void close() {
        if (dmaBuf != null) {
            dmaBuf.close();
            dmaBuf = null;
        }
        gpu.context.makeCurrent();
        memory.close();
    }
}

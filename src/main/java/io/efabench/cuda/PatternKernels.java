package io.efabench.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Fills and verifies the {@link CheckPattern} on the GPU that owns the memory (pattern.cu), so a
 * checked round compares every byte of a large buffer in milliseconds and without a host copy.
 */
public final class PatternKernels implements AutoCloseable {
    private static final int BLOCK = 256;
    private final CudaContext context;
    private final CudaModule module;
    private final Kernel fill;
    private final Kernel verify;
    private final DeviceBuffer result;
    private final MemorySegment host = Arena.ofAuto().allocate(16, 8);
    private final KernelArgs fillArgs = new KernelArgs(3);
    private final KernelArgs verifyArgs = new KernelArgs(4);
    private final int grid;

    public PatternKernels(CudaContext context) {
        this.context = context;
        this.module = KernelCompiler.load(context, "pattern.cu");
        this.fill = module.kernel("fill_pattern");
        this.verify = module.kernel("verify_pattern");
        this.result = DeviceBuffer.allocate(context, 16);
        this.grid = context.device().smCount() * 4;
    }

    /** What a verify pass found. {@code firstBadWord} is -1 when nothing differed. */
    public record Verdict(long mismatchedWords, long firstBadWord, int expected, int actual) {
        public boolean ok() {
            return mismatchedWords == 0;
        }

        /** "3 of 262144 words differ, first at byte offset 4096: expected 0x..., got 0x..." */
        public String describe(long totalWords) {
            return mismatchedWords + " of " + totalWords + " words differ, first at byte offset " + firstBadWord * 4
                    + String.format(": expected 0x%08x, got 0x%08x", expected, actual);
        }
    }

    /** Enqueues a fill of {@code memory} (a multiple of 4 bytes) with the pattern of (sender, receiver, round). */
    public void fill(CudaStream stream, DeviceMemory memory, int sender, int receiver, long round) {
        fillArgs.pointer(0, memory).u64(1, words(memory)).u32(2, CheckPattern.seed(sender, receiver, round));
        fill.launch(stream, grid, BLOCK, 0, fillArgs);
    }

    /**
     * Checks every word of {@code memory} against the pattern of (sender, receiver, round); waits
     * at most {@code timeoutNanos}.
     */
    public Verdict verify(CudaStream stream, DeviceMemory memory, int sender, int receiver, long round, long timeoutNanos) {
        context.makeCurrent();
        stream.await(timeoutNanos, "verify: earlier work");
        result.slice(0, 8).fillWords(0);
        result.slice(8, 8).fillWords(-1);
        int seed = CheckPattern.seed(sender, receiver, round);
        verifyArgs.pointer(0, memory).u64(1, words(memory)).u32(2, seed).pointer(3, result);
        verify.launch(stream, grid, BLOCK, 0, verifyArgs);
        stream.await(timeoutNanos, "verify_pattern");
        result.copyTo(host);
        long bad = host.get(ValueLayout.JAVA_LONG, 0);
        long first = host.get(ValueLayout.JAVA_LONG, 8);
        if (bad == 0) {
            return new Verdict(0, -1, 0, 0);
        }
        MemorySegment word = host.asSlice(0, 4);
        memory.slice(first * 4, 4).copyTo(word);
        return new Verdict(bad, first, CheckPattern.word(seed, first), word.get(ValueLayout.JAVA_INT, 0));
    }

    private static long words(DeviceMemory memory) {
        if (memory.byteSize() % 4 != 0) {
            throw new IllegalArgumentException(memory.byteSize() + " bytes is not a whole number of 4-byte words");
        }
        return memory.byteSize() / 4;
    }

    @Override
    public void close() {
        result.close();
        module.close();
    }
}

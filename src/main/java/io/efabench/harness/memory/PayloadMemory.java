package io.efabench.harness.memory;

/**
 * The memory behind a {@link TrialBuffer}, one class per memory kind: where the bytes live and how
 * the check pattern is written, cleared and verified there. Host memory is filled and checked by
 * the CPU ({@link HostPayload}), device memory by the GPU's pattern kernels ({@link DevicePayload}),
 * both with the pattern of (sender, receiver, round, offset); the trial's buffer code does not
 * branch on the kind.
 */
interface PayloadMemory extends AutoCloseable {
    /** Writes the pattern of (sender, receiver, round) into [offset, offset + length); returns when it is in memory. */
    void fill(long offset, long length, int sender, int receiver, long round);

    /** Zeroes the memory (a zero word never passes the check); returns when it is done. */
    void clear();

    /** Checks [offset, offset + length) against the pattern; throws {@link Payload.CorruptionException}. */
    void verify(long offset, long length, int sender, int receiver, long round);

    /** Flips the byte at {@code offset} (test hook EFABENCH_CORRUPT_OFFSET). */
    void corrupt(long offset);

    /** Where kernels see the memory; host memory has no device address here. */
    long deviceAddress();

    /** For provenance: "host, page-locked (cuMemHostRegister)", "host, pageable", "device, ...". */
    String describe();

    /** Frees the memory (after the regions on it were closed). */
    @Override
    void close();
}

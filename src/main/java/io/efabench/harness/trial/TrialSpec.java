package io.efabench.harness.trial;

import io.efabench.harness.MemoryKind;

/**
 * What a benchmark asks of its trial, said by the benchmark instead of read back out of JMH's
 * params: the memory kind of its payload, its channels ("auto" or a count), the fewest ranks it
 * runs with, its config's name (for failure lines; null when it has none) and the NIC path
 * ("nic" or "auto"; null: EFABENCH_PATH or the default); and which NIC it opens ({@code nic}: a
 * libfabric domain name, EFABENCH_NICS aside; null: the rank's own, as EFABENCH_NICS and
 * placement give them) and the rail that NIC is on, as failure lines name it ({@code rail}; -1:
 * channel k is rail k modulo the rank's NICs); and the GPU its buffers live on ({@code gpu}: a
 * visible CUDA ordinal; -1: the local rank's, as {@link io.efabench.harness.memory.TrialGpu} picks).
 */
public record TrialSpec(MemoryKind memory, String channels, int minRanks, String config, String path, String nic, int rail,
        int gpu) {
    /** Payload in {@code memory}, channels "auto", at least 2 ranks, no config name, the path from the environment. */
    public static TrialSpec of(MemoryKind memory) {
        return new TrialSpec(memory, "auto", 2, null, null, null, -1, -1);
    }

    /**
     * One channel, on the NIC whose domain is {@code domain}, on rail {@code rail} of the sweep,
     * whatever EFABENCH_NICS and placement say.
     */
    public TrialSpec nic(String domain, int rail) {
        return new TrialSpec(memory, "1", minRanks, config, path, domain, rail, gpu);
    }

    public TrialSpec channels(String value) {
        return new TrialSpec(memory, value, minRanks, config, path, nic, rail, gpu);
    }

    public TrialSpec config(String name) {
        return new TrialSpec(memory, channels, minRanks, name, path, nic, rail, gpu);
    }

    public TrialSpec path(String value) {
        return new TrialSpec(memory, channels, minRanks, config, value, nic, rail, gpu);
    }

    /** Buffers on visible GPU {@code ordinal} (the sweep's: the GPU nearest the rail's NIC), whatever the local rank. */
    public TrialSpec gpu(int ordinal) {
        return new TrialSpec(memory, channels, minRanks, config, path, nic, rail, ordinal);
    }
}

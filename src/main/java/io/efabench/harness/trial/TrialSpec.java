package io.efabench.harness.trial;

import io.efabench.harness.MemoryKind;

/**
 * What a benchmark asks of its trial, said by the benchmark instead of read back out of JMH's
 * params: the memory kind of its payload, its channels ("auto" or a count), the fewest ranks it
 * runs with, its config's name (for failure lines; null when it has none) and the NIC path
 * ("nic" or "auto"; null: EFABENCH_PATH or the default); and which of the node's NICs it opens
 * ({@code nic}: the index among the NICs discovery lists, EFABENCH_NICS's order; -1: the rank's own,
 * as placement gives them).
 */
public record TrialSpec(MemoryKind memory, String channels, int minRanks, String config, String path, int nic) {
    /** Payload in {@code memory}, channels "auto", at least 2 ranks, no config name, the path from the environment. */
    public static TrialSpec of(MemoryKind memory) {
        return new TrialSpec(memory, "auto", 2, null, null, -1);
    }

    /** One channel, on the node's NIC {@code index} (a rail), whatever placement would give the rank. */
    public TrialSpec nic(int index) {
        return new TrialSpec(memory, "1", minRanks, config, path, index);
    }

    public TrialSpec channels(String value) {
        return new TrialSpec(memory, value, minRanks, config, path, nic);
    }

    public TrialSpec config(String name) {
        return new TrialSpec(memory, channels, minRanks, name, path, nic);
    }

    public TrialSpec path(String value) {
        return new TrialSpec(memory, channels, minRanks, config, value, nic);
    }
}

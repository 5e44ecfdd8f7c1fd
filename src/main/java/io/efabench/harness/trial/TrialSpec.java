package io.efabench.harness.trial;

import io.efabench.harness.MemoryKind;

/**
 * What a benchmark asks of its trial, said by the benchmark instead of read back out of JMH's
 * params: the memory kind of its payload, its channels ("auto" or a count), the fewest ranks it
 * runs with, its config's name (for failure lines; null when it has none) and the NIC path
 * ("nic" or "auto"; null: EFABENCH_PATH or the default); and which NIC it opens ({@code nic}: a
 * libfabric domain name, EFABENCH_NICS aside; null: the rank's own, as EFABENCH_NICS and
 * placement give them).
 */
public record TrialSpec(MemoryKind memory, String channels, int minRanks, String config, String path, String nic) {
    /** Payload in {@code memory}, channels "auto", at least 2 ranks, no config name, the path from the environment. */
    public static TrialSpec of(MemoryKind memory) {
        return new TrialSpec(memory, "auto", 2, null, null, null);
    }

    /** One channel, on the NIC whose domain is {@code domain} (a rail of the sweep), whatever EFABENCH_NICS and placement say. */
    public TrialSpec nic(String domain) {
        return new TrialSpec(memory, "1", minRanks, config, path, domain);
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

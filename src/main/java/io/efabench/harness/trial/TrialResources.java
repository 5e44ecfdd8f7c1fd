package io.efabench.harness.trial;

import java.util.ArrayList;
import java.util.List;

/**
 * A trial's close stack (the fabric trial's and the NVLink rig's): everything it opens is pushed with its tier, and {@link #closeAll}
 * closes tier by tier in the order of {@link Tier}, newest first within a tier, every close
 * attempted even after one failed (on the way out of a failure the first error is the one
 * reported). Tiers rather than one stack because libfabric's order is not the reverse of
 * opening: endpoints close before the memory regions registered on them (closing a region under
 * a posted receive is undefined behaviour, fi_efa(7)), although the buffers open later.
 */
public final class TrialResources {
    public enum Tier {
        /**
         * Other ranks' memory mapped here (CUDA IPC): {@link FabricTrial#close} closes this tier
         * before its end-of-trial barrier, so no rank frees memory that a peer still maps.
         */
        PEER_MAPPINGS,
        /** Threads that drive the channels (the proxy): stopped before anything closes. */
        WORKER,
        /** Channels (Channel.close: endpoint, then its memory regions, CQ, AV, domain). */
        ENDPOINT,
        /** What workloads own (kernels, streams, events, peer mappings, mailboxes). */
        OWNED,
        /** Payload buffers and their registrations; pinned host and device allocations. */
        BUFFER,
        /** fi_getinfo's list. */
        FABRIC,
        /** The arena behind host buffers. */
        MEMORY,
        /** The GPU context, last. */
        GPU
    }

    private final List<List<AutoCloseable>> tiers = new ArrayList<>();

    public TrialResources() {
        for (int i = 0; i < Tier.values().length; i++) {
            tiers.add(new ArrayList<>());
        }
    }

    public <T extends AutoCloseable> T push(Tier tier, T resource) {
        tiers.get(tier.ordinal()).add(resource);
        return resource;
    }

    public void closeAll() {
        for (Tier tier : Tier.values()) {
            close(tier);
        }
    }

    /** Closes one tier, newest first, every close attempted. */
    public void close(Tier which) {
        List<AutoCloseable> tier = tiers.get(which.ordinal());
        for (int i = tier.size() - 1; i >= 0; i--) {
            try {
                tier.get(i).close();
            } catch (Exception ignored) {
                // closing on the way out of a failure: the first error is the one reported
            }
        }
        tier.clear();
    }
}

package io.efabench.harness.trial;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** The trial's close stack: tier by tier in Tier's order, newest first within a tier, every close tried. */
class TrialResourcesTest {

    @Test
    void closesTierByTierNewestFirstAndGoesOnAfterAFailure() {
        List<String> closed = new ArrayList<>();
        TrialResources r = new TrialResources();
        // Pushed in the order a trial opens them: GPU, fi_getinfo, arena, endpoints, buffers, owned, worker.
        r.push(TrialResources.Tier.GPU, () -> closed.add("gpu"));
        r.push(TrialResources.Tier.FABRIC, () -> closed.add("discovery"));
        r.push(TrialResources.Tier.MEMORY, () -> closed.add("arena"));
        r.push(TrialResources.Tier.ENDPOINT, () -> closed.add("channel0"));
        r.push(TrialResources.Tier.ENDPOINT, () -> closed.add("channel1"));
        r.push(TrialResources.Tier.BUFFER, () -> {
            closed.add("buffer");
            throw new IllegalStateException("a close that fails");
        });
        r.push(TrialResources.Tier.OWNED, () -> closed.add("kernels"));
        r.push(TrialResources.Tier.WORKER, () -> closed.add("proxy"));
        r.closeAll();
        assertEquals(List.of("proxy", "channel1", "channel0", "kernels", "buffer", "discovery", "arena", "gpu"), closed);
        r.closeAll();
        assertEquals(8, closed.size(), "a second closeAll closes nothing twice");
    }
}

package io.efabench.harness.memory;

import java.time.Duration;

import io.efabench.fabric.Channel;
import io.efabench.fabric.Discovery;
import io.efabench.rank.RankEnv;

/**
 * For the doctor: registers 2 MiB of device memory on this process's GPU with the NIC a run
 * would take, by the path a run's {@link TrialBuffer} takes (DMA-BUF, else by VA), and says how it
 * went. Needs a GPU and a discovery with FI_HMEM.
 */
public final class DeviceProbe {
    private DeviceProbe() {}

    /** "dmabuf" or "va (DMA-BUF refused: ...)", whether that was DMA-BUF, and FI_OPT_CUDA_API_PERMITTED's outcome. */
    public record Outcome(String registration, boolean dmabuf, String cudaApiPermitted) {}

    public static Outcome register(Discovery hmem) {
        try (TrialGpu gpu = TrialGpu.open(RankEnv.fromEnvironment(), TrialGpu.Sharing.ALLOWED, Duration.ofSeconds(30));
             Channel ch = Channel.open(hmem, hmem.nics().getFirst(), 64);
             TrialBuffer b = TrialBuffer.device(2 << 20, gpu, new Channel[] {ch}, 0)) {
            String how = b.registration().name().toLowerCase(java.util.Locale.ROOT);
            return new Outcome(b.dmaBufRefusal() == null ? how : how + " (DMA-BUF refused: " + b.dmaBufRefusal() + ")",
                    b.registration() == TrialBuffer.Registration.DMABUF, ch.cudaApiPermitted());
        }
    }
}

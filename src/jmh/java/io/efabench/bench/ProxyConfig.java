package io.efabench.bench;

import io.efabench.harness.Layout;


/**
 * ProxyBenchmark's configs. The seed's four: one channel or every channel (each request's bytes
 * striped), times blocking (quiet after every push) or NBI (quiet once at the end of a launch).
 * The Direct configs are their twins without the GPU: the proxy thread makes the same requests
 * itself and waits as the kernel would, so {@code ProxySingle - DirectSingle} is what the GPU
 * queue costs per round. They are not WriteBenchmark's {@code SingleDMA} (window 64) and not the
 * seed's SingleDMA column either: they post the proxy's rounds, the proxy's way. Device memory,
 * as in the seed.
 */
public enum ProxyConfig {
    ProxySingle(Layout.SINGLE, false, false),
    ProxyMulti(Layout.MULTI, false, false),
    ProxySingleNBI(Layout.SINGLE, true, false),
    ProxyMultiNBI(Layout.MULTI, true, false),
    DirectSingle(Layout.SINGLE, false, true),
    DirectMulti(Layout.MULTI, false, true),
    DirectSingleNBI(Layout.SINGLE, true, true),
    DirectMultiNBI(Layout.MULTI, true, true);

    public final Layout layout;
    public final boolean nbi;
    /** True for the baseline without the GPU: the proxy thread makes the requests. */
    public final boolean direct;

    ProxyConfig(Layout layout, boolean nbi, boolean direct) {
        this.layout = layout;
        this.nbi = nbi;
        this.direct = direct;
    }
}

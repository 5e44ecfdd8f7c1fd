package io.efabench.bench;

import io.efabench.harness.engine.OpPlan.Layout;

/**
 * ProxyBenchmark's configs, the seed's names: one channel or every channel (each request's bytes
 * striped), times blocking (quiet after every push) or NBI (quiet once at the end of the round).
 * The payload is device memory, as in the seed. {@code SingleDMA} and {@code MultiDMA} are the
 * direct baseline in the same rounds: the host posts the whole buffer to each target itself
 * (WriteBenchmark's configs of the same names with {@code window=1 completion=remote}), so one
 * run puts proxy and direct side by side in one table.
 */
public enum ProxyConfig {
    ProxySingle(Layout.SINGLE, false, false),
    ProxyMulti(Layout.MULTI, false, false),
    ProxySingleNBI(Layout.SINGLE, true, false),
    ProxyMultiNBI(Layout.MULTI, true, false),
    SingleDMA(Layout.SINGLE, false, true),
    MultiDMA(Layout.MULTI, false, true);

    public final Layout layout;
    public final boolean nbi;
    /** True for the baseline without the proxy: the host posts the writes. */
    public final boolean direct;

    ProxyConfig(Layout layout, boolean nbi, boolean direct) {
        this.layout = layout;
        this.nbi = nbi;
        this.direct = direct;
    }
}

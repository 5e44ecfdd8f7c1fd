package io.efabench.harness;

/**
 * The seed's unit of time where this benchmark has one and an invocation is made of whole
 * such units, one after another: SendRecv's ping-pong round trip ({@code rtt_us}), an
 * all-to-all round at window 1 ({@code round_us}), the proxy's round ({@code round_us}: a
 * launch of {@code rounds} rounds over its rounds, as the seed's time / iters, NBI's overlapping
 * rounds included). The seed-style tables compute their Gbps and Lat from it. Null where there
 * is none (Write reports lat_us per transfer as the seed does).
 *
 * @param metric     the metric's name, in microseconds
 * @param perInvocation how many of them one invocation is
 */
public record SeedRound(String metric, int perInvocation) {}

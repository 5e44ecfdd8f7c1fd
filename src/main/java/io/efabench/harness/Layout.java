package io.efabench.harness;

/**
 * How a rank's writes to one peer spread over its channels (the seed's Single, Multi and
 * RoundRobin): SINGLE all on channel 0, MULTI one stripe per channel, ROUND_ROBIN each peer's
 * block whole on channel (peer + rank) % channels.
 */
public enum Layout { SINGLE, MULTI, ROUND_ROBIN }

package io.efabench.harness;

/**
 * One figure rank 0 computed itself at the end of an iteration from every rank's measurements
 * (MoE's per-rank rates and slowest-rank times), published as a JMH secondary result as it is.
 */
public record IterationFigure(String name, double value, String unit) {}

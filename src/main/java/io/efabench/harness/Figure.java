package io.efabench.harness;

/**
 * One metric that follows from a mean invocation time through {@link Metrics}: which
 * formula ({@code kind}), over which bytes, divided into how many transfers (or, for
 * nccl-tests' busbw, the rank count), against which link. Serializable: results travel from
 * the forked JVM.
 */
record Figure(String label, int kind, long bytes, int transfers, double linkGbps) implements java.io.Serializable {
    static final int GBPS = 0;
    static final int BUSBW_PCT = 1;
    static final int LAT_US = 2;
    /** nccl-tests' algbw (GB/s) of {@code bytes} = size x N. */
    static final int NCCL_ALGBW = 4;
    /** nccl-tests' alltoall busbw (GB/s): the algbw x (N-1)/N, N in {@code transfers}. */
    static final int NCCL_BUSBW = 5;

    double of(double meanSeconds) {
        return switch (kind) {
            case GBPS -> Metrics.gbps(bytes, meanSeconds);
            case BUSBW_PCT -> Metrics.busbwPct(Metrics.gbps(bytes, meanSeconds), linkGbps);
            case NCCL_ALGBW -> Metrics.ncclAlgbwGBs(bytes, meanSeconds);
            case NCCL_BUSBW -> Metrics.ncclAlltoallBusbwGBs(Metrics.ncclAlgbwGBs(bytes, meanSeconds), transfers);
            default -> Metrics.transferLatUs(meanSeconds, transfers);
        };
    }

    String unit() {
        return switch (kind) {
            case GBPS -> "Gbps";
            case BUSBW_PCT -> "%";
            case NCCL_ALGBW, NCCL_BUSBW -> "GB/s";
            default -> "us";
        };
    }
}

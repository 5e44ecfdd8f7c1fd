package io.efabench.sweep;

/**
 * What one pair of nodes measured on one rail: the write bandwidth each way (Gbps, bytes delivered
 * and verified at the receiver over the receiver's time) and the small-message round trip's p50
 * and p99 (microseconds); or why it could not be measured.
 *
 * @param a         the pair's lower node index
 * @param b         the pair's higher node index
 * @param rail      the rail: NIC {@code rail} of node a with NIC {@code rail} of node b
 * @param gbpsAtoB  a's writes to b, Gbps; NaN where not measured
 * @param gbpsBtoA  b's writes to a, Gbps; NaN where not measured
 * @param p50us     round trip p50, microseconds; NaN where not measured
 * @param p99us     round trip p99, microseconds; NaN where not measured
 * @param failure   null when measured; else the one line of what failed
 * @param retest    whether this was the second pass's re-measurement against a known-good partner
 */
public record LinkResult(int a, int b, int rail, double gbpsAtoB, double gbpsBtoA, double p50us, double p99us, String failure,
        boolean retest) {
    public LinkResult {
        if (a < 0 || b <= a || rail < 0) {
            throw new IllegalArgumentException("link " + a + "-" + b + " rail " + rail);
        }
    }

    public static LinkResult failed(int a, int b, int rail, String failure, boolean retest) {
        return new LinkResult(a, b, rail, Double.NaN, Double.NaN, Double.NaN, Double.NaN, failure, retest);
    }

    public boolean measured() {
        return failure == null;
    }

    public boolean has(int node) {
        return a == node || b == node;
    }

    public int partnerOf(int node) {
        return node == a ? b : a;
    }
}

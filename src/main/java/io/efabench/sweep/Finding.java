package io.efabench.sweep;

/**
 * One thing the sweep names: a node, a NIC (a node's rail), a rail, or a pair it could not
 * attribute, with the figure that flagged it, the reference it was held against and why.
 *
 * @param node   the node, or -1 for a rail
 * @param rail   the rail, or -1 for a whole node
 * @param figure the worst figure behind it (Gbps, or microseconds for a round trip; NaN where unmeasured)
 * @param reference what it was held against, in the same unit (NaN where none): the rail's reference for a NIC
 *                  or pair, the rails' median reference for a slow rail
 * @param partner the other node of a PAIR finding, else -1
 */
public record Finding(Kind kind, int node, int rail, int partner, double figure, double reference, String why) {
    public enum Kind {
        /** A node that stopped taking part (its process or host died, or it never joined). */
        DEAD,
        /** Every rail of a node failed. */
        NODE,
        /** One NIC (a node's rail) failed with every partner it was measured with, or again with a known-good one. */
        NIC,
        /** Most of a rail's NICs failed, or its median is far below the other rails'. */
        RAIL,
        /** A failing pair whose failure follows neither end: named as a pair. */
        PAIR
    }

    /** How bad: 0 for what could not be measured, else the figure's share of its reference (lower is worse). */
    public double severity() {
        if (kind == Kind.DEAD) {
            return -1;
        }
        if (Double.isNaN(figure) || Double.isNaN(reference) || reference <= 0) {
            return 0;
        }
        return figure < reference ? figure / reference : reference / figure;
    }
}

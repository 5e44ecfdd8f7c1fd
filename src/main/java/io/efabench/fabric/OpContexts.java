package io.efabench.fabric;

import io.efabench.fabric.generated.fi_context2;

/**
 * The layout of a channel's operation contexts, apart from the code that posts and reaps: each
 * channel owns {@link #SLOTS} {@code struct fi_context2} in a row; a post's {@code ctx} index is its
 * slot, and a completion's op_context maps back to it (Channel, Completion, CompletionQueue).
 */
final class OpContexts {
    /** Operation context slots per channel: {@code ctx} arguments are indexes into them. */
    static final int SLOTS = 1024;
    /** Bytes of one slot. */
    static final long SIZE = fi_context2.sizeof();

    private OpContexts() {}
}

package io.efabench.harness.proxy;

import io.efabench.proxy.RequestRing;
import io.efabench.harness.engine.Stripes;

/**
 * What a proxy request may say (proxy.cu writes the same codes) and the rules the proxy checks
 * it against before posting anything: an unknown op, a target that is no peer, a channel that
 * does not exist, or bytes that overrun either buffer; and how many writes a request becomes.
 */
final class ProxyRequests {
    static final int OP_PUT = 1;
    static final int OP_FENCE = 2;
    /** Channel hint: stripe the request's bytes over every channel. */
    static final int ALL_CHANNELS = 0xFFFF;

    /**
     * Null when every field of {@code req} is valid for rank {@code me} with {@code channels}
     * channels, a {@code srcBytes} source and rank k's destination buffer of {@code dstBytesOf[k]}
     * bytes (one entry per rank); else which field is wrong and why (one line).
     */
    static String invalid(RequestRing.Request req, int me, int channels, long srcBytes, long[] dstBytesOf) {
        int ranks = dstBytesOf.length;
        if (req.op != OP_PUT && req.op != OP_FENCE) {
            return "has op " + req.op + ", neither put (" + OP_PUT + ") nor fence (" + OP_FENCE + ")";
        }
        if (req.op == OP_FENCE) {
            return null;
        }
        if (req.target < 0 || req.target >= ranks || req.target == me) {
            return "targets rank " + req.target + ", which is no peer of rank " + me + " (ranks 0.." + (ranks - 1) + ")";
        }
        if (req.channel != ALL_CHANNELS && (req.channel < 0 || req.channel >= channels)) {
            return "names channel " + req.channel + " of " + channels;
        }
        long dstBytes = dstBytesOf[req.target];
        if (req.bytes <= 0 || req.src < 0 || req.dst < 0 || req.bytes > srcBytes - req.src || req.bytes > dstBytes - req.dst) {
            return "writes " + req.bytes + " bytes from source offset " + req.src + " to destination offset " + req.dst
                    + ", outside the " + srcBytes + "-byte source or the " + dstBytes + "-byte destination buffer";
        }
        return null;
    }

    /**
     * Writes one request of {@code bytes} turns into on channels with write limits {@code maxWrite}:
     * one per channel (or per stripe for {@link #ALL_CHANNELS}: bytes / channels each, the last
     * one taking the rest, empty stripes skipped: {@link Stripes}), each cut at the channel's limit.
     */
    static int writesFor(long bytes, int channelHint, long[] maxWrite) {
        if (channelHint != ALL_CHANNELS) {
            return Stripes.writes(bytes, maxWrite[channelHint]);
        }
        int n = 0;
        for (int c = 0; c < maxWrite.length; c++) {
            n += Stripes.writes(Stripes.length(bytes, maxWrite.length, c), maxWrite[c]);
        }
        return n;
    }

    private ProxyRequests() {
    }
}

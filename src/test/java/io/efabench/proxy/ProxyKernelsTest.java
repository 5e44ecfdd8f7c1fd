package io.efabench.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import io.efabench.cuda.KernelCompiler;

/** The producer kernels and the Java side agree on the ring's layout, the flags and the mailbox. */
class ProxyKernelsTest {
    private static final String SOURCE = KernelCompiler.source("proxy.cu");

    private static long define(String name) {
        Matcher m = Pattern.compile("#define " + name + " (\\d+)u?").matcher(SOURCE);
        if (!m.find()) {
            throw new AssertionError("proxy.cu defines no " + name);
        }
        return Long.parseLong(m.group(1));
    }

    @Test
    void ringLayoutMatchesRequestRing() {
        Map<String, Long> java = Map.of("RING_HEAD", RequestRing.HEAD, "RING_POSTED", RequestRing.POSTED,
                "RING_COMPLETED", RequestRing.COMPLETED, "RING_CELLS", RequestRing.CELLS, "RING_CELL", RequestRing.CELL);
        java.forEach((name, value) -> assertEquals(value, define(name), name));
        assertEquals(RequestRing.TAG_BITS, define("RING_TAG_BITS"));
        // The kernel writes fields 1..6 of a cell as u64 words, in RequestRing's order.
        assertEquals(8, RequestRing.OP_TARGET);
        assertEquals(16, RequestRing.CHANNEL);
        assertEquals(24, RequestRing.SRC);
        assertEquals(32, RequestRing.DST);
        assertEquals(40, RequestRing.BYTES);
        assertEquals(48, RequestRing.IMM);
    }

    @Test
    void flagsAndTestHooksMatch() {
        assertEquals(ProxyKernels.FLAG_NBI, define("FLAG_NBI"));
        assertEquals(ProxyKernels.FLAG_FILL, define("FLAG_FILL"));
        assertEquals(ProxyKernels.CORRUPT_TARGET, define("CORRUPT_TARGET"));
        assertEquals(ProxyKernels.CORRUPT_BYTES, define("CORRUPT_BYTES"));
        assertEquals(ProxyKernels.CORRUPT_OP, define("CORRUPT_OP"));
        assertEquals(1, define("OP_PUT"));
    }

    /** The kernel ors a round's low bits into the immediate and keeps one last ticket per slot. */
    @Test
    void immediateRoundBitsAndSlotLimitMatch() {
        assertEquals(io.efabench.harness.engine.Immediate.ROUND_BITS, Long.decode(
                Pattern.compile("#define IMM_ROUND_MASK (0x[0-9A-Fa-f]+)ull").matcher(SOURCE).results().findFirst()
                        .orElseThrow().group(1)));
        assertEquals(ProxyKernels.MAX_SLOTS, define("MAX_SLOTS"));
        assertEquals(io.efabench.harness.engine.Footprint.MAX_SLOTS, ProxyKernels.MAX_SLOTS);
    }

    @Test
    void statusCodesMatchTheMailbox() {
        assertEquals(Mailbox.RING_FULL, define("ST_RING_FULL"));
        assertEquals(Mailbox.QUIET, define("ST_QUIET"));
        assertEquals(Mailbox.ABORTED, define("ST_ABORTED"));
        assertEquals(Mailbox.IDLE, define("ST_IDLE"));
    }
}

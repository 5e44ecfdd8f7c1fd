package io.efabench.harness.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ImmediateTest {
    @Test
    void kindSenderAndRoundRoundTripIn32Bits() {
        long d = Immediate.encode(Immediate.FINAL, 1023, (1L << 20) + 5);
        assertEquals(0, d >>> 32, "32 bits of immediate data");
        assertEquals(Immediate.FINAL, Immediate.kind(d));
        assertEquals(1023, Immediate.sender(d));
        assertEquals(5, Immediate.roundBits(d));
    }

    @Test
    void roundsAheadUnwrapsAcrossThe20BitWrap() {
        long next = (1L << 20) - 2; // the receiver expects round 2^20 - 2
        assertEquals(0, Immediate.roundsAhead(Immediate.encode(Immediate.DATA, 0, next), next));
        assertEquals(3, Immediate.roundsAhead(Immediate.encode(Immediate.DATA, 0, next + 3), next), "past the wrap");
        assertEquals((1L << 20) - 1, Immediate.roundsAhead(Immediate.encode(Immediate.DATA, 0, next - 1), next),
                "a served round reads as far ahead");
    }
}

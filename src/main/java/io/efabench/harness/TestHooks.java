package io.efabench.harness;

/**
 * Faults that tests inject through the environment, read once at setup into final fields (nothing
 * on a hot path reads the environment). docs/DESIGN.md lists them; a user never sets them.
 */
public final class TestHooks {
    private TestHooks() {}

    /** An integer test hook: -1 when unset; a one-line error when not a whole number. */
    public static long integer(String name) {
        String v = System.getenv(name);
        if (v == null || v.isBlank()) {
            return -1;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new BenchmarkSetupException(name + "=" + v + ": must be a whole number");
        }
    }

    /**
     * EFABENCH_TEST_PIPELINE_FAULT=misdirect|short: one write of a checked pass, the first posted
     * while another write of the same rank is still in flight, goes to the next slot's region
     * (misdirect) or carries its immediate data but only its first 64 bytes of payload (short).
     * Only a checked pass that runs pipelined, as the timed rounds do, can meet that condition.
     */
    public static final class PipelineFault {
        public enum Kind { NONE, MISDIRECT, SHORT }

        public final Kind kind;
        private boolean armed;

        private PipelineFault(Kind kind) {
            this.kind = kind;
        }

        public static PipelineFault fromEnvironment() {
            String v = System.getenv("EFABENCH_TEST_PIPELINE_FAULT");
            if (v == null || v.isBlank()) {
                return new PipelineFault(Kind.NONE);
            }
            return switch (v.trim()) {
                case "misdirect" -> new PipelineFault(Kind.MISDIRECT);
                case "short" -> new PipelineFault(Kind.SHORT);
                default -> throw new BenchmarkSetupException("EFABENCH_TEST_PIPELINE_FAULT=" + v + ": use misdirect or short");
            };
        }

        /** At the start of a checked pass: the next write posted with another in flight takes the fault. */
        public void arm() {
            armed = kind != Kind.NONE;
        }

        /** True, once per armed pass, for a write posted while {@code othersInFlight} > 0. */
        public boolean fires(int othersInFlight) {
            if (armed && othersInFlight > 0) {
                armed = false;
                return true;
            }
            return false;
        }
    }
}

package io.efabench.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** The layout facts as a fresh JVM records them: right, and without a line on stdout or stderr. */
class JvmLayoutTest {
    /** Prints the facts and nothing else; run in a JVM of its own by the tests below. */
    public static void main(String[] args) {
        System.out.println("facts " + JvmLayout.facts() + " footprint " + JavaFootprint.factsOf(new long[4]));
    }

    @Test
    void factsMatchTheJvmsFlagsAndJolPrintsNothing() throws Exception {
        Run r = java("--sun-misc-unsafe-memory-access=allow");
        assertEquals("", r.err, "stderr");
        assertEquals(1, r.out.lines().count(), "stdout, one line: " + r.out);
        assertTrue(r.out.contains("java_bytes=48"), r.out);
        assertTrue(r.out.contains("object_header_bytes=12") && r.out.contains("reference_bytes=4")
                && r.out.contains("compressed_oops=true") && r.out.contains("object_alignment_bytes=8"), r.out);

        Run big = java("--sun-misc-unsafe-memory-access=allow", "-XX:-UseCompressedOops");
        assertTrue(big.out.contains("reference_bytes=8") && big.out.contains("compressed_oops=false"), big.out);
        Run compact = java("--sun-misc-unsafe-memory-access=allow", "-XX:+UseCompactObjectHeaders");
        assertTrue(compact.out.contains("object_header_bytes=8") && compact.out.contains("compact_headers=true"), compact.out);
    }

    /** Where JOL's Unsafe calls would print the JDK's warning, JOL is not asked: the facts say why, nothing is printed. */
    @Test
    void withoutUnsafeAccessNothingIsPrinted() throws Exception {
        Run r = java();
        assertEquals("", r.err, "stderr");
        assertFalse(r.out.contains("WARNING"), r.out);
        assertTrue(r.out.contains("sizes=not read (start the JVM with --sun-misc-unsafe-memory-access=allow"), r.out);
        assertTrue(r.out.contains("java_walk=not run (JOL cannot read this JVM"), r.out);
        assertTrue(r.out.contains("compressed_oops=true"), r.out);
    }

    /** This JVM's facts agree with what JOL measures of an object here. */
    @Test
    void factsAreThisJvms() {
        Map<String, Object> f = JvmLayout.facts();
        assertEquals((long) JvmLayout.vm().objectHeaderSize(), ((Number) f.get("object_header_bytes")).longValue());
        assertEquals(Boolean.TRUE.equals(f.get("compressed_oops")) ? 4L : 8L, ((Number) f.get("reference_bytes")).longValue(), f.toString());
    }

    private record Run(String out, String err) {}

    private static Run java(String... flags) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(List.of(flags));
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), JvmLayoutTest.class.getName()));
        Process p = new ProcessBuilder(cmd).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the JVM did not end");
        return new Run(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
                new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
    }
}

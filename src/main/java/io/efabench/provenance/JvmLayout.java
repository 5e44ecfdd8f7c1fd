package io.efabench.provenance;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;

import org.openjdk.jol.vm.VM;
import org.openjdk.jol.vm.VirtualMachine;

/**
 * The JVM's object layout, as JOL reads it ({@code VM.current()}): header and reference sizes,
 * alignment, and the flags behind them. A Java-side figure (a footprint, which fields share a
 * cache line) holds for one layout; every trial records this under {@link #KEY} and {@code
 * compare} says when two runs had different ones.
 *
 * <p>Quiet by construction, on a full JDK and on a jlink runtime: JOL's own notes (no
 * instrumentation agent, no Serviceability Agent, both skipped here: attaching either would stop
 * or slow the benchmark JVM) go into {@code notes} instead of stdout, and JOL is not asked at all
 * where the JVM would print its {@code sun.misc.Unsafe} warning at every run (Java 24+ without
 * {@code --sun-misc-unsafe-memory-access=allow}, which run-jmh.sh and the benchmarks' forks pass).
 * The flags come from the HotSpot diagnostic bean (module jdk.management); without it JOL would
 * guess the alignment (it guesses 1), so the facts say "unknown" instead.
 */
public final class JvmLayout {
    /** The provenance key the facts sit under. */
    public static final String KEY = "jvm_layout";
    /** Adjacent-line prefetch pairs 64-byte lines: two threads' fields closer than this share a line pair. */
    public static final int FALSE_SHARING_BYTES = 128;

    private static Map<String, Object> facts;
    private static VirtualMachine vm;
    private static boolean asked;

    private JvmLayout() {}

    /** This JVM's layout facts (computed once; unmodifiable). */
    public static synchronized Map<String, Object> facts() {
        if (facts == null) {
            facts = Collections.unmodifiableMap(read());
        }
        return facts;
    }

    /**
     * JOL's view of this JVM, or null where asking would print a warning (see the class comment)
     * or JOL does not know the JVM; JOL's own notes are kept out of stdout. Asked once: stdout is
     * swapped only the first time, not at every trial or lambda class a footprint walk sizes.
     */
    public static synchronized VirtualMachine vm() {
        if (!asked) {
            vm = ask();
            asked = true;
        }
        return vm;
    }

    private static VirtualMachine ask() {
        if (!unsafeQuiet()) {
            return null;
        }
        System.setProperty("jol.skipHotspotSAAttach", "true");
        System.setProperty("jol.skipDynamicAttach", "true");
        PrintStream out = System.out;
        ByteArrayOutputStream notes = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(notes, true, StandardCharsets.UTF_8));
            return VM.current();
        } catch (RuntimeException | LinkageError e) {
            return null;
        } finally {
            System.setOut(out);
            // Whatever else this JVM printed meanwhile goes back where it was going.
            for (String line : notes.toString(StandardCharsets.UTF_8).split("\n")) {
                if (!line.isBlank() && !line.startsWith("# WARNING")) {
                    out.println(line);
                }
            }
        }
    }

    /** True where JOL's Unsafe calls print nothing: before Java 24, or with the access allowed. */
    static boolean unsafeQuiet() {
        return Runtime.version().feature() < 24 || "allow".equals(System.getProperty("sun.misc.unsafe.memory.access"));
    }

    private static Map<String, Object> read() {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("vm", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"));
        VirtualMachine vm = vm();
        if (vm == null) {
            f.put("sizes", unsafeQuiet() ? "unknown (JOL does not know this JVM)"
                    : "not read (start the JVM with --sun-misc-unsafe-memory-access=allow, as run-jmh.sh and the forks do)");
        } else {
            f.put("object_header_bytes", vm.objectHeaderSize());
            f.put("array_header_bytes", vm.arrayHeaderSize());
            f.put("reference_bytes", vm.sizeOfField("oop"));
            f.put("class_pointer_bytes", vm.classPointerSize());
        }
        if (vmOption("UseCompressedOops") == null) {
            f.put("flags", "unknown (no HotSpot diagnostic bean: add module jdk.management to a jlink runtime)");
            return f;
        }
        flag(f, "compressed_oops", "UseCompressedOops");
        flag(f, "compressed_class_pointers", "UseCompressedClassPointers");
        flag(f, "compact_headers", "UseCompactObjectHeaders"); // Java 24+
        flag(f, "object_alignment_bytes", "ObjectAlignmentInBytes");
        return f;
    }

    private static void flag(Map<String, Object> f, String key, String option) {
        String v = vmOption(option);
        if (v == null) {
            return;
        } else if (v.equals("true") || v.equals("false")) {
            f.put(key, Boolean.parseBoolean(v));
        } else {
            try {
                f.put(key, Long.parseLong(v));
            } catch (NumberFormatException e) {
                f.put(key, v);
            }
        }
    }

    /** A HotSpot option's value through the platform MBean server (no compile-time jdk.management), or null. */
    private static String vmOption(String name) {
        try {
            Object v = ManagementFactory.getPlatformMBeanServer().invoke(new ObjectName("com.sun.management:type=HotSpotDiagnostic"),
                    "getVMOption", new Object[] {name}, new String[] {String.class.getName()});
            return String.valueOf(((CompositeData) v).get("value"));
        } catch (Exception | LinkageError e) {
            return null; // no such bean (jlink without jdk.management) or no such option (an older JVM)
        }
    }
}

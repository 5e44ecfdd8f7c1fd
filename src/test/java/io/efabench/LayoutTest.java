package io.efabench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.openjdk.jol.info.ClassLayout;
import org.openjdk.jol.info.FieldLayout;
import org.openjdk.jol.vm.VirtualMachine;

import io.efabench.provenance.JvmLayout;

/**
 * False sharing, checked with JOL on the JVM that runs the test: the objects that two threads
 * touch while rounds are timed, each class's layout printed, and a failure when a field one thread
 * writes sits within 128 bytes (a pair of 64-byte lines: adjacent-line prefetch) of a field another
 * thread writes or spins on.
 *
 * <p>A class is listed with its owner, the thread that writes its plain fields. Its volatile fields
 * are another thread's by definition (that is what volatile is for), and {@code others} names any
 * further field another thread writes or spins on. Checked: every such field stays 128 bytes from
 * the owner's fields, from a field of a third thread, and from both ends of the object (the objects
 * next to it on the heap belong to anyone).
 */
class LayoutTest {
    private static final int APART = JvmLayout.FALSE_SHARING_BYTES;

    /** A class two threads touch on a hot path. */
    record Shared(String type, String owner, Map<String, String> others, String why) {}

    static final List<Shared> SHARED = List.of(
            new Shared("io.efabench.harness.proxy.ProxyLoop", "the proxy thread", Map.of(),
                    "posts and reaps at every request; the benchmark thread's flags and what it spins on (acks,"
                            + " failure) are cells of their own"),
            new Shared("io.efabench.harness.proxy.HostProducer", "the proxy thread", Map.of(),
                    "makes the Direct configs' requests; the benchmark thread rings its doorbell (a cell)"),
            new Shared("io.efabench.harness.proxy.ProxyLeader", "the benchmark thread", Map.of(),
                    "rings launches and spins on the proxy's cells, which it holds itself"),
            new Shared("io.efabench.harness.engine.PaddedLong", "nobody", Map.of(),
                    "one thread writes the value, another spins on it"),
            new Shared("io.efabench.harness.engine.PaddedReference", "nobody", Map.of(),
                    "one thread writes the value, another spins on it"),
            new Shared("io.efabench.harness.engine.PaddedLongArray", "nobody", Map.of(),
                    "its backing array is checked by paddedArrayElementsStandApart"),
            new Shared("io.efabench.harness.engine.ArrivalCounter", "the benchmark thread", Map.of(),
                    "counts arrivals off the CQ the same thread polls: no second thread"),
            new Shared("io.efabench.harness.engine.Deadline", "the benchmark thread", Map.of(),
                    "reads the rank group's failure (RankGroup) every 4096 calls, writes only its own fields"),
            new Shared("io.efabench.harness.moe.PhaseArrivals", "the benchmark thread", Map.of(),
                    "MoE's arrival counts, the same thread as the CQ"));

    /**
     * Classes with fields of two threads that no second thread writes while rounds are timed:
     * printed with the reason, not held to the rule (their volatiles are there for failures and
     * the ends of iterations).
     */
    static final Map<String, String> QUIET_WHILE_TIMED = Map.of(
            "io.efabench.rank.RankGroup", "the link readers write failure, notes and signals when a peer fails or an"
                    + " iteration ends; the benchmark thread writes seq and the rest in collectives, between iterations",
            "io.efabench.harness.MetricsSink", "the benchmark thread writes it outside the timed rounds; JMH's thread"
                    + " reads it after the iteration",
            "io.efabench.fabric.CallBoard", "its slots are native memory, each channel's written by the one thread"
                    + " that drives that channel; the watchdog reads them once a second");

    @Test
    void noFieldOfOneThreadSitsNearAFieldOfAnother() throws Exception {
        List<String> violations = new ArrayList<>();
        for (Shared s : SHARED) {
            Class<?> type = Class.forName(s.type());
            ClassLayout layout = ClassLayout.parseClass(type);
            System.out.println("# " + type.getSimpleName() + " (owner: " + s.owner() + "; " + s.why() + ")");
            System.out.println(layout.toPrintable());
            violations.addAll(violations(s, type, layout));
        }
        for (var e : QUIET_WHILE_TIMED.entrySet()) {
            System.out.println("# " + e.getKey() + " (not held to the rule: " + e.getValue() + ")");
            System.out.println(ClassLayout.parseClass(Class.forName(e.getKey())).toPrintable());
        }
        assertTrue(violations.isEmpty(), String.join("\n", violations));
    }

    /** The checked rule itself fails on a class that breaks it: a flag next to its owner's counter. */
    @Test
    void theRuleCatchesAFlagBesideItsOwnersFields() {
        Shared s = new Shared(Crowded.class.getName(), "the owner", Map.of(), "test");
        List<String> v = violations(s, Crowded.class, ClassLayout.parseClass(Crowded.class));
        assertTrue(v.stream().anyMatch(l -> l.contains("Crowded.stop (another thread's)") && l.contains("Crowded.count")), v.toString());
        Shared declared = new Shared(Crowded.class.getName(), "the owner", Map.of("peer", "the reader"), "test");
        assertTrue(violations(declared, Crowded.class, ClassLayout.parseClass(Crowded.class)).stream().anyMatch(l -> l.contains("Crowded.peer")));
    }

    /** Element k of a padded array sits 128 bytes from its neighbours and from both ends of the backing array. */
    @Test
    void paddedArrayElementsStandApart() throws Exception {
        VirtualMachine vm = JvmLayout.vm();
        Class<?> type = Class.forName("io.efabench.harness.engine.PaddedLongArray");
        Method index = type.getDeclaredMethod("index", int.class);
        index.setAccessible(true);
        int n = 4;
        Object array = type.getConstructor(int.class).newInstance(n);
        var values = type.getDeclaredField("values");
        values.setAccessible(true);
        long[] backing = (long[]) values.get(array);
        long size = vm.sizeOf(backing);
        long base = vm.arrayBaseOffset("long");
        long previousEnd = 0;
        for (int k = 0; k < n; k++) {
            long at = base + (int) index.invoke(null, k) * 8L;
            assertTrue(at - previousEnd >= APART, "element " + k + " at " + at + ", " + (at - previousEnd) + " bytes after the one before or the start");
            previousEnd = at + 8;
        }
        assertTrue(size - previousEnd >= APART, "the last element ends " + (size - previousEnd) + " bytes before the array's end");
        assertEquals(n, (int) type.getMethod("length").invoke(array));
    }

    static final class Crowded {
        long count;
        volatile boolean stop;
        Object peer;
    }

    static List<String> violations(Shared s, Class<?> type, ClassLayout layout) {
        List<FieldLayout> owners = new ArrayList<>();
        List<FieldLayout> others = new ArrayList<>();
        for (FieldLayout f : layout.fields()) {
            if (padding(f)) {
                continue;
            }
            java.lang.reflect.Field field = field(type, f);
            int mod = field.getModifiers();
            if (Modifier.isVolatile(mod) || s.others().containsKey(f.name())) {
                others.add(f);
            } else if (!Modifier.isFinal(mod)) {
                owners.add(f);
            }
        }
        String cls = s.type().replaceAll(".*[.$]", "");
        List<String> v = new ArrayList<>();
        for (FieldLayout x : others) {
            String xName = cls + "." + x.name() + " (another thread's" + (s.others().containsKey(x.name()) ? ": " + s.others().get(x.name()) : "") + ")";
            for (FieldLayout y : owners) {
                long gap = gap(x, y);
                if (gap < APART) {
                    v.add(xName + " at " + x.offset() + " sits " + gap + " bytes from " + cls + "." + y.name() + " (" + s.owner() + " writes it) at " + y.offset());
                }
            }
            for (FieldLayout y : others) {
                String yThread = s.others().getOrDefault(y.name(), "volatile");
                String xThread = s.others().getOrDefault(x.name(), "volatile");
                if (y != x && !yThread.equals(xThread) && gap(x, y) < APART && x.offset() < y.offset()) {
                    v.add(xName + " at " + x.offset() + " sits " + gap(x, y) + " bytes from " + cls + "." + y.name() + " (" + yThread + ")");
                }
            }
            if (x.offset() < APART) {
                v.add(xName + " at " + x.offset() + " sits " + x.offset() + " bytes from the object's start (the object before it on the heap)");
            }
            long tail = layout.instanceSize() - x.offset() - x.size();
            if (tail < APART) {
                v.add(xName + " at " + x.offset() + " sits " + tail + " bytes from the object's end (the object after it on the heap)");
            }
        }
        return v;
    }

    private static long gap(FieldLayout a, FieldLayout b) {
        long start = Math.max(a.offset(), b.offset());
        long end = Math.min(a.offset() + a.size(), b.offset() + b.size());
        return Math.max(0, start - end);
    }

    /** The padded cells' padding: bytes nobody reads or writes. */
    private static boolean padding(FieldLayout f) {
        return f.typeClass().equals("byte") && f.name().matches("[ab]\\d{3}");
    }

    /** The reflected field JOL laid out: declared by {@code type} or a superclass (JOL names the host by its canonical name). */
    private static java.lang.reflect.Field field(Class<?> type, FieldLayout f) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            if (f.hostClass().equals(c.getCanonicalName()) || f.hostClass().equals(c.getName())) {
                try {
                    return c.getDeclaredField(f.name());
                } catch (NoSuchFieldException e) {
                    break;
                }
            }
        }
        throw new AssertionError("no field " + f.hostClass() + "." + f.name() + " in " + type.getName() + "'s hierarchy");
    }
}

package io.efabench.provenance;

import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.openjdk.jol.info.ClassLayout;
import org.openjdk.jol.vm.VirtualMachine;

/**
 * The Java heap a trial holds: every object reachable from its roots, sized by JOL for this JVM's
 * layout ({@link JvmLayout}), beside the native bytes it registered. JOL's {@code GraphLayout}
 * would walk on through a thread, a class or a class loader into most of the heap (and it links
 * AWT, which a jlink runtime lacks), so the walk here is JOL's, bounded: it stops at what no trial
 * owns (threads, classes, class loaders, modules, references, method handles, enum constants)
 * and does not count them. Off the hot path: once, after a trial's rounds are built.
 */
public final class JavaFootprint {
    /** Objects past which the walk stops and says so (a trial holds thousands). */
    static final int MAX_OBJECTS = 2_000_000;

    /** Classes named in {@code java_top}. */
    static final int TOP = 5;

    /**
     * What the walk found: bytes and objects, the classes holding most of the bytes ("long[]: 81920
     * B in 16"), and whether it stopped at {@link #MAX_OBJECTS}.
     */
    public record Size(long bytes, long objects, List<String> top, boolean truncated) {
        public Map<String, Object> facts() {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("java_bytes", bytes);
            f.put("java_objects", objects);
            f.put("java_top", top);
            if (truncated) {
                f.put("java_walk", "stopped at " + MAX_OBJECTS + " objects");
            }
            return f;
        }
    }

    private static final ClassValue<Long> INSTANCE_SIZE = new ClassValue<>() {
        @Override
        protected Long computeValue(Class<?> type) {
            try {
                return ClassLayout.parseClass(type).instanceSize();
            } catch (RuntimeException e) {
                return packedSize(type); // a hidden class (a lambda): no field offsets to read
            }
        }
    };

    private static final ClassValue<List<Field>> REFERENCE_FIELDS = new ClassValue<>() {
        @Override
        protected List<Field> computeValue(Class<?> type) {
            List<Field> fields = new ArrayList<>();
            for (Class<?> c = type; c != null; c = c.getSuperclass()) {
                for (Field f : c.getDeclaredFields()) {
                    if (!Modifier.isStatic(f.getModifiers()) && !f.getType().isPrimitive()) {
                        f.trySetAccessible();
                        fields.add(f);
                    }
                }
            }
            return List.copyOf(fields);
        }
    };

    private JavaFootprint() {}

    /**
     * The footprint of {@code roots} as provenance facts: what {@link Size#facts} says, why it is
     * missing where JOL cannot read this JVM ({@link JvmLayout#vm()}), or why the walk failed. Never
     * throws: a fact not recorded must not cost a trial.
     */
    public static Map<String, Object> factsOf(Object... roots) {
        try {
            Size s = of(roots);
            return s != null ? s.facts() : Map.of("java_walk", "not run (JOL cannot read this JVM: jvm_layout says why)");
        } catch (RuntimeException | LinkageError e) {
            return Map.of("java_walk", "failed: " + e);
        }
    }

    /** The footprint of {@code roots}, or null where JOL cannot read this JVM ({@link JvmLayout#vm()}). */
    public static Size of(Object... roots) {
        VirtualMachine vm = JvmLayout.vm();
        return vm == null ? null : walk(vm, roots);
    }

    static Size walk(VirtualMachine vm, Object... roots) {
        Set<Object> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        ArrayDeque<Object> todo = new ArrayDeque<>();
        for (Object r : roots) {
            if (r != null && seen.add(r)) {
                todo.push(r);
            }
        }
        long bytes = 0;
        long objects = 0;
        Map<Class<?>, long[]> byClass = new HashMap<>();
        boolean truncated = false;
        while (!todo.isEmpty()) {
            Object o = todo.pop();
            Class<?> type = o.getClass();
            objects++;
            long size = type.isArray() ? vm.sizeOf(o) : INSTANCE_SIZE.get(type);
            bytes += size;
            long[] tally = byClass.computeIfAbsent(type, c -> new long[2]);
            tally[0] += size;
            tally[1]++;
            if (type.isArray()) {
                if (!type.getComponentType().isPrimitive()) {
                    for (int i = 0, n = Array.getLength(o); i < n; i++) {
                        follow(Array.get(o, i), seen, todo);
                    }
                }
            } else {
                for (Field f : REFERENCE_FIELDS.get(type)) {
                    follow(read(vm, f, o), seen, todo);
                }
            }
            if (objects >= MAX_OBJECTS) {
                truncated = true;
                break;
            }
        }
        List<String> top = byClass.entrySet().stream()
                .sorted((a, b) -> Long.compare(b.getValue()[0], a.getValue()[0])).limit(TOP)
                .map(e -> typeName(e.getKey()) + ": " + e.getValue()[0] + " B in " + e.getValue()[1])
                .toList();
        return new Size(bytes, objects, top, truncated);
    }

    /** A class's name, a lambda's without its per-run address. */
    private static String typeName(Class<?> c) {
        String name = c.getTypeName();
        int lambda = name.indexOf("$$Lambda");
        return lambda < 0 ? name : name.substring(0, lambda) + "$$Lambda";
    }

    /** Header plus fields, packed and aligned: what HotSpot lays out for a class whose offsets JOL cannot read. */
    private static long packedSize(Class<?> type) {
        VirtualMachine vm = JvmLayout.vm();
        long bytes = vm.objectHeaderSize();
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                if (!Modifier.isStatic(f.getModifiers())) {
                    bytes += f.getType().isPrimitive() ? vm.sizeOfField(f.getType().getName()) : vm.sizeOfField("oop");
                }
            }
        }
        long align = vm.objectAlignment() > 1 ? vm.objectAlignment() : 8;
        return (bytes + align - 1) / align * align;
    }

    private static void follow(Object o, Set<Object> seen, ArrayDeque<Object> todo) {
        if (o != null && !shared(o) && seen.add(o)) {
            todo.push(o);
        }
    }

    /** What no trial owns: the walk neither counts nor enters it. */
    static boolean shared(Object o) {
        return o instanceof Class<?> || o instanceof ClassLoader || o instanceof Thread || o instanceof ThreadGroup
                || o instanceof Module || o instanceof java.lang.ref.Reference<?> || o instanceof Enum<?>
                || o instanceof java.lang.invoke.MethodHandle || o instanceof java.lang.invoke.VarHandle
                || o instanceof java.lang.reflect.AccessibleObject;
    }

    /** A field's value: by reflection where the field is open to us, else through JOL; null where neither reads it. */
    private static Object read(VirtualMachine vm, Field f, Object o) {
        try {
            if (f.canAccess(o)) {
                return f.get(o);
            }
            return vm.getObject(o, vm.fieldOffset(f));
        } catch (RuntimeException | IllegalAccessException e) {
            return null; // a hidden class's field in a closed package: neither way reads it
        }
    }
}

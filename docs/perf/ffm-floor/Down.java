// What one FFM downcall of fi_inject_writedata's shape (a function pointer, the endpoint, six longs)
// costs with nothing behind it (libc's labs ignores the extra arguments): critical (as efabench's
// Channel links it) and normal, ns per call. Issue 19's floor of a Java harness that makes one
// provider call per write. Run: javac -d out Down.java && taskset -c 2 java --enable-native-access=ALL-UNNAMED -cp out Down
import java.lang.foreign.*;
import java.lang.invoke.*;

public class Down {
    static final Linker L = Linker.nativeLinker();
    static final MethodHandle H = L.downcallHandle(FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.ADDRESS,
            ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
            ValueLayout.JAVA_LONG), Linker.Option.critical(false));
    static final MethodHandle H2 = L.downcallHandle(FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.ADDRESS,
            ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
            ValueLayout.JAVA_LONG));
    static final MemorySegment FN = L.defaultLookup().find("labs").orElseThrow();
    public static void main(String[] a) throws Throwable {
        MemorySegment ep = MemorySegment.ofAddress(12345).reinterpret(64);
        for (int rep = 0; rep < 5; rep++) {
            System.out.printf("critical %.2f ns   normal %.2f ns%n", run(H, ep), run(H2, ep));
        }
    }
    static long sink;
    static double run(MethodHandle h, MemorySegment ep) throws Throwable {
        int n = 20_000_000;
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) { sink += (long) h.invokeExact(FN, ep, (long) i, 64L, 3L, 4L, 5L, 6L); }
        return (System.nanoTime() - t0) / (double) n;
    }
}

// What one FFM downcall of fi_inject_writedata's shape (a function pointer, the endpoint, six longs)
// costs with nothing behind it (libc's labs ignores the extra arguments), ns per call: critical (as
// efabench's Channel links it), critical with the endpoint as a long, and normal. Each handle is a
// static final constant at its call site, as Channel's is: the first version of this file passed the
// handle as a parameter, which C2 cannot inline through, and measured 9-22 ns where the product's call
// costs 4-6 (docs/perf/journal/write-64B-gap.md, corrected 2026-11-27). "loop" is the loop with no call.
// Run: javac -d out Down.java && taskset -c 2 java --enable-native-access=ALL-UNNAMED -cp out Down
import java.lang.foreign.*;
import java.lang.invoke.*;

public class Down {
    static final Linker L = Linker.nativeLinker();
    static final MemorySegment FN = L.defaultLookup().find("labs").orElseThrow();
    static final FunctionDescriptor ADDR = FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.ADDRESS,
            ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
            ValueLayout.JAVA_LONG);
    static final FunctionDescriptor LONGS = FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
            ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
            ValueLayout.JAVA_LONG);
    static final MethodHandle CRITICAL = L.downcallHandle(ADDR, Linker.Option.critical(false));
    static final MethodHandle CRITICAL_LONGS = L.downcallHandle(LONGS, Linker.Option.critical(false));
    static final MethodHandle NORMAL = L.downcallHandle(ADDR);
    static final int N = 20_000_000;
    static long sink;

    public static void main(String[] a) throws Throwable {
        MemorySegment ep = MemorySegment.ofAddress(12345).reinterpret(64);
        for (int rep = 0; rep < 6; rep++) {
            System.out.printf("critical %.2f ns   critical, endpoint as long %.2f ns   normal %.2f ns   loop %.2f ns%n",
                    critical(ep), criticalLongs(), normal(ep), loop());
        }
    }

    static double critical(MemorySegment ep) throws Throwable {
        long t0 = System.nanoTime();
        for (int i = 0; i < N; i++) { sink += (long) CRITICAL.invokeExact(FN, ep, (long) i, 64L, 3L, 4L, 5L, 6L); }
        return (System.nanoTime() - t0) / (double) N;
    }

    static double criticalLongs() throws Throwable {
        long t0 = System.nanoTime();
        for (int i = 0; i < N; i++) { sink += (long) CRITICAL_LONGS.invokeExact(FN, 12345L, (long) i, 64L, 3L, 4L, 5L, 6L); }
        return (System.nanoTime() - t0) / (double) N;
    }

    static double normal(MemorySegment ep) throws Throwable {
        long t0 = System.nanoTime();
        for (int i = 0; i < N; i++) { sink += (long) NORMAL.invokeExact(FN, ep, (long) i, 64L, 3L, 4L, 5L, 6L); }
        return (System.nanoTime() - t0) / (double) N;
    }

    static double loop() {
        long t0 = System.nanoTime();
        for (int i = 0; i < N; i++) { sink += Math.abs((long) i ^ sink); }
        return (System.nanoTime() - t0) / (double) N;
    }
}

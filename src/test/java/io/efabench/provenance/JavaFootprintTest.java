package io.efabench.provenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import org.junit.jupiter.api.Test;
import org.openjdk.jol.info.ClassLayout;

/** The bounded walk: what a trial owns is counted once, what no trial owns is not entered. */
class JavaFootprintTest {
    static final class Holder {
        final long[] data = new long[100];
        final Object[] refs;
        final Thread thread = Thread.currentThread();
        final Class<?> type = String.class;
        Holder self = this;

        Holder(Object... refs) {
            this.refs = refs;
        }
    }

    @Test
    void countsWhatIsReachableOnceAndStopsAtThreadsAndClasses() {
        Holder inner = new Holder();
        Holder outer = new Holder(inner, inner, new int[3]);
        JavaFootprint.Size s = JavaFootprint.of(outer);
        assertNotNull(s, "JOL reads this JVM (surefire passes --sun-misc-unsafe-memory-access=allow)");
        var vm = JvmLayout.vm();
        long holder = ClassLayout.parseClass(Holder.class).instanceSize();
        long expected = 2 * holder + 2 * vm.sizeOf(new long[100]) + vm.sizeOf(new Object[3]) + vm.sizeOf(new Object[0])
                + vm.sizeOf(new int[3]);
        assertEquals(expected, s.bytes(), s.toString());
        assertEquals(7, s.objects(), s.toString());
    }

    /** A lambda (a hidden class, whose field offsets JOL cannot read) is sized and walked into, not a failure. */
    @Test
    void lambdasAreWalked() {
        long[] captured = new long[50];
        Runnable r = () -> captured[0]++;
        JavaFootprint.Size s = JavaFootprint.of(r);
        assertNotNull(s);
        assertEquals(2, s.objects(), s.toString());
        long header = JvmLayout.vm().objectHeaderSize();
        assertEquals(JvmLayout.vm().sizeOf(captured) + (header + 4 + 7) / 8 * 8, s.bytes(), s.toString());
    }
}

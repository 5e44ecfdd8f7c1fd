// What the call board's bracket costs alone (CallBoard.Slot.enter + exit: two release stores of a
// long and the segment checks), on a mapped /dev/shm page as the board is and on private memory,
// ns per pair. Run: javac -d out Board.java && taskset -c 2 java -cp out Board
import java.lang.foreign.*;
import java.lang.invoke.*;
import java.nio.channels.FileChannel;
import java.nio.file.*;

public class Board {
    static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    static final class Slot { final MemorySegment state; long count; Slot(MemorySegment s) { state = s; }
        void enter(int op) { LONG.setRelease(state, 0L, (++count << 8) | ((long) op << 1) | 1); }
        void exit() { LONG.setRelease(state, 0L, count << 8); } }
    public static void main(String[] a) throws Exception {
        Path f = Path.of("/dev/shm/board-test");
        MemorySegment mapped;
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, 4096, Arena.global());
        }
        Slot sm = new Slot(mapped.asSlice(128, 64));
        Slot sa = new Slot(Arena.ofAuto().allocate(64, 8));
        for (int rep = 0; rep < 5; rep++) {
            System.out.printf("mapped %.2f ns  auto %.2f ns%n", run(sm), run(sa));
        }
    }
    static long sink;
    static double run(Slot s) {
        int n = 50_000_000;
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) { s.enter(3); sink += i; s.exit(); }
        return (System.nanoTime() - t0) / (double) n;
    }
}

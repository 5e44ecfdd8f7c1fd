package io.efabench.topology;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * Binds this process's threads to a set of CPUs (a NUMA node's) with {@code sched_setaffinity},
 * like {@code numactl --cpunodebind} would have at launch. A JVM cannot be launched bound from
 * inside, so this binds every thread that exists when it is called (the benchmark thread, JIT
 * and GC threads...: every tid in {@code /proc/self/task}); threads started later inherit the
 * mask of the thread that starts them. Memory is not bound with a policy: buffers allocated
 * after the call are first touched by the bound benchmark thread, so the kernel's default
 * first-touch policy places them on its node. The Java heap, touched before, stays where it is.
 * A thread's mask is only narrowed, never widened: CPUs a launcher (srun --cpu-bind, taskset)
 * or a cgroup left out stay out.
 */
public final class CpuBinding {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle GET = libc("sched_getaffinity");
    private static final MethodHandle SET = libc("sched_setaffinity");
    /** cpu_set_t of 16384 CPUs: larger than any machine this runs on, and what the kernel accepts. */
    private static final int MASK_BYTES = 2048;

    private CpuBinding() {
    }

    private static MethodHandle libc(String name) {
        return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS),
                Linker.Option.captureCallState("errno"));
    }

    /**
     * What binding did.
     *
     * @param bound   threads whose mask now is (their old mask) ∩ {@code cpus}
     * @param outside threads left as they were because none of {@code cpus} is in their mask
     * @param gone    threads that ended between listing and binding
     */
    public record Result(int bound, int outside, int gone) {
        public String describe() {
            return bound + " thread(s) bound" + (outside > 0 ? ", " + outside + " left alone (their CPUs are all outside the node)" : "")
                    + (gone > 0 ? ", " + gone + " ended meanwhile" : "");
        }
    }

    /** Binds every current thread of this process to {@code cpus} as described above. */
    public static Result bindProcess(List<Integer> cpus) {
        if (cpus.isEmpty()) {
            throw new IllegalArgumentException("no CPUs to bind to");
        }
        int bound = 0;
        int outside = 0;
        int gone = 0;
        List<Integer> tids;
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            tids = tasks.map(p -> Integer.parseInt(p.getFileName().toString())).toList();
        } catch (IOException e) {
            tids = List.of(0); // 0: the calling thread, the benchmark thread
        }
        for (int tid : tids) {
            switch (bind(tid, cpus)) {
                case BOUND -> bound++;
                case OUTSIDE -> outside++;
                case GONE -> gone++;
            }
        }
        return new Result(bound, outside, gone);
    }

    private enum Outcome { BOUND, OUTSIDE, GONE }

    private static final int ESRCH = 3;

    private static Outcome bind(int tid, List<Integer> cpus) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Linker.Option.captureStateLayout());
            MemorySegment mask = arena.allocate(MASK_BYTES);
            if ((int) GET.invokeExact(state, tid, (long) MASK_BYTES, mask) != 0) {
                return fail(state, "sched_getaffinity", tid);
            }
            MemorySegment want = arena.allocate(MASK_BYTES);
            boolean any = false;
            for (int cpu : cpus) {
                if (cpu < MASK_BYTES * 8 && (mask.get(ValueLayout.JAVA_BYTE, cpu / 8) & (1 << (cpu % 8))) != 0) {
                    want.set(ValueLayout.JAVA_BYTE, cpu / 8, (byte) (want.get(ValueLayout.JAVA_BYTE, cpu / 8) | (1 << (cpu % 8))));
                    any = true;
                }
            }
            if (!any) {
                return Outcome.OUTSIDE;
            }
            if ((int) SET.invokeExact(state, tid, (long) MASK_BYTES, want) != 0) {
                return fail(state, "sched_setaffinity", tid);
            }
            return Outcome.BOUND;
        } catch (Throwable t) {
            if (t instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(t);
        }
    }

    private static Outcome fail(MemorySegment state, String call, int tid) {
        int errno = (int) Linker.Option.captureStateLayout()
                .varHandle(java.lang.foreign.MemoryLayout.PathElement.groupElement("errno")).get(state, 0L);
        if (errno == ESRCH) {
            return Outcome.GONE;
        }
        throw new IllegalStateException(call + "(thread " + tid + ") failed: errno " + errno);
    }

    /** CPUs the calling thread may run on now, for tests and provenance. */
    public static List<Integer> currentCpus() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Linker.Option.captureStateLayout());
            MemorySegment mask = arena.allocate(MASK_BYTES);
            if ((int) GET.invokeExact(state, 0, (long) MASK_BYTES, mask) != 0) {
                fail(state, "sched_getaffinity", 0);
            }
            java.util.ArrayList<Integer> cpus = new java.util.ArrayList<>();
            for (int cpu = 0; cpu < MASK_BYTES * 8; cpu++) {
                if ((mask.get(ValueLayout.JAVA_BYTE, cpu / 8) & (1 << (cpu % 8))) != 0) {
                    cpus.add(cpu);
                }
            }
            return cpus;
        } catch (Throwable t) {
            if (t instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(t);
        }
    }
}

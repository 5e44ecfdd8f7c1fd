package io.efabench.fabric;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Refuses a host-memory registration that would pass {@code RLIMIT_MEMLOCK}. efa and verbs pin
 * registered pages ({@code ibv_reg_mr}); the kernel charges every registration to the process's
 * pinned pages (VmPin: the same buffer registered on 4 domains counts 4 times) and fails it with a
 * bare ENOMEM past the limit, which Slurm jobs often inherit small (slurmd's own limit). The check
 * counts what the trial will register plus what is already pinned or mlock'ed (VmPin + VmLck: the
 * kernel keeps them apart, so the sum errs on the cautious side by at most pages that are both).
 */
public final class MemlockBudget {
    private static final int RLIMIT_MEMLOCK = 8; // Linux, all architectures we run on
    private static final MethodHandle GETRLIMIT = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("getrlimit").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS));

    private MemlockBudget() {
    }

    /** Soft {@code RLIMIT_MEMLOCK} in bytes; -1 for unlimited (RLIM_INFINITY) or when it cannot be read. */
    public static long limit() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment rlim = arena.allocate(16, 8); // struct rlimit { rlim_t cur, max; }
            if ((int) GETRLIMIT.invokeExact(RLIMIT_MEMLOCK, rlim) != 0) {
                return -1;
            }
            return rlim.get(ValueLayout.JAVA_LONG, 0); // RLIM_INFINITY is ~0UL: -1 here too
        } catch (Throwable t) {
            return -1;
        }
    }

    /** VmLck + VmPin of {@code status} (a /proc/PID/status), in bytes; 0 when absent. */
    public static long lockedBytes(Path status) {
        long kb = 0;
        try {
            for (String line : Files.readAllLines(status)) {
                if (line.startsWith("VmLck:") || line.startsWith("VmPin:")) {
                    kb += Long.parseLong(line.substring(6).replace("kB", "").strip());
                }
            }
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
        return kb * 1024;
    }

    /**
     * The one-line refusal when pinning {@code toPin} more bytes on top of {@code locked} passes
     * {@code limit} (negative: unlimited), else null.
     */
    public static String refusal(long toPin, long locked, long limit) {
        if (limit < 0 || toPin + locked <= limit) {
            return null;
        }
        return "registering " + mib(toPin) + " would pin " + mib(toPin + locked) + " with " + mib(locked)
                + " already locked, past RLIMIT_MEMLOCK " + mib(limit) + "; raise it (ulimit -l unlimited;"
                + " under Slurm the tasks inherit it from srun's shell through PropagateResourceLimits, capped by"
                + " slurmd's own limit: LimitMEMLOCK=infinity in its systemd unit)";
    }

    /** Throws {@link FabricException} with {@link #refusal} for this process when pinning {@code toPin} would fail. */
    public static void require(long toPin) {
        String r = refusal(toPin, lockedBytes(Path.of("/proc/self/status")), limit());
        if (r != null) {
            throw new FabricException(r);
        }
    }

    private static String mib(long bytes) {
        return bytes % (1L << 20) == 0 ? (bytes >> 20) + " MiB" : String.format(java.util.Locale.ROOT, "%.1f MiB", bytes / 1048576.0);
    }
}

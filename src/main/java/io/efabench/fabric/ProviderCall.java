package io.efabench.fabric;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The one downcall shape of the hot path, resolved once: {@code ssize_t (*)(struct fid_x *, const
 * void *, uint64_t)}, the shape of ops->msg.sendmsg, msg.recvmsg, rma.writemsg, rma.readmsg,
 * cq.read and cq.readerr alike. Virtual (the address is an argument), since the function pointers
 * belong to the provider and are read from its ops tables once per endpoint; critical, because
 * they neither block nor call back into Java. Every call is bracketed on the caller's call-board
 * line, so the stuck-call watchdog can name a call that never returns.
 */
final class ProviderCall {
    private static final MethodHandle OP = Linker.nativeLinker().downcallHandle(
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG),
            Linker.Option.critical(false));

    private ProviderCall() {}

    /** {@code fn(fid, arg, n)} as {@code op} (a {@link CallBoardLayout} op) on {@code calls}. */
    static long op(CallBoard.Slot calls, int op, MemorySegment fn, MemorySegment fid, MemorySegment arg, long n) {
        calls.enter(op);
        try {
            return (long) OP.invokeExact(fn, fid, arg, n);
        } catch (Throwable t) {
            throw new AssertionError("downcall failed", t);
        } finally {
            calls.exit();
        }
    }
}

package io.efabench.fabric;

import io.efabench.fabric.generated.fi_eq_attr;
import io.efabench.fabric.generated.fi_eq_err_entry;
import io.efabench.fabric.generated.fi_ops_eq;
import io.efabench.fabric.generated.fi_ops_fabric;
import io.efabench.fabric.generated.fid_eq;
import io.efabench.fabric.generated.fid_fabric;
import io.efabench.fabric.generated.LibFabric;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * The event queue a {@link Channel} binds to its endpoint: where a provider reports errors that
 * belong to no operation. efa-rdm writes its internal errors here and calls {@code abort()} when
 * no EQ is bound (prov/efa/src/efa_base_ep.c:722-750 in 2.6, {@code efa_base_ep_write_eq_error};
 * callers such as efa_rdm_pke_cmd.c:460 and efa_rdm_msg.c:805): without one the JVM would die of
 * SIGABRT with the provider's text on stderr only. With one, the operation that met the error
 * never completes, the wait for it reaches its deadline, and the trial's one-line failure carries
 * what {@link #drainErrors} read here. Nothing on the hot path reads the queue: it is drained only
 * once something failed.
 */
final class EventQueue implements AutoCloseable {
    /** libfabric's {@code UTIL_FLAG_ERROR} (include/ofi_util.h:84): fi_eq_write's flag for an error entry. */
    static final long UTIL_FLAG_ERROR = 1L << 60;
    /** {@code FI_NOTIFY}: the first value of fi_eq.h's anonymous event enum, which jextract skips. */
    static final int FI_NOTIFY = 0;
    private static final int MAX_DRAINED = 16;

    private final String where;
    private MemorySegment eq;
    private final MemorySegment ops;

    private EventQueue(String where, MemorySegment eq) {
        this.where = where;
        this.eq = eq;
        this.ops = fid_eq.ops(eq).reinterpret(fi_ops_eq.sizeof());
    }

    /** {@code fi_eq_open} on {@code fabric}: no wait object (drained by polling, never waited on). */
    static EventQueue open(MemorySegment fabric, String where) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(fi_eq_attr.layout());
            fi_eq_attr.size(attr, 64);
            fi_eq_attr.wait_obj(attr, LibFabric.FI_WAIT_NONE());
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            MemorySegment fabricOps = fid_fabric.ops(fabric).reinterpret(fi_ops_fabric.sizeof());
            Fi.check("fi_eq_open" + where, fi_ops_fabric.eq_open.invoke(fi_ops_fabric.eq_open(fabricOps),
                    fabric, attr, out, MemorySegment.NULL));
            return new EventQueue(where, out.get(ValueLayout.ADDRESS, 0).reinterpret(fid_eq.sizeof()));
        }
    }

    MemorySegment fid() {
        return eq;
    }

    /**
     * Reads every pending entry (at most 16) and returns one text per error entry, e.g.
     * {@code "provider error on efa rdmap16s27 (event queue): Input/output error (prov_errno 4102)"};
     * plain events are skipped. Empty when nothing was reported or the queue is closed.
     */
    List<String> drainErrors() {
        List<String> errors = new ArrayList<>();
        if (eq.address() == 0) {
            return errors;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment event = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment buf = arena.allocate(fi_eq_err_entry.layout());
            for (int i = 0; i < MAX_DRAINED; i++) {
                long rc = fi_ops_eq.read.invoke(fi_ops_eq.read(ops), eq, event, buf, buf.byteSize(), 0);
                if (rc >= 0) {
                    continue; // a plain event: nothing to report
                }
                if (rc != -Fi.EAVAIL) {
                    break; // -FI_EAGAIN: empty
                }
                fi_eq_err_entry.err_data(buf, MemorySegment.NULL);
                fi_eq_err_entry.err_data_size(buf, 0);
                long n = fi_ops_eq.readerr.invoke(fi_ops_eq.readerr(ops), eq, buf, 0);
                if (n < 0) {
                    errors.add("fi_eq_readerr" + where + " failed: " + Fi.strerror(n) + " (" + n + ")");
                    break;
                }
                // No fi_eq_strerror: util's (every provider here, efa too) renders prov_errno as an
                // errno (util_eq.c:199-204), which efa's codes are not; the number says more.
                int err = Math.abs(fi_eq_err_entry.err(buf));
                errors.add("provider error" + where + " (event queue): " + Fi.strerror(err) + " (prov_errno "
                        + fi_eq_err_entry.prov_errno(buf) + ")");
            }
        }
        return errors;
    }

    /**
     * Writes an error entry as efa_base_ep_write_eq_error does ({@code fi_eq_write(eq, FI_NOTIFY,
     * &err_entry, sizeof(err_entry), UTIL_FLAG_ERROR)}), for tests and test hooks: no provider
     * reachable here fails that way on demand. Needs a util EQ (tcp, shm, efa).
     */
    void writeError(int err, int provErrno) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment entry = arena.allocate(fi_eq_err_entry.layout());
            fi_eq_err_entry.err(entry, err);
            fi_eq_err_entry.prov_errno(entry, provErrno);
            long rc = fi_ops_eq.write.invoke(fi_ops_eq.write(ops), eq, FI_NOTIFY, entry, entry.byteSize(),
                    UTIL_FLAG_ERROR);
            if (rc != entry.byteSize()) {
                throw Fi.failure("fi_eq_write" + where, rc < 0 ? rc : -LibFabric.FI_EIO());
            }
        }
    }

    /** Closed after the endpoint bound to it (a util EQ refuses to close while referenced). */
    @Override
    public void close() {
        if (eq.address() == 0) {
            return;
        }
        int rc = Fi.close(eq);
        eq = MemorySegment.NULL;
        if (rc != 0) {
            throw Fi.failure("fi_close(eq)" + where, rc);
        }
    }
}

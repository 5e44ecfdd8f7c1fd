package io.efabench.fabric;

import io.efabench.fabric.generated.LibFabric;
import io.efabench.fabric.generated.fi_cq_attr;
import io.efabench.fabric.generated.fi_cq_err_entry;
import io.efabench.fabric.generated.fi_ops_cq;
import io.efabench.fabric.generated.fi_ops_domain;
import io.efabench.fabric.generated.fid_cq;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A channel's completion queue ({@code FI_CQ_FORMAT_DATA}, no wait object): reading it in
 * batches into a {@link Completion}, and turning an error entry into one line that names the
 * operation, the context slot, the provider and its own text. Reading is also what drives
 * progress for providers with manual progress. Allocation-free after open; owned and closed by
 * its {@link Channel}.
 */
final class CompletionQueue {
    private final MemorySegment cq;
    private final MemorySegment readFn;
    private final MemorySegment readErrFn;
    private final MemorySegment strerrorFn;
    private final MemorySegment errEntry;
    private final MemorySegment errText;
    private final NicInfo nic;
    private final CallBoard.Slot calls;
    /** Address of the channel's context slot 0: an op context's slot is its distance from here. */
    private final long contextBase;

    private CompletionQueue(MemorySegment cq, NicInfo nic, CallBoard.Slot calls, long contextBase) {
        this.cq = cq;
        MemorySegment ops = fid_cq.ops(cq).reinterpret(fi_ops_cq.sizeof());
        this.readFn = fi_ops_cq.read(ops);
        this.readErrFn = fi_ops_cq.readerr(ops);
        this.strerrorFn = fi_ops_cq.strerror(ops);
        // An automatic arena, as the channel's structs: freed when the queue is unreachable.
        Arena arena = Arena.ofAuto();
        this.errEntry = arena.allocate(fi_cq_err_entry.layout());
        this.errText = arena.allocate(256);
        this.nic = nic;
        this.calls = calls;
        this.contextBase = contextBase;
    }

    /**
     * fi_cq_open on {@code domain} with room for at least {@code depth} entries (local completions
     * and remote-CQ-data arrivals can both be outstanding); {@code contextBase} is the channel's
     * context slot 0.
     */
    static CompletionQueue open(MemorySegment domain, MemorySegment domainOps, int depth, String where, NicInfo nic,
            CallBoard.Slot calls, long contextBase) {
        try (Arena call = Arena.ofConfined()) {
            MemorySegment attr = call.allocate(fi_cq_attr.layout());
            fi_cq_attr.size(attr, Math.max(2L * depth, 128));
            fi_cq_attr.format(attr, LibFabric.FI_CQ_FORMAT_DATA());
            fi_cq_attr.wait_obj(attr, LibFabric.FI_WAIT_NONE());
            MemorySegment out = call.allocate(ValueLayout.ADDRESS);
            Fi.check("fi_cq_open" + where, fi_ops_domain.cq_open.invoke(fi_ops_domain.cq_open(domainOps),
                    domain, attr, out, MemorySegment.NULL));
            MemorySegment cq = out.get(ValueLayout.ADDRESS, 0).reinterpret(fid_cq.sizeof());
            return new CompletionQueue(cq, nic, calls, contextBase);
        }
    }

    /** The fid, for fi_ep_bind and fi_close. */
    MemorySegment fid() {
        return cq;
    }

    /**
     * One fi_cq_read of up to {@code count} entries into {@code c}: how many were read, 0 when the
     * CQ is empty; an error entry becomes a {@link FabricException} with the provider's text.
     */
    int read(Completion c, long count) {
        c.select(0);
        long rc = ProviderCall.op(calls, CallBoardLayout.CQ_READ, readFn, cq, c.entry, count);
        if (rc > 0) {
            c.contextBase = contextBase;
            return (int) rc;
        }
        if (rc == -Fi.EAGAIN) {
            return 0;
        }
        if (rc == -Fi.EAVAIL) {
            throw error();
        }
        throw Fi.failure("fi_cq_read", rc);
    }

    private FabricException error() {
        // err_data_size != 0 on input means "copy err_data into my buffer at err_data" (API >= 1.5);
        // the previous readerr left the provider's values there.
        fi_cq_err_entry.err_data(errEntry, MemorySegment.NULL);
        fi_cq_err_entry.err_data_size(errEntry, 0);
        long rc = ProviderCall.op(calls, CallBoardLayout.CQ_READERR, readErrFn, cq, errEntry, 0L);
        if (rc < 0) {
            return Fi.failure("fi_cq_readerr", rc);
        }
        long flags = fi_cq_err_entry.flags(errEntry);
        int err = Math.abs(fi_cq_err_entry.err(errEntry)); // positive by the spec; shm 1.17 reports it negated
        int provErrno = fi_cq_err_entry.prov_errno(errEntry);
        long delta = fi_cq_err_entry.op_context(errEntry).address() - contextBase;
        String ctx = delta >= 0 && delta < OpContexts.SLOTS * OpContexts.SIZE ? "ctx " + (delta / OpContexts.SIZE)
                : "no ctx";
        String op = (flags & Fi.WRITE) != 0 ? "write" : (flags & Fi.READ) != 0 ? "read" : (flags & Fi.SEND) != 0 ? "send"
                : (flags & Fi.RECV) != 0 ? "recv" : (flags & Fi.REMOTE_WRITE) != 0 ? "remote write" : "operation";
        String provText = Fi.string(fi_ops_cq.strerror.invoke(strerrorFn, cq, provErrno,
                fi_cq_err_entry.err_data(errEntry), errText, errText.byteSize()));
        String text = Fi.strerror(err);
        if (!provText.isEmpty() && !provText.equals(text)) {
            text += ": " + provText;
        }
        return new FabricException("completion error on " + op + " " + ctx + " (" + nic.provider() + " "
                + nic.domainName() + "): " + text + " (prov_errno " + provErrno + ")", -err);
    }
}

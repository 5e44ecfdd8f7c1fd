package io.efabench.fabric;

import io.efabench.fabric.generated.fi_msg;
import io.efabench.fabric.generated.fi_msg_rma;
import io.efabench.fabric.generated.fi_rma_iov;
import io.efabench.fabric.generated.iovec;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The message structs a channel posts, each preallocated once with its one iovec, one memory
 * descriptor and (RMA) one fi_rma_iov, and mutated in place per post: the layout apart from the
 * calls that use it (Agrona's descriptors). Nothing here allocates after construction.
 */
final class MessageDescriptors {
    private static final long IOV_BASE = iovec.iov_base$offset();
    private static final long IOV_LEN = iovec.iov_len$offset();

    private MessageDescriptors() {}

    /** A {@code struct fi_msg} (fi_sendmsg, fi_recvmsg) with one iovec and one descriptor. */
    static final class Msg {
        private static final long ADDR = fi_msg.addr$offset();
        private static final long CONTEXT = fi_msg.context$offset();
        private static final long DATA = fi_msg.data$offset();

        final MemorySegment msg;
        private final MemorySegment iov;
        private final MemorySegment desc;

        /** {@code passDescriptors}: point the message at its descriptor (FI_MR_LOCAL, FI_MR_HMEM), else NULL. */
        Msg(Arena arena, boolean passDescriptors) {
            msg = arena.allocate(fi_msg.layout());
            iov = arena.allocate(iovec.layout());
            desc = arena.allocate(ValueLayout.ADDRESS);
            fi_msg.msg_iov(msg, iov);
            fi_msg.desc(msg, passDescriptors ? desc : MemorySegment.NULL);
            fi_msg.iov_count(msg, 1);
            fi_msg.addr(msg, Fi.ADDR_UNSPEC);
        }

        /** The buffer, its descriptor, peer, context and immediate data of the next post. */
        MemorySegment set(long address, long len, long mrDesc, long dest, long context, long data) {
            iov.set(ValueLayout.JAVA_LONG, IOV_BASE, address);
            iov.set(ValueLayout.JAVA_LONG, IOV_LEN, len);
            desc.set(ValueLayout.JAVA_LONG, 0, mrDesc);
            msg.set(ValueLayout.JAVA_LONG, ADDR, dest);
            msg.set(ValueLayout.JAVA_LONG, CONTEXT, context);
            msg.set(ValueLayout.JAVA_LONG, DATA, data);
            return msg;
        }
    }

    /** A {@code struct fi_msg_rma} (fi_writemsg, fi_readmsg): one local iovec and descriptor, one remote range. */
    static final class Rma {
        private static final long ADDR = fi_msg_rma.addr$offset();
        private static final long CONTEXT = fi_msg_rma.context$offset();
        private static final long DATA = fi_msg_rma.data$offset();
        private static final long REMOTE_ADDR = fi_rma_iov.addr$offset();
        private static final long REMOTE_LEN = fi_rma_iov.len$offset();
        private static final long REMOTE_KEY = fi_rma_iov.key$offset();

        final MemorySegment msg;
        private final MemorySegment iov;
        private final MemorySegment desc;
        private final MemorySegment remote;

        Rma(Arena arena, boolean passDescriptors) {
            msg = arena.allocate(fi_msg_rma.layout());
            iov = arena.allocate(iovec.layout());
            desc = arena.allocate(ValueLayout.ADDRESS);
            remote = arena.allocate(fi_rma_iov.layout());
            fi_msg_rma.msg_iov(msg, iov);
            fi_msg_rma.desc(msg, passDescriptors ? desc : MemorySegment.NULL);
            fi_msg_rma.iov_count(msg, 1);
            fi_msg_rma.rma_iov(msg, remote);
            fi_msg_rma.rma_iov_count(msg, 1);
        }

        /** Local range and descriptor, the peer and its range and key, context and immediate data of the next post. */
        MemorySegment set(long address, long len, long mrDesc, long dest, long remoteAddress, long key, long context,
                long data) {
            iov.set(ValueLayout.JAVA_LONG, IOV_BASE, address);
            iov.set(ValueLayout.JAVA_LONG, IOV_LEN, len);
            desc.set(ValueLayout.JAVA_LONG, 0, mrDesc);
            remote.set(ValueLayout.JAVA_LONG, REMOTE_ADDR, remoteAddress);
            remote.set(ValueLayout.JAVA_LONG, REMOTE_LEN, len);
            remote.set(ValueLayout.JAVA_LONG, REMOTE_KEY, key);
            msg.set(ValueLayout.JAVA_LONG, ADDR, dest);
            msg.set(ValueLayout.JAVA_LONG, CONTEXT, context);
            msg.set(ValueLayout.JAVA_LONG, DATA, data);
            return msg;
        }
    }
}

package io.efabench.fabric;

import java.lang.invoke.VarHandle;
import java.lang.foreign.ValueLayout;

/**
 * Where things sit in a call board (see {@link CallBoard}): 1 KiB of shared memory, written by
 * the benchmark JVM and read by the watchdog, possibly in another process. Kept apart from the
 * code that writes and reads it, so both sides agree on one description.
 *
 * <pre>
 *   0  int  magic            MAGIC once the board is initialized
 *   8  long writer pid       the benchmark JVM that reports into it (0: none)
 *  16  int  writer rank      -1 until the rank group formed
 *  20  int  timeout seconds  the trial's EFABENCH_TIMEOUT_S (0: not known yet)
 *  24  int  peer count       local peers listed below
 *  32  PEERS x {long pid, int rank, int pad}      ranks on this host
 * 576  SLOTS x {long state, byte[24] provider}    one per open channel
 * </pre>
 *
 * A slot's state is {@code count << 8 | op << 1 | inCall}: odd while a thread is inside a native
 * call, and different for every call, so a reader that sees the same odd value twice, seconds
 * apart, knows that one call has not returned.
 */
final class CallBoardLayout {
    static final int MAGIC = 0xEFAB_CA11;
    static final long MAGIC_AT = 0;
    static final long WRITER_PID_AT = 8;
    static final long WRITER_RANK_AT = 16;
    static final long TIMEOUT_AT = 20;
    static final long PEER_COUNT_AT = 24;
    static final long PEERS_AT = 32;
    static final int PEERS = 34;
    static final long PEER_SIZE = 16;
    static final long SLOTS_AT = 576;
    static final int SLOTS = 14;
    static final long SLOT_SIZE = 32;
    static final int PROVIDER_BYTES = 24;
    static final long SIZE = 1024;

    /** What a slot's op field means: the libfabric call a thread is in. */
    static final String[] OPS = {"(none)", "fi_sendmsg", "fi_recvmsg", "fi_writemsg", "fi_inject_writedata",
            "fi_cq_read", "fi_cq_readerr", "fi_av_insert", "fi_close", "fi_readmsg"};
    static final int SEND = 1;
    static final int RECV = 2;
    static final int WRITE = 3;
    static final int INJECT_WRITE = 4;
    static final int CQ_READ = 5;
    static final int CQ_READERR = 6;
    static final int AV_INSERT = 7;
    static final int CLOSE = 8;
    static final int READ = 9;

    /** Plain, release and acquire access to a long of a segment (segment, offset). */
    static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    static {
        if (SLOTS_AT < PEERS_AT + PEERS * PEER_SIZE || SLOTS_AT + SLOTS * SLOT_SIZE > SIZE
                || 8 + PROVIDER_BYTES > SLOT_SIZE) {
            throw new AssertionError("call board layout overlaps");
        }
    }

    private CallBoardLayout() {
    }

    static long slotAt(int slot) {
        return SLOTS_AT + slot * SLOT_SIZE;
    }

    static long peerAt(int peer) {
        return PEERS_AT + peer * PEER_SIZE;
    }

    static boolean inCall(long state) {
        return (state & 1) != 0;
    }

    static String op(long state) {
        int op = (int) (state >>> 1) & 0x7f;
        return op < OPS.length ? OPS[op] : "op " + op;
    }
}

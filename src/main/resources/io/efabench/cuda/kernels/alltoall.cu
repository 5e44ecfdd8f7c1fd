// All-to-all between the GPUs of one node over NVLink (AllToAllBenchmark and MoeBenchmark
// path=nvlink): every rank stores its block for each peer straight into that peer's destination
// buffer, mapped here through CUDA IPC, then writes the round number into the peer's flag for this
// rank; a round ends on a rank when its own stores are fenced and every peer's flag holds the round.
//
// Memory, per rank (io.efabench.harness.nvlink.NvlinkPush): a launch moves one phase, a table of
// N entries {source offset, destination offset, length} in 16-byte words: to peer p it sends
// `length` words from src + source offset to peer p's destination (dst_of[p]) + destination offset
// (an all-to-all's slot: src block (slot, p) to dst block (slot, me); a MoE phase: the tokens for
// p, all-to-all-v). flags: N words 128 bytes apart, word s written by rank s only. done: N 64-bit
// counters 128 bytes apart, local, counting finished warps per destination (never reset: round r is
// done with a destination when its counter reaches r x the warps it has). pair: per sender, the
// summed ns from this rank's kernel start to the sender's flag, and the rounds summed (timed
// rounds only). status (pinned host memory): [0] 0 fine, 1 a flag did not come in time, 2 the host
// said stop; [1] the peer waited for, [2] the round; [3] the host's stop word (a rank failing
// elsewhere ends its kernels at once instead of at their deadline); [4] END as rank 0's flags
// brought it.
//
// END: rank 0's rounds after its timed ones carry final_end (the iteration's last round, else 0)
// in the word after its flag in every peer; a peer's waiter copies it to status[4], so a peer
// learns END from the data before it could enqueue a round past it (the rank group's own word
// travels slower than NVLink).

#include "efabench.cuh"

#define EFA_FLAG_STRIDE 32   // 32 words: one flag per 128-byte line
#define EFA_DONE_STRIDE 16   // 16 x 8 bytes

// One thread per peer waits for the peer's flag of `round` (flags only grow: a peer may already
// be a round ahead), adding its arrival time to pair[] in timed rounds; a deadline ends the wait.
__device__ void efa_await_peers(const volatile unsigned* flags, unsigned long long* pair, unsigned me, unsigned n,
                                unsigned round, unsigned timed, unsigned long long start,
                                unsigned long long timeout_ns, unsigned* status) {
    volatile unsigned* host = status;
    for (unsigned s = threadIdx.x; s < n; s += blockDim.x) {
        if (s == me) {
            continue;
        }
        while ((int)(flags[s * EFA_FLAG_STRIDE] - round) < 0) {
            if (host[3] != 0) {
                atomicExch(status, 2u);
                return;
            }
            if (efa_now_ns() - start > timeout_ns) {
                status[1] = s;
                status[2] = round;
                __threadfence_system();
                atomicExch(status, 1u);
                return;
            }
        }
        if (timed) {
            pair[2 * s] += efa_now_ns() - start;
            pair[2 * s + 1] += 1;
        }
        if (s == 0) {
            __threadfence_system();  // rank 0 wrote END before the flag
            unsigned end = flags[1];
            if (end != 0 && (int)(end - round) >= 0) {  // an earlier iteration's END lies behind this round
                host[4] = end;
            }
        }
    }
}

// Raises this rank's flag of `round` in `peer_flags` (a peer's flag words), END first if any.
__device__ __forceinline__ void efa_raise(volatile unsigned* peer_flags, unsigned me, unsigned round,
                                          unsigned final_end) {
    if (final_end != 0) {
        peer_flags[me * EFA_FLAG_STRIDE + 1] = final_end;
        __threadfence_system();
    }
    peer_flags[me * EFA_FLAG_STRIDE] = round;
}

// The SM path: warps round-robin over the N-1 destinations (peer me+1 first), each copying its
// share of the peer's entry in steps of 4 x 512 bytes (four 16-byte loads in flight, then four
// stores into the peer); the last warp done with a destination fences and raises the peer's flag
// (an entry of length 0 raises it too). Block 0 then waits for every peer's flag. Needs at least
// N-1 warps in the grid.
extern "C" __global__ void a2a_push(const uint4* __restrict__ src, const unsigned long long* dst_of,
                                   const unsigned long long* flag_of, const volatile unsigned* flags,
                                   unsigned long long* done, unsigned long long* pair,
                                   const unsigned long long* plan, unsigned me, unsigned n, unsigned round,
                                   unsigned timed, unsigned final_end, unsigned long long timeout_ns,
                                   unsigned* status) {
    unsigned long long start = efa_now_ns();
    unsigned lane = threadIdx.x & 31;
    unsigned warp = (unsigned)(efa_thread() >> 5);
    unsigned warps = (unsigned)(efa_threads() >> 5);
    unsigned d = n - 1;
    if (d > 0) {
        unsigned k = warp % d;
        unsigned sub = warp / d;
        unsigned subs = warps / d + (k < warps % d ? 1 : 0);
        unsigned peer = (me + 1 + k) % n;
        const uint4* s = src + plan[3 * peer];
        uint4* t = (uint4*)dst_of[peer] + plan[3 * peer + 1];
        unsigned long long len = plan[3 * peer + 2];
        unsigned long long v = (unsigned long long)sub * 128 + lane;
        unsigned long long step = (unsigned long long)subs * 128;
        for (; v + 96 < len; v += step) {
            uint4 r[4];
#pragma unroll
            for (int j = 0; j < 4; j++) {
                r[j] = s[v + j * 32];
            }
#pragma unroll
            for (int j = 0; j < 4; j++) {
                t[v + j * 32] = r[j];
            }
        }
        for (; v < len; v += 32) {  // this warp's last, partial step
            t[v] = s[v];
        }
        __threadfence_system();
        __syncwarp();
        if (lane == 0) {
            unsigned long long finished = atomicAdd(&done[peer * EFA_DONE_STRIDE], 1ull) + 1;
            if (finished == (unsigned long long)round * subs) {
                __threadfence_system();  // every warp's stores to this peer before its flag
                efa_raise((volatile unsigned*)flag_of[peer], me, round, final_end);
            }
        }
    }
    if (blockIdx.x == 0) {
        __syncthreads();
        efa_await_peers(flags, pair, me, n, round, timed, start, timeout_ns, status);
    }
}

// The copy-engine path: the round's start, stamped before its peer copies are enqueued.
extern "C" __global__ void a2a_stamp(unsigned long long* at) {
    *at = efa_now_ns();
}

// The copy-engine path's flag exchange: the round's peer copies ran before it on the stream, so
// they are complete; one thread per peer raises the peer's flag, then waits for every peer's
// (arrival times from the stamp a2a_stamp left before the copies).
extern "C" __global__ void a2a_signal(const unsigned long long* flag_of, const volatile unsigned* flags,
                                     unsigned long long* pair, const unsigned long long* started, unsigned me,
                                     unsigned n, unsigned round, unsigned timed, unsigned final_end,
                                     unsigned long long timeout_ns, unsigned* status) {
    unsigned long long start = *started;
    __threadfence_system();
    for (unsigned p = threadIdx.x; p < n; p += blockDim.x) {
        if (p != me) {
            efa_raise((volatile unsigned*)flag_of[p], me, round, final_end);
        }
    }
    efa_await_peers(flags, pair, me, n, round, timed, start, timeout_ns, status);
}

// The GPU side of the proxy experiment: producers that push write requests into the request
// ring (io.efabench.proxy.RequestRing) in mapped pinned host memory, where a Java proxy thread
// drains them and posts the RDMA writes. The ring is Vyukov's bounded MPSC queue: a producer
// takes ticket t from head, waits until cell t % capacity carries sequence t (free), writes the
// request and publishes sequence t + 1 with a system-scope release. The proxy publishes
// `completed` = the number of leading tickets whose writes all completed, so "completed >= t + 1"
// means request t and every earlier one are done: that is quiet.
//
// Every spin ends at a deadline (globaltimer) or when the host raises the abort word, and says
// why in status[0] instead of hanging the GPU.
#include "efabench.cuh"

// Mirrors io.efabench.proxy.RequestRing (ProxyKernelsTest compares the two).
#define RING_HEAD 0
#define RING_POSTED 256
#define RING_COMPLETED 384
#define RING_CELLS 512
#define RING_CELL 64

#define OP_PUT 1u
#define FLAG_NBI 1u
#define FLAG_FILL 2u

// status[0]: why a kernel stopped early; status[1]: the ticket or round it was at.
#define ST_OK 0u
#define ST_RING_FULL 1u   // a ring cell stayed full: the proxy is not draining
#define ST_QUIET 2u       // completed never reached a request: its writes never completed
#define ST_ABORTED 3u     // the host raised the abort word
#define ST_IDLE 4u        // ping: no doorbell within the idle timeout

// Test hook (EFABENCH_TEST_PROXY_FIELD): request 0 of the launch carries a wrong field.
#define CORRUPT_TARGET 1
#define CORRUPT_BYTES 2
#define CORRUPT_OP 3

typedef unsigned long long u64;

__device__ __forceinline__ u64 ld_acquire_sys(const u64* p) {
    u64 v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void st_release_sys(u64* p, u64 v) {
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ unsigned ld_volatile(const unsigned* p) {
    return *(const volatile unsigned*)p;
}

// Where a wait gave up: 0 while it may go on.
__device__ __forceinline__ unsigned efa_stop(u64 deadline, const unsigned* abort_word) {
    if (ld_volatile(abort_word) != 0) {
        return ST_ABORTED;
    }
    return efa_now_ns() > deadline ? 1u : 0u;
}

__device__ __forceinline__ void efa_fail(unsigned* status, unsigned code, u64 at) {
    if (atomicCAS(status, 0u, code) == 0u) {
        ((volatile u64*)status)[1] = at;
        __threadfence_system();
    }
}

// Writes request `t` into its cell once the cell is free, then publishes it. ST_OK or why not.
__device__ unsigned efa_push(unsigned char* ring, u64 mask, u64 t, unsigned op, unsigned target, unsigned channel,
                             u64 src, u64 dst, u64 bytes, u64 imm, u64 deadline, const unsigned* abort_word) {
    u64* cell = (u64*)(ring + RING_CELLS + (t & mask) * RING_CELL);
    while (ld_acquire_sys(cell) != t) {
        unsigned why = efa_stop(deadline, abort_word);
        if (why != 0) {
            return why == ST_ABORTED ? ST_ABORTED : ST_RING_FULL;
        }
        // Full ring: back off, so thousands of waiting producers do not flood PCIe with reads of
        // host memory that the proxy is busy reading too.
        __nanosleep(200);
    }
    cell[1] = ((u64)target << 32) | op;
    cell[2] = channel;
    cell[3] = src;
    cell[4] = dst;
    cell[5] = bytes;
    cell[6] = imm;
    st_release_sys(cell, t + 1);
    return ST_OK;
}

// Spins until the proxy's completed count reaches `want`. ST_OK or why not.
__device__ unsigned efa_quiet(unsigned char* ring, u64 want, u64 deadline, const unsigned* abort_word) {
    const u64* completed = (const u64*)(ring + RING_COMPLETED);
    while (ld_acquire_sys(completed) < want) {
        unsigned why = efa_stop(deadline, abort_word);
        if (why != 0) {
            return why == ST_ABORTED ? ST_ABORTED : ST_QUIET;
        }
    }
    return ST_OK;
}

// One round of the proxy write benchmark, launched by rank `me` (the leader). For each target
// 1..world-1 in turn, the `nreq` requests of `chunk` bytes (the last one shorter) are spread over
// the blocks: block b owns requests b, b + gridDim.x, ... Each target has its own source block of
// `stride` bytes (the i-th target other than `me` at i * stride), as Write's footprint: with
// FLAG_FILL the block first writes the check pattern of (me, target, round) into its chunk of that
// target's block; thread 0 pushes the request once the block's data is ready. Blocking mode quiets
// after every push, FLAG_NBI once at the end. No request overwrites a region the NIC may still be
// reading: a chunk is filled once per round, and a round ends at the targets' acks.
extern "C" __global__ void proxy_put(unsigned char* ring, u64 mask, unsigned* src, u64 size, u64 stride, u64 chunk, unsigned nreq,
                                     unsigned world, unsigned me, unsigned channel, u64 imm, u64 round, unsigned flags,
                                     int corrupt, u64 timeout_ns, unsigned* status, const unsigned* abort_word) {
    __shared__ unsigned failed;
    __shared__ unsigned pushed;
    u64 deadline = efa_now_ns() + timeout_ns;
    u64* head = (u64*)(ring + RING_HEAD);
    u64* posted = (u64*)(ring + RING_POSTED);
    u64 last = 0;
    if (threadIdx.x == 0) {
        failed = 0;
        pushed = 0;
    }
    __syncthreads();
    for (unsigned target = 0; target < world; target++) {
        if (target == me) {
            continue;
        }
        unsigned seed = efa_seed(me, target, round);
        u64 base = (u64)(target < me ? target : target - 1) * stride;
        for (unsigned j = blockIdx.x; j < nreq; j += gridDim.x) {
            u64 off = (u64)j * chunk;
            u64 len = size - off < chunk ? size - off : chunk;
            if (flags & FLAG_FILL) {
                unsigned* block_src = src + base / 4;
                for (u64 w = off / 4 + threadIdx.x; w < (off + len) / 4; w += blockDim.x) {
                    block_src[w] = efa_word(seed, w);
                }
                __threadfence_system();
            }
            __syncthreads();
            if (threadIdx.x == 0) {
                unsigned op = OP_PUT;
                unsigned to = target;
                u64 bytes = len;
                if (j == 0 && target == (me == 0 ? 1u : 0u)) {
                    to = corrupt == CORRUPT_TARGET ? world : to;
                    bytes = corrupt == CORRUPT_BYTES ? size + 4096 : bytes;
                    op = corrupt == CORRUPT_OP ? 7u : op;
                }
                u64 t = atomicAdd_system(head, 1ull);
                unsigned why = efa_push(ring, mask, t, op, to, channel, base + off, off, bytes, imm, deadline, abort_word);
                if (why == ST_OK) {
                    atomicAdd_system(posted, 1ull);
                    last = t;
                    pushed = 1;
                    if (!(flags & FLAG_NBI)) {
                        why = efa_quiet(ring, t + 1, deadline, abort_word);
                    }
                }
                if (why != ST_OK) {
                    efa_fail(status, why, t);
                    failed = 1;
                }
            }
            __syncthreads();
            if (failed) {
                return;
            }
        }
    }
    if ((flags & FLAG_NBI) && threadIdx.x == 0 && pushed) {
        unsigned why = efa_quiet(ring, last + 1, deadline, abort_word);
        if (why != ST_OK) {
            efa_fail(status, why, last);
        }
    }
}

// The queue alone (ProxyQueueBenchmark, the seed's experiments/queue): every thread pushes
// `per_thread` requests; a warp takes its 32 tickets with one atomic and counts them posted with
// one more (blockDim.x is a multiple of 32). The proxy only acknowledges.
extern "C" __global__ void proxy_flood(unsigned char* ring, u64 mask, unsigned per_thread, u64 timeout_ns,
                                       unsigned* status, const unsigned* abort_word) {
    u64 deadline = efa_now_ns() + timeout_ns;
    u64* head = (u64*)(ring + RING_HEAD);
    u64* posted = (u64*)(ring + RING_POSTED);
    unsigned lane = threadIdx.x & 31u;
    for (unsigned i = 0; i < per_thread; i++) {
        u64 base = 0;
        if (lane == 0) {
            base = atomicAdd_system(head, 32ull);
        }
        base = __shfl_sync(0xffffffffu, base, 0);
        u64 t = base + lane;
        unsigned why = efa_push(ring, mask, t, OP_PUT, 1u, 0u, t * 64u, t * 64u, 64u, t, deadline, abort_word);
        __syncwarp();
        if (lane == 0) {
            atomicAdd_system(posted, 32ull);
        }
        if (why != ST_OK) {
            efa_fail(status, why, t);
        }
        if (__any_sync(0xffffffffu, why != ST_OK)) {
            return;
        }
    }
}

// The round trip of one request, one thread: for every new doorbell value d (the host counts
// 1, 2, ...; ~0 stops), push one request, quiet on it, record the GPU's own time from the push to
// seeing `completed` (rtt_ns[d % slots]) and answer d. The host times doorbell -> answer.
extern "C" __global__ void proxy_ping(unsigned char* ring, u64 mask, const u64* doorbell, u64* answer, u64* rtt_ns,
                                      unsigned slots, u64 idle_timeout_ns, unsigned* status, const unsigned* abort_word) {
    u64* head = (u64*)(ring + RING_HEAD);
    u64* posted = (u64*)(ring + RING_POSTED);
    u64 seen = 0;
    while (true) {
        u64 deadline = efa_now_ns() + idle_timeout_ns;
        u64 d;
        while ((d = ld_acquire_sys(doorbell)) == seen) {
            unsigned why = efa_stop(deadline, abort_word);
            if (why != 0) {
                efa_fail(status, why == ST_ABORTED ? ST_ABORTED : ST_IDLE, seen);
                return;
            }
        }
        if (d == ~0ull) {
            return;
        }
        seen = d;
        u64 start = efa_now_ns();
        u64 t = atomicAdd_system(head, 1ull);
        unsigned why = efa_push(ring, mask, t, OP_PUT, 1u, 0u, 0u, 0u, 8u, d, deadline, abort_word);
        if (why == ST_OK) {
            atomicAdd_system(posted, 1ull);
            why = efa_quiet(ring, t + 1, deadline, abort_word);
        }
        if (why != ST_OK) {
            efa_fail(status, why, t);
            return;
        }
        rtt_ns[d % slots] = efa_now_ns() - start;
        st_release_sys(answer, d);
    }
}

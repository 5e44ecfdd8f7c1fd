// The GPU side of the proxy experiment: producers that push write requests into the request
// ring (io.efabench.proxy.RequestRing) in mapped pinned host memory, where a Java proxy thread
// drains them and posts the RDMA writes. The ring is Vyukov's bounded MPSC queue with
// self-validating cells: a producer takes ticket t from head, waits until cell t % capacity
// carries sequence t (free), and writes the request's words, each tagged with t's low bits; the
// proxy takes the cell once every word carries the tag. The proxy publishes
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
#define RING_TAG_BITS 16
#define RING_TAG_MASK 0xFFFFull

#define OP_PUT 1u
#define FLAG_NBI 1u
#define FLAG_FILL 2u

// Most slots a launch cycles through (io.efabench.harness.engine.Footprint.MAX_SLOTS), and the
// round bits of the immediate data (io.efabench.harness.engine.Immediate: kind | sender | round).
#define MAX_SLOTS 256
#define IMM_ROUND_MASK 0xFFFFFull
// Sleep between two polls of an NBI wait (the end of a launch, a slot reuse): no round is timed
// by how soon such a wait returns, and a spinning read of host memory per ~1 us slowed the
// writes of 64 MiB rounds by ~5% on the lent H100 (ranks sharing it under MPS).
#define NBI_BACKOFF_NS 1000

// status[0]: why a kernel stopped early; status[1]: the ticket or round it was at.
#define ST_OK 0u
#define ST_RING_FULL 1u   // a ring cell stayed full: the proxy is not draining
#define ST_QUIET 2u       // completed never reached a request: its writes never completed
#define ST_ABORTED 3u     // the host raised the abort word
#define ST_IDLE 4u        // ping, put: no doorbell within the idle timeout

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

__device__ __forceinline__ void st_relaxed_sys(u64* p, u64 v) {
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ u64 ld_relaxed_sys(const u64* p) {
    u64 v;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

// Writes request `t` into its cell once the cell is free. Every word carries the ticket's tag in
// its low RING_TAG_BITS (io.efabench.proxy.RequestRing): the proxy takes the cell once all six do,
// so no fence orders the words (a system-scope release waited ~0.9 us per push for the stores to
// reach host memory). ST_OK or why not. `known_free`: the caller knows the proxy consumed ticket
// t - capacity (it saw `completed` past it), so the cell's sequence need not be read first: one
// PCIe round trip less per push.
__device__ unsigned efa_push(unsigned char* ring, u64 mask, u64 t, unsigned op, unsigned target, unsigned channel,
                             u64 src, u64 dst, u64 bytes, u64 imm, u64 deadline, const unsigned* abort_word,
                             bool known_free = false) {
    u64* cell = (u64*)(ring + RING_CELLS + (t & mask) * RING_CELL);
    while (!known_free && ld_acquire_sys(cell) != t) {
        unsigned why = efa_stop(deadline, abort_word);
        if (why != 0) {
            return why == ST_ABORTED ? ST_ABORTED : ST_RING_FULL;
        }
        // Full ring: back off, so thousands of waiting producers do not flood PCIe with reads of
        // host memory that the proxy is busy reading too.
        __nanosleep(200);
    }
    u64 tag = t & RING_TAG_MASK;
    st_relaxed_sys(&cell[1], ((((u64)target << 32) | op) << RING_TAG_BITS) | tag);
    st_relaxed_sys(&cell[2], ((u64)channel << RING_TAG_BITS) | tag);
    st_relaxed_sys(&cell[3], (src << RING_TAG_BITS) | tag);
    st_relaxed_sys(&cell[4], (dst << RING_TAG_BITS) | tag);
    st_relaxed_sys(&cell[5], (bytes << RING_TAG_BITS) | tag);
    st_relaxed_sys(&cell[6], (imm << RING_TAG_BITS) | tag);
    return ST_OK;
}

// Spins until the proxy's completed count reaches `want`; returns ST_OK (and the count seen in
// *seen) or why not. The abort word and the clock are read every 32nd poll only: each is a read
// across PCIe, and the poll of `completed` is what the quiet's latency is made of.
// `backoff_ns` > 0 sleeps between polls: for waits nobody is timing (NBI's), so a kernel that
// waits for a whole launch's writes does not read host memory back to back all the while.
__device__ unsigned efa_quiet(unsigned char* ring, u64 want, u64 deadline, const unsigned* abort_word, u64* seen = nullptr,
                              unsigned backoff_ns = 0) {
    const u64* completed = (const u64*)(ring + RING_COMPLETED);
    u64 c;
    // Relaxed polls, one acquire fence once the count is there: an acquire load per poll would
    // also wait, on the first one, for this thread's request stores to reach host memory.
    for (unsigned polls = 1; (c = ld_relaxed_sys(completed)) < want; polls++) {
        if (backoff_ns != 0) {
            __nanosleep(backoff_ns);
        }
        if ((polls & 31u) == 0) {
            unsigned why = efa_stop(deadline, abort_word);
            if (why != 0) {
                return why == ST_ABORTED ? ST_ABORTED : ST_QUIET;
            }
        }
    }
    asm volatile("fence.acq_rel.sys;" ::: "memory");
    if (seen != nullptr) {
        *seen = c;
    }
    return ST_OK;
}

// The proxy write benchmark's producer, rank `me` (the leader), resident for one JMH iteration:
// it waits on the doorbell; a doorbell value d (the host's, >= 1; ~0 stops the kernel) starts a
// launch of `rounds` rounds d, d + 1, ..., as the seed's kernel loops over its iterations. Round r
// writes slot r % slots: for each target 1..world-1 in turn, the `nreq` requests of `chunk` bytes
// (the last one shorter) from that target's source block of the slot (slot * slot_stride + i *
// stride for the i-th target other than `me`) to the target's block of the slot (slot * stride).
// Block b owns requests b, b + gridDim.x, ...; with FLAG_FILL the block first writes the check
// pattern of (me, target, r) into its chunk, and its thread 0 pushes once the data is ready.
// Blocking quiets after every push; FLAG_NBI quiets once at the end of the launch, and before a
// round reuses a slot still in flight (the block's last request of round r - slots): no write
// reads a region that a later round of the same launch refills. Counters (counts[0] pushes,
// counts[1] quiets, counts[2] ns inside pushes, counts[3] ns inside blocking quiets: the GPU's own
// clock; and the ring's `posted`) are summed per block and added once per launch: each atomic on
// host memory is a PCIe round trip.
extern "C" __global__ void proxy_put(unsigned char* ring, u64 mask, unsigned* src, u64 size, u64 stride,
                                     u64 slot_stride, u64 chunk, unsigned nreq, unsigned world, unsigned me,
                                     unsigned channel, u64 imm_base, unsigned rounds, unsigned slots, unsigned flags,
                                     int corrupt, u64 timeout_ns, u64 idle_timeout_ns, const u64* doorbell,
                                     u64* counts, unsigned* status, const unsigned* abort_word) {
    __shared__ unsigned failed;
    __shared__ u64 go;
    __shared__ u64 last_ticket[MAX_SLOTS];
    u64* head = (u64*)(ring + RING_HEAD);
    u64* posted = (u64*)(ring + RING_POSTED);
    bool single = gridDim.x == 1; // one pusher: it takes a launch's tickets with one atomic
    u64 seen = 0;
    // Thread 0's lower bound on the proxy's `completed`: a ticket below it + capacity has a free cell.
    u64 known_completed = 0;
    if (threadIdx.x == 0) {
        failed = 0;
        known_completed = ld_acquire_sys((const u64*)(ring + RING_COMPLETED));
    }
    while (true) {
        if (threadIdx.x == 0) {
            u64 idle = efa_now_ns() + idle_timeout_ns;
            u64 d;
            unsigned polls = 0;
            while ((d = ld_acquire_sys(doorbell)) == seen) {
                if ((++polls & 31u) == 0) {
                    unsigned why = efa_stop(idle, abort_word);
                    if (why != 0) {
                        efa_fail(status, why == ST_ABORTED ? ST_ABORTED : ST_IDLE, seen);
                        d = ~0ull;
                        break;
                    }
                }
            }
            go = d;
        }
        __syncthreads();
        if (go == ~0ull) {
            return;
        }
        u64 first = go;
        seen = first;
        u64 deadline = efa_now_ns() + timeout_ns;
        u64 pushes = 0, quiets = 0, push_ns = 0, quiet_ns = 0;
        u64 last = 0;
        u64 next_ticket = 0;
        // This block's requests per round: j = blockIdx.x, blockIdx.x + gridDim.x, ... below nreq, per target.
        unsigned mine = blockIdx.x < nreq ? (world - 1) * ((nreq - 1 - blockIdx.x) / gridDim.x + 1) : 0;
        if (threadIdx.x == 0 && single && mine > 0) {
            next_ticket = atomicAdd_system(head, (u64)mine * rounds);
        }
        for (unsigned k = 0; k < rounds; k++) {
            u64 r = first + k;
            unsigned slot = (unsigned)(r % slots);
            if ((flags & FLAG_NBI) && k >= slots && threadIdx.x == 0 && mine > 0) {
                quiets++;
                unsigned why = efa_quiet(ring, last_ticket[slot] + 1, deadline, abort_word, &known_completed, NBI_BACKOFF_NS);
                if (why != ST_OK) {
                    efa_fail(status, why, last_ticket[slot]);
                    failed = 1;
                }
            }
            __syncthreads();
            if (failed) {
                return;
            }
            for (unsigned target = 0; target < world; target++) {
                if (target == me) {
                    continue;
                }
                unsigned seed = efa_seed(me, target, r);
                u64 base = slot * slot_stride + (u64)(target < me ? target : target - 1) * stride;
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
                        if (k == 0 && j == 0 && target == (me == 0 ? 1u : 0u)) {
                            to = corrupt == CORRUPT_TARGET ? world : to;
                            bytes = corrupt == CORRUPT_BYTES ? slot_stride * slots + 4096 : bytes;
                            op = corrupt == CORRUPT_OP ? 7u : op;
                        }
                        u64 t0 = efa_now_ns();
                        u64 t = single ? next_ticket++ : atomicAdd_system(head, 1ull);
                        u64 imm = imm_base | (r & IMM_ROUND_MASK);
                        unsigned why = efa_push(ring, mask, t, op, to, channel, base + off, (u64)slot * stride + off, bytes,
                                                imm, deadline, abort_word, single && t < known_completed + mask + 1);
                        u64 t1 = efa_now_ns();
                        push_ns += t1 - t0;
                        if (why == ST_OK) {
                            pushes++;
                            last = t;
                            last_ticket[slot] = t;
                            if (!(flags & FLAG_NBI)) {
                                quiets++;
                                why = efa_quiet(ring, t + 1, deadline, abort_word, &known_completed);
                                quiet_ns += efa_now_ns() - t1;
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
        }
        if (threadIdx.x == 0) {
            if ((flags & FLAG_NBI) && pushes > 0) {
                quiets++;
                unsigned why = efa_quiet(ring, last + 1, deadline, abort_word, &known_completed, NBI_BACKOFF_NS);
                if (why != ST_OK) {
                    efa_fail(status, why, last);
                    failed = 1;
                }
            }
            if (pushes > 0) {
                atomicAdd_system(posted, pushes);
                atomicAdd_system(&counts[0], pushes);
                atomicAdd_system(&counts[1], quiets);
                atomicAdd_system(&counts[2], push_ns);
                atomicAdd_system(&counts[3], quiet_ns);
            }
        }
        __syncthreads();
        if (failed) {
            return;
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

// Kernels that write the check pattern (efabench.cuh) into a peer GPU's memory over NVLink
// (dst is an IPC-mapped pointer). Each generates its values in registers, like the reference
// suite's `remote[i] = target + i`, so the figure is the write path alone, and the checked
// round can verify exactly what the timed rounds did. All are grid-stride loops: any grid and
// block shape covers the whole buffer.

#include "efabench.cuh"

// The reference kernel: one 4-byte store per thread per step.
extern "C" __global__ void store_int(unsigned* dst, unsigned long long nwords, unsigned seed) {
    for (unsigned long long i = efa_thread(); i < nwords; i += efa_threads()) {
        dst[i] = efa_word(seed, i);
    }
    __threadfence_system();
}

// 16-byte stores: a quarter of the store instructions for the same bytes.
extern "C" __global__ void store_int4(uint4* dst, unsigned long long nvec, unsigned seed) {
    for (unsigned long long v = efa_thread(); v < nvec; v += efa_threads()) {
        dst[v] = efa_vec(seed, v);
    }
    __threadfence_system();
}

// 16-byte stores, four independent ones per step (each warp covers 4 x 512 contiguous bytes),
// so more bytes are in flight per thread and the loop overhead is a quarter.
extern "C" __global__ void store_int4x4(uint4* dst, unsigned long long nvec, unsigned seed) {
    unsigned long long stride = efa_threads();
    unsigned long long v = efa_thread();
    for (; v + 3 * stride < nvec; v += 4 * stride) {
#pragma unroll
        for (int j = 0; j < 4; j++) {
            dst[v + j * stride] = efa_vec(seed, v + j * stride);
        }
    }
    for (; v < nvec; v += stride) {
        dst[v] = efa_vec(seed, v);
    }
    __threadfence_system();
}

// 16-byte stores where each warp writes 2 KiB contiguous per step (4 x 512 B back to back)
// instead of 4 x 512 B a grid apart: whole lines of one region leave the SM together.
extern "C" __global__ void store_int4_warp(uint4* dst, unsigned long long nvec, unsigned seed) {
    unsigned lane = threadIdx.x & 31;
    unsigned long long warp = efa_thread() >> 5;
    unsigned long long warps = efa_threads() >> 5;
    unsigned long long v = warp * 128 + lane;
    for (; v + 96 < nvec; v += warps * 128) {
#pragma unroll
        for (int j = 0; j < 4; j++) {
            dst[v + j * 32] = efa_vec(seed, v + j * 32);
        }
    }
    for (; v < nvec; v += 32) {  // the last, partial step of this warp
        dst[v] = efa_vec(seed, v);
    }
    __threadfence_system();
}

// Hopper bulk copy (TMA): the block writes a chunk of the pattern into shared memory and one
// thread hands it to the copy unit (cp.async.bulk global <- shared), STAGES chunks in flight.
// The question it answers: does the bulk-copy unit drive NVLink writes harder than SM stores?
#define TMA_CHUNK 16384
#define TMA_STAGES 3

extern "C" __global__ void store_tma(unsigned char* dst, unsigned long long nbytes, unsigned seed) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ __align__(128) uint4 stage[TMA_STAGES][TMA_CHUNK / 16];
    unsigned long long nchunks = (nbytes + TMA_CHUNK - 1) / TMA_CHUNK;
    unsigned it = 0;
    for (unsigned long long c = blockIdx.x; c < nchunks; c += gridDim.x, ++it) {
        unsigned s = it % TMA_STAGES;
        if (threadIdx.x == 0 && it >= TMA_STAGES) {
            // the copy that last read this stage must be done reading before we overwrite it
            asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(TMA_STAGES - 1) : "memory");
        }
        __syncthreads();
        unsigned long long base = c * TMA_CHUNK;
        unsigned bytes = (unsigned)(nbytes - base < TMA_CHUNK ? nbytes - base : TMA_CHUNK);
        for (unsigned v = threadIdx.x; v < bytes / 16; v += blockDim.x) {
            stage[s][v] = efa_vec(seed, base / 16 + v);
        }
        // generic-proxy writes to shared memory must be fenced before the async proxy reads them
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncthreads();
        if (threadIdx.x == 0) {
            unsigned src = (unsigned)__cvta_generic_to_shared(&stage[s][0]);
            asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                         ::"l"(dst + base), "r"(src), "r"(bytes) : "memory");
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        }
    }
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
    __threadfence_system();
#endif
}

// store_tma with bigger bulk copies: 32 KiB per copy, 4 stages in dynamic shared memory
// (128 KiB: the host raises the kernel's dynamic shared memory limit).
#define TMA_BIG_CHUNK 32768
#define TMA_BIG_STAGES 4

extern "C" __global__ void store_tma_big(unsigned char* dst, unsigned long long nbytes, unsigned seed) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ __align__(128) uint4 big[];
    unsigned long long nchunks = (nbytes + TMA_BIG_CHUNK - 1) / TMA_BIG_CHUNK;
    unsigned it = 0;
    for (unsigned long long c = blockIdx.x; c < nchunks; c += gridDim.x, ++it) {
        unsigned s = it % TMA_BIG_STAGES;
        uint4* stage = big + s * (TMA_BIG_CHUNK / 16);
        if (threadIdx.x == 0 && it >= TMA_BIG_STAGES) {
            asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(TMA_BIG_STAGES - 1) : "memory");
        }
        __syncthreads();
        unsigned long long base = c * TMA_BIG_CHUNK;
        unsigned bytes = (unsigned)(nbytes - base < TMA_BIG_CHUNK ? nbytes - base : TMA_BIG_CHUNK);
        for (unsigned v = threadIdx.x; v < bytes / 16; v += blockDim.x) {
            stage[v] = efa_vec(seed, base / 16 + v);
        }
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncthreads();
        if (threadIdx.x == 0) {
            unsigned src = (unsigned)__cvta_generic_to_shared(stage);
            asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                         ::"l"(dst + base), "r"(src), "r"(bytes) : "memory");
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        }
    }
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
    __threadfence_system();
#endif
}

// A copy kernel (local source -> peer), for comparison with the copy engine, which also reads
// a local buffer: four 16-byte loads in flight before the four stores.
extern "C" __global__ void copy_int4x4(uint4* dst, const uint4* __restrict__ src, unsigned long long nvec) {
    unsigned long long stride = efa_threads();
    unsigned long long v = efa_thread();
    for (; v + 3 * stride < nvec; v += 4 * stride) {
        uint4 r[4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            r[j] = src[v + j * stride];
        }
#pragma unroll
        for (int j = 0; j < 4; j++) {
            dst[v + j * stride] = r[j];
        }
    }
    for (; v < nvec; v += stride) {
        dst[v] = src[v];
    }
    __threadfence_system();
}

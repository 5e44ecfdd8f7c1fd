// Shared by the efabench kernels (passed to NVRTC as a named header; nvcc finds it with -I).
#pragma once

// The check pattern. Every 4-byte word is a function of (sender rank, receiver rank, round,
// word index): the host computes the seed of (sender, receiver, round)
// (io.efabench.cuda.CheckPattern.seed) and passes it to the kernels, which derive the words, so
// a chunk at the wrong offset, for another target, from an earlier round or from the wrong
// sender fails, and so does a cleared (zero) buffer: bit 0 is always set. The host fills and
// checks host buffers with the same words (CheckPattern.word).

// Two 32-bit multiplies and xors: cheap enough to generate inside the store loops.
__device__ __forceinline__ unsigned efa_word(unsigned seed, unsigned long long i) {
    return ((unsigned)i * 0x9E3779B1u ^ (unsigned)(i >> 32) * 0x85EBCA77u ^ seed) | 1u;
}

// io.efabench.cuda.CheckPattern.seed, for kernels that fill per target (the proxy's producer).
__device__ __forceinline__ unsigned efa_seed(unsigned sender, unsigned receiver, unsigned long long round) {
    unsigned long long z = round * 0x9E3779B97F4A7C15ull + (sender + 1ull) * 0xBF58476D1CE4E5B9ull
            + (receiver + 1ull) * 0xD6E8FEB86659FD93ull;
    z = (z ^ (z >> 31)) * 0x94D049BB133111EBull;
    return (unsigned)(z ^ (z >> 29));
}

__device__ __forceinline__ uint4 efa_vec(unsigned seed, unsigned long long v) {
    unsigned long long w = v * 4;
    return make_uint4(efa_word(seed, w), efa_word(seed, w + 1), efa_word(seed, w + 2), efa_word(seed, w + 3));
}

__device__ __forceinline__ unsigned long long efa_now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ unsigned long long efa_thread() {
    return (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ unsigned long long efa_threads() {
    return (unsigned long long)gridDim.x * blockDim.x;
}

// Shared by the efabench kernels (passed to NVRTC as a named header; nvcc finds it with -I).
#pragma once

// The GPU check pattern. Every 4-byte word is a function of (sender rank, round, word index),
// so a chunk at the wrong offset, from the wrong round or from the wrong sender fails, and so
// does a cleared (zero) buffer: bit 0 is always set. Mirrored in Java by io.efabench.cuda.GpuPattern.
__device__ __forceinline__ unsigned efa_seed(unsigned rank, unsigned long long round) {
    unsigned long long z = round * 0x9E3779B97F4A7C15ull + (rank + 1ull) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 31)) * 0x94D049BB133111EBull;
    return (unsigned)(z ^ (z >> 29));
}

// Two 32-bit multiplies and xors: cheap enough to generate inside the store loops.
__device__ __forceinline__ unsigned efa_word(unsigned seed, unsigned long long i) {
    return ((unsigned)i * 0x9E3779B1u ^ (unsigned)(i >> 32) * 0x85EBCA77u ^ seed) | 1u;
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

// GPU <-> CPU flag ping-pong through mapped host memory: the floor under a blocking proxy round's extra cost.
// The kernel publishes i in A (GPU->CPU), the CPU answers i in B (CPU->GPU), the kernel waits for B == i.
// usage: pingpong ROUNDS WC PROTOCOL. WC=1: B is write-combined host memory (CPU stores bypass its cache, sfence after);
// PROTOCOL 1: st.release.sys and ld.acquire.sys polls, 0: volatile polls, 2: the proxy kernel's own (proxy.cu: six
// relaxed tagged stores, relaxed polls, one fence.acq_rel.sys). The GPU's globaltimer times each round trip.
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <thread>
#include <atomic>
#include <vector>
#include <algorithm>
#include <immintrin.h>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

__device__ __forceinline__ unsigned long long gtime() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ unsigned long long ld_acq_sys(const unsigned long long* p) { unsigned long long v; asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ unsigned long long ld_vol(const unsigned long long* p) { return *(volatile const unsigned long long*)p; }
__device__ __forceinline__ void st_rel_sys(unsigned long long* p, unsigned long long v) { asm volatile("st.release.sys.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory"); }

__device__ __forceinline__ void st_rlx_sys(unsigned long long* p, unsigned long long v) { asm volatile("st.relaxed.sys.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory"); }
__device__ __forceinline__ unsigned long long ld_rlx_sys(const unsigned long long* p) { unsigned long long v; asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }

// acquire 0: volatile polls; 1: acquire polls; 2: the proxy's own protocol (six relaxed tagged stores, relaxed polls, one fence)
__global__ void pp(unsigned long long* A, const unsigned long long* B, int rounds, int acquire, unsigned long long* out) {
    unsigned long long t0 = gtime();
    for (int i = 1; i <= rounds; i++) {
        unsigned long long s = gtime();
        if (acquire == 2) {
            for (int w = 1; w <= 6; w++) st_rlx_sys(&A[w], i);
            while (ld_rlx_sys(B) < (unsigned long long) i) { }
            asm volatile("fence.acq_rel.sys;" ::: "memory");
            out[i - 1] = gtime() - s;
            continue;
        }
        st_rel_sys(A, i);
        if (acquire) { while (ld_acq_sys(B) < (unsigned long long) i) { } }
        else { while (ld_vol(B) < (unsigned long long) i) { } }
        out[i - 1] = gtime() - s;
    }
    out[rounds] = gtime() - t0;
}

int main(int argc, char** argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 100000;
    int wc = argc > 2 ? atoi(argv[2]) : 0;
    int acquire = argc > 3 ? atoi(argv[3]) : 1;
    unsigned long long *A, *B, *dA, *dB, *out;
    CK(cudaSetDeviceFlags(cudaDeviceMapHost));
    CK(cudaHostAlloc(&A, 4096, cudaHostAllocMapped));
    CK(cudaHostAlloc(&B, 4096, cudaHostAllocMapped | (wc ? cudaHostAllocWriteCombined : 0)));
    *A = 0; *B = 0; _mm_sfence();
    CK(cudaHostGetDevicePointer(&dA, A, 0));
    CK(cudaHostGetDevicePointer(&dB, B, 0));
    CK(cudaMalloc(&out, (rounds + 1) * 8));
    std::atomic<bool> go{false};
    int proto = acquire;
    std::thread cpu([&] {
        volatile unsigned long long* a = A; volatile unsigned long long* b = B;
        go = true;
        for (unsigned long long i = 1; i <= (unsigned long long) rounds; i++) {
            if (proto == 2) { for (int w = 1; w <= 6; w++) while (a[w] < i) { _mm_pause(); } }
            else while (*a < i) { _mm_pause(); }
            *b = i;
            if (wc) _mm_sfence();
        }
    });
    while (!go) {}
    pp<<<1, 1>>>(dA, dB, rounds, acquire, out);
    CK(cudaDeviceSynchronize());
    cpu.join();
    std::vector<unsigned long long> h(rounds + 1);
    CK(cudaMemcpy(h.data(), out, (rounds + 1) * 8, cudaMemcpyDeviceToHost));
    unsigned long long total = h[rounds];
    std::vector<unsigned long long> s(h.begin() + rounds / 10, h.begin() + rounds);
    std::sort(s.begin(), s.end());
    printf("pingpong rounds=%d B=%s poll=%s: mean %.3f us, p50 %.3f us, p10 %.3f, p90 %.3f, p99 %.3f (last 90%%)\n", rounds,
           wc ? "write-combined" : "cached", acquire == 2 ? "proxy protocol: 6 relaxed tagged stores, relaxed polls + fence" : acquire ? "ld.acquire.sys" : "ld.volatile", total / 1000.0 / rounds,
           s[s.size() / 2] / 1000.0, s[s.size() / 10] / 1000.0, s[s.size() * 9 / 10] / 1000.0, s[s.size() * 99 / 100] / 1000.0);
    return 0;
}

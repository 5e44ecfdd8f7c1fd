// Fill and verify the check pattern (efabench.cuh) on the GPU that owns the buffer,
// so that checked rounds compare every byte without a copy to the host.
#include "efabench.cuh"

extern "C" __global__ void fill_pattern(unsigned* dst, unsigned long long nwords, unsigned seed) {
    for (unsigned long long i = efa_thread(); i < nwords; i += efa_threads()) {
        dst[i] = efa_word(seed, i);
    }
}

// result[0] += mismatching words; result[1] = min(first mismatching word index); the host
// sets result = {0, ~0} before the launch.
extern "C" __global__ void verify_pattern(const unsigned* buf, unsigned long long nwords, unsigned seed,
                                          unsigned long long* result) {
    unsigned long long bad = 0;
    unsigned long long first = ~0ull;
    for (unsigned long long i = efa_thread(); i < nwords; i += efa_threads()) {
        if (buf[i] != efa_word(seed, i)) {
            if (bad == 0) {
                first = i;
            }
            bad++;
        }
    }
    if (bad != 0) {
        atomicAdd(&result[0], bad);
        atomicMin(&result[1], first);
    }
}

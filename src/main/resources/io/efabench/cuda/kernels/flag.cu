// Flag kernels: a gate that holds a stream until the host opens it (so that events time the
// GPU work and not the host's enqueueing), and the ping-pong pair for the NVLink flag latency.
// Every wait ends at a deadline (globaltimer) and reports it in *status instead of hanging.

#include "efabench.cuh"

// Spins until the host writes `expected` into its mapped flag. status: 0 ok, 1 timed out.
extern "C" __global__ void wait_host_flag(const volatile unsigned* flag, unsigned expected,
                                          unsigned long long timeout_ns, unsigned* status) {
    unsigned long long start = efa_now_ns();
    while (*flag != expected) {
        if (efa_now_ns() - start > timeout_ns) {
            *status = 1;
            return;
        }
    }
}

// Rank 0: for each round r, store r into the peer's flag (over NVLink) and wait until the peer
// stores r back into ours. status: 0 ok, else the round that got no answer in time.
extern "C" __global__ void flag_ping(volatile unsigned* peer_flag, const volatile unsigned* my_flag,
                                     unsigned first, unsigned rounds, unsigned long long timeout_ns,
                                     unsigned* status) {
    for (unsigned r = first; r != first + rounds; r++) {
        *peer_flag = r;
        unsigned long long start = efa_now_ns();
        while (*my_flag != r) {
            if (efa_now_ns() - start > timeout_ns) {
                *status = r;
                return;
            }
        }
    }
}

// The peer: echoes every new value of its flag into rank 0's flag until it sees `stop`.
// status: 0 stopped, 1 no new value within idle_timeout_ns.
extern "C" __global__ void flag_pong(volatile unsigned* peer_flag, const volatile unsigned* my_flag,
                                     unsigned stop, unsigned long long idle_timeout_ns, unsigned* status) {
    unsigned last = 0;
    unsigned long long since = efa_now_ns();
    while (true) {
        unsigned v = *my_flag;
        if (v == stop) {
            return;
        }
        if (v != last) {
            *peer_flag = v;
            last = v;
            since = efa_now_ns();
        } else if (efa_now_ns() - since > idle_timeout_ns) {
            *status = 1;
            return;
        }
    }
}

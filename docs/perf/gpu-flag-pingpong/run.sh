#!/bin/bash
# The floor under a blocking proxy round's extra cost: a GPU <-> CPU flag ping-pong through mapped
# host memory, in C and CUDA (no Java, no fabric). Run on the GPU machine (nvcc from CUDA 13):
#   docs/perf/gpu-flag-pingpong/run.sh [ROUNDS]
# Protocols: 1 = st.release.sys / ld.acquire.sys polls, 0 = volatile polls, 2 = the proxy kernel's
# own (six relaxed tagged stores, relaxed polls, one fence.acq_rel.sys once the flag is there).
set -eu
cd "$(dirname "$0")"
PATH=/usr/local/cuda/bin:$PATH nvcc -O2 -arch=sm_90 -o /tmp/pingpong pingpong.cu
for p in 1 0 2; do taskset -c 2,3 /tmp/pingpong "${1:-200000}" 0 $p; done

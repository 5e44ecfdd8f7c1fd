#!/usr/bin/env bash
# Builds nccl-tests' alltoall_perf (single process, -g GPUs; no MPI) against the NCCL that PyTorch
# ships (the nvidia-nccl wheel: the same library torch_alltoall.py runs), for this machine's GPU
# architecture only, so the anchor and torch's all_to_all_single use one NCCL.
# Usage: docs/perf/build-nccl-tests.sh SRC OUT_DIR
#   SRC: a nccl-tests checkout or source tarball (github.com/NVIDIA/nccl-tests); OUT_DIR: where
#   alltoall_perf lands, with OUT_DIR/run-alltoall_perf, which runs it on that NCCL (a machine may
#   have another libnccl.so.2 in the loader's default path: the H200 lease has one).
# Environment: NCCL_HOME (a NCCL with include/nccl.h and lib/libnccl.so*; default torch's),
# CUDA_HOME (default /usr/local/cuda), NVCC_GENCODE (default: the visible GPU's sm_XY).
set -euo pipefail
(($# == 2)) || { echo "usage: build-nccl-tests.sh SRC OUT_DIR" >&2; exit 2; }
src=$1 out=$2
cuda=${CUDA_HOME:-/usr/local/cuda}
[[ -x $cuda/bin/nvcc ]] || { echo "build-nccl-tests: no nvcc under $cuda (set CUDA_HOME)" >&2; exit 2; }
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ -d $src ]]; then
    cp -r "$src" "$work/nccl-tests"
else
    mkdir "$work/nccl-tests" && tar xzf "$src" -C "$work/nccl-tests" --strip-components=1
fi
nccl=${NCCL_HOME:-}
if [[ -z $nccl ]]; then
    nccl=$(python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null) ||
        { echo "build-nccl-tests: no NCCL_HOME and no nvidia.nccl Python package (torch's NCCL)" >&2; exit 2; }
fi
[[ -f $nccl/include/nccl.h ]] || { echo "build-nccl-tests: $nccl/include/nccl.h not found" >&2; exit 2; }
lib=$(ls "$nccl"/lib/libnccl.so* 2>/dev/null | head -1)
[[ -n $lib ]] || { echo "build-nccl-tests: no libnccl.so* in $nccl/lib" >&2; exit 2; }
# The wheel ships libnccl.so.2 only: the link step wants libnccl.so.
mkdir -p "$work/nccl/lib"
ln -s "$lib" "$work/nccl/lib/libnccl.so"
ln -s "$nccl/include" "$work/nccl/include"
gencode=${NVCC_GENCODE:-}
if [[ -z $gencode ]]; then
    cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')
    gencode="-gencode=arch=compute_$cc,code=sm_$cc"
fi
make -C "$work/nccl-tests/src" -j"$(nproc)" MPI=0 CUDA_HOME="$cuda" NCCL_HOME="$work/nccl" NVCC_GENCODE="$gencode" \
    BUILDDIR="$work/build" "$work/build/alltoall_perf" > "$out/build.log" 2>&1 ||
    { tail -20 "$out/build.log" >&2; echo "build-nccl-tests: make failed (log $out/build.log)" >&2; exit 1; }
cp "$work/build/alltoall_perf" "$out/"
printf '#!/bin/sh\nLD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %s "$@"\n' "$(dirname "$lib")" \
    "$(cd "$out" && pwd)/alltoall_perf" > "$out/run-alltoall_perf"
chmod +x "$out/run-alltoall_perf"
echo "build-nccl-tests: $out/run-alltoall_perf ($(basename "$lib") from $nccl, $gencode)"

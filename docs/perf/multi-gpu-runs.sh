#!/usr/bin/env bash
# Issue 25's runs on a machine with several GPUs (one per rank), as one device command: builds the
# CUDA libfabric, then ProxyBenchmark on 2 GPUs, all-to-all on 4 GPUs beside NCCL
# (alltoall-vs-nccl.sh), Write DMA configs on 2 and 4 GPUs; each step under a timeout, its output
# in $OUT/<step>.txt as it goes, and every run folder packed into $OUT/runs.tgz at the end (the
# device tool returns a limited number of files: the 2026-11-26 run lost its JSON without this).
# STEPS picks the steps (default "proxy a2a write"; "ipc" is IpcBenchmark's default sweep on 2 GPUs,
# about 7 minutes, so a call of its own). Issues 54 and 55 (one call, about 8 minutes on 4 GPUs):
# STEPS="nvlink nvlink2 moe": "nvlink" is nvlink-alltoall-vs-nccl.sh on every visible GPU (ctas 16,
# 32, 64, nccl-tests' alltoall_perf beside torch when .devcarry/nccl-tests-src.tgz is carried),
# "nvlink2" both NVLink paths at 256M on GPUs 0 and 1 beside IpcBenchmark's copy engine (0.996x
# cudaMemcpyPeerAsync, ipc-nvlink.md) in one run (at 2 ranks nccl_busbw_gbs is the one-direction
# rate in GB/s; IpcBenchmark's gbps is in Gbps: divide by 8), "moe" moe-vs-nccl.sh (uniform and skewed;
# ours over shm and over both NVLink paths) on every visible GPU. Carry .devcarry with jdk/ (jlink runtime), benchmarks.jar,
# build-libfabric-cuda.sh and libfabric-2.6.0-src.tgz (../shared/gpu/README.md).
# Usage on the device: OUT=... [STEPS=...] docs/perf/multi-gpu-runs.sh
set -uo pipefail
[[ -d .devcarry/jdk ]] || tar xzf .devcarry/jdk.tgz -C .devcarry # the runtime may travel packed (jdk.tgz)
export JAVA_HOME=$PWD/.devcarry/jdk EFABENCH_JAR=$PWD/.devcarry/benchmarks.jar EFABENCH_RESULTS=$OUT/results
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
pack() { # one file back instead of hundreds; the step logs stay beside it
    local made; made=$(cd "$OUT" && ls -d results a2a nvlink moe 2>/dev/null)
    [[ -z $made ]] || tar czf "$OUT/runs.tgz" -C "$OUT" $made
    rm -rf "$OUT/results"
    for d in a2a nvlink moe; do [[ -d $OUT/$d ]] && find "$OUT/$d" -mindepth 1 -maxdepth 1 ! -name '*.log' -exec rm -rf {} +; done
    rm -rf "$OUT/nvlink" "$OUT/moe" # their logs are in runs.tgz; at most 8 files come back
}
trap pack EXIT
{ date -u; nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv; nvidia-smi topo -m; nproc
  python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.nccl.version())'; } > "$OUT/machine.txt" 2>&1
STEPS=${STEPS:-proxy a2a write}
wants() { [[ " $STEPS " == *" $1 "* ]]; }
if [[ ! -x /opt/lf/bin/fi_info ]]; then
    el "build libfabric"
    bash .devcarry/build-libfabric-cuda.sh /opt/lf > "$OUT/libfabric-build.txt" 2>&1 || { cat "$OUT/libfabric-build.txt"; exit 1; }
fi
export LD_LIBRARY_PATH=/opt/lf/lib
J="-wi 1 -w 500ms -i 2 -r 500ms"
step() { local name=$1 lim=$2; shift 2; el "$name"; timeout "$lim" "$@" > "$OUT/$name.txt" 2>&1; echo "rc $?" >> "$OUT/$name.txt"; tail -3 "$OUT/$name.txt"; }
wants proxy && step proxy-2gpu 120 ./run-jmh.sh --ranks 2 --provider shm ProxyBenchmark \
    -p config=ProxySingle,DirectSingle,ProxySingleNBI,DirectSingleNBI,ProxyMulti,DirectMulti,ProxyMultiNBI,DirectMultiNBI \
    -p channels=2 -p size=8M,64M,256M -bm sample $J
wants a2a && step alltoall-vs-nccl-4gpu 120 env OUT_DIR="$OUT/a2a" JMH_TIMES="$J" SAMPLES=3 docs/perf/alltoall-vs-nccl.sh 4 1M,16M,64M
wants write && step write-dma-2gpu 60 ./run-jmh.sh --ranks 2 --provider shm WriteBenchmark -p config=SingleDMA,MultiDMA,RoundRobinDMA \
    -p channels=2 -p size=1M,64M -p completion=remote $J
wants write && step write-dma-4gpu 70 ./run-jmh.sh --ranks 4 --provider shm WriteBenchmark -p config=SingleDMA,MultiDMA,RoundRobinDMA \
    -p channels=2 -p size=1M,64M -p completion=remote $J
wants ipc && step ipc-2gpu 520 env CUDA_VISIBLE_DEVICES=0,1 ./run-jmh.sh --ranks 2 IpcBenchmark
gpus=$(nvidia-smi -L | wc -l)
nccl_tests=(); [[ -f .devcarry/nccl-tests-src.tgz ]] && nccl_tests=(NCCL_TESTS_SRC=.devcarry/nccl-tests-src.tgz)
wants nvlink && step "nvlink-alltoall-vs-nccl-${gpus}gpu" 330 env OUT_DIR="$OUT/nvlink" CTAS=16,32,64 ROUNDS=3 \
    JMH_TIMES="$J" "${nccl_tests[@]}" docs/perf/nvlink-alltoall-vs-nccl.sh "$gpus" 64K,1M,16M,64M,256M
wants nvlink2 && step nvlink-256M-vs-copy-engine-2gpu 120 env CUDA_VISIBLE_DEVICES=0,1 ./run-jmh.sh --ranks 2 --provider shm \
    AllToAllBenchmark -p config=SingleDMA -p path=nvlink,nvlink-ce,nvlink-ce-memops -p ctas=32,64 -p size=256M -p window=1 $J
wants nvlink2 && step ipc-copy-engine-256M-2gpu 60 env CUDA_VISIBLE_DEVICES=0,1 ./run-jmh.sh --ranks 2 IpcBenchmark.copyEngine \
    -p size=256M $J
wants moe && step "moe-vs-nccl-${gpus}gpu" 260 env OUT_DIR="$OUT/moe" JMH_TIMES="$J" docs/perf/moe-vs-nccl.sh "$gpus" 4096 \
    uniform,lognormal:2.0,hot:0.5 SingleDMA
el done

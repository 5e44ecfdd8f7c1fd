#!/usr/bin/env bash
# Issue 25's runs on a machine with several GPUs (one per rank), as one device command: builds the
# CUDA libfabric, then ProxyBenchmark on 2 GPUs, all-to-all on 4 GPUs beside NCCL
# (alltoall-vs-nccl.sh), Write DMA configs on 2 and 4 GPUs; each step under a timeout, its output
# in $OUT/<step>.txt as it goes, and every run folder packed into $OUT/runs.tgz at the end (the
# device tool returns a limited number of files: the 2026-11-26 run lost its JSON without this).
# STEPS picks the steps (default "proxy a2a write"; "ipc" is IpcBenchmark's default sweep on 2 GPUs,
# about 7 minutes, so a call of its own). Carry .devcarry with jdk/ (jlink runtime), benchmarks.jar,
# build-libfabric-cuda.sh and libfabric-2.6.0-src.tgz (../shared/gpu/README.md).
# Usage on the device: OUT=... [STEPS=...] docs/perf/multi-gpu-runs.sh
set -uo pipefail
export JAVA_HOME=$PWD/.devcarry/jdk EFABENCH_JAR=$PWD/.devcarry/benchmarks.jar EFABENCH_RESULTS=$OUT/results
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
pack() { # one file back instead of hundreds; the step logs stay beside it
    tar czf "$OUT/runs.tgz" -C "$OUT" results a2a 2>/dev/null
    rm -rf "$OUT/results"; [[ -d $OUT/a2a ]] && find "$OUT/a2a" -mindepth 1 -maxdepth 1 ! -name '*.log' -exec rm -rf {} +
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
el done

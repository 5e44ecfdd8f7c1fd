#!/usr/bin/env bash
# AllToAllBenchmark's device configs next to a real NCCL all-to-all (PyTorch's all_to_all_single,
# NCCL backend, CUDA tensors), side by side in one run on one machine: one GPU per rank, the same
# rank count and per-peer sizes, one all-to-all at a time (our window=1), nccl-tests' alltoall_perf
# formulas on both sides (algbw = size x N / time, busbw = algbw x (N-1)/N, GB/s; ours:
# nccl_algbw_gbs, nccl_busbw_gbs). Ours runs over the CUDA-capable libfabric's shm (CUDA IPC
# copies), NCCL over NVLink with its own kernels, so this compares the two transports a user can
# pick on one node, not the same data path. NVLink multicast is off (NCCL_NVLS_ENABLE=0).
# Needs python3 with PyTorch, JAVA_HOME (JDK or jlink runtime 25), EFABENCH_JAR (or target/) and
# LD_LIBRARY_PATH with a libfabric whose shm offers FI_HMEM (../shared/gpu/README.md).
# Usage: docs/perf/alltoall-vs-nccl.sh [ranks] [sizes] [configs]
#   defaults: 4 "1M,16M,64M" "SingleDMA,MultiDMA,RoundRobinDMA"
# Environment: JMH_TIMES (default -wi 1 -w 1s -i 3 -r 1s), SAMPLES (torch, 3), OUT_DIR (logs and
# JSON, default a temporary folder), TORCH_TIMEOUT_S (per torch rank, 120), CHANNELS (ours, 2).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
ranks=${1:-4}
sizes=${2:-1M,16M,64M}
configs=${3:-SingleDMA,MultiDMA,RoundRobinDMA}
read -ra times <<<"${JMH_TIMES:--wi 1 -w 1s -i 3 -r 1s}"
python3 -c 'import torch' 2>/dev/null || { echo "alltoall-vs-nccl: python3 has no torch module" >&2; exit 2; }
out=${OUT_DIR:-$(mktemp -d)}
mkdir -p "$out"
port=$((29000 + RANDOM % 500))
pids=()
for ((k = 0; k < ranks; k++)); do
    env -u LD_LIBRARY_PATH -u JAVA_TOOL_OPTIONS BACKEND=nccl NCCL_NVLS_ENABLE=0 SAMPLES="${SAMPLES:-3}" \
        RANK=$k LOCAL_RANK=$k WORLD_SIZE=$ranks MASTER_ADDR=127.0.0.1 MASTER_PORT=$port OMP_NUM_THREADS=1 \
        timeout "${TORCH_TIMEOUT_S:-120}" python3 "$here/torch_alltoall.py" "$sizes" > "$out/torch-rank$k.log" 2>&1 &
    pids+=($!)
done
for p in "${pids[@]}"; do
    wait "$p" || { echo "torch rank failed or timed out (logs in $out):"; tail -n 40 "$out"/torch-rank*.log; exit 1; }
done
grep '^torch' "$out/torch-rank0.log"
EFABENCH_RESULTS="$out" "$root/run-jmh.sh" --ranks "$ranks" --provider shm AllToAllBenchmark \
    -p config="$configs" -p size="$sizes" -p window=1 -p channels="${CHANNELS:-2}" "${times[@]}" > "$out/jmh.log" 2>&1 \
    || { echo "AllToAllBenchmark failed:"; tail -30 "$out/jmh.log"; exit 1; }
python3 - "$out"/*/jmh.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1])):
    s = e["secondaryMetrics"]
    f = lambda k: float(s[k]["score"]) if k in s else float("nan")  # JMH writes "NaN" as a string
    print("efabench %-13s %-4s gbps %9.3f (+-%.3f)  round_us %10.2f  nccl_algbw_gbs %8.2f  nccl_busbw_gbs %8.2f"
          "  p50_peer_gbps %9.3f  slowest_rank_gbps %9.3f  checked_rounds %d"
          % (e["params"]["config"], e["params"]["size"], f("gbps"), float(s["gbps"]["scoreError"]), f("round_us"),
             f("nccl_algbw_gbs"), f("nccl_busbw_gbs"), f("p50_peer_gbps"), f("slowest_rank_gbps"), f("checked_rounds")))
PY

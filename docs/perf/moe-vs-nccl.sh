#!/usr/bin/env bash
# MoeBenchmark's device configs next to NCCL doing the same exchange (PyTorch's all_to_all_single
# with uneven split sizes, NCCL backend, CUDA tensors), side by side in one run on one machine:
# one GPU per rank, the same rank count, the same routing (io.efabench.launch.MoeSplits prints
# MoeBenchmark's split sizes; torch_moe.py runs them round by round), one layer at a time, both
# sides' figure the per-rank egress to other ranks over the round (nccl_busbw_gbs, GB/s, mean
# over ranks). Ours runs over the CUDA-capable libfabric's shm (CUDA IPC copies, path=nic) and over
# NVLink itself (path=nvlink: a kernel's stores; nvlink-ce / nvlink-ce-memops: copy engines, flags
# by a kernel / by stream memory operations), NCCL over NVLink.
# PATHS picks ours (default nic,nvlink,nvlink-ce,nvlink-ce-memops; the NVLink paths need SingleDMA).
# NCCL refuses two ranks on one GPU: this needs a machine with `ranks` GPUs (issue 54: not yet run;
# BACKEND=gloo checks the script's mechanics on CPU tensors anywhere).
# Needs python3 with PyTorch, JAVA_HOME (JDK or jlink runtime 25), EFABENCH_JAR (or target/), and
# LD_LIBRARY_PATH with a libfabric whose shm offers FI_HMEM (../shared/gpu/README.md).
# Usage: docs/perf/moe-vs-nccl.sh [ranks] [tokens] [routings] [config]
#   defaults: 4 4096 "uniform,hot:0.5" SingleDMA
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
ranks=${1:-4}
tokens=${2:-4096}
routings=${3:-uniform,hot:0.5}
config=${4:-SingleDMA}
jar=${EFABENCH_JAR:-$root/target/benchmarks.jar}
java=${JAVA_HOME:+$JAVA_HOME/bin/}java
read -ra times <<<"${JMH_TIMES:--wi 1 -w 1s -i 3 -r 1s}"
python3 -c 'import torch' 2>/dev/null || { echo "moe-vs-nccl: python3 has no torch module" >&2; exit 2; }
out=${OUT_DIR:-$(mktemp -d)}
mkdir -p "$out"
for routing in ${routings//,/ }; do
    splits="$out/splits-${routing//:/_}.txt"
    "$java" -cp "$jar" io.efabench.launch.MoeSplits --ranks "$ranks" --tokens "$tokens" --routing "$routing" \
        --dtype "${DTYPE:-BF16}" > "$splits"
    port=$((29000 + RANDOM % 500))
    pids=()
    for ((k = 0; k < ranks; k++)); do
        env -u LD_LIBRARY_PATH -u JAVA_TOOL_OPTIONS BACKEND="${BACKEND:-nccl}" NCCL_NVLS_ENABLE=0 SPLITS="$splits" \
            RANK=$k LOCAL_RANK=$k WORLD_SIZE=$ranks MASTER_ADDR=127.0.0.1 MASTER_PORT=$port OMP_NUM_THREADS=1 \
            timeout "${TORCH_TIMEOUT_S:-180}" python3 "$here/torch_moe.py" > "$out/torch-${routing//:/_}-rank$k.log" 2>&1 &
        pids+=($!)
    done
    for p in "${pids[@]}"; do
        wait "$p" || { echo "torch rank failed or timed out (logs in $out):"; tail -n 30 "$out"/torch-*-rank*.log; exit 1; }
    done
    echo "$routing: $(grep '^torch' "$out/torch-${routing//:/_}-rank0.log")"
done
[ "${BACKEND:-nccl}" = nccl ] || exit 0
EFABENCH_RESULTS="$out" "$root/run-jmh.sh" --ranks "$ranks" --provider shm MoeBenchmark -p config="$config" \
    -p path="${PATHS:-nic,nvlink,nvlink-ce,nvlink-ce-memops}" -p tokens="$tokens" -p routing="$routings" -p dtype="${DTYPE:-BF16}" \
    "${times[@]}" > "$out/jmh.log" 2>&1 \
    || { echo "MoeBenchmark failed:"; tail -30 "$out/jmh.log"; exit 1; }
python3 - "$out"/*/jmh.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1])):
    s = e["secondaryMetrics"]
    f = lambda k: float(s[k]["score"]) if k in s else float("nan")
    print("efabench %-10s %-9s %-12s round_us %10.2f  nccl_busbw_gbs %8.3f  moe_gbs %8.3f  imbalance %.2f  checked_rounds %d"
          % (e["params"]["config"], e["params"]["path"], e["params"]["routing"], f("lat_us"), f("nccl_busbw_gbs"), f("moe_gbs"), f("imbalance"),
             f("checked_rounds")))
PY

#!/usr/bin/env bash
# AllToAllBenchmark SinglePin next to torch.distributed.all_to_all_single (gloo, CPU tensors), side
# by side in one run on one machine: same rank count, same sizes, both over TCP on loopback (our
# tcp provider, gloo's own TCP transport), host memory, one all-to-all at a time (window=1), per
# rank bytes sent to the other ranks / time per all-to-all on rank 0 (docs/perf/torch_alltoall.py).
# Needs python3 with PyTorch, JAVA_HOME (JDK or jlink runtime 25) and EFABENCH_JAR (or target/).
# Usage: docs/perf/alltoall-vs-torch.sh [ranks] [sizes] [rounds]     (defaults: 4 "64K,1M,16M" 1)
# Environment: JMH_TIMES (JMH's -wi/-w/-i/-r; default -wi 3 -w 1s -i 5 -r 1s), SAMPLES (torch, 5),
# OUT_DIR (logs and JSON, default a temporary folder), TORCH_TIMEOUT_S (per torch rank, 120).
# torch runs first and without LD_LIBRARY_PATH / JAVA_TOOL_OPTIONS. Earlier runs hung because
# torch_alltoall.py's warm-up count came from each rank's own clock (ranks ran different
# collectives); a rank that hangs now prints its stack after TORCH_STACKS_AFTER_S (90).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
ranks=${1:-4}
sizes=${2:-64K,1M,16M}
rounds=${3:-1}
read -ra times <<<"${JMH_TIMES:--wi 3 -w 1s -i 5 -r 1s}"
python3 -c 'import torch' 2>/dev/null || { echo "alltoall-vs-torch: python3 has no torch module" >&2; exit 2; }
out_root=${OUT_DIR:-$(mktemp -d)}
torch_side() { # outdir: torch first, in an environment without this suite's LD_LIBRARY_PATH / JAVA_TOOL_OPTIONS
    local out=$1 port=$((29000 + RANDOM % 500)) pids=() k p
    for ((k = 0; k < ranks; k++)); do
        env -u LD_LIBRARY_PATH -u JAVA_TOOL_OPTIONS RANK=$k WORLD_SIZE=$ranks MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
            OMP_NUM_THREADS=1 GLOO_SOCKET_IFNAME=lo timeout "${TORCH_TIMEOUT_S:-120}" \
            python3 "$here/torch_alltoall.py" "$sizes" > "$out/torch-rank$k.log" 2>&1 &
        pids+=($!)
    done
    for p in "${pids[@]}"; do
        wait "$p" || { echo "torch rank failed or timed out (logs in $out):"; tail -n 40 "$out"/torch-rank*.log; return 1; }
    done
    cat "$out/torch-rank0.log"
}
for i in $(seq "$rounds"); do
    out="$out_root/round$i"
    mkdir -p "$out"
    torch_side "$out"
    EFABENCH_RESULTS="$out" "$root/run-jmh.sh" --ranks "$ranks" --provider tcp AllToAllBenchmark \
        -p config=SinglePin -p size="$sizes" -p window=1 "${times[@]}" > "$out/jmh.log" 2>&1 \
        || { echo "AllToAllBenchmark failed:"; tail -30 "$out/jmh.log"; exit 1; }
    python3 - "$out"/*/jmh.json <<'PY'
import json, sys
for e in json.load(open(sys.argv[1])):
    s = e["secondaryMetrics"]
    print("efabench    %-4s gbps %9.3f (+-%.3f)  algbw_gbps %9.3f  lat_us %10.2f  checked_rounds %d  slowest_rank_gbps %.3f"
          % (e["params"]["size"], s["gbps"]["score"], s["gbps"]["scoreError"], s["algbw_gbps"]["score"],
             s["lat_us"]["score"], s["checked_rounds"]["score"], s["slowest_rank_gbps"]["score"]))
PY
done

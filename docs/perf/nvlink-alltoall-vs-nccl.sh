#!/usr/bin/env bash
# AllToAllBenchmark's NVLink paths (path=nvlink: SM stores into the peers' IPC-mapped blocks;
# nvlink-ce: one copy-engine copy per peer, flags by a kernel; nvlink-ce-memops: the same copies,
# flags by stream memory operations) next to NCCL's all_to_all_single (PyTorch, NCCL backend,
# CUDA tensors) on one node, one GPU per rank, rounds alternating (torch, then ours, ROUNDS times) so
# a drift of the machine hits both. Same rank count and per-peer sizes, one all-to-all at a time
# (window=1), nccl-tests' formulas on both sides (busbw = size x N / time x (N-1)/N, GB/s). NCCL's
# call also copies each rank's own block (a local copy ours leaves out). Prints every round's
# busbw per size and side, then the medians and ours/NCCL for the best of our paths (named).
# NVLink multicast is off (NCCL_NVLS_ENABLE=0). Needs python3 with PyTorch, JAVA_HOME (JDK or jlink
# runtime 25), EFABENCH_JAR (or target/), LD_LIBRARY_PATH with a libfabric whose shm offers FI_HMEM
# (the trial opens it; none of these rounds use it).
# Usage: docs/perf/nvlink-alltoall-vs-nccl.sh [ranks] [sizes]
#   defaults: the visible GPUs, "64K,1M,16M,64M,256M"
# Environment: ROUNDS (3), CTAS (ours: one value or several, e.g. 16,32,64; default 32), JMH_TIMES (-wi 1 -w 1s -i 3 -r 1s), SAMPLES (torch, 3),
# OUT_DIR (logs and JSON, default a temporary folder), TORCH_TIMEOUT_S (per torch rank, 180);
# TORCH_BACKEND=gloo checks the script's mechanics where fewer GPUs than ranks are lent (torch on
# CPU tensors, ours with ranks sharing a GPU: neither side's figures mean anything then);
# NCCL_TESTS_SRC (a nccl-tests checkout or tarball): also nccl-tests' alltoall_perf each round, one
# process on the first `ranks` GPUs (-g), built by build-nccl-tests.sh against torch's NCCL, as a
# second anchor (its "nccl-tests" column; the ratio stays against torch's call).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
ranks=${1:-$(nvidia-smi -L | wc -l)}
sizes=${2:-64K,1M,16M,64M,256M}
read -ra times <<<"${JMH_TIMES:--wi 1 -w 1s -i 3 -r 1s}"
python3 -c 'import torch' 2>/dev/null || { echo "nvlink-alltoall-vs-nccl: python3 has no torch module" >&2; exit 2; }
backend=${TORCH_BACKEND:-nccl}
gpus=$(nvidia-smi -L | wc -l)
(( ranks >= 2 )) || { echo "nvlink-alltoall-vs-nccl: an all-to-all needs 2+ ranks" >&2; exit 2; }
[[ $backend != nccl ]] || (( ranks <= gpus )) || { echo "nvlink-alltoall-vs-nccl: $ranks ranks, $gpus GPUs visible:"\
    "NCCL refuses two ranks on one GPU (TORCH_BACKEND=gloo checks the mechanics only)" >&2; exit 2; }
out=${OUT_DIR:-$(mktemp -d)}
mkdir -p "$out"
if [[ -n ${NCCL_TESTS_SRC:-} ]]; then
    (( ranks <= gpus )) || { echo "nvlink-alltoall-vs-nccl: alltoall_perf needs $ranks GPUs, $gpus visible" >&2; exit 2; }
    "$here/build-nccl-tests.sh" "$NCCL_TESTS_SRC" "$out/nccl-tests"
fi
bytes() { local z=$1; case $z in *K) echo $((${z%K} << 10));; *M) echo $((${z%M} << 20));; *G) echo $((${z%G} << 30));; *) echo "$z";; esac; }
for ((round = 1; round <= ${ROUNDS:-3}; round++)); do
    port=$((29000 + RANDOM % 500))
    pids=()
    for ((k = 0; k < ranks; k++)); do
        env -u LD_LIBRARY_PATH -u JAVA_TOOL_OPTIONS BACKEND=$backend NCCL_NVLS_ENABLE=0 SAMPLES="${SAMPLES:-3}" \
            RANK=$k LOCAL_RANK=$k WORLD_SIZE=$ranks MASTER_ADDR=127.0.0.1 MASTER_PORT=$port OMP_NUM_THREADS=1 \
            timeout "${TORCH_TIMEOUT_S:-180}" python3 "$here/torch_alltoall.py" "$sizes" > "$out/torch-$round-rank$k.log" 2>&1 &
        pids+=($!)
    done
    for p in "${pids[@]}"; do
        wait "$p" || { echo "torch rank failed or timed out (logs in $out):"; tail -n 40 "$out"/torch-$round-rank*.log; exit 1; }
    done
    grep '^torch' "$out/torch-$round-rank0.log" | sed "s/^/round $round /"
    if [[ -n ${NCCL_TESTS_SRC:-} ]]; then
        # alltoall_perf's size is what one rank sends in all (per peer x ranks); -c 1 checks the data.
        for z in ${sizes//,/ }; do
            total=$(($(bytes "$z") * ranks))
            NCCL_NVLS_ENABLE=0 "$out/nccl-tests/run-alltoall_perf" -g "$ranks" -b "$total" -e "$total" -n 20 -w 5 -c 1 \
                > "$out/nccl-tests-$round-$z.log" 2>&1 || { echo "alltoall_perf failed:"; tail -20 "$out/nccl-tests-$round-$z.log"; exit 1; }
            awk -v z="$z" -v r="$round" '$1 ~ /^[0-9]+$/ && NF >= 9 { if ($9 != 0) { print "alltoall_perf: " $9 " wrong elements"; exit 1 }
                print "round " r " nccl-tests " z " busbw_gbs " $8; exit }' "$out/nccl-tests-$round-$z.log"
        done
    fi
    mkdir -p "$out/ours-$round"
    EFABENCH_RESULTS="$out/ours-$round" "$root/run-jmh.sh" --ranks "$ranks" --provider shm AllToAllBenchmark \
        -p config=SingleDMA -p path=nvlink,nvlink-ce,nvlink-ce-memops -p size="$sizes" -p window=1 -p ctas="${CTAS:-32}" "${times[@]}" \
        > "$out/ours-$round.log" 2>&1 || { echo "AllToAllBenchmark failed:"; tail -30 "$out/ours-$round.log"; exit 1; }
done
python3 - "$out" <<'PY'
import glob, json, os, re, statistics, sys
out = sys.argv[1]
rows = {}  # (side, size) -> [busbw per round]
for log in sorted(glob.glob(out + "/torch-*-rank0.log")):
    for line in open(log):
        m = re.match(r"torch \S+ (\S+)\s.*nccl_busbw_gbs\s+([\d.]+)", line)
        if m:
            rows.setdefault(("nccl", m.group(1)), []).append(float(m.group(2)))
anchor = {}  # size -> [nccl-tests busbw per round]
for log in sorted(glob.glob(out + "/nccl-tests-*.log")):
    m = re.match(r".*/nccl-tests-\d+-(\w+)\.log$", log)
    for line in open(log):
        f = line.split()
        if m and len(f) >= 9 and f[0].isdigit():
            anchor.setdefault(m.group(1), []).append(float(f[7]))
            break
for js in sorted({os.path.realpath(j) for j in glob.glob(out + "/ours-*/*/jmh.json")}):  # "latest" links to a run
    for e in json.load(open(js)):
        s = e["secondaryMetrics"]
        if s.get("checked_rounds", {}).get("score", 0) < 1:
            sys.exit("ours did not verify: " + json.dumps(e["params"]))
        p = e["params"]
        side = p["path"] if p["path"] != "nvlink" else "nvlink ctas=" + p["ctas"]  # CTAS may list several
        rows.setdefault((side, p["size"]), []).append(float(s["nccl_busbw_gbs"]["score"]))
sizes = sorted({k[1] for k in rows}, key=lambda z: int(z[:-1]) * {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[z[-1]])
ours = sorted({k[0] for k in rows if k[0] != "nccl"})
print("%-5s %10s %11s " % ("size", "nccl", "nccl-tests") + " ".join("%16s" % o for o in ours) + "  %-16s %6s" % ("best", "ratio"))
for z in sizes:
    med = {side: statistics.median(rows[(side, z)]) for side in ["nccl"] + ours if (side, z) in rows}
    best = max((o for o in ours if o in med), key=lambda o: med[o])
    at = statistics.median(anchor[z]) if z in anchor else float("nan")
    print("%-5s %10.2f %11.2f " % (z, med.get("nccl", float("nan")), at) + " ".join("%16.2f" % med.get(o, float("nan")) for o in ours)
          + "  %-16s %6.3f" % (best, med[best] / med["nccl"] if "nccl" in med else float("nan")))
print("every round (busbw GB/s):", {"%s %s" % k: v for k, v in sorted(rows.items())},
      {"nccl-tests " + z: v for z, v in sorted(anchor.items())})
PY

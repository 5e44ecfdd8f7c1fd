#!/usr/bin/env bash
# WriteBenchmark (SinglePin, completion=local, channels=1, 2 ranks) next to fi_rma_bw -o writedata,
# same provider (shm), same library (/opt/libfabric-2.6 for both, through LD_LIBRARY_PATH), same
# machine, run back to back; window=W next to -W W. Prints one line per (window, size, tool): the
# payload bandwidth in Gbps (fi_rma_bw's MB/sec x 8 / 1000; our gbps), then our/fi_rma_bw.
# Footprint matched: fi_rma_bw writes each write of a window to its own region (W x size per side),
# WriteBenchmark gets -p slots=W (W distinct regions, the window never capped below W).
# Both post writes up to the provider's inject size (shm: 4 KiB) with fi_inject_writedata (ours:
# WriteBenchmark's default -p inject=true), larger ones with a completion.
# Each side of both tools is pinned to its own CPU (client/rank 0 on CPU_A, default 0; server/rank 1
# on CPU_B, default 1). On a host with SMT, give them CPUs of two different cores, away from CPU 0.
# fabtests need -E (out-of-band address exchange) for shm on one host; the client is started once
# the server listens, and the script waits for the server by its pid.
# PIN=0 runs both tools unpinned (taskset off): a pinned JVM shares its CPU with its JIT, GC and
# JMH's host JVM, and was measured 3x slower than unpinned at 4K here while fi_rma_bw was not.
# Usage: [PIN=0] [CPU_A=a CPU_B=b] docs/perf/write-vs-fi_rma_bw.sh [target/benchmarks.jar] [rounds] [windows] [sizes]
#   e.g. docs/perf/write-vs-fi_rma_bw.sh target/benchmarks.jar 2 "64 1" "64 4K 64K 1M"
set -euo pipefail
jar=${1:-target/benchmarks.jar}
rounds=${2:-2}
windows=${3:-"64 1"}
sizes=${4:-"64 4K 64K 1M"}
lib=${LIBFABRIC_HOME:-/opt/libfabric-2.6}
java_home=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
java="$java_home/bin/java"
export LD_LIBRARY_PATH="$lib/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
declare -A fab
# pin SIDE cmd...: SIDE 0 (client, rank 0) runs on CPU_A, SIDE 1 (server, rank 1) on CPU_B.
cpus=("${CPU_A:-0}" "${CPU_B:-1}")
pin() { if [ "${PIN:-1}" = 0 ]; then "${@:2}"; else taskset -c "${cpus[$1]}" "${@:2}"; fi; }

bytes() { case "$1" in *K) echo $(( ${1%K} << 10 )) ;; *M) echo $(( ${1%M} << 20 )) ;; *) echo "$1" ;; esac; }

iters() { # fi_rma_bw iterations for roughly 1-2 s at the given window and size
    local n; case "$2" in 64) n=2000000 ;; 4K) n=1000000 ;; 64K) n=100000 ;; 1M) n=10000 ;; 16M) n=1024 ;; 64M) n=256 ;; *) n=100000 ;; esac
    [ "$1" = 1 ] && n=$((n / 4))
    echo "$n"
}

fi_bw() { # window size-label
    local port=$((47600 + RANDOM % 1000)) n b; n=$(iters "$1" "$2"); b=$(bytes "$2")
    pin 1 "$lib/bin/fi_rma_bw" -p shm -e rdm -o writedata -W "$1" -S "$b" -I "$n" -E="$port" >"$out/srv.log" 2>&1 &
    local srv=$!
    # -E: the server listens on the out-of-band port; wait until it does (or died).
    for _ in $(seq 100); do
        ss -ltn 2>/dev/null | grep -q ":$port " && break
        kill -0 "$srv" 2>/dev/null || break
        sleep 0.05
    done
    local mbps
    mbps=$(pin 0 "$lib/bin/fi_rma_bw" -p shm -e rdm -o writedata -W "$1" -S "$b" -I "$n" -E="$port" localhost \
        | awk '$1 != "bytes" && NF >= 7 {print $5}' | tail -1)
    wait "$srv"
    fab["$1/$2"]=$(awk -v m="$mbps" 'BEGIN {printf "%.2f", m * 8 / 1000}')
    printf "W=%-3s %-4s fi_rma_bw          gbps %8.2f  (%s iterations)\n" "$1" "$2" "${fab[$1/$2]}" "$n"
}

ours() { # window size-labels...
    local w=$1; shift
    local port=$((29600 + RANDOM % 1000)) list; list=$(IFS=,; echo "$*")
    for k in 0 1; do
        RANK=$k WORLD_SIZE=2 LOCAL_RANK=$k LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
            FI_PROVIDER=shm EFABENCH_LOOPBACK=1 LD_PRELOAD="$java_home/lib/libjsig.so" \
            pin "$k" "$java" -Djmh.ignoreLock=true -jar "$jar" WriteBenchmark -p config=SinglePin \
            -p completion="${COMPLETION:-local}" -p channels=1 -p window="$w" -p slots="$w" -p size="$list" \
            -f 1 -wi 3 -w 1s -i 5 -r 1s -foe true -prof io.efabench.harness.MetricsProfiler \
            -rf json -rff "$out/rank$k.json" >"$out/rank$k.log" 2>&1 &
    done
    wait
    python3 - "$out/rank0.json" "$w" "$(declare -p fab)" <<'PY'
import json, re, sys
w = sys.argv[2]
fab = dict(re.findall(r'\[([^]]+)\]="([^"]*)"', sys.argv[3]))
for e in json.load(open(sys.argv[1])):
    size = e["params"]["size"]
    m = e["secondaryMetrics"]["gbps"]
    err = m["scoreError"] if m["scoreError"] == m["scoreError"] else 0
    ref = float(fab.get(w + "/" + size, "nan"))
    print("W=%-3s %-4s WriteBenchmark     gbps %8.2f  (+/- %.2f, 5 x 1 s avgt)   ratio %.2fx"
          % (w, size, m["score"], err, m["score"] / ref if ref == ref and ref > 0 else float("nan")))
PY
}

for _ in $(seq "$rounds"); do
    for w in $windows; do
        for s in $sizes; do
            fi_bw "$w" "$s"
        done
        # shellcheck disable=SC2086
        ours "$w" $sizes
    done
done

#!/usr/bin/env bash
# SendRecvBenchmark next to fi_pingpong (libfabric-bin), same provider, size and machine,
# run back to back. Prints one line per (provider, size, tool): one-way latency in us
# (fi_pingpong's usec/xfer = half a round trip = our lat_us) and the JMH error.
# Each side of both tools is pinned to its own CPU (server/rank 1 on CPU 1, client/rank 0 on
# CPU 0) so that the scheduler never puts the two spinning peers on one core.
# Usage: docs/perf/sendrecv-vs-fi_pingpong.sh [target/benchmarks.jar] [rounds]
set -euo pipefail
jar=${1:-target/benchmarks.jar}
rounds=${2:-2}
java_home=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
java="$java_home/bin/java"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

iters() { # fi_pingpong iterations for about 5 s at the given size and provider
    case "$1/$2" in
        tcp/4K) echo 40000 ;; tcp/1M) echo 2000 ;; shm/4K) echo 400000 ;; shm/1M) echo 20000 ;;
    esac
}

fi_pp() { # provider size-label bytes
    local port=$((47600 + RANDOM % 1000)) n; n=$(iters "$1" "$2")
    taskset -c 1 fi_pingpong -p "$1" -e rdm -I "$n" -S "$3" -B "$port" >/dev/null 2>&1 &
    local srv=$!
    sleep 0.5
    taskset -c 0 fi_pingpong -p "$1" -e rdm -I "$n" -S "$3" -P "$port" 127.0.0.1 | awk -v p="$1" -v s="$2" \
        'NR==2 {printf "%-4s %-3s fi_pingpong       lat_us %9.2f  (%s iterations, usec/xfer)\n", p, s, $7, $2}'
    wait "$srv"
}

ours() { # provider size-label
    local port=$((29600 + RANDOM % 1000))
    for k in 0 1; do
        env RANK=$k WORLD_SIZE=2 LOCAL_RANK=$k LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
            FI_PROVIDER="$1" EFABENCH_LOOPBACK=1 LD_PRELOAD="$java_home/lib/libjsig.so" \
            taskset -c "$k" "$java" -Djmh.ignoreLock=true -jar "$jar" SendRecvBenchmark -p size="$2" \
            -f 1 -wi 3 -w 2s -i 5 -r 2s -foe true -prof io.efabench.harness.MetricsProfiler \
            -rf json -rff "$out/rank$k.json" >"$out/rank$k.log" 2>&1 &
    done
    wait
    python3 - "$out/rank0.json" "$1" "$2" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))[0]
m = e["secondaryMetrics"]["lat_us"]
print("%-4s %-3s SendRecvBenchmark lat_us %9.2f  (+/- %.2f, %s)" % (sys.argv[2], sys.argv[3], m["score"], m["scoreError"] if m["scoreError"] == m["scoreError"] else 0, "5 x 2 s, avgt"))
PY
}

for _ in $(seq "$rounds"); do
    for p in tcp shm; do
        for s in 4K:4096 1M:1048576; do
            fi_pp "$p" "${s%%:*}" "${s##*:}"
            ours "$p" "${s%%:*}"
        done
    done
done

#!/usr/bin/env bash
# Device memory over the fabric, side by side with the C peers, in one run on one machine:
#   WriteBenchmark  SingleDMA  completion=local  vs  fi_rma_bw -o writedata -D cuda -R -W <window>
#   SendRecvBenchmark SingleDevice               vs  fi_rdm_pingpong -D cuda -R
# Same provider (shm by default: two processes on one GPU), same sizes (4K, 1M, 64M), device
# memory registered through DMA-BUF on both sides (-R), one channel, and the same number of
# writes in flight: WINDOW (default 64, fabtests' default) is both fi_rma_bw's -W and
# WriteBenchmark's -p window. Each side of each tool is pinned to its own CPU.
# Prints one line per (benchmark, size, tool): Gbps (1e9 bit/s) and, for ping-pong, the one-way
# latency in us (fabtests' usec/xfer = half a round trip = our lat_us), then the ratio ours/C.
#
# Needs a CUDA-capable libfabric and its fabtests on PATH / LD_LIBRARY_PATH
# (../shared/gpu/build-libfabric-cuda.sh), JAVA_HOME with a JDK or jlink runtime 25.
# Usage: docs/perf/device-vs-fabtests.sh [target/benchmarks.jar] [rounds] [outdir]
# Environment: BENCHES ("write sendrecv"), PROVIDER (shm), WINDOW (64), CPU_A / CPU_B (2 / 3), JMH_TIMES (JMH's -wi/-w/-i/-r),
# MEMORY (cuda, or host: SinglePin / SingleHost and fabtests without -D cuda -R), FAB_WINDOW (fi_rma_bw's -W, default
# WINDOW: a larger one amortizes fi_rma_bw's per-window sync, a device-memory message under -D cuda), SIZES,
# FAB_ITERS (fi_rma_bw's -I; default about a second's worth, at least 10 windows).
# COMPLETION: WriteBenchmark's completion (default local; remote ends every window at the target's ack, as
# fi_rma_bw's window ends at its server's sync message). WriteBenchmark gets -p slots=SLOTS (default WINDOW): as many distinct regions as fi_rma_bw's window of
# buffers; SLOTS=FAB_WINDOW matches fi_rma_bw's footprint when FAB_WINDOW > WINDOW.
# EXTRA: JVM flags for our benchmark forks (JMH -jvmArgsAppend), for A/B runs of JVM settings.
# PIN_SPARE="S_A S_B": each JVM starts on its own spare CPU and only its benchmark thread is moved to
# CPU_A / CPU_B, so JIT, GC and JMH's helper threads never run on the polling CPU (issue 19: no
# difference measured on an H100 host). SKIP_C=1: ours only, no fabtests beside it.
set -euo pipefail
jar=${1:-target/benchmarks.jar}
rounds=${2:-1}
out=${3:-$(mktemp -d)}
provider=${PROVIDER:-shm}
window=${WINDOW:-64}
fab_window=${FAB_WINDOW:-$window}
slots=${SLOTS:-$window}
memory=${MEMORY:-cuda}
fab_mem=(-D cuda -R)
write_config=SingleDMA
pp_config=SingleDevice
if [[ $memory == host ]]; then fab_mem=(); write_config=SinglePin; pp_config=SingleHost; fi
java_home=${JAVA_HOME:?set JAVA_HOME to a Java 25 runtime}
java="$java_home/bin/java"
mkdir -p "$out"
cpu_a=${CPU_A:-2}
cpu_b=${CPU_B:-3}
read -ra sizes <<<"${SIZES:-4K:4096 1M:1048576 64M:67108864}"

iters() { # tool size-label: fabtests iterations for a second or so, about one of our measurement
    # iterations (shm moves device memory by CUDA IPC: ~0.3 ms per ping-pong, ~0.37 ms at 64M;
    # fi_rma_bw's 64M writes pipeline to ~45 us each)
    # (host memory: ~2 us per 4K ping-pong on shm); at least 10 windows of fi_rma_bw.
    local n
    case "$memory/$1/$2" in
        host/fi_rdm_pingpong/4K) n=500000 ;; host/fi_rdm_pingpong/1M) n=20000 ;; host/fi_rdm_pingpong/64M) n=300 ;;
        host/fi_rma_bw/64) n=4000000 ;; host/fi_rma_bw/4K) n=1000000 ;; host/fi_rma_bw/64K) n=100000 ;;
        host/fi_rma_bw/1M) n=5000 ;;
        */fi_rma_bw/64M) n=300 ;; */fi_rma_bw/1M) n=2000 ;; *) n=3000 ;;
    esac
    [[ $1 == fi_rma_bw ]] && ((n < 10 * fab_window)) && n=$((10 * fab_window))
    [[ $1 == fi_rma_bw && -n ${FAB_ITERS:-} ]] && n=$FAB_ITERS
    echo "$n"
}

# fabtests print a header and one line: bytes iters total time MB/sec usec/xfer Mxfers/sec
fabtest() { # tool label size-label bytes extra-args...
    local tool=$1 label=$2 sl=$3 bytes=$4; shift 4
    local n; n=$(iters "$tool" "$sl")
    local log="$out/$tool-$sl.log"
    taskset -c "$cpu_b" "$tool" -p "$provider" -e rdm "${fab_mem[@]}" -S "$bytes" -I "$n" -E "$@" >"$log.server" 2>&1 &
    local srv=$!
    sleep 1
    taskset -c "$cpu_a" "$tool" -p "$provider" -e rdm "${fab_mem[@]}" -S "$bytes" -I "$n" -E "$@" localhost >"$log" 2>&1 || {
        echo "$tool $sl failed:"; cat "$log" "$log.server"; kill "$srv" 2>/dev/null; return 1; }
    wait "$srv"
    # Read from the end of the line: above ~1 TB/s the MB/sec column runs into the time column
    # ("0.01s1132000.00"), so only usec/xfer and Mxfers/sec are at fixed places. Gbps comes from
    # MB/sec (bytes per us, two decimals) where it stands alone: usec/xfer has two decimals too,
    # which at 64 B (0.2 us) is a 2-5% step; only a merged column falls back to it.
    awk -v t="$label" -v s="$sl" -v b="$bytes" '$1 ~ /^[0-9]/ && NF >= 6 {
        g = (NF >= 7 && $(NF - 2) ~ /^[0-9.]+$/) ? $(NF - 2) * 8 / 1000 : b * 8 / ($(NF - 1) * 1000)
        printf "%-9s %-4s %-26s gbps %9.3f  lat_us %9.3f\n", t, s, "C", g, $(NF - 1) }' "$log"
}

pin_hot() { # until killed: moves each fork's benchmark thread to its rank's CPU (CPU_A for RANK=0, CPU_B for 1)
    local p t tid r want
    while :; do
        for p in $(pgrep -f ForkedMain); do
            r=$(tr '\0' '\n' </proc/$p/environ 2>/dev/null | sed -n 's/^RANK=//p')
            [[ -z $r ]] && continue
            want=$cpu_a; ((r == 1)) && want=$cpu_b
            for t in /proc/$p/task/*; do
                [[ $(cat "$t/comm" 2>/dev/null) == io.efabench.be* ]] || continue
                tid=${t##*/}
                # || true: under set -e a thread that ended meanwhile would stop the watcher
                [[ $(taskset -pc "$tid" 2>/dev/null | awk '{print $NF}') == "$want" ]] || taskset -pc "$want" "$tid" >/dev/null 2>&1 || true
            done
        done
        sleep 0.2
    done
}

ours() { # benchmark label jmh-args...
    local bench=$1 label=$2; shift 2
    local port=$((29600 + RANDOM % 1000)) k times
    read -ra times <<<"${JMH_TIMES:--wi 3 -w 2s -i 5 -r 1s}"
    local -a launch_cpu=("$cpu_a" "$cpu_b") pids=()
    [[ -n ${PIN_SPARE:-} ]] && read -ra launch_cpu <<<"$PIN_SPARE" # see the header
    for k in 0 1; do
        env RANK=$k WORLD_SIZE=2 LOCAL_RANK=$k LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
            FI_PROVIDER="$provider" EFABENCH_LOOPBACK=1 LD_PRELOAD="$java_home/lib/libjsig.so" \
            taskset -c "${launch_cpu[$k]}" "$java" -Djmh.ignoreLock=true --enable-native-access=ALL-UNNAMED -jar "$jar" "$bench" \
            -p size="$(printf '%s\n' "${sizes[@]}" | cut -d: -f1 | paste -sd,)" "$@" -f 1 "${times[@]}" -foe true \
            ${EXTRA:+-jvmArgsAppend "$EXTRA"} -prof io.efabench.harness.MetricsProfiler -rf json -rff "$out/$bench-rank$k.json" \
            >"$out/$bench-rank$k.log" 2>&1 &
        pids+=($!)
    done
    local w=""
    if [[ -n ${PIN_SPARE:-} ]]; then pin_hot & w=$!; fi
    local rc=0
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
    [[ -z $w ]] || kill "$w" 2>/dev/null || true # under set -e a failed kill would end the script with no result
    if ((rc)); then
        echo "$bench failed:"; tail -30 "$out/$bench-rank0.log" "$out/$bench-rank1.log"; return 1
    fi
    python3 - "$out/$bench-rank0.json" "$label" <<'PY'
import json, sys
for e in json.load(open(sys.argv[1])):
    s = e["secondaryMetrics"]
    lat = "%9.3f" % s["lat_us"]["score"] if "lat_us" in s else "%9s" % "-"  # lat_us only where one op is in flight
    print("%-9s %-4s %-26s gbps %9.3f  lat_us %s  (checked_rounds %d)" % (sys.argv[2], e["params"]["size"],
          "efabench " + e["params"]["config"], s["gbps"]["score"], lat, s["checked_rounds"]["score"]))
PY
}

benches=${BENCHES:-write sendrecv}
for _ in $(seq "$rounds"); do
    if [[ " $benches " == *" write "* ]]; then
        ours WriteBenchmark write -p config=$write_config -p completion="${COMPLETION:-local}" -p channels=1 -p window="$window" -p slots="$slots"
        [[ -n ${SKIP_C:-} ]] || for s in "${sizes[@]}"; do fabtest fi_rma_bw write "${s%%:*}" "${s##*:}" -o writedata -W "$fab_window"; done
    fi
    if [[ " $benches " == *" sendrecv "* ]]; then
        ours SendRecvBenchmark sendrecv -p config=$pp_config
        for s in "${sizes[@]}"; do fabtest fi_rdm_pingpong sendrecv "${s%%:*}" "${s##*:}"; done
    fi
done

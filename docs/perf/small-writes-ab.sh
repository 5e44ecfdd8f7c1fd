#!/bin/bash
# Usage: OUT=dir [SIZES=64,4K] [COMPLETION=local] [ROUNDS=3] [CPU_A=2 CPU_B=3] docs/perf/small-writes-ab.sh
# (with .devcarry/jdk, .devcarry/before.jar, .devcarry/benchmarks.jar). Before / after jars, rounds
# interleaved, ranks pinned to CPU_A / CPU_B: SinglePin window 64, slots 64, shm, whatever libfabric
# LD_LIBRARY_PATH finds (the system's by default).
set -u
cd "$(dirname "$0")/../.."
jh=$PWD/.devcarry/jdk
lscpu | grep "Model name"; ldconfig -p | grep libfabric | head -2
run() { # tag jar round
  local port=$((29600 + RANDOM % 1000)) k
  for k in 0 1; do
    env RANK=$k WORLD_SIZE=2 LOCAL_RANK=$k LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      FI_PROVIDER=shm EFABENCH_LOOPBACK=1 LD_PRELOAD="$jh/lib/libjsig.so" \
      taskset -c $(( k == 0 ? ${CPU_A:-2} : ${CPU_B:-3} )) "$jh/bin/java" -Djmh.ignoreLock=true --enable-native-access=ALL-UNNAMED -jar "$2" WriteBenchmark \
      -p config=SinglePin -p completion=${COMPLETION:-local} -p channels=1 -p window=64 -p slots=64 -p size=${SIZES:-64,4K} -f 1 -wi 3 -w 1s -i 5 -r 1s \
      -foe true -prof io.efabench.harness.MetricsProfiler -rf json -rff $OUT/$1-$3-rank$k.json > $OUT/$1-$3-rank$k.log 2>&1 &
  done
  wait
  echo "$1 round $3:"; grep -E '^WriteBenchmark.write:gbps' $OUT/$1-$3-rank0.log
}
for r in $(seq "${ROUNDS:-3}"); do run before .devcarry/before.jar $r; run after .devcarry/benchmarks.jar $r; done

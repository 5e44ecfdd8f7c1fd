#!/bin/bash
# Usage (GPU host, from the repository root, after ../shared/gpu/build-libfabric-cuda.sh /opt/lf, with .devcarry/jdk,
# .devcarry/benchmarks.jar and async-profiler as .devcarry/libap.so): OUT=dir LD_LIBRARY_PATH=/opt/lf/lib docs/perf/profile-64B.sh
# 64 B, window 64, shm, libfabric 2.6 (/opt/lf), ranks on CPUs 2/3, both profiled with async-profiler (cpu), collapsed stacks.
set -u
jh=$PWD/.devcarry/jdk
port=$((29600 + RANDOM % 1000))
for k in 0 1; do
  env RANK=$k WORLD_SIZE=2 LOCAL_RANK=$k LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    FI_PROVIDER=shm EFABENCH_LOOPBACK=1 LD_PRELOAD="$jh/lib/libjsig.so" \
    taskset -c $((k + 2)) $jh/bin/java -Djmh.ignoreLock=true --enable-native-access=ALL-UNNAMED -jar .devcarry/benchmarks.jar WriteBenchmark \
    -p config=SinglePin -p completion=local -p channels=1 -p window=64 -p slots=64 -p size=64 -f 1 -wi 3 -w 1s -i 5 -r 1s -foe true \
    -prof "async:libPath=$PWD/.devcarry/libap.so;output=collapsed;event=cpu;interval=100000;dir=$OUT/prof-rank$k" \
    -prof io.efabench.harness.MetricsProfiler > $OUT/prof-rank$k.log 2>&1 &
done
wait
grep -E "^WriteBenchmark.write:gbps" $OUT/prof-rank0.log
for k in 0 1; do
  f=$(find $OUT/prof-rank$k -name "collapsed-cpu.csv" | head -1)
  echo "== rank $k self: total $(awk '{s+=$NF} END {print s}' $f)"
  awk '{n=$NF; $NF=""; m=split($0, fr, ";"); leaf=fr[m]; gsub(/ +$/,"",leaf); self[leaf]+=n} END {for (l in self) print self[l], l}' $f | sort -rn | head -15
  echo "== rank $k inclusive (java frames)"
  awk '{n=$NF; $NF=""; m=split($0, fr, ";"); delete seen; for (i=1;i<=m;i++) {g=fr[i]; gsub(/ +$/,"",g); if (g ~ /efabench/ && !(g in seen)) {seen[g]=1; inc[g]+=n}}} END {for (l in inc) print inc[l], l}' $f | sort -rn | head -15
done

#!/bin/bash
# Carry (git-ignored .gpu3/): jdk.tgz (jlink java.base,java.management,jdk.unsupported, tarred: 22 MB),
# benchmarks.jar, build-libfabric-cuda.sh and libfabric-2.6.0-src.tgz from ../shared/gpu/; run as
# `bash .gpu3/moe.sh` with this file copied there (results under $OUT/moe-gpu.tgz).
# issue 54: MoeBenchmark with device memory on the GPU host: ranks sharing one H200 over shm
# (libfabric 2.6 with CUDA), every routing verified; a corrupted token in device memory named.
cd "$(dirname "$0")/.."
O=${OUT:-/tmp/out}; mkdir -p $O/moe
[ -f /opt/libfabric-cuda/lib/libfabric.so ] || bash .gpu3/build-libfabric-cuda.sh /opt/libfabric-cuda > $O/moe/build.log 2>&1 || { tail -20 $O/moe/build.log; exit 1; }
export LD_LIBRARY_PATH=/opt/libfabric-cuda/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=/opt/libfabric-cuda/bin:$PATH
[ -x /tmp/jdk3/bin/java ] || tar xzf .gpu3/jdk.tgz -C /tmp
J=/tmp/jdk3/bin/java
nvidia-smi --query-gpu=index,pci.bus_id,name --format=csv,noheader | tee $O/moe/gpu.txt
nproc >> $O/moe/gpu.txt
run() {  # run NAME RANKS JMH-ARGS...   (EXTRA_ENV for every rank)
  local name=$1 n=$2; shift 2; local port=$((20000 + RANDOM % 10000)) k pids=()
  for ((k = 0; k < n; k++)); do
    env ${EXTRA_ENV:-} LD_PRELOAD=/tmp/jdk3/lib/libjsig.so RANK=$k WORLD_SIZE=$n LOCAL_RANK=$k LOCAL_WORLD_SIZE=$n \
      MASTER_ADDR=127.0.0.1 MASTER_PORT=$port FI_PROVIDER=shm EFABENCH_LOOPBACK=1 EFABENCH_TIMEOUT_S=60 \
      $J -Djmh.ignoreLock=true --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow \
      -jar .gpu3/benchmarks.jar MoeBenchmark "$@" -rf json -rff $O/moe/$name-rank$k.json > $O/moe/$name-rank$k.log 2>&1 &
    pids+=($!)
  done
  local codes=()
  for k in "${!pids[@]}"; do wait ${pids[$k]}; codes+=($?); done
  echo "== $name: exit codes ${codes[*]}"
  grep -E "^MoeBenchmark.*(dispatchAndCombine |checked_rounds|imbalance|moe_gbs|moe_wire_gbs|nccl_busbw|slowest_rank_us)" $O/moe/$name-rank0.log | awk '{$1=$1};1' | sed 's/MoeBenchmark.dispatchAndCombine//; s/ auto / /; s/ 256 7168 nic / /' | cut -c1-150
  grep -hE "efabench: .*(corrupted|reach at most|registered through)" $O/moe/$name-rank*.log | sort | uniq -c | head -6
}
T=(-f 1 -wi 1 -w 1s -i 3 -r 1s -foe true -prof io.efabench.harness.MetricsProfiler)
if [ "${MPS:-0}" = 1 ]; then nvidia-cuda-mps-control -d && echo "MPS started" | tee -a $O/moe/gpu.txt; fi
[ "${MPS:-0}" = 1 ] && N16=dev16mps || N16=dev16
run $N16 16 -p config=SingleDMA -p dtype=FP8 -p routing=uniform,lognormal:2.0,hot:0.25 "${T[@]}"
run hostdev8${MPS:+mps} 8 -p config=SinglePin,SingleDMA -p dtype=BF16 -p routing=uniform -p tokens=128,4096 "${T[@]}"
EXTRA_ENV=EFABENCH_CORRUPT_OFFSET=20000 run corrupt4 4 -p config=SingleDMA -p dtype=BF16 -p routing=uniform -f 1 -wi 0 -i 1 -r 1s -foe true -prof io.efabench.harness.MetricsProfiler
[ "${MPS:-0}" = 1 ] && echo quit | nvidia-cuda-mps-control
cd $O && tar czf moe-gpu.tgz moe && rm -rf moe

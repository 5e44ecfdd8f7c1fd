#!/usr/bin/env bash
# Issue 56 (JOL) on the GPU host, one device command: the figures the layout work could move, with the
# jar before it (.devcarry/before.jar) and after it (.devcarry/benchmarks.jar), interleaved.
#  1. host Write SinglePin 64 B, windows 1 and 64, remote completion, each next to fi_rma_bw
#     (write-vs-fi_rma_bw.sh, ranks pinned to CPUs 2 and 3), ROUNDS rounds of before then after;
#  2. ProxyBenchmark ProxySingle and DirectSingle (the proxy thread's cells: flags, failure line, acks,
#     the Direct doorbell), 64K and 8M, -bm sample, 2 ranks sharing GPU 0 under MPS, ROUNDS rounds;
#  3. the after-jar's provenance on the jlink runtime: the jvm_layout facts and java_* footprints of
#     a Write trial, and every rank log searched for a WARNING line (JOL's or the JDK's Unsafe one).
# Carry .devcarry with jdk.tgz (a jlink runtime with jdk.management, tarred as jdk/), benchmarks.jar,
# before.jar, build-libfabric-cuda.sh, libfabric-2.6.0-src.tgz. Output under $OUT (runs packed).
# Usage on the device: OUT=... [ROUNDS=2] [STEPS=host,proxy,jvm] bash docs/perf/jol-ab-gpu.sh
set -uo pipefail
carry=$PWD/.devcarry
[[ -d $carry/jdk ]] || tar xzf "$carry/jdk.tgz" -C "$carry"
export JAVA_HOME=$carry/jdk EFABENCH_RESULTS=$OUT/results
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
trap 'tar czf "$OUT/runs.tgz" -C "$OUT" results 2>/dev/null && rm -rf "$OUT/results"' EXIT
{ date -u; nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv; lscpu | grep "Model name"; nproc; } > "$OUT/machine.txt" 2>&1
if [[ ! -x /opt/lf/bin/fi_rma_bw ]]; then
    el "build libfabric and fabtests"
    bash "$carry/build-libfabric-cuda.sh" /opt/lf > "$OUT/libfabric-build.txt" 2>&1 || { tail -20 "$OUT/libfabric-build.txt"; exit 1; }
fi
export LD_LIBRARY_PATH=/opt/lf/lib PATH=/opt/lf/bin:$PATH LIBFABRIC_HOME=/opt/lf
steps=",${STEPS:-host,proxy,jvm},"
rounds=${ROUNDS:-2}
if [[ $steps == *,host,* ]]; then
    for r in $(seq "$rounds"); do
        for jar in before benchmarks; do
            echo "## round $r, $jar.jar"
            COMPLETION=remote CPU_A=2 CPU_B=3 timeout 120 docs/perf/write-vs-fi_rma_bw.sh "$carry/$jar.jar" 1 "1 64" "64"
        done
    done > "$OUT/host-ab.txt" 2>&1
    el "host Write done"
fi
if [[ $steps == *,proxy,* ]]; then
    nvidia-cuda-mps-control -d && echo "MPS started" >> "$OUT/proxy-ab.txt"
    for r in $(seq "$rounds"); do
        for jar in before benchmarks; do
            echo "## round $r, $jar.jar"
            EFABENCH_JAR=$carry/$jar.jar timeout 150 env CUDA_VISIBLE_DEVICES=0 ./run-jmh.sh --ranks 2 --provider shm ProxyBenchmark \
                -p config=ProxySingle,DirectSingle -p size=64K,8M -bm sample -wi 1 -w 1s -i 3 -r 1s 2>&1 \
                | grep -E "^Benchmark|^ProxyBenchmark.*(sample|p0.50)|rank [0-9].*fail|ERROR"
        done
    done >> "$OUT/proxy-ab.txt" 2>&1
    echo quit | nvidia-cuda-mps-control
    el "proxy done"
fi
if [[ $steps == *,jvm,* ]]; then
    {
        EFABENCH_JAR=$carry/benchmarks.jar timeout 60 ./run-jmh.sh --ranks 2 --provider shm WriteBenchmark -p config=SinglePin \
            -p size=64 -p window=1 -wi 0 -i 1 -r 1s > /dev/null 2>&1
        echo "rc $?"
        run=$(ls -td "$OUT"/results/*/ | head -1)
        python3 - "$run" <<'PY'
import glob, json, sys
run = sys.argv[1]
p = json.load(open(run + "/provenance.json"))
print("jvm_layout", json.dumps(p.get("jvm_layout")))
for k in ("java_bytes", "java_objects", "buffer_bytes", "java"):
    print(k, json.dumps(p.get(k)))
PY
        echo "WARNING lines in rank logs (JMH's lock notice aside):"
        grep -h "WARNING" "$run"/logs/*.log | grep -v "JMH lock" || echo "(none)"
    } > "$OUT/jvm-layout.txt" 2>&1
    el "jvm facts done"
fi
el done

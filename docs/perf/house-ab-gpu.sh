#!/usr/bin/env bash
# Issue 24's "behaviour unchanged" on the GPU host, as one device command (with issue 25's IpcBenchmark
# sweep beside it): the Write and SendRecv comparisons of docs/PERFORMANCE.md with the jar before the
# house work (.devcarry/before.jar) and after it (.devcarry/benchmarks.jar), each next to its own C peer.
# Issue 24's run: docs/perf/journal/house-and-allocation.md, "Before and after the house work, beside the C peers".
#  1. IpcBenchmark's default sweep in two halves at once, ranks on GPUs 0,1 and 2,3 (two pairs of
#     NVLink ports through the NVSwitch), pinned to CPUs 8-63; at the same time, on CPUs 2/3:
#     Write SinglePin host memory, remote completion, window 64, slots 64 vs fi_rma_bw -W 64 at
#     64 B / 4K / 1M (write-vs-fi_rma_bw.sh), before and after interleaved, ROUNDS rounds; SendRecv
#     SingleHost vs fi_rdm_pingpong at 4K / 1M (device-vs-fabtests.sh MEMORY=host), before and after.
#  2. Then device memory on GPU 0 (device-vs-fabtests.sh: Write SingleDMA vs fi_rma_bw -D cuda,
#     SendRecv SingleDevice vs fi_rdm_pingpong -D cuda, 4K / 1M / 64M), before and after.
# Every step under a timeout; run folders packed into $OUT/runs.tgz. Carry .devcarry with jdk/,
# benchmarks.jar, before.jar, build-libfabric-cuda.sh, libfabric-2.6.0-src.tgz (with fabtests); where two jars
# and the JDK pass the carry limit, carry an overlay and rebuild before.jar there (docs/perf/jar-overlay.py apply).
# Issue 46 (the harness in sub-packages) ran it in two calls: STEPS=host IPC=0 WINDOWS="1 64", then
# STEPS=sendrecv,device: docs/PERFORMANCE.md, "Before and after the house refactor (issue 46)".
# Usage on a 4-GPU device: OUT=... [ROUNDS=2] [IPC=0] [WINDOWS="1 64"] [STEPS=host,sendrecv,device] docs/perf/house-ab-gpu.sh
set -uo pipefail
carry=$PWD/.devcarry
export JAVA_HOME=$carry/jdk EFABENCH_JAR=$carry/benchmarks.jar EFABENCH_RESULTS=$OUT/results
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
trap 'tar czf "$OUT/runs.tgz" -C "$OUT" results 2>/dev/null && rm -rf "$OUT/results"' EXIT
{ date -u; nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv; lscpu | grep "Model name"; nproc; } > "$OUT/machine.txt" 2>&1
if [[ ! -x /opt/lf/bin/fi_rma_bw ]]; then
    el "build libfabric and fabtests"
    bash "$carry/build-libfabric-cuda.sh" /opt/lf > "$OUT/libfabric-build.txt" 2>&1 || { cat "$OUT/libfabric-build.txt"; exit 1; }
fi
export LD_LIBRARY_PATH=/opt/lf/lib PATH=/opt/lf/bin:$PATH LIBFABRIC_HOME=/opt/lf
steps=",${STEPS:-host,sendrecv,device},"
ipc_a= ipc_b=
if [[ ${IPC:-1} == 1 ]]; then
el "IpcBenchmark halves on GPUs 0,1 and 2,3; host comparisons on CPUs 2/3"
timeout 330 env CUDA_VISIBLE_DEVICES=0,1 taskset -c 8-35 ./run-jmh.sh --ranks 2 IpcBenchmark.write \
    -p shape=1x256,1x1024,16x256,128x256 > "$OUT/ipc-half-a.txt" 2>&1 &
ipc_a=$!
sleep 2  # the run folders are named by the second they start
timeout 330 env CUDA_VISIBLE_DEVICES=2,3 taskset -c 36-63 ./run-jmh.sh --ranks 2 IpcBenchmark \
    -p shape=1smx1024,2smx1024,4smx512 > "$OUT/ipc-half-b.txt" 2>&1 &
ipc_b=$!
fi
{
    for r in $(seq "${ROUNDS:-2}"); do
        [[ $steps == *,host,* ]] || break
        for jar in before benchmarks; do
            echo "## round $r, $jar.jar"
            COMPLETION=remote CPU_A=2 CPU_B=3 docs/perf/write-vs-fi_rma_bw.sh "$carry/$jar.jar" 1 "${WINDOWS:-64}" "64 4K 1M"
        done
    done
    for jar in before benchmarks; do
        [[ $steps == *,sendrecv,* ]] || break
        echo "## SendRecv host, $jar.jar"
        MEMORY=host BENCHES=sendrecv SIZES="4K:4096 1M:1048576" JMH_TIMES="-wi 2 -w 1s -i 3 -r 1s" \
            docs/perf/device-vs-fabtests.sh "$carry/$jar.jar" 1 "$OUT/host-$jar"
    done
} > "$OUT/host-ab.txt" 2>&1
el "host comparisons done"
if [[ -n $ipc_a ]]; then
    wait "$ipc_a"; echo "ipc half a rc $?" >> "$OUT/ipc-half-a.txt"
    wait "$ipc_b"; echo "ipc half b rc $?" >> "$OUT/ipc-half-b.txt"
    el "IPC done"
fi
# The device tool's call ends at 600 s: each device run gets what is left, at most 80 s.
for jar in before benchmarks; do
    [[ $steps == *,device,* ]] || break
    left=$(( (560 - ($(date +%s) - t0)) / 2 )); ((left > 80)) && left=80
    ((left < 30)) && { echo "## device memory, $jar.jar: skipped, $left s left"; continue; }
    echo "## device memory, $jar.jar"
    timeout "$left" env CUDA_VISIBLE_DEVICES=0 JMH_TIMES="-wi 1 -w 1s -i 3 -r 1s" \
        docs/perf/device-vs-fabtests.sh "$carry/$jar.jar" 1 "$OUT/device-$jar"
done > "$OUT/device-ab.txt" 2>&1
rm -rf "$OUT"/host-before "$OUT"/host-benchmarks "$OUT"/device-before "$OUT"/device-benchmarks  # single runs' logs: summarized above
el done

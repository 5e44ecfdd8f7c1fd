#!/usr/bin/env bash
# Do two CPUs of this guest share a physical core on the host? A guest that says "1 thread per
# core" may still have two vCPUs on one core's hyperthreads, and two busy-polling ranks there run
# each other slower: the more instructions a side spends per round, the more (issue 19: the 64 B
# ratio against fi_rma_bw moved 0.85-0.98 by machine). Times a fixed integer loop on CPU A alone,
# then on A while the same loop spins on B; prints the slowdown. Siblings read ~1.2-1.6x, separate
# cores ~1.0x. Run it on the CPUs the side-by-side scripts pin to (CPU_A / CPU_B, 2 / 3).
# It only reads where the loop alone keeps its time: on an H100 host (2026-11-27, issue 19) the
# loop alone took 0.83-1.83 s from one run to the next, so its ratios (x0.67-x1.91) said nothing.
#   usage: docs/perf/cpu-pair-probe.sh [A] [B] [repeats]
set -euo pipefail
a=${1:-2}; b=${2:-3}; n=${3:-3}
loop='import time
t = time.perf_counter(); s = 0
for i in range(8_000_000): s += i ^ (i >> 3)
print("%.3f" % (time.perf_counter() - t))'
for k in $(seq "$n"); do
    alone=$(taskset -c "$a" python3 -c "$loop")
    taskset -c "$b" python3 -c "$loop" > /dev/null & spin=$!
    sleep 0.05
    busy=$(taskset -c "$a" python3 -c "$loop")
    wait "$spin"
    python3 -c "print('cpu %s alone %s s, with cpu %s busy %s s: x%.2f' % ('$a', '$alone', '$b', '$busy', $busy / $alone))"
done

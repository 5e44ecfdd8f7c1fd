#!/usr/bin/env bash
# SendRecvBenchmark (SingleHost, 2 ranks, shm) lat_us with -bs 1 and -bs 4 in avgt, thrpt and
# sample mode: issue 9's "same lat_us within 20%" check, one JMH run per mode and batch size
# through ./run-jmh.sh. Prints lat_us per run and, per mode, bs4 / bs1; in sample mode also the
# p50 of the one-way latency at -bs 1 (lat_p50_us), which a heavy tail moves less than the mean.
# Usage: docs/perf/batch-modes.sh [size] [JMH times]   (defaults: 4K, "-wi 2 -w 1s -i 3 -r 1s")
set -uo pipefail
cd "$(dirname "$0")/../.."
size=${1:-4K}
read -ra times <<<"${2:--wi 2 -w 1s -i 3 -r 1s}"
out=$(mktemp -d)
for mode in avgt thrpt sample; do
    for bs in 1 4; do
        EFABENCH_RESULTS="$out/$mode-$bs" ./run-jmh.sh --ranks 2 --provider shm SendRecvBenchmark -p config=SingleHost \
            -p size="$size" -bm "$mode" -bs "$bs" "${times[@]}" -f 1 >"$out/$mode-$bs.log" 2>&1 ||
            { echo "$mode -bs $bs failed:"; tail -20 "$out/$mode-$bs.log"; exit 1; }
    done
done
python3 - "$out" <<'PY'
import json, sys, glob
out = sys.argv[1]
def metric(mode, bs, name):
    e = json.load(open(glob.glob("%s/%s-%d/*/jmh.json" % (out, mode, bs))[0]))[0]
    s = e["secondaryMetrics"].get(name)
    return (s["score"], s["scoreError"]) if s else (float("nan"), float("nan"))
for mode in ("avgt", "thrpt", "sample"):
    one, four = metric(mode, 1, "lat_us"), metric(mode, 4, "lat_us")
    line = "%-6s lat_us -bs 1 %7.3f +- %6.3f   -bs 4 %7.3f +- %6.3f   bs4/bs1 %.2f" % (mode, one[0], one[1], four[0], four[1], four[0] / one[0])
    if mode == "sample":  # percentiles exist only where one sample is one round (-bs 1)
        line += "   lat_p50_us (-bs 1) %.3f" % metric(mode, 1, "lat_p50_us")[0]
    print(line)
PY
rm -rf "$out"

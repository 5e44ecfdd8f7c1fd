#!/usr/bin/env bash
# The GPU-only tests on the GPU machine, which has no Maven: JUnit's console launcher runs the
# compiled test classes against the jar the ranks run (Ranks' efabench.jar), with the CUDA
# libfabric on LD_LIBRARY_PATH. Skips print their reason; the exit code is the launcher's.
# Carry .devcarry with jdk/ (jlink runtime), benchmarks.jar, junit-console.jar
# (org.junit.platform:junit-platform-console-standalone at the pom's platform version) and
# test-classes/ (target/test-classes).
#   usage on the device: [TEST_TIMEOUT=s] docs/perf/gpu-tests.sh CLASS|CLASS#METHOD... (e.g. io.efabench.it.DeviceFabricIT)
# Under MPS, run a class whose last test kills a rank last, or restart MPS after it (`echo quit |
# nvidia-cuda-mps-control; nvidia-cuda-mps-control -d`): the clients started right after a rank
# died mid-kernel cannot open a context (journal moe.md, "MoE over NVLink").
set -uo pipefail
carry=$PWD/.devcarry
selects=(); for c in "$@"; do if [[ $c == *"#"* ]]; then selects+=(--select-method "$c"); else selects+=(--select-class "$c"); fi; done
(( ${#selects[@]} )) || { echo "gpu-tests: name at least one test class" >&2; exit 2; }
LD_PRELOAD=$carry/jdk/lib/server/libjsig.so timeout "${TEST_TIMEOUT:-540}" "$carry/jdk/bin/java" --enable-native-access=ALL-UNNAMED \
    -Defabench.jar="$carry/benchmarks.jar" -jar "$carry/junit-console.jar" execute \
    --disable-banner --disable-ansi-colors --details=flat --class-path "$carry/test-classes:$carry/benchmarks.jar" "${selects[@]}"

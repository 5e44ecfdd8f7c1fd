#!/usr/bin/env bash
# run-jmh.sh: build efabench's benchmarks.jar when needed and run JMH on every rank. Outside a
# cluster it starts N local ranks on 127.0.0.1; under torchrun, srun or mpirun (their variables
# set) it runs exactly one rank: this process. Bash starts, watches and stops processes; what it
# needs to know it asks Java (io.efabench.launch.Launch; docs/DESIGN.md, "Process environment").
#
# usage: ./run-jmh.sh [--ranks N] [--provider P] [--profile] [JMH args...]
#        ./run-jmh.sh test [mvn args...]
#        ./run-jmh.sh compare OLD NEW [--metric gbps] [--threshold 5]
#        ./run-jmh.sh report DIR
#        ./run-jmh.sh ranks DIR DIR... [--metric gbps]
#        ./run-jmh.sh build
#        ./run-jmh.sh doctor [--no-run] [--json] [--libfabric DIR]
#        ./run-jmh.sh seed write|sendrecv|all2all|proxy|ipc [--sizes all|quick|LIST] [--provider P] [-- JMH args]
#        ./run-jmh.sh testbed up|down|status|exec|rsh|links ...   (a cluster on one machine: testbed/testbed.sh)
#        ./run-jmh.sh sweep [--quick [N]] [--size S] [--seconds S] ...   (find the bad node, NIC or rail; --help)
#
#   --ranks N      local ranks to start (default 2; not allowed under srun/mpirun/torchrun)
#   --provider P   libfabric provider (FI_PROVIDER), e.g. tcp, shm, efa (local default: tcp)
#   --profile      async-profiler flame graph of rank 0 into <run folder>/profile/
#   --             end of launcher options; everything after goes to JMH
#
# JMH options use one dash (-p size=1M, -wi 1, -i 3, -f 1, -l to list, -h for JMH's help).
# With no JMH arguments: the quick suite, SendRecvBenchmark and WriteBenchmark at 4K-16M (README);
#   where no GPU is visible their host configs, one after the other, in one run folder.
# Environment: JAVA_HOME, FI_PROVIDER, EFABENCH_* (the table in README.md, "Running one benchmark").

set -uo pipefail
set +m

RUN_SUFFIX=""
REPORT_EACH=yes   # no while a command's suites run one after the other: one report at the end
LAST_RUN_DIR=""   # the run folder of the last suite run
MIN_JAVA=25
# JMH copies the rank JVM's flags to its forks; several ranks on one host run JMH at once, so its
# single-instance lock (/tmp/jmh.lock) must not apply.
RANK_JVM_FLAGS=(--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -Djmh.ignoreLock=true)
# glibc gives each new thread (JMH runs each trial on new ones) a malloc arena: under -f 0 rank 0's
# RSS grew per trial (docs/perf/journal/house-and-allocation.md). Set in the environment: glibc reads it at start.
export MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD_DIR=${EFABENCH_BUILD_DIR:-$ROOT/target}
JAR=${EFABENCH_JAR:-$BUILD_DIR/benchmarks.jar}
RESULTS=${EFABENCH_RESULTS:-$ROOT/results}

note() { printf 'run-jmh: %s\n' "$*"; }
warn() { printf 'run-jmh: %s\n' "$*" >&2; }
die() { local code=$1; shift; warn "$*"; exit "$code"; }
usage() { sed -n '/^# usage:/,/^# Environment:/{/^# Environment:/!s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; }

# ---------------------------------------------------------------- Java and native libraries

java_major() {  # java_major /path/to/java -> 25
    local line
    line=$("$1" -version 2>&1 | grep -m1 ' version "') || return 1
    [[ $line =~ \"([0-9]+)(\.([0-9]+))? ]] || return 1
    if [[ ${BASH_REMATCH[1]} == 1 ]]; then echo "${BASH_REMATCH[3]:-0}"; else echo "${BASH_REMATCH[1]}"; fi
}

find_java() {  # find_java [javac]: sets JAVA and exports JAVA_HOME; "javac" when Maven will build
    local need=${1:-} cand major best="" best_major=0
    if [[ -n ${JAVA_HOME:-} && -x $JAVA_HOME/bin/java ]]; then
        major=$(java_major "$JAVA_HOME/bin/java") || major=0
        if ((major >= MIN_JAVA)) && [[ -z $need || -x $JAVA_HOME/bin/javac ]]; then JAVA=$JAVA_HOME/bin/java; return; fi
        if ((major < MIN_JAVA)); then warn "JAVA_HOME=$JAVA_HOME is JDK $major, not $MIN_JAVA+; looking for another"
        else warn "JAVA_HOME=$JAVA_HOME has no javac (a runtime, not a JDK); looking for a JDK to build with"; fi
    fi
    # The system's JDKs, PATH, then a jlink runtime beside the jar (GPU machines without a JDK: runs, cannot build).
    for cand in /usr/lib/jvm/*/bin/java "$(command -v java 2>/dev/null)" "$ROOT/.jdk/bin/java"; do
        [[ -n $cand && -x $cand ]] || continue
        [[ -n $need && ! -x ${cand%/java}/javac ]] && continue
        major=$(java_major "$cand") || continue
        ((major >= MIN_JAVA && major > best_major)) && best=$cand best_major=$major
    done
    [[ -n $best ]] || die 1 "no JDK $MIN_JAVA+ found (JAVA_HOME, /usr/lib/jvm/*, PATH, .jdk): install one (e.g. Temurin $MIN_JAVA) or set JAVA_HOME"
    JAVA=$(readlink -f "$best")
    export JAVA_HOME=${JAVA%/bin/java}
}

# libfabric's shm provider (efa loads it for peers on one node) installs SIGSEGV/SIGBUS handlers
# over the JVM's; the JDK's libjsig.so, preloaded, chains them (Java refuses shm and efa without it).
preload_jsig() {
    local lib
    for lib in "$JAVA_HOME/lib/libjsig.so" "$JAVA_HOME/lib/server/libjsig.so"; do
        if [[ -f $lib ]]; then
            [[ ${LD_PRELOAD:-} == *libjsig* ]] || export LD_PRELOAD="$lib${LD_PRELOAD:+ $LD_PRELOAD}"
            return 0
        fi
    done
    warn "no libjsig.so in $JAVA_HOME/lib: the shm and efa providers will refuse to run"
}

have_libfabric() {
    local ldconfig d cache
    ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
    # Read the whole cache before matching: `ldconfig -p | grep -q` under pipefail fails when grep
    # exits at the match and ldconfig, still writing, dies of SIGPIPE (seen under load).
    cache=$("$ldconfig" -p 2>/dev/null) || true
    [[ $cache == *'libfabric.so.1 '* ]] && return 0
    local IFS=:
    for d in ${LD_LIBRARY_PATH:-}; do [[ -n $d && -e $d/libfabric.so.1 ]] && return 0; done
    return 1
}

# apt_install PKG...: as root with apt-get, quietly; the package lists may be missing on a
# fresh image, so update only when the first try fails. Fails (status 1) where it cannot.
apt_install() {
    [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null || return 1
    note "installing $* with apt-get (quietly)"
    local log rc apt=(timeout 600 apt-get -o Acquire::Retries=0 -o Acquire::http::Timeout=20 -o Acquire::https::Timeout=20)
    log=$(mktemp)
    { DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq --no-install-recommends "$@" ||
        { DEBIAN_FRONTEND=noninteractive "${apt[@]}" update -qq &&
            DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq --no-install-recommends "$@"; }; } >"$log" 2>&1
    rc=$?
    ((rc == 0)) || { warn "apt-get could not install $*; its last lines:"; tail -n 3 "$log" | sed 's/^/  /' >&2; }
    rm -f "$log"
    return $rc
}

# ensure_libfabric yes|no: installs libfabric where it may (root, apt-get, not in a cluster job), else
# names the packages. Not fatal: GPU-only benchmarks run without it, fabric ones stop with their own line.
ensure_libfabric() {
    have_libfabric && return 0
    if [[ $1 == yes ]] && apt_install libfabric1 libfabric-bin; then
        have_libfabric && return 0
        warn "apt-get installed libfabric1, yet the loader does not find libfabric.so.1"
    fi
    warn "libfabric.so.1 not found: install libfabric1 and libfabric-bin (Debian/Ubuntu) or the AWS EFA installer; fabric benchmarks will fail"
}

ensure_maven() {  # Maven for a build or the tests: installed where it can be, else a one-line error
    command -v mvn >/dev/null && return 0
    apt_install maven && command -v mvn >/dev/null && return 0
    die 1 "Maven is needed to $1: install it (apt-get install maven)"
}

# ---------------------------------------------------------------- the jar

jar_stale() {
    [[ -f $JAR ]] || return 0
    local paths=() p
    for p in "$ROOT/src" "$ROOT/pom.xml" "$ROOT/jextract"; do [[ -e $p ]] && paths+=("$p"); done
    ((${#paths[@]})) && [[ -n $(find "${paths[@]}" -newer "$JAR" -print -quit 2>/dev/null) ]]
}

plain() { sed -u 's/\x1b\[[0-9;]*m//g'; }  # Debian's Maven leaves colour resets even in batch mode

maven_opts() {  # Maven's own Guava warns about sun.misc.Unsafe on JDK 24+; the build does not use it
    export MAVEN_OPTS="${MAVEN_OPTS:+$MAVEN_OPTS }--sun-misc-unsafe-memory-access=allow"
    MVN_BUILD_DIR=()
    [[ -n ${EFABENCH_BUILD_DIR:-} ]] && MVN_BUILD_DIR=("-Defabench.build.dir=$BUILD_DIR")
}

build_jar() {  # with JAVA_HOME a JDK (javac), whatever runtime runs the ranks
    maven_opts
    note "building $(rel "$JAR") (mvn -q -B package -DskipTests)"
    (cd "$ROOT" && JAVA_HOME=$BUILD_JDK mvn -q -B -Dstyle.color=never "${MVN_BUILD_DIR[@]}" package -DskipTests) 2>&1 |
        plain || die 1 "the build failed (mvn package); see the messages above"
    [[ -f $JAR ]] || die 1 "the build finished but $JAR is missing"
}

can_build() {  # Maven and a JDK with javac; sets BUILD_JDK
    command -v mvn >/dev/null || return 1
    BUILD_JDK=$JAVA_HOME
    [[ -x $JAVA_HOME/bin/javac ]] || BUILD_JDK=$(find_java javac 2>/dev/null && echo "$JAVA_HOME")
}

# ensure_jar build|nobuild: "nobuild" inside a cluster job, where every rank would start Maven.
ensure_jar() {
    local mode=$1
    [[ -n ${EFABENCH_JAR:-} ]] && { [[ -f $JAR ]] || die 1 "EFABENCH_JAR=$JAR does not exist"; return; }
    jar_stale || return 0
    # No jar at all: a fresh clone. Install Maven where possible (a stale jar is used as it is).
    [[ $mode == build && ! -f $JAR ]] && ensure_maven "build $(rel "$JAR")"
    if [[ $mode == build ]] && can_build; then
        build_jar
    elif [[ -f $JAR && $mode == build ]]; then
        note "using $(rel "$JAR") as it is (no Maven and JDK here to rebuild it)"
    elif [[ -f $JAR ]]; then
        note "using $(rel "$JAR") as it is (sources are newer; inside a cluster job run ./run-jmh.sh build first)"
    elif [[ $mode == build ]]; then
        die 1 "no $JAR and no Maven and JDK to build it: install maven and a JDK $MIN_JAVA+, or set EFABENCH_JAR"
    else
        die 1 "no $JAR: build it once before starting the ranks (./run-jmh.sh build)"
    fi
}

jar_has_class() { grep -qaF "${1//.//}.class" "$JAR"; }

rel() { if [[ $1 == "$PWD"/* ]]; then echo "${1#"$PWD"/}"; else echo "$1"; fi; }  # relative to $PWD where below it

# ask ARRAY COMMAND ARGS...: Launch's answer (NUL-ended tokens) into ARRAY, and its status. Its
# stderr passes without the JVM's own notes ("Picked up JAVA_TOOL_OPTIONS", which clusters often set).
ask() {
    local -n _answer=$1
    local out err rc
    out=$(mktemp) && err=$(mktemp) || die 1 "cannot create a temporary file"
    "$JAVA" "${RANK_JVM_FLAGS[@]}" -cp "$JAR" io.efabench.launch.Launch "${@:2}" >"$out" 2>"$err"
    rc=$?
    mapfile -d '' -t _answer <"$out"
    grep -v '^Picked up ' "$err" >&2
    rm -f -- "$out" "$err"
    return "$rc"
}

# ---------------------------------------------------------------- running ranks

declare -a RANK_PIDS=(); FILTER_PID=""

# A rank runs in its own session and process group (setsid, started directly so that $! is the
# group's id): a terminal's Ctrl-C reaches only the launcher, which stops every group, JMH's forks
# included. The shell around the JVM turns death by a signal into an exit status and a log line.
# shellcheck disable=SC2016
RANK_WRAPPER=(setsid bash -c 'exec 3>&2 2>/dev/null; "$@" 2>&3 3>&-; s=$?
    ((s > 128)) && echo "run-jmh: this rank was killed by signal $((s - 128))" >&3
    exit $s' rank)

kill_ranks() {  # kill_ranks SIGNAL: every rank's process group (its JMH forks included)
    local pid
    for pid in "${RANK_PIDS[@]}"; do [[ -n $pid ]] && kill "-$1" -- "-$pid" 2>/dev/null; done
}

stop_ranks() {  # TERM, a few seconds to exit, then KILL; returns once no process of the ranks is left
    local i
    kill_ranks TERM
    kill_ranks CONT  # a stopped process (SIGSTOP, a debugger) acts on TERM only once continued
    for i in {1..20}; do ranks_alive || return 0; sleep 0.25; done
    kill_ranks KILL
    # A JVM dies a moment after its wrapper: the shm sweep after the ranks must not find it alive.
    for i in {1..40}; do ranks_alive || return 0; sleep 0.25; done
}

ranks_alive() {  # true while any process is left in a rank's process group (JMH's forks included)
    local pid
    for pid in "${RANK_PIDS[@]}"; do [[ -n $pid ]] && kill -0 -- "-$pid" 2>/dev/null && return 0; done
    return 1
}

on_signal() {
    trap '' INT TERM
    warn "interrupted ($1): stopping the ranks"
    stop_ranks
    local i
    for i in {1..8}; do  # rank 0's last lines, if its output pipe drains soon
        [[ -n $FILTER_PID ]] && kill -0 "$FILTER_PID" 2>/dev/null || break
        sleep 0.25
    done
    exit "$2"
}

# start_leader LOG CMD...: rank 0, its output kept in LOG and shown through Java's LeaderView
# (a progress line before every fork, stack frames folded).
start_leader() {
    local log=$1; shift
    PIPE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/run-jmh.XXXXXX") || die 1 "cannot create a temporary folder"
    trap 'rm -rf "$PIPE_DIR"' EXIT
    mkfifo "$PIPE_DIR/rank0" || die 1 "cannot create a pipe in $PIPE_DIR"
    tee -a "$log" <"$PIPE_DIR/rank0" | "$JAVA" -cp "$JAR" io.efabench.launch.LeaderView view "$(rel "$log")" "${JMH_ARGS[@]}" &
    FILTER_PID=$!
    "${RANK_WRAPPER[@]}" "$@" >"$PIPE_DIR/rank0" 2>&1 &
    RANK_PIDS[0]=$!
}

rank_failed() {  # rank_failed K WHY LOG: one line, then the rank's reasons (Java's: LeaderView)
    warn "rank $1 failed: $2 (log: $(rel "$3"))"
    { "$JAVA" -cp "$JAR" io.efabench.launch.LeaderView why "$3" 2>/dev/null || tail -n 5 -- "$3" 2>/dev/null; } | sed 's/^/  /' >&2
}

# after_run RUN_DIR MARKER PROFILE FAILED: Java's after (RunFolder.after): results/latest moves only to
# a run with results (a failed run never hides the last good one); this user's shm regions and call
# boards of ranks gone since MARKER (a file made before the ranks started: a killed rank leaves its
# 16 MiB regions) are removed on every node; then rank 0's flame graphs and report.
after_run() {
    local leader=no failed=no rc
    [[ ${CLUSTER_RANK:-0} == 0 ]] && leader=yes
    (($4)) && failed=yes
    "$JAVA" -cp "$JAR" io.efabench.launch.Launch after "$1" "$2" "$3" "$REPORT_EACH" "$failed" "$leader"
    rc=$?
    LAST_RUN_DIR=$1
    (($4)) && exit 1
    ((rc == 0)) || die 1 "the report failed for $(rel "$1")"
}

# start_run MODE RANK WORLD PROVIDER PROFILE: Java's run folder (RUN_DIR), rendezvous port (PORT)
# and grace period (GRACE) for local ranks, its lines shown, each rank's JMH arguments in START from 5.
start_run() {
    EFABENCH_ROOT=$ROOT ask START start "$1" "$RESULTS" "$RUN_SUFFIX" "$2" "$3" "$4" "$5" "$(hostname)" \
        "${#ARGV[@]}" "${ARGV[@]}" -- "${JMH_ARGS[@]}" || exit
    RUN_DIR=${START[0]} PORT=${START[1]} GRACE=${START[2]}
    [[ -z ${START[3]} ]] || note "${START[3]}"
    [[ -z ${START[4]} ]] || note "${START[4]}"
    trap 'on_signal INT 130' INT; trap 'on_signal TERM 143' TERM
}

ranks_ended() {  # rank 0's output drained; signals back to bash's defaults
    [[ -n $FILTER_PID ]] && wait "$FILTER_PID" 2>/dev/null
    FILTER_PID=""; trap - INT TERM
}

run_local() {  # run_local RANKS PROVIDER PROFILE
    local ranks=$1 k n i=5 args=()
    start_run local 0 "$ranks" "$2" "$3"
    export WORLD_SIZE=$ranks LOCAL_WORLD_SIZE=$ranks MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT \
        FI_PROVIDER=$2 EFABENCH_RUN_DIR=$RUN_DIR EFABENCH_LOOPBACK=1 EFABENCH_RANK_SOURCE=local
    for ((k = ranks - 1; k >= 0; k--)); do  # each rank's arguments, rank ranks-1 first
        n=${START[i]}
        args=("${START[@]:i+1:n}")
        i=$((i + 1 + n))
        if ((k == 0)); then
            RANK=0 LOCAL_RANK=0 start_leader "$RUN_DIR/logs/rank0.log" "$JAVA" "${RANK_JVM_FLAGS[@]}" -jar "$JAR" "${args[@]}"
        else
            RANK=$k LOCAL_RANK=$k "${RANK_WRAPPER[@]}" "$JAVA" "${RANK_JVM_FLAGS[@]}" -jar "$JAR" "${args[@]}" \
                >"$RUN_DIR/logs/rank$k.log" 2>&1 &
            RANK_PIDS[k]=$!
        fi
    done
    wait_ranks "$RUN_DIR"
    local failed=$?
    ranks_ended
    after_run "$RUN_DIR" "$RUN_DIR/provenance/launcher.json" "$3" "$failed"
}

# Waits for every rank; after the first one ends, the others get the grace period to end by
# themselves (a failed peer makes them fail fast), then are killed. Prints every failed rank's
# reasons; returns 1 when any rank failed.
wait_ranks() {
    local run_dir=$1 grace=$GRACE deadline=0 first="" k pid rc bad=0 why live=("${!RANK_PIDS[@]}")
    declare -A status=()
    while ((${#live[@]})); do
        local still=() failed_now=()
        for k in "${live[@]}"; do
            pid=${RANK_PIDS[k]}
            if kill -0 "$pid" 2>/dev/null; then still+=("$k"); continue; fi
            wait "$pid" 2>/dev/null  # (no "Killed" job notice from bash)
            rc=$?
            status[$k]=$rc
            [[ -z $first ]] && first=$k deadline=$((SECONDS + grace))
            ((rc != 0)) && failed_now+=("$k")
        done
        live=("${still[@]}")
        ((${#live[@]})) || break
        ((${#failed_now[@]})) && warn "rank ${failed_now[*]} failed; waiting up to ${grace}s for rank ${live[*]} to stop"
        if ((deadline && SECONDS >= deadline)); then
            warn "rank(s) ${live[*]} still running ${grace}s after rank $first ended: killing them"
            local keep=("${RANK_PIDS[@]}")
            RANK_PIDS=()
            for k in "${live[@]}"; do RANK_PIDS[k]=${keep[k]}; done
            stop_ranks
            for k in "${live[@]}"; do wait "${keep[k]}" 2>/dev/null; status[$k]=killed; done
            RANK_PIDS=("${keep[@]}")
            break
        fi
        sleep 0.5
    done
    for k in $(printf '%s\n' "${!status[@]}" | sort -n); do
        rc=${status[$k]}
        [[ $rc == 0 ]] && continue
        bad=1
        why="exited with status $rc"
        [[ $rc == killed ]] && why="did not exit in time and was killed"
        [[ $rc =~ ^[0-9]+$ ]] && ((rc > 128)) && why="was killed by signal $((rc - 128))"
        rank_failed "$k" "$why" "$run_dir/logs/rank$k.log"
    done
    return $bad
}

run_cluster() {  # run_cluster SOURCE PROFILE: this process's rank (CLUSTER_RANK of CLUSTER_WORLD, Java's reading)
    local rank=$CLUSTER_RANK log rc
    start_run "$1" "$rank" "$CLUSTER_WORLD" "${FI_PROVIDER:-}" "$2"
    export EFABENCH_RUN_DIR=$RUN_DIR
    log=$RUN_DIR/logs/rank$rank.log
    : >"$RUN_DIR/logs/.rank$rank.started"  # what remove_dead_shm_regions measures "created during this run" by
    if ((rank == 0)); then
        start_leader "$log" "$JAVA" "${RANK_JVM_FLAGS[@]}" -jar "$JAR" "${START[@]:6}"
    else
        "${RANK_WRAPPER[@]}" "$JAVA" "${RANK_JVM_FLAGS[@]}" -jar "$JAR" "${START[@]:6}" >"$log" 2>&1 &
        RANK_PIDS[0]=$!
    fi
    wait "${RANK_PIDS[0]}" 2>/dev/null
    rc=$?
    ranks_ended
    ((rc != 0)) && rank_failed "$rank on $(hostname)" "exited with status $rc" "$log"
    after_run "$RUN_DIR" "$RUN_DIR/logs/.rank$rank.started" "$2" "$((rc != 0))"
}

# Whether a job launcher's variables are set at all: decides only whether this process may build
# the jar (never under a launcher). Which launcher, which rank and how many is Java's answer
# (Launch plan), the same reading each rank's benchmark does when it joins the group.
under_launcher() {
    [[ -n ${RANK:-}${WORLD_SIZE:-}${OMPI_COMM_WORLD_RANK:-}${OMPI_COMM_WORLD_SIZE:-}${SLURM_PROCID:-} ]]
}

# One JMH run of JMH_ARGS on the local ranks or the cluster's; exits non-zero when it fails.
run_suite() {  # run_suite SOURCE RANKS PROVIDER PROFILE
    if [[ -z $1 ]]; then run_local "$2" "$3" "$4"; return; fi
    [[ -n $3 ]] && export FI_PROVIDER=$3
    run_cluster "$1" "$4"
}

# ---------------------------------------------------------------- subcommands

cmd_test() {
    find_java javac
    ensure_libfabric yes
    ensure_maven "run the tests"
    maven_opts
    preload_jsig  # tests load libfabric into the surefire and failsafe JVMs too
    note "mvn -B verify with $("$JAVA" -version 2>&1 | grep -m1 ' version "')"
    (cd "$ROOT" && mvn -B -ntp -Dstyle.color=never "${MVN_BUILD_DIR[@]}" verify "$@") 2>&1 | plain
    local rc=${PIPESTATUS[0]}
    note "test reports: $(rel "$BUILD_DIR")/surefire-reports (unit), $(rel "$BUILD_DIR")/failsafe-reports (integration)"
    ((rc == 0)) || warn "tests failed (mvn exit status $rc)"
    exit "$rc"
}

# doctor: Java checks the node (io.efabench.launch.Doctor), this starts the 2-rank smoke runs it
# names (Write and SendRecv at 1M, about 20 s) and Java reads their results. Exit 1 on any FAIL.
cmd_doctor() {
    local json=no run=yes lib="" state rc line k log
    while (($#)); do
        case $1 in
        --json) json=yes ;;
        --no-run) run=no ;;
        --libfabric) (($# >= 2)) || die 2 "--libfabric needs a directory"; lib=$2; shift ;;
        --libfabric=*) lib=${1#--libfabric=} ;;
        *) die 2 "usage: ./run-jmh.sh doctor [--no-run] [--json] [--libfabric DIR]" ;;
        esac
        shift
    done
    [[ $run == yes ]] && under_launcher &&
        die 2 "doctor: its smoke run starts 2 ranks of its own: run it on the node outside srun/mpirun/torchrun, or pass --no-run"
    # --json: stdout carries the one JSON object only; the launcher's own notes go to stderr.
    if [[ $json == yes ]]; then exec 3>&1 1>&2; else exec 3>&1; fi
    find_java
    ensure_jar build
    [[ -z $lib ]] || export LD_LIBRARY_PATH="$lib:$lib/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    preload_jsig
    state=$(mktemp "${TMPDIR:-/tmp}/efabench-doctor.XXXXXX") || die 1 "cannot create a temporary file"
    local doctor=("$JAVA" "${RANK_JVM_FLAGS[@]}" -cp "$JAR" io.efabench.launch.Doctor)
    "${doctor[@]}" checks "$state" ${lib:+--libfabric "$lib"} $([[ $json == yes ]] && echo --quiet)
    rc=$?
    ((rc == 2)) && exit 2
    local runs=()
    if ((rc == 0)) && [[ $run == yes ]]; then
        local smoke provider words
        mapfile -t smoke < <("${doctor[@]}" smoke "$state")
        provider=${smoke[0]:-tcp}
        REPORT_EACH=no
        for ((k = 1; k < ${#smoke[@]}; k++)); do
            read -ra words <<<"${smoke[k]}"
            log=$(mktemp "${TMPDIR:-/tmp}/efabench-doctor-run.XXXXXX")
            [[ $json == yes ]] || note "doctor: smoke run $k of $((${#smoke[@]} - 1)): ${smoke[k]} over $provider (2 ranks)"
            # A subshell: a failed run exits; its run folder comes back through the log's last line.
            ( JMH_ARGS=("${words[@]}"); run_suite "" 2 "$provider" no; echo "doctor-run-dir $LAST_RUN_DIR" ) >"$log" 2>&1
            line=$(grep '^doctor-run-dir ' "$log" | tail -n 1)
            if [[ -n $line ]]; then
                runs+=("${line#doctor-run-dir }")
                rm -f -- "$log"
            else
                runs+=("failed:${smoke[k]} (log: $log; $(grep -m1 -E 'efabench: |rank [0-9]+ failed' "$log" | cut -c1-300))")
            fi
        done
    fi
    "${doctor[@]}" finish "$state" $([[ $json == yes ]] && echo --json) "${runs[@]}" >&3
    rc=$?
    rm -f -- "$state"
    exit "$rc"
}

cmd_build() {
    (($# == 1)) || die 2 "usage: ./run-jmh.sh build"
    find_java javac
    ensure_maven "build $(rel "$JAR")"
    BUILD_JDK=$JAVA_HOME
    build_jar
    note "built $(rel "$JAR")"
    exit 0
}

# testbed: the cluster on one machine (testbed/testbed.sh, root); its links measurement runs Java.
cmd_testbed() {
    if [[ ${1:-} == links ]]; then
        find_java
        ensure_jar build
        export JAVA JAR
    fi
    exec bash "$ROOT/testbed/testbed.sh" "$@"
}

# ./run-jmh.sh sweep [options] (README, "Find the bad node: sweep"): one rank per node. Under
# srun/mpirun/torchrun this process is its node's rank; else, with the testbed up, one rank on each
# of its nodes, rank 0's output here; else Java refuses in one line (fewer than 2 nodes).
cmd_sweep() {
    local mode=local install=yes build=build
    under_launcher && mode=cluster install=no build=nobuild
    find_java
    if [[ ${1:-} == --help || ${1:-} == -h ]]; then
        ensure_jar "$build"; exec "$JAVA" -cp "$JAR" io.efabench.sweep.Sweep --help
    fi
    local arg
    for arg in "$@"; do  # a plan needs no fleet: Java answers it here, whatever is up
        [[ $arg == --plan ]] && { ensure_jar "$build"; exec "$JAVA" -cp "$JAR" io.efabench.sweep.Sweep "$@"; }
    done
    ensure_libfabric "$install"
    ensure_jar "$build"
    preload_jsig
    local sweep=("$JAVA" "${RANK_JVM_FLAGS[@]}" -cp "$JAR" io.efabench.sweep.Sweep)
    [[ $mode == cluster ]] && exec "${sweep[@]}" "$@"
    local prefix=${EFABENCH_TESTBED_NAME:-efb}
    local state=/run/efabench-testbed${EFABENCH_TESTBED_NAME:+-$prefix} NODES="" k out="" a
    [[ -f $state/config ]] || exec "${sweep[@]}" "$@"
    NODES=$(sed -n 's/^NODES=//p' "$state/config")
    local prev=""
    for a in "$@"; do [[ $prev == --out ]] && out=$a; prev=$a; done
    if [[ -z $out ]]; then
        out=$RESULTS/sweep-$(date +%Y%m%d-%H%M%S)
        set -- "$@" --out "$out"
    fi
    local logs=$out/logs port=$((20000 + RANDOM % 20000))
    mkdir -p "$logs" || die 1 "cannot create $logs"
    note "sweep over the testbed: $NODES nodes ($prefix-n1..$prefix-n$NODES), one rank each; logs in $(rel "$logs")"
    trap 'on_signal INT 130' INT; trap 'on_signal TERM 143' TERM
    for ((k = NODES - 1; k >= 0; k--)); do
        # The testbed's nodes share this machine's CPUs: busy-polling ranks yield, as oversubscribed ones do.
        local env=(RANK=$k WORLD_SIZE=$NODES LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=$prefix-n1 MASTER_PORT=$port
            EFABENCH_RESULTS=$RESULTS EFABENCH_YIELD=${EFABENCH_YIELD:-$((NODES > $(nproc) ? 1 : 0))}
            ${LD_PRELOAD:+LD_PRELOAD=$LD_PRELOAD})
        if ((k == 0)); then
            setsid bash "$ROOT/testbed/testbed.sh" exec "$prefix-n$((k + 1))" env "${env[@]}" "${sweep[@]}" "$@" \
                > >(tee "$logs/rank0.log") 2>&1 &
        else
            setsid bash "$ROOT/testbed/testbed.sh" exec "$prefix-n$((k + 1))" env "${env[@]}" "${sweep[@]}" "$@" \
                >"$logs/rank$k.log" 2>&1 &
        fi
        RANK_PIDS[k]=$!
    done
    local rc=0 code
    for ((k = NODES - 1; k >= 0; k--)); do
        wait "${RANK_PIDS[k]}"; code=$?
        ((k == 0)) && rc=$code
    done
    trap - INT TERM
    exit "$rc"
}

cmd_report_class() {  # compare/report: the report CLI, no libfabric needed
    local sub=$1 report=io.efabench.report.Report
    shift
    find_java
    ensure_jar build
    jar_has_class "$report" || die 2 "$report is not in $(rel "$JAR") yet; ./run-jmh.sh ${sub/all/report} is not available in this build"
    exec "$JAVA" -Djava.awt.headless=true -cp "$JAR" "$report" "$sub" "$@"
}

# A run or the seed: Java plans it (Launch plan: the options, this rank, the JMH runs), this runs
# each suite; a later one gets a run folder of its own (-TAG) and joins the first one's after.
run_planned() {
    local plan=() i=7 n first="" mode=local install=yes build=build
    under_launcher && mode=cluster install=no build=nobuild  # never install or build there: every rank would
    find_java
    ensure_libfabric "$install"
    ensure_jar "$build"
    preload_jsig
    ask plan plan "$mode" "$@" || exit 2
    case ${plan[0]} in
    usage) usage; exit 0 ;;
    exec) exec "$JAVA" "${RANK_JVM_FLAGS[@]}" -jar "$JAR" "${plan[@]:1}" ;;
    esac
    local source=${plan[1]} world=${plan[3]} provider=${plan[4]} profile=${plan[5]} after=${plan[6]}
    CLUSTER_RANK=${plan[2]} CLUSTER_WORLD=$world
    [[ $after == report ]] || REPORT_EACH=no
    while ((i < ${#plan[@]})); do
        if [[ ${plan[i]} == note ]]; then note "${plan[i + 1]}"; i=$((i + 2)); continue; fi
        RUN_SUFFIX=${plan[i + 1]:+-${plan[i + 1]}}
        n=${plan[i + 2]}
        JMH_ARGS=("${plan[@]:i+3:n}")
        i=$((i + 3 + n))
        run_suite "$source" "$world" "$provider" "$profile"
        if [[ -z $first ]]; then
            first=$LAST_RUN_DIR
        elif [[ $CLUSTER_RANK == 0 ]]; then  # under a cluster launcher rank 0 merges; the others' logs stay
            "$JAVA" -cp "$JAR" io.efabench.launch.Launch merge "$first" "$LAST_RUN_DIR" "${RUN_SUFFIX#-}" ${source:+keep} || exit 1
        fi
    done
    [[ $CLUSTER_RANK == 0 ]] || exit 0
    if [[ $after == merged ]]; then
        "$JAVA" -cp "$JAR" io.efabench.launch.Launch finish "$first" no yes || die 1 "the report failed for $(rel "$first")"
    elif [[ $after == seed:* ]]; then
        "$JAVA" -cp "$JAR" io.efabench.launch.Seed table "${after#seed:}" "$LAST_RUN_DIR" || exit 1
    fi
    exit 0
}

main() {
    ARGV=("$0" "$@")  # the command line, as the run folder's provenance keeps it
    case ${1:-} in
    --help) usage; exit 0 ;;
    test) shift; cmd_test "$@" ;;
    compare | ranks) cmd_report_class "$@" ;;
    report) (($# == 2)) || die 2 "usage: ./run-jmh.sh report DIR"; cmd_report_class all "$2" ;;
    doctor) shift; cmd_doctor "$@" ;;
    build) cmd_build "$@" ;;
    testbed) shift; cmd_testbed "$@" ;;
    sweep) shift; cmd_sweep "$@" ;;
    esac
    run_planned "$@"
}

main "$@"

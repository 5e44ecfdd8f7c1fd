#!/usr/bin/env bash
# run-jmh.sh: build efabench's benchmarks.jar when needed and run JMH on every rank.
#
#   ./run-jmh.sh [--ranks N] [--provider P] [--profile] [JMH args...]
#   ./run-jmh.sh test [mvn args...]        unit + integration tests (mvn -B verify)
#   ./run-jmh.sh compare OLD NEW [--metric gbps] [--threshold 5]
#   ./run-jmh.sh report DIR                 tables, CSV, plots for a run folder
#   ./run-jmh.sh ranks DIR DIR...           bandwidth against rank count over runs at different rank counts
#   ./run-jmh.sh build                      build target/benchmarks.jar only
#
# Outside a cluster it starts N local ranks (default 2) on 127.0.0.1. Under torchrun, srun or
# mpirun (their variables set) it runs exactly one rank: this process.
#
# Environment: JAVA_HOME (a JDK 25+), EFABENCH_JAR (the jar), EFABENCH_BUILD_DIR (Maven build
# folder, default target), EFABENCH_RESULTS (default results), EFABENCH_RUN_ID (run folder
# name in a cluster), FI_PROVIDER, EFABENCH_PROFILE_EVENT (async-profiler event, default cpu),
# EFABENCH_GRACE_S (how long the other ranks may take to exit after one ended; default 60 s,
# or EFABENCH_TIMEOUT_S + 10 when that is larger).

set -uo pipefail
set +m

RUN_SUFFIX=""
DEFER_REPORT=""   # set while a command's suites run one after the other: one report at the end
LAST_RUN_DIR=""   # the run folder of the last suite run

MIN_JAVA=25
DEFAULT_RANKS=2
METRICS_PROFILER=io.efabench.harness.MetricsProfiler
REPORT_CLASS=io.efabench.report.Report
PROVIDER_NAME='^[A-Za-z0-9_;+.-]+$'  # libfabric names, layered ones like tcp;ofi_rxm included
# JMH copies the rank JVM's own flags to the benchmark JVMs it forks.
# Several ranks on one host run JMH at once: its single-instance lock (/tmp/jmh.lock) must not apply.
RANK_JVM_FLAGS=(--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -Djmh.ignoreLock=true)
# JMH runs each trial on new threads, and glibc gives a new thread a new malloc arena (up to 8 per
# CPU): under -f 0, what libfabric frees at one trial's teardown stays in an arena the next trial
# does not use, and rank 0's RSS grew ~55 MB per trial (docs/PERFORMANCE.md). Two arenas keep it
# flat. An environment variable, since glibc fixes the limit at the JVM's first threads.
export MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD_DIR=${EFABENCH_BUILD_DIR:-$ROOT/target}
JAR=${EFABENCH_JAR:-$BUILD_DIR/benchmarks.jar}
RESULTS=${EFABENCH_RESULTS:-$ROOT/results}

note() { printf 'run-jmh: %s\n' "$*"; }
warn() { printf 'run-jmh: %s\n' "$*" >&2; }
die() { local code=$1; shift; warn "$*"; exit "$code"; }

usage() {
    cat <<EOF
usage: ./run-jmh.sh [--ranks N] [--provider P] [--profile] [JMH args...]
       ./run-jmh.sh test [mvn args...]
       ./run-jmh.sh compare OLD NEW [--metric gbps] [--threshold 5]
       ./run-jmh.sh report DIR
       ./run-jmh.sh ranks DIR DIR... [--metric gbps]
       ./run-jmh.sh build
       ./run-jmh.sh doctor [--no-run] [--json] [--libfabric DIR]
       ./run-jmh.sh seed write|sendrecv|all2all|proxy|ipc [--sizes all|quick|LIST] [--provider P] [-- JMH args]

  --ranks N      local ranks to start (default $DEFAULT_RANKS; not allowed under srun/mpirun/torchrun)
  --provider P   libfabric provider (FI_PROVIDER), e.g. tcp, shm, efa (local default: tcp)
  --profile      async-profiler flame graph of rank 0 into <run folder>/profile/
  --             end of launcher options; everything after goes to JMH

JMH options use one dash (-p size=1M, -wi 1, -i 3, -f 1, -l to list, -h for JMH's help).
With no JMH arguments: the quick suite, SendRecvBenchmark and WriteBenchmark at 4K-16M (README);
  where no GPU is visible their host configs, one after the other, in one run folder.
EOF
}

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
        if ((major >= MIN_JAVA)) && [[ -z $need || -x $JAVA_HOME/bin/javac ]]; then
            JAVA=$JAVA_HOME/bin/java
            return
        fi
        if ((major < MIN_JAVA)); then
            warn "JAVA_HOME=$JAVA_HOME is JDK $major, not $MIN_JAVA+; looking for another"
        else
            warn "JAVA_HOME=$JAVA_HOME has no javac (a runtime, not a JDK); looking for a JDK to build with"
        fi
    fi
    # The system's JDKs and PATH first; then a jlink runtime copied next to the jar (GPU
    # machines without a JDK), which can run the jar but not build it.
    for cand in /usr/lib/jvm/*/bin/java "$(command -v java 2>/dev/null)" "$ROOT/.jdk/bin/java"; do
        [[ -n $cand && -x $cand ]] || continue
        [[ -n $need && ! -x ${cand%/java}/javac ]] && continue
        major=$(java_major "$cand") || continue
        if ((major >= MIN_JAVA && major > best_major)); then
            best=$cand
            best_major=$major
        fi
    done
    [[ -n $best ]] || die 1 "no JDK $MIN_JAVA+ found (JAVA_HOME, /usr/lib/jvm/*, PATH, .jdk): install one (e.g. Temurin $MIN_JAVA) or set JAVA_HOME"
    JAVA=$(readlink -f "$best")
    export JAVA_HOME=${JAVA%/bin/java}
}

# libfabric's shm provider (efa loads it for peers on one node) installs SIGSEGV/SIGBUS
# handlers over the JVM's; the JDK's libjsig.so, preloaded, chains them. The Java side refuses
# shm and efa without it.
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

java_version_line() { "$JAVA" -version 2>&1 | grep -m1 ' version "'; }

have_libfabric() {
    local ldconfig d cache
    ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
    # Read the whole cache before matching: `ldconfig -p | grep -q` under pipefail fails when grep
    # exits at the match and ldconfig, still writing, dies of SIGPIPE (seen under load).
    cache=$("$ldconfig" -p 2>/dev/null) || true
    [[ $cache == *'libfabric.so.1 '* ]] && return 0
    local IFS=:
    for d in ${LD_LIBRARY_PATH:-}; do
        [[ -n $d && -e $d/libfabric.so.1 ]] && return 0
    done
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
    if ((rc != 0)); then
        warn "apt-get could not install $*; its last lines:"
        tail -n 3 "$log" | sed 's/^/  /' >&2
    fi
    rm -f "$log"
    return $rc
}

# Installs libfabric where it can (root with apt-get, outside a cluster job); otherwise names
# the packages. Not fatal: GPU-only benchmarks run without libfabric, fabric ones then stop
# with their own line.
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
    ((${#paths[@]})) || return 1
    [[ -n $(find "${paths[@]}" -newer "$JAR" -print -quit 2>/dev/null) ]]
}

plain() {  # Debian's Maven leaves colour resets on its output even in batch mode
    sed -u 's/\x1b\[[0-9;]*m//g'
}

maven_opts() {
    # Maven's own Guava warns about sun.misc.Unsafe on JDK 24+; the build does not use it.
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
    if [[ -x $JAVA_HOME/bin/javac ]]; then
        BUILD_JDK=$JAVA_HOME
    else
        BUILD_JDK=$(find_java javac 2>/dev/null && echo "$JAVA_HOME") || return 1
    fi
}

# ensure_jar build|nobuild: "nobuild" inside a cluster job, where every rank would start Maven.
ensure_jar() {
    local mode=$1
    if [[ -n ${EFABENCH_JAR:-} ]]; then
        [[ -f $JAR ]] || die 1 "EFABENCH_JAR=$JAR does not exist"
        return
    fi
    jar_stale || return 0
    # No jar at all: a fresh clone. Install Maven where possible (a stale jar is used as it is).
    [[ $mode == build && ! -f $JAR ]] && ensure_maven "build $(rel "$JAR")"
    if [[ $mode == build ]] && can_build; then
        build_jar
    elif [[ -f $JAR ]]; then
        if [[ $mode == build ]]; then
            note "using $(rel "$JAR") as it is (no Maven and JDK here to rebuild it)"
        else
            note "using $(rel "$JAR") as it is (sources are newer; inside a cluster job run ./run-jmh.sh build first)"
        fi
    elif [[ $mode == build ]]; then
        die 1 "no $JAR and no Maven and JDK to build it: install maven and a JDK $MIN_JAVA+, or set EFABENCH_JAR"
    else
        die 1 "no $JAR: build it once before starting the ranks (./run-jmh.sh build)"
    fi
}

jar_has_class() { grep -qaF "${1//.//}.class" "$JAR"; }

# ---------------------------------------------------------------- small helpers

rel() {  # a path relative to the current folder when it lies below it
    local p=$1
    if [[ $p == "$PWD"/* ]]; then echo "${p#"$PWD"/}"; else echo "$p"; fi
}

shell_words() {  # the command line as one would type it
    local out="" a
    for a in "$@"; do
        if [[ $a =~ ^[A-Za-z0-9_./=:,+@%-]+$ ]]; then
            out+="${out:+ }$a"
        else
            out+="${out:+ }'${a//\'/\'\\\'\'}'"
        fi
    done
    printf '%s' "$out"
}

free_port() {  # a port nobody listens on, below the kernel's ephemeral range
    local i p
    for i in {1..100}; do
        p=$((20000 + RANDOM % 12000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

run_folder_name() {  # run_folder_name local|cluster: the run folder's name (Java's: RunIds; a job's ranks agree on it)
    "$JAVA" -cp "$JAR" io.efabench.launch.Launch runid "$1" "$RESULTS" "$RUN_SUFFIX" || die 1 "cannot name the run folder"
}

write_provenance() {  # write_provenance RUN_DIR MODE RANKS PROVIDER HOSTS...: Java writes provenance/launcher.json
    local dir=$1 mode=$2 ranks=$3 provider=${4:--}
    shift 4
    EFABENCH_COMMAND_LINE=$COMMAND_LINE EFABENCH_ROOT=$ROOT \
        "$JAVA" -cp "$JAR" io.efabench.launch.Launch provenance "$dir" "$mode" "$ranks" "$provider" "$@" -- "${JMH_ARGS[@]}" \
        || die 1 "cannot write the launcher's provenance in $(rel "$dir")"
}

# ---------------------------------------------------------------- rank 0's terminal view

# Rank 0's output with a progress line before every fork and stack frames folded, and a failed
# rank's one-line reasons: Java's (io.efabench.launch.LeaderView), bash only pipes.
failure_lines() {  # failure_lines LOG
    "$JAVA" -cp "$JAR" io.efabench.launch.LeaderView why "$1" 2>/dev/null || tail -n 5 -- "$1" 2>/dev/null
}

# ---------------------------------------------------------------- JMH arguments

# LauncherProbeBenchmark is a test helper (LauncherIT): kept out of -l and of runs by regex unless named.
hide_test_helpers() {
    local a
    for a in "${JMH_ARGS[@]}"; do
        [[ $a == *LauncherProbe* ]] && return 0
    done
    JMH_ARGS+=(-e LauncherProbeBenchmark)
}

is_info_only() {  # JMH invocations that list or explain rather than run
    local a
    for a in "$@"; do
        case $a in -l | -lp | -lprof | -lrf | -h | -help | --help) return 0 ;; esac
    done
    return 1
}

check_jmh_args() {
    local a why
    for a in "${JMH_ARGS[@]}"; do
        case $a in
        -rf | -rff | -rf=* | -rff=*) die 2 "${a%%=*} is set by the launcher (rank 0's JSON goes to results/<run>/jmh.json); leave it out" ;;
        esac
    done
    # Java answers: does every -p config=... name a config of the benchmarks it applies to?
    if jar_has_class io.efabench.launch.Launch; then
        launch_ask check "${JMH_ARGS[@]}" >/dev/null || exit 2
    fi
}

# launch_ask COMMAND ARGS...: Launch's answer on stdout. On a refusal, its one line (without the
# JVM's own notes on stderr, e.g. "Picked up JAVA_TOOL_OPTIONS: ...", which clusters often set)
# and status 2.
launch_ask() {
    local err rc why
    err=$(mktemp "${TMPDIR:-/tmp}/efabench-launch.XXXXXX") || die 1 "cannot create a temporary file"
    "$JAVA" -cp "$JAR" io.efabench.launch.Launch "$@" 2>"$err"
    rc=$?
    ((rc == 0)) || why=$(grep -v '^Picked up ' "$err" | tail -n 1)
    rm -f -- "$err"
    ((rc == 0)) && return 0
    warn "${why#run-jmh: }"
    return 2
}

jmh_fixed_args() {  # jmh_fixed_args RESULT_FILE -> FIXED_ARGS
    local a foe=no
    for a in "${JMH_ARGS[@]}"; do
        [[ $a == -foe ]] && foe=yes
    done
    FIXED_ARGS=()
    [[ $foe == yes ]] || FIXED_ARGS+=(-foe true)
    [[ ${EFABENCH_NO_METRICS:-} == 1 ]] || FIXED_ARGS+=(-prof "$METRICS_PROFILER")
    FIXED_ARGS+=(-rf json -rff "$1")
}

# Rank 0's JMH arguments: the user's, plus async-profiler under --profile (Java's: ProfileArgs).
leader_args() {  # leader_args yes|no RUN_DIR -> LEADER_ARGS
    LEADER_ARGS=("${JMH_ARGS[@]}")
    [[ $1 == yes ]] || return 0
    local answer
    answer=$(mktemp "${TMPDIR:-/tmp}/efabench-profile.XXXXXX") || die 1 "cannot create a temporary file"
    "$JAVA" -cp "$JAR" io.efabench.launch.Launch profileargs "$(dirname "$JAR")" "$2" "${JMH_ARGS[@]}" >"$answer" || exit 1
    mapfile -d '' -t LEADER_ARGS <"$answer"
    rm -f -- "$answer"
}

# ---------------------------------------------------------------- running ranks

declare -a RANK_PIDS=()
FILTER_PID=""

# A rank runs in its own session and process group (setsid, started directly so that $! is
# the group's id), so a terminal's Ctrl-C reaches only the launcher, which stops every group,
# JMH's forked JVMs included. The small shell around the JVM turns death by a signal into an
# exit status and one line in the rank's log, instead of bash's job notice on the terminal.
# shellcheck disable=SC2016
RANK_WRAPPER=(setsid bash -c 'exec 3>&2 2>/dev/null; "$@" 2>&3 3>&-; s=$?
    ((s > 128)) && echo "run-jmh: this rank was killed by signal $((s - 128))" >&3
    exit $s' rank)

kill_ranks() {  # kill_ranks SIGNAL: every rank's process group (its JMH forks included)
    local pid
    for pid in "${RANK_PIDS[@]}"; do
        [[ -n $pid ]] && kill "-$1" -- "-$pid" 2>/dev/null
    done
}

stop_ranks() {  # TERM, a few seconds to exit, then KILL; returns once no process of the ranks is left
    local i
    kill_ranks TERM
    kill_ranks CONT  # a stopped process (SIGSTOP, a debugger) acts on TERM only once continued
    for i in {1..20}; do
        ranks_alive || return 0
        sleep 0.25
    done
    kill_ranks KILL
    # A JVM dies a moment after its wrapper: the shm sweep after the ranks must not find it alive.
    for i in {1..40}; do
        ranks_alive || return 0
        sleep 0.25
    done
}

ranks_alive() {  # true while any process is left in a rank's process group (JMH's forks included)
    local pid
    for pid in "${RANK_PIDS[@]}"; do
        [[ -n $pid ]] && kill -0 -- "-$pid" 2>/dev/null && return 0
    done
    return 1
}

on_signal() {
    trap '' INT TERM
    warn "interrupted ($1): stopping the ranks"
    stop_ranks
    local i
    for i in {1..8}; do  # rank 0's last lines, if its output pipe drains soon
        if [[ -z $FILTER_PID ]] || ! kill -0 "$FILTER_PID" 2>/dev/null; then break; fi
        sleep 0.25
    done
    exit "$2"
}

grace_seconds() {
    if [[ -n ${EFABENCH_GRACE_S:-} ]]; then
        [[ $EFABENCH_GRACE_S =~ ^[0-9]+$ ]] || die 2 "EFABENCH_GRACE_S=$EFABENCH_GRACE_S is not a number of seconds"
        echo "$EFABENCH_GRACE_S"
        return
    fi
    local g=60 t=${EFABENCH_TIMEOUT_S:-}
    [[ $t =~ ^[0-9]+$ ]] && ((t + 10 > g)) && g=$((t + 10))
    echo "$g"
}

# Starts rank 0 with its output shown through LeaderView's view and kept in LOG.
start_leader() {  # start_leader LOG CMD... (env already exported by the caller's prefix)
    local log=$1
    shift
    PIPE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/run-jmh.XXXXXX") || die 1 "cannot create a temporary folder"
    trap 'rm -rf "$PIPE_DIR"' EXIT
    mkfifo "$PIPE_DIR/rank0" || die 1 "cannot create a pipe in $PIPE_DIR"
    # The view counts the forks JMH will run for these arguments (JMH's own list and parser); a jar
    # from before it (EFABENCH_JAR) shows rank 0's output as it is.
    local view=(cat)
    jar_has_class io.efabench.launch.LeaderView &&
        view=("$JAVA" -cp "$JAR" io.efabench.launch.LeaderView view "$(rel "$log")" "${JMH_ARGS[@]}")
    tee -a "$log" <"$PIPE_DIR/rank0" | "${view[@]}" &
    FILTER_PID=$!
    "${RANK_WRAPPER[@]}" "$@" >"$PIPE_DIR/rank0" 2>&1 &
    RANK_PIDS[0]=$!
}

# results/latest moves only to a run that has results (rank 0's JSON is not empty), so a
# failed run never hides the last good one from `report results/latest` or `compare`.
point_latest() {  # point_latest RUN_DIR RUN_ID
    [[ -s $1/jmh.json ]] && ln -sfn "$2" "$RESULTS/latest"
    return 0
}

# The shm provider names a region /dev/shm/<pid>:<uid>:<endpoint> and removes it when the
# endpoint closes; a rank that was killed, or exited on a failure without closing, leaves it
# (16 MiB each). After the ranks end, every such region of ours created during this run whose
# process is gone is removed: no live process can still use it. So is a killed JVM's call board
# (/dev/shm/efabench-calls-<pid>, 1 KiB: see CallBoard), which its exit would have removed.
remove_dead_shm_regions() {  # remove_dead_shm_regions MARKER (a file made before the ranks started)
    local f pid
    for f in /dev/shm/[0-9]*:[0-9]*:[0-9]* /dev/shm/efabench-calls-[0-9]*; do
        [[ -f $f && -O $f && $f -nt $1 ]] || continue
        pid=${f##*/}
        pid=${pid#efabench-calls-}
        pid=${pid%%:*}
        kill -0 "$pid" 2>/dev/null || rm -f -- "$f"
    done
    return 0
}

report_run() {  # report_run RUN_DIR
    if ! jar_has_class "$REPORT_CLASS"; then
        note "report: $REPORT_CLASS is not in this jar yet; skipped (results are in $(rel "$1")/jmh.json)"
        return 0
    fi
    "$JAVA" -Djava.awt.headless=true -cp "$JAR" "$REPORT_CLASS" all "$1"
}

show_profiles() {
    local f found=()
    while IFS= read -r f; do found+=("$f"); done < <(find "$1/profile" -name '*.html' 2>/dev/null | sort)
    if ((${#found[@]})); then
        note "flame graphs:"
        for f in "${found[@]}"; do printf '  %s\n' "$(rel "$f")"; done
    else
        warn "--profile: no flame graph was written to $(rel "$1")/profile"
    fi
}

run_local() {
    local ranks=$1 provider=$2 profile=$3
    local port run_id run_dir k
    if [[ -n ${MASTER_PORT:-} ]]; then
        port=$MASTER_PORT
    else
        port=$(free_port) || die 1 "found no free TCP port on 127.0.0.1 for the rendezvous"
    fi
    run_id=$(run_folder_name local) || exit 1
    run_dir=$RESULTS/$run_id
    mkdir -p "$run_dir/logs" "$run_dir/followers" "$run_dir/provenance" || die 1 "cannot create $run_dir"
    write_provenance "$run_dir" local "$ranks" "$provider" "$(hostname)"

    jmh_fixed_args "$run_dir/jmh.json"
    local leader_fixed=("${FIXED_ARGS[@]}")
    leader_args "$profile" "$run_dir"

    local followers=""
    ((ranks > 1)) && followers="; followers' output goes to $(rel "$run_dir")/logs/rank{1..$((ranks - 1))}.log (their JMH numbers only mirror rank 0)"
    ((ranks == 2)) && followers="; rank 1's output goes to $(rel "$run_dir")/logs/rank1.log (its JMH numbers only mirror rank 0)"
    note "$ranks $( ((ranks == 1)) && echo rank || echo ranks) on 127.0.0.1:$port over FI_PROVIDER=$provider; run folder $(rel "$run_dir")"
    note "rank 0's output follows (also in $(rel "$run_dir")/logs/rank0.log)$followers"

    trap 'on_signal INT 130' INT
    trap 'on_signal TERM 143' TERM
    export WORLD_SIZE=$ranks LOCAL_WORLD_SIZE=$ranks MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
        FI_PROVIDER=$provider EFABENCH_RUN_DIR=$run_dir EFABENCH_LOOPBACK=1 EFABENCH_RANK_SOURCE=local
    for ((k = ranks - 1; k >= 1; k--)); do
        jmh_fixed_args "$run_dir/followers/rank$k.json"
        RANK=$k LOCAL_RANK=$k "${RANK_WRAPPER[@]}" "$JAVA" "${RANK_JVM_FLAGS[@]}" -jar "$JAR" "${JMH_ARGS[@]}" "${FIXED_ARGS[@]}" \
            >"$run_dir/logs/rank$k.log" 2>&1 &
        RANK_PIDS[k]=$!
    done
    RANK=0 LOCAL_RANK=0 start_leader "$run_dir/logs/rank0.log" \
        "$JAVA" "${RANK_JVM_FLAGS[@]}" -jar "$JAR" "${LEADER_ARGS[@]}" "${leader_fixed[@]}"

    wait_ranks "$run_dir"
    local failed=$?
    wait "$FILTER_PID" 2>/dev/null
    FILTER_PID=""
    trap - INT TERM
    point_latest "$run_dir" "$run_id"
    remove_dead_shm_regions "$run_dir/provenance/launcher.json"
    LAST_RUN_DIR=$run_dir
    ((failed)) && exit 1
    [[ $profile == yes ]] && show_profiles "$run_dir"
    [[ -n $DEFER_REPORT ]] || report_run "$run_dir" || die 1 "the report failed for $(rel "$run_dir")"
}

# Waits for every rank; after the first one ends, the others get the grace period to end
# by themselves (a failed peer makes them fail fast), then they are killed. Prints the
# reasons of every rank that failed. Returns 1 when any rank failed.
wait_ranks() {
    local run_dir=$1 grace deadline=0 first="" k pid rc now
    grace=$(grace_seconds)
    declare -A status=()
    local live=("${!RANK_PIDS[@]}")
    while ((${#live[@]})); do
        local still=() failed_now=()
        for k in "${live[@]}"; do
            pid=${RANK_PIDS[k]}
            if kill -0 "$pid" 2>/dev/null; then
                still+=("$k")
                continue
            fi
            wait "$pid" 2>/dev/null  # (no "Killed" job notice from bash)
            rc=$?
            status[$k]=$rc
            if [[ -z $first ]]; then
                first=$k
                deadline=$((SECONDS + grace))
            fi
            ((rc != 0)) && failed_now+=("$k")
        done
        live=("${still[@]}")
        ((${#live[@]})) || break
        if ((${#failed_now[@]})); then
            warn "rank ${failed_now[*]} failed; waiting up to ${grace}s for rank ${live[*]} to stop"
        fi
        now=$SECONDS
        if ((deadline && now >= deadline)); then
            warn "rank(s) ${live[*]} still running ${grace}s after rank $first ended: killing them"
            local keep=("${RANK_PIDS[@]}")
            RANK_PIDS=()
            for k in "${live[@]}"; do RANK_PIDS[k]=${keep[k]}; done
            stop_ranks
            for k in "${live[@]}"; do
                wait "${keep[k]}" 2>/dev/null
                status[$k]=killed
            done
            RANK_PIDS=("${keep[@]}")
            break
        fi
        sleep 0.5
    done
    local bad=0
    for k in $(printf '%s\n' "${!status[@]}" | sort -n); do
        rc=${status[$k]}
        [[ $rc == 0 ]] && continue
        bad=1
        local why="exited with status $rc"
        [[ $rc == killed ]] && why="did not exit in time and was killed"
        [[ $rc =~ ^[0-9]+$ ]] && ((rc > 128)) && why="was killed by signal $((rc - 128))"
        warn "rank $k failed: $why (log: $(rel "$run_dir")/logs/rank$k.log)"
        failure_lines "$run_dir/logs/rank$k.log" | sed 's/^/  /' >&2
    done
    return $bad
}

run_cluster() {  # the launcher, this process's rank and the world size as Java read them (launch_info)
    local source=$1 provider=$2 profile=$3
    local rank=$CLUSTER_RANK world=$CLUSTER_WORLD run_id run_dir log rc
    [[ -n $provider ]] && export FI_PROVIDER=$provider
    run_id=$(run_folder_name cluster) || exit 1
    run_dir=$RESULTS/$run_id
    mkdir -p "$run_dir/logs" "$run_dir/followers" "$run_dir/provenance" || die 1 "cannot create $run_dir"
    export EFABENCH_RUN_DIR=$run_dir
    log=$run_dir/logs/rank$rank.log
    : >"$run_dir/logs/.rank$rank.started"  # what remove_dead_shm_regions measures "created during this run" by

    trap 'on_signal INT 130' INT
    trap 'on_signal TERM 143' TERM
    if ((rank == 0)); then
        local hosts=("$(hostname)")
        [[ -n ${SLURM_JOB_NODELIST:-} ]] && hosts=("$SLURM_JOB_NODELIST")
        write_provenance "$run_dir" "$source" "$world" "${FI_PROVIDER:-}" "${hosts[@]}"
        jmh_fixed_args "$run_dir/jmh.json"
        leader_args "$profile" "$run_dir"
        note "rank 0 of $world ($source) on $(hostname), FI_PROVIDER=${FI_PROVIDER:-<default>}; run folder $(rel "$run_dir")"
        note "rank 0's output follows (also in $(rel "$log")); the other ranks log to $(rel "$run_dir")/logs/rank<k>.log on their hosts (their JMH numbers only mirror rank 0)"
        start_leader "$log" "$JAVA" "${RANK_JVM_FLAGS[@]}" -jar "$JAR" "${LEADER_ARGS[@]}" "${FIXED_ARGS[@]}"
    else
        jmh_fixed_args "$run_dir/followers/rank$rank.json"
        "${RANK_WRAPPER[@]}" "$JAVA" "${RANK_JVM_FLAGS[@]}" -jar "$JAR" "${JMH_ARGS[@]}" "${FIXED_ARGS[@]}" >"$log" 2>&1 &
        RANK_PIDS[0]=$!
    fi
    wait "${RANK_PIDS[0]}" 2>/dev/null
    rc=$?
    [[ -n $FILTER_PID ]] && wait "$FILTER_PID" 2>/dev/null
    FILTER_PID=""
    trap - INT TERM
    ((rank == 0)) && point_latest "$run_dir" "$run_id"
    remove_dead_shm_regions "$run_dir/logs/.rank$rank.started"
    LAST_RUN_DIR=$run_dir
    if ((rc != 0)); then
        warn "rank $rank on $(hostname) failed: exited with status $rc (log: $(rel "$log"))"
        failure_lines "$log" | sed 's/^/  /' >&2
        exit 1
    fi
    if ((rank == 0)); then
        [[ $profile == yes ]] && show_profiles "$run_dir"
        [[ -n $DEFER_REPORT ]] || report_run "$run_dir" || die 1 "the report failed for $(rel "$run_dir")"
    fi
}

# Whether a job launcher's variables are set at all: decides only whether this process may build
# the jar (never under a launcher). Which launcher, which rank and how many is Java's answer
# (launch_info), the same reading each rank's benchmark does when it joins the group.
under_launcher() {
    [[ -n ${RANK:-}${WORLD_SIZE:-}${OMPI_COMM_WORLD_RANK:-}${OMPI_COMM_WORLD_SIZE:-}${SLURM_PROCID:-} ]]
}

launch_info() {  # sets CLUSTER_SOURCE, CLUSTER_RANK, CLUSTER_WORLD (one line and exit 2 on bad variables)
    local answer
    answer=$("$JAVA" -cp "$JAR" io.efabench.launch.Launch rank) || exit 2
    read -r CLUSTER_SOURCE CLUSTER_RANK CLUSTER_WORLD _ <<<"$answer"
}

# ---------------------------------------------------------------- subcommands

cmd_test() {
    find_java javac
    ensure_libfabric yes
    ensure_maven "run the tests"
    maven_opts
    # Tests load libfabric into the surefire and failsafe JVMs too (see preload_jsig).
    preload_jsig
    note "mvn -B verify with $(java_version_line)"
    (cd "$ROOT" && mvn -B -ntp -Dstyle.color=never "${MVN_BUILD_DIR[@]}" verify "$@") 2>&1 | plain
    local rc=${PIPESTATUS[0]}
    note "test reports: $(rel "$BUILD_DIR")/surefire-reports (unit), $(rel "$BUILD_DIR")/failsafe-reports (integration)"
    ((rc == 0)) || warn "tests failed (mvn exit status $rc)"
    exit "$rc"
}

# doctor: Java checks the node (io.efabench.launch.Doctor), this starts the 2-rank smoke runs
# it names (Write and SendRecv at 1M, about 20 s) and Java reads their results. Exit 1 on any FAIL.
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
    if [[ $run == yes ]] && under_launcher; then
        die 2 "doctor: its smoke run starts 2 ranks of its own: run it on the node outside srun/mpirun/torchrun, or pass --no-run"
    fi
    # --json: stdout carries the one JSON object only; the launcher's own notes go to stderr.
    if [[ $json == yes ]]; then exec 3>&1 1>&2; else exec 3>&1; fi
    find_java
    ensure_jar build
    [[ -z $lib ]] || export LD_LIBRARY_PATH="$lib:$lib/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    preload_jsig
    state=$(mktemp "${TMPDIR:-/tmp}/efabench-doctor.XXXXXX") || die 1 "cannot create a temporary file"
    local quiet=() doctor=("$JAVA" "${RANK_JVM_FLAGS[@]}" -cp "$JAR" io.efabench.launch.Doctor)
    [[ $json == yes ]] && quiet=(--quiet)
    "${doctor[@]}" checks "$state" ${lib:+--libfabric "$lib"} "${quiet[@]}"
    rc=$?
    ((rc == 2)) && exit 2
    local runs=()
    if ((rc == 0)) && [[ $run == yes ]]; then
        local smoke provider words
        mapfile -t smoke < <("${doctor[@]}" smoke "$state")
        provider=${smoke[0]:-tcp}
        DEFER_REPORT=yes
        for ((k = 1; k < ${#smoke[@]}; k++)); do
            read -ra words <<<"${smoke[k]}"
            log=$(mktemp "${TMPDIR:-/tmp}/efabench-doctor-run.XXXXXX")
            [[ $json == yes ]] || note "doctor: smoke run $k of $((${#smoke[@]} - 1)): ${smoke[k]} over $provider (2 ranks)"
            # A subshell: a failed run exits; its run folder comes back through the log's last line.
            ( JMH_ARGS=("${words[@]}"); run_suite "" 2 "$provider" no; echo "doctor-run-dir $LAST_RUN_DIR" ) >"$log" 2>&1
            line=$(grep '^doctor-run-dir ' "$log" | tail -n 1)
            if [[ -n $line ]]; then
                runs+=("${line#doctor-run-dir }")
            else
                runs+=("failed:${smoke[k]} (log: $log; $(grep -m1 -E 'efabench: |rank [0-9]+ failed' "$log" | cut -c1-300))")
                continue
            fi
            rm -f -- "$log"
        done
    fi
    "${doctor[@]}" finish "$state" $([[ $json == yes ]] && echo --json) "${runs[@]}" >&3
    rc=$?
    rm -f -- "$state"
    exit "$rc"
}

check_provider() {  # check_provider NAME: --provider's value, or a one-line error
    [[ $1 =~ $PROVIDER_NAME ]] || die 2 "--provider needs a provider name (tcp, shm, efa, ...), got '$1'"
}

# Java, libfabric and the jar for a run: under a cluster launcher never installs or builds (every
# rank would), and sets RUN_SOURCE (and CLUSTER_*) from Java's reading of the launcher's variables.
prepare_run() {
    RUN_SOURCE=""
    find_java
    if under_launcher; then
        ensure_libfabric no
        ensure_jar nobuild
        launch_info
        RUN_SOURCE=$CLUSTER_SOURCE
    else
        ensure_libfabric yes
        ensure_jar build
    fi
}

# seed EXP: Java names the seed's configs, sizes, ranks and semantics for EXP (io.efabench.launch.Seed),
# this runs them like any suite (local ranks, or the job's under a cluster launcher), then Java
# prints our table beside the seed's p5 figures.
cmd_seed() {
    local usage="usage: ./run-jmh.sh seed write|sendrecv|all2all|proxy|ipc [--sizes all|quick|LIST] [--provider P] [-- JMH args]"
    (($# >= 1)) || die 2 "$usage"
    local exp=$1 sizes=all provider="" source="" out line
    local extra=()
    shift
    while (($#)); do
        case $1 in
        --sizes) (($# >= 2)) || die 2 "--sizes needs all, quick or a list of the seed's sizes"; sizes=$2; shift ;;
        --sizes=*) sizes=${1#--sizes=} ;;
        --provider) (($# >= 2)) || die 2 "--provider needs a value"; provider=$2; shift ;;
        --provider=*) provider=${1#--provider=} ;;
        --) shift; extra=("$@"); break ;;
        *) die 2 "$usage" ;;
        esac
        shift
    done
    [[ -z $provider ]] || check_provider "$provider"
    prepare_run
    source=$RUN_SOURCE
    preload_jsig
    out=$("$JAVA" "${RANK_JVM_FLAGS[@]}" -cp "$JAR" io.efabench.launch.Seed args "$exp" --sizes "$sizes" -- "${extra[@]}") || exit 2
    local plan=()
    mapfile -t plan <<<"$out"
    read -ra JMH_ARGS <<<"${plan[1]}"
    for line in "${plan[@]:2}"; do note "seed $exp: ${line#note: }"; done
    [[ -n $source ]] || note "seed $exp: ${plan[0]} local ranks on this host stand for the seed's ${plan[0]} nodes: same work, not the same network"
    DEFER_REPORT=yes
    run_suite "$source" "${plan[0]}" "$provider" no
    if [[ -z $source || $CLUSTER_RANK == 0 ]]; then
        "$JAVA" -cp "$JAR" io.efabench.launch.Seed table "$exp" "$LAST_RUN_DIR" || exit 1
    fi
    exit 0
}

cmd_report_class() {  # compare/report: the report CLI, no libfabric needed
    local sub=$1
    shift
    find_java
    ensure_jar build
    if ! jar_has_class "$REPORT_CLASS"; then
        die 2 "$REPORT_CLASS is not in $(rel "$JAR") yet; ./run-jmh.sh ${sub/all/report} is not available in this build"
    fi
    exec "$JAVA" -Djava.awt.headless=true -cp "$JAR" "$REPORT_CLASS" "$sub" "$@"
}

main() {
    COMMAND_LINE=$(shell_words "$0" "$@")
    case ${1:-} in
    test) shift; cmd_test "$@" ;;
    compare) shift; cmd_report_class compare "$@" ;;
    ranks) shift; cmd_report_class ranks "$@" ;;
    report)
        shift
        (($# == 1)) || die 2 "usage: ./run-jmh.sh report DIR"
        cmd_report_class all "$@"
        ;;
    doctor) shift; cmd_doctor "$@" ;;
    seed) shift; cmd_seed "$@" ;;
    build)
        shift
        (($# == 0)) || die 2 "usage: ./run-jmh.sh build"
        find_java javac
        ensure_maven "build $(rel "$JAR")"
        BUILD_JDK=$JAVA_HOME
        build_jar
        note "built $(rel "$JAR")"
        exit 0
        ;;
    esac

    local ranks="" provider="" profile=no
    while (($#)); do
        case $1 in
        --ranks | --ranks=*)
            if [[ $1 == --ranks ]]; then
                (($# >= 2)) || die 2 "--ranks needs a value (a positive integer)"
                ranks=$2
                shift
            else
                ranks=${1#--ranks=}
            fi
            [[ $ranks =~ ^[1-9][0-9]{0,3}$ ]] || die 2 "--ranks needs a positive integer, got '$ranks'"
            ;;
        --provider | --provider=*)
            if [[ $1 == --provider ]]; then
                (($# >= 2)) || die 2 "--provider needs a value (tcp, shm, efa, ...)"
                provider=$2
                shift
            else
                provider=${1#--provider=}
            fi
            check_provider "$provider"
            ;;
        --profile) profile=yes ;;
        --help) usage; exit 0 ;;
        --) shift; break ;;
        --*) die 2 "unknown option $1 (launcher options: --ranks N, --provider P, --profile; JMH options use one dash; see --help)" ;;
        *) break ;;
        esac
        shift
    done
    JMH_ARGS=("$@")

    local source=""
    prepare_run
    source=$RUN_SOURCE
    [[ -n $source && -n $ranks ]] && die 2 "--ranks is not allowed under $source: the job launcher starts the ranks"

    preload_jsig
    ((${#JMH_ARGS[@]})) && hide_test_helpers
    if is_info_only "${JMH_ARGS[@]}"; then
        exec "$JAVA" "${RANK_JVM_FLAGS[@]}" -jar "$JAR" "${JMH_ARGS[@]}"
    fi
    run_planned_suites "$source" "$ranks" "$provider" "$profile"
}

# Java plans the command's JMH runs (io.efabench.launch.Suites: the user's arguments, with the
# host configs where no GPU is visible, or the quick suite) as NUL-ended tokens: the number of
# suites, then "note" TEXT and "suite" TAG N ARGS... A later suite gets a run folder of its own (-TAG) while it runs and joins
# the first one's after; the report then covers them all.
run_planned_suites() {  # run_planned_suites SOURCE RANKS PROVIDER PROFILE
    local answer tokens=() i=1 n first="" suites
    answer=$(mktemp "${TMPDIR:-/tmp}/efabench-suites.XXXXXX") || die 1 "cannot create a temporary file"
    "$JAVA" "${RANK_JVM_FLAGS[@]}" -cp "$JAR" io.efabench.launch.Suites "${JMH_ARGS[@]}" >"$answer" || exit 2
    mapfile -d '' -t tokens <"$answer"
    rm -f -- "$answer"
    suites=${tokens[0]:-0}
    ((suites > 1)) && DEFER_REPORT=yes
    while ((i < ${#tokens[@]})); do
        if [[ ${tokens[i]} == note ]]; then
            note "${tokens[i + 1]}"
            i=$((i + 2))
            continue
        fi
        RUN_SUFFIX=${tokens[i + 1]:+-${tokens[i + 1]}}
        n=${tokens[i + 2]}
        JMH_ARGS=("${tokens[@]:i+3:n}")
        i=$((i + 3 + n))
        run_suite "$1" "$2" "$3" "$4"
        if [[ -z $first ]]; then
            first=$LAST_RUN_DIR
        else
            merge_run "$first" "$LAST_RUN_DIR" "$1" "${RUN_SUFFIX#-}"
        fi
    done
    RUN_SUFFIX=""
    if ((suites > 1)) && [[ -z $1 || $CLUSTER_RANK == 0 ]]; then
        report_run "$first" || die 1 "the report failed for $(rel "$first")"
    fi
}

# merge_run INTO FROM SOURCE TAG: the next suite of one command joins the first one's run folder:
# rank 0's results are appended (Java), every other file moves over under its own name, or with
# -TAG where the name is taken (launcher.json, rank0.log). Under a cluster launcher only rank 0
# merges, after its ranks ended; the other ranks' logs stay in FROM.
merge_run() {
    local into=$1 from=$2 source=$3 tag=$4 f dir base
    [[ -n $source && $CLUSTER_RANK != 0 ]] && return 0
    "$JAVA" -cp "$JAR" io.efabench.launch.Launch merge "$into/jmh.json" "$from/jmh.json" \
        || die 1 "could not merge $(rel "$from") into $(rel "$into"); both are kept"
    for f in "$from"/*/*; do
        [[ -f $f ]] || continue
        dir=${f%/*}
        dir=${dir##*/}
        base=${f##*/}
        mkdir -p "$into/$dir"
        [[ -e $into/$dir/$base ]] && base=${base%.*}-$tag.${base##*.}
        mv -f -- "$f" "$into/$dir/$base"
    done
    [[ -n $source ]] || rm -rf -- "$from"
    point_latest "$into" "${into##*/}"
    note "$(rel "$from")'s results joined $(rel "$into")"
}

# One JMH run of JMH_ARGS on the local ranks or the cluster's; exits non-zero when it fails.
run_suite() {
    local source=$1 ranks=$2 provider=$3 profile=$4
    check_jmh_args
    if [[ -n $source ]]; then
        run_cluster "$source" "$provider" "$profile"
    else
        run_local "${ranks:-$DEFAULT_RANKS}" "${provider:-${FI_PROVIDER:-tcp}}" "$profile"
    fi
}

main "$@"

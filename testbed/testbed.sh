#!/usr/bin/env bash
# testbed.sh: a cluster on one machine (README, "A cluster on one machine"). Needs root.
#
# usage: ./run-jmh.sh testbed up [--nodes N] [--rails M] [--rate RATE] [--slurm]
#        ./run-jmh.sh testbed down
#        ./run-jmh.sh testbed status
#        ./run-jmh.sh testbed exec NODE COMMAND...     (NODE: efb-n1..efb-nN, or efb-head)
#        ./run-jmh.sh testbed rsh NODE COMMAND...      (Open MPI's plm_rsh_agent: the command as one shell line)
#        ./run-jmh.sh testbed links [--seconds S] [--from N] [--to M] [--together]   (each rail's TCP goodput, node N to M)
#        ./run-jmh.sh testbed rate RATE                (every NIC reshaped to RATE)
#        ./run-jmh.sh testbed shape NODE RAIL RATE     (one NIC reshaped to RATE, both ways)
#        ./run-jmh.sh testbed tcp datacenter|lossless|default   (the nodes' TCP on the rails: see cmd_tcp)
#
#   --nodes N    emulated nodes (default 2, at most 32)
#   --rails M    NICs per node, one rail each (default 2, at most 8)
#   --rate RATE  every NIC shaped to RATE both ways, tc's units (default 400mbit)
#   --slurm      also start slurmctld on the head and one slurmd per node (munged if none runs)
#
# What it makes (all removed by `down`, which `up` runs first and after its own failure):
# - network namespaces efb-sw (the switches), efb-head (launchers, slurmctld) and efb-n1..efb-nN,
#   each node and the head with its own UTS namespace (hostname = the namespace's name);
# - in efb-sw one bridge per rail (rail0..) and one for management (mgmt), no addresses;
# - per node a veth rail<k> on rail k, 198.18.<k>.<i>/24, shaped both ways with tbf to RATE, and
#   mgmt0 on the management bridge, 198.19.0.<i>/24 (the head: 198.19.0.254), not shaped;
# - /etc/netns/<ns>/hosts (ip netns exec binds it over /etc/hosts: every node resolves every
#   other by name), and the state under /run/efabench-testbed.
# No namespace has a default route or a link outside the testbed: traffic stays inside it. Nodes
# drop packets whose source address belongs to another rail (strict reverse-path filter) and answer
# ARP on a rail only for that rail's address, as a rail-optimized fabric with one subnet per rail
# would.
set -uo pipefail

# EFABENCH_TESTBED_NAME: the names' prefix (default efb), so two testbeds can stand side by side.
PREFIX=${EFABENCH_TESTBED_NAME:-efb}
[[ $PREFIX =~ ^[a-z][a-z0-9]{0,5}$ ]] || { echo "testbed: EFABENCH_TESTBED_NAME=$PREFIX: 1-6 lower-case letters and digits, a letter first" >&2; exit 2; }
STATE=/run/efabench-testbed${EFABENCH_TESTBED_NAME:+-$PREFIX}
SW=$PREFIX-sw
HEAD=$PREFIX-head
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

say() { printf 'testbed: %s\n' "$*"; }
die() { local code=$1; shift; printf 'testbed: %s\n' "$*" >&2; exit "$code"; }
usage() { sed -n '/^# usage:/,/^# What it makes/{/^# What it makes/!s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; }

need_root() {
    [[ $(id -u) == 0 ]] || die 2 "needs root (network namespaces, veth, tc): run it as root or with sudo"
    local t
    for t in ip tc nsenter unshare; do command -v "$t" >/dev/null || die 2 "needs '$t' (Debian: iproute2, util-linux)"; done
}

# Every namespace the testbed may have made, also from a half-made testbed whose state is gone.
our_namespaces() { ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$PREFIX-(sw|head|n[0-9]+)$"; }

q() { "$@" >/dev/null 2>&1; }  # quiet: for cleanup steps that may find nothing to remove

# ---------------------------------------------------------------- down

cmd_down() {
    need_root
    local ns pids
    # Processes first (slurmd, ranks, orted...): a namespace is only gone when nothing holds it.
    for ns in $(our_namespaces); do
        pids=$(ip netns pids "$ns" 2>/dev/null)
        [[ -n $pids ]] && q kill -TERM $pids
    done
    local waited=0
    while ((waited < 50)); do
        pids=""
        for ns in $(our_namespaces); do pids+=$(ip netns pids "$ns" 2>/dev/null); done
        [[ -z $pids ]] && break
        sleep 0.1
        waited=$((waited + 1))
    done
    for ns in $(our_namespaces); do
        pids=$(ip netns pids "$ns" 2>/dev/null)
        [[ -n $pids ]] && q kill -KILL $pids
    done
    # munged is not in a namespace: stopped only where `up --slurm` started it.
    if [[ -f $STATE/slurm/our-munged && -f /run/munge/munged.pid ]]; then
        q kill -TERM "$(cat /run/munge/munged.pid)"
    fi
    # Persistent UTS namespaces are bind mounts of nsfs: unmount before removing the files.
    if [[ -d $STATE/uts ]]; then
        for f in "$STATE"/uts/*; do [[ -e $f ]] && { q umount "$f"; rm -f -- "$f"; }; done
    fi
    for ns in $(our_namespaces); do q ip netns del "$ns"; done  # deleting a namespace deletes its veths
    rm -rf -- /etc/netns/"$PREFIX"-sw /etc/netns/"$PREFIX"-head /etc/netns/"$PREFIX"-n[0-9]*
    rm -rf -- "$STATE"
    local left
    left=$(our_namespaces | tr '\n' ' ')
    [[ -z $left ]] || die 1 "could not remove namespace(s) $left"
    say "down: nothing of the testbed is left"
}

# ---------------------------------------------------------------- up

NODES=2 RAILS=2 RATE=400mbit SLURM=no

parse_up() {
    while (($#)); do
        case $1 in
        --nodes) NODES=${2:-}; shift ;;
        --rails) RAILS=${2:-}; shift ;;
        --rate) RATE=${2:-}; shift ;;
        --slurm) SLURM=yes ;;
        *) die 2 "up: unknown option '$1' (usage: testbed up [--nodes N] [--rails M] [--rate RATE] [--slurm])" ;;
        esac
        shift
    done
    [[ $NODES =~ ^[0-9]+$ ]] && ((NODES >= 1 && NODES <= 32)) || die 2 "--nodes $NODES: a whole number from 1 to 32"
    [[ $RAILS =~ ^[0-9]+$ ]] && ((RAILS >= 1 && RAILS <= 8)) || die 2 "--rails $RAILS: a whole number from 1 to 8"
    rate_bps "$RATE" >/dev/null || die 2 "--rate $RATE: a rate in tc's units, e.g. 400mbit, 1gbit, 100mbit"
}

# rate_bps RATE -> bit/s (tc's bit units: kbit, mbit, gbit; no unit = bit/s)
rate_bps() {
    local r=${1,,} n unit
    [[ $r =~ ^([0-9]+)(bit|kbit|mbit|gbit)?$ ]] || return 1
    n=${BASH_REMATCH[1]} unit=${BASH_REMATCH[2]:-bit}
    case $unit in bit) echo "$n" ;; kbit) echo $((n * 1000)) ;; mbit) echo $((n * 1000000)) ;; gbit) echo $((n * 1000000000)) ;; esac
    ((n > 0))
}

# A namespace with its own hostname: a netns (ip netns) plus a persistent UTS namespace.
make_node_ns() {  # make_node_ns NAME
    local ns=$1
    ip netns add "$ns" || return 1
    ip -n "$ns" link set lo up || return 1
    # IPv4 only: the tcp provider would list every NIC a second time by its IPv6 link-local address.
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 || return 1
    touch "$STATE/uts/$ns" || return 1
    unshare --uts="$STATE/uts/$ns" hostname "$ns" || return 1
    mkdir -p "/etc/netns/$ns" && cp "$STATE/hosts" "/etc/netns/$ns/hosts"
}

# link NODE_NS IFNAME SWITCH_PORT BRIDGE ADDR/PREFIX
link() {
    local ns=$1 ifname=$2 port=$3 bridge=$4 addr=$5
    ip link add "$port" netns "$SW" type veth peer name "$ifname" netns "$ns" || return 1
    ip -n "$SW" link set "$port" master "$bridge" up || return 1
    ip -n "$ns" addr add "$addr" dev "$ifname" || return 1
    ip -n "$ns" link set "$ifname" up
}

# reshape RATE: every NIC of a testbed that is up to the new rate, both ways (each qdisc made anew: shape).
cmd_rate() {
    need_root
    (($# == 1)) || die 2 "usage: testbed rate RATE"
    [[ -f $STATE/config ]] || die 2 "the testbed is not up"
    rate_bps "$1" >/dev/null || die 2 "rate $1: a rate in tc's units, e.g. 400mbit, 1gbit, 100mbit"
    # shellcheck disable=SC1091
    . "$STATE/config"
    RATE=$1
    local i k
    for ((i = 1; i <= NODES; i++)); do
        for ((k = 0; k < RAILS; k++)); do
            shape_nic "$i" "$k" || die 1 "could not reshape rail$k of $PREFIX-n$i"
        done
    done
    sed -i "s/^RATE=.*/RATE=$RATE/; s/^RATE_BPS=.*/RATE_BPS=$(rate_bps "$RATE")/" "$STATE/config"
    say "rate: every NIC at $RATE each way"
}

# shape NODE RAIL RATE: one NIC (node NODE's rail RAIL, both ways) reshaped to RATE, the others as
# they are: a slow NIC for the sweep to find. `testbed rate` puts every NIC back to one rate.
cmd_shape() {
    need_root
    (($# == 3)) || die 2 "usage: testbed shape NODE RAIL RATE"
    [[ -f $STATE/config ]] || die 2 "the testbed is not up"
    # shellcheck disable=SC1091
    . "$STATE/config"
    local ns i
    ns=$(resolve_ns "$1") || exit 2
    [[ $ns =~ ^$PREFIX-n([0-9]+)$ ]] || die 2 "shape: $1 is not a node ($PREFIX-n1..$PREFIX-n$NODES)"
    i=${BASH_REMATCH[1]}
    [[ $2 =~ ^[0-9]+$ ]] && (($2 < RAILS)) || die 2 "shape: rail $2: the testbed has rails 0..$((RAILS - 1))"
    rate_bps "$3" >/dev/null || die 2 "rate $3: a rate in tc's units, e.g. 400mbit, 1gbit, 100mbit"
    RATE=$3 shape_nic "$i" "$2" || die 1 "could not reshape rail$2 of $ns"
    say "shape: $ns rail$2 at $3 each way (the other NICs unchanged)"
}

# tcp datacenter|lossless|default: the nodes' TCP on the rails, and the queues it meets.
# datacenter: a 10 ms minimum retransmission timeout on each rail's route and no slow start after
# idle, as datacenter hosts commonly run; default: Linux's (200 ms, slow start after 1 RTO idle).
# Traffic that stops and starts in phases across many peers at once (MoE's dispatch, then combine)
# overflows a switch port's 20 ms queue (incast); a tail drop then costs a 200 ms timeout by
# default, a third of a phase at 50 Mbit. Even with datacenter's timeout, plain TCP sockets moving
# MoE's two-rail phases carry only 0.65-0.71 of the links here (journal moe.md, "A fabric that
# queues"): the tail drops and this kernel's default congestion control (BBR, which caps a flow at
# twice the sub-millisecond veth round trip's bandwidth-delay product) leave the links part-idle.
# lossless: the fabric a NIC like EFA presents, which retries below the transport and does not
# drop on incast: every rail's port (NIC egress and switch port) queues 200 ms of data, so a
# phase's incast queues instead of dropping, and sends pure ACKs (frames under 128 bytes, marked
# by nftables) ahead of it, as a fabric's acks do not wait behind its data (behind a full 200 ms
# fifo they held the flows coming the other way at half their rate for seconds); the rails'
# routes use CUBIC, which fills a queue instead of capping at the base round trip's window; no
# slow start after idle, Linux's 200 ms minimum timeout (queueing delay reaches ~100 ms, and a
# 10 ms timeout fired spuriously). Other tests keep the 20 ms tail-drop queues: a lossy NIC's
# 200 ms tail is what SweepIT names it by.
cmd_tcp() {
    need_root
    (($# == 1)) && [[ $1 == datacenter || $1 == lossless || $1 == default ]] ||
        die 2 "usage: testbed tcp datacenter|lossless|default"
    [[ -f $STATE/config ]] || die 2 "the testbed is not up"
    # shellcheck disable=SC1091
    . "$STATE/config"
    local i k rto=() cc=() idle=1
    [[ $1 == datacenter ]] && rto=(rto_min 10ms)
    [[ $1 == lossless ]] && cc=(congctl cubic)
    [[ $1 == default ]] || idle=0
    printf '%s\n' "$1" >"$STATE/tcp"
    ack_marks "$1" || die 1 "could not mark the rails' ACKs (nftables)"
    for ((i = 1; i <= NODES; i++)); do
        for ((k = 0; k < RAILS; k++)); do
            ip -n "$PREFIX-n$i" route change "198.18.$k.0/24" dev "rail$k" proto kernel scope link src "198.18.$k.$i" "${rto[@]}" "${cc[@]}" \
                || die 1 "could not set rail$k's route on $PREFIX-n$i"
            RATE=$RATE shape_nic "$i" "$k" || die 1 "could not reshape rail$k of $PREFIX-n$i"
        done
        ip netns exec "$PREFIX-n$i" sysctl -qw "net.ipv4.tcp_slow_start_after_idle=$idle" || die 1 "sysctl on $PREFIX-n$i"
    done
    say "tcp: $1 on every node's rails"
}

# ack_marks MODE: under lossless, nftables marks the rails' pure ACKs for the ports' first class
# (skb priority 1:10), in every node (leaving a rail) and in the switch (bridged); else no marks.
ack_marks() {
    local i ns
    for ns in "$SW" $(for ((i = 1; i <= NODES; i++)); do echo "$PREFIX-n$i"; done); do
        ip netns exec "$ns" nft delete table ip efb_ack 2>/dev/null || true
        ip netns exec "$ns" nft delete table bridge efb_ack 2>/dev/null || true
    done
    [[ $1 == lossless ]] || return 0
    ip netns exec "$SW" nft -f - <<'NFT' || return 1
table bridge efb_ack {
    chain fw {
        type filter hook forward priority 0;
        meta length lt 128 meta priority set 1:10
    }
}
NFT
    for ((i = 1; i <= NODES; i++)); do
        ip netns exec "$PREFIX-n$i" nft -f - <<'NFT' || return 1
table ip efb_ack {
    chain out {
        type filter hook postrouting priority 0;
        oifname "rail*" meta length lt 128 meta priority set 1:10
    }
}
NFT
    done
}

# shape NS DEV: tbf at RATE on DEV's egress; the queue holds 20 ms of it (under `tcp lossless`
# 200 ms, ACKs first: acks_first). The bucket
# holds 100 us at RATE, at least 8 KiB: what a message after an idle spell passes at veth's own
# speed, so small enough that no figure of a 64K message or more reads much above the rate (a 64
# KiB bucket let SendRecv 64K read 176% of it); tbf cuts veth's 64 KiB GSO packets to fit.
shape() {
    local bps burst lossless=no queue=(latency 20ms)
    bps=$(rate_bps "$RATE")
    burst=$((bps / 8 / 10000))
    ((burst < 8192)) && burst=8192
    if [[ $(cat "$STATE/tcp" 2>/dev/null) == lossless ]]; then
        lossless=yes
        queue=(limit $((bps / 8 / 5 + ACK_QUEUE)))
    fi
    ip netns exec "$1" tc qdisc del dev "$2" root 2>/dev/null || true
    ip netns exec "$1" tc qdisc add dev "$2" root handle 10: tbf rate "$RATE" burst "$burst" "${queue[@]}" || return 1
    [[ $lossless == no ]] || acks_first "$1" "$2" $((bps / 8 / 5))
}

# Bytes of pure ACKs a lossless port holds ahead of its data.
ACK_QUEUE=65536

# acks_first NS DEV BYTES: the queue of DEV's tbf (10:) becomes an htb that only orders: class
# 1:10 (what ack_marks marks: pure ACKs) first, the data (1:20) in a fifo of BYTES. Both classes'
# rates are far above RATE, so htb never holds a packet back and tbf alone sets the rate (an htb
# at the rate let a 1.2 s stream read 0.6% above the TCP ceiling).
acks_first() {
    ip netns exec "$1" tc qdisc add dev "$2" parent 10:1 handle 1: htb default 20 &&
        ip netns exec "$1" tc class add dev "$2" parent 1: classid 1:10 htb rate 10gbit quantum 9000 prio 0 &&
        ip netns exec "$1" tc class add dev "$2" parent 1: classid 1:20 htb rate 10gbit quantum 9000 prio 1 &&
        ip netns exec "$1" tc qdisc add dev "$2" parent 1:10 bfifo limit "$ACK_QUEUE" &&
        ip netns exec "$1" tc qdisc add dev "$2" parent 1:20 bfifo limit "$3"
}

# shape_nic NODE RAIL: node NODE's NIC on rail RAIL, both ways: what it sends (its veth end) and
# what it receives (the switch's end).
shape_nic() {
    shape "$PREFIX-n$1" "rail$2" && shape "$SW" "n${1}r$2"
}

cmd_up() {
    need_root
    parse_up "$@"
    [[ $SLURM == no ]] || command -v slurmd >/dev/null || [[ -x /usr/sbin/slurmd ]] ||
        die 2 "--slurm needs slurm-wlm and munge (apt-get install slurm-wlm munge)"
    if [[ -d $STATE ]] || [[ -n $(our_namespaces) ]]; then
        say "a testbed (or what is left of one) is here: removing it first"
        cmd_down >/dev/null || exit 1
    fi
    trap 'rc=$?; if ((rc != 0)); then say "up failed: removing what it made"; cmd_down >/dev/null 2>&1; fi' EXIT
    set -e
    mkdir -p "$STATE/uts"
    printf 'NODES=%s\nRAILS=%s\nRATE=%s\nRATE_BPS=%s\nSLURM=%s\n' "$NODES" "$RAILS" "$RATE" "$(rate_bps "$RATE")" "$SLURM" >"$STATE/config"
    {
        printf '127.0.0.1 localhost\n198.19.0.254 %s\n' "$HEAD"
        for ((i = 1; i <= NODES; i++)); do printf '198.19.0.%d %s-n%d\n' "$i" "$PREFIX" "$i"; done
    } >"$STATE/hosts"
    ip netns add "$SW"
    ip -n "$SW" link set lo up
    ip netns exec "$SW" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip -n "$SW" link add mgmt type bridge
    ip -n "$SW" link set mgmt up
    for ((k = 0; k < RAILS; k++)); do
        ip -n "$SW" link add "rail$k" type bridge
        ip -n "$SW" link set "rail$k" up
    done
    make_node_ns "$HEAD"
    link "$HEAD" mgmt0 head-m mgmt 198.19.0.254/24
    for ((i = 1; i <= NODES; i++)); do
        local ns=$PREFIX-n$i
        make_node_ns "$ns"
        # Strict reverse-path filter ("all" applies to every interface, rails made later included);
        # ARP answered and asked only for the interface's own address, as multi-rail hosts are set up
        # (arp_ignore=1, arp_announce=2): a NIC cabled to another rail's switch then answers nothing
        # there, rather than claiming its node's address on that rail.
        ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.rp_filter=1 net.ipv4.conf.default.rp_filter=1 \
            net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2
        link "$ns" mgmt0 "n${i}m" mgmt "198.19.0.$i/24"
        for ((k = 0; k < RAILS; k++)); do
            link "$ns" "rail$k" "n${i}r$k" "rail$k" "198.18.$k.$i/24"
            shape_nic "$i" "$k"
        done
    done
    [[ $SLURM == yes ]] && start_slurm
    set +e
    trap - EXIT
    say "up: $NODES node(s) $(node_list), $RAILS rail(s) at $RATE each way per NIC; run commands with: ./run-jmh.sh testbed exec $PREFIX-n1 ..."
}

node_list() { local i s=""; for ((i = 1; i <= NODES; i++)); do s+="${s:+,}$PREFIX-n$i"; done; echo "$s"; }

# ---------------------------------------------------------------- Slurm

# slurmctld on the head, one slurmd -N <node> per node namespace (each its own address and
# hostname, so Debian's slurmd needs no special build), proctrack/linuxproc and task/none (no
# cgroups to nest), state and logs under $STATE/slurm. munged: the one running, else ours.
start_slurm() {
    local dir=$STATE/slurm conf cpus i
    mkdir -p "$dir/state" "$dir/log"
    conf=$dir/slurm.conf
    # Emulated nodes claim at least 16 CPUs (config_overrides: slurmd takes the claim, not the
    # hardware), so srun places a p5-like 8 or 16 tasks per node; the ranks' waits yield anyway.
    cpus=$(( $(nproc) > 16 ? $(nproc) : 16 ))
    cat >"$conf" <<EOF
ClusterName=efabench-testbed
SlurmctldHost=$HEAD(198.19.0.254)
AuthType=auth/munge
CryptoType=crypto/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmUser=root
SlurmdUser=root
SlurmdParameters=config_overrides
ReturnToService=2
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
PropagateResourceLimits=NONE
SlurmctldPort=6817
SlurmdPort=6818
TCPTimeout=10
MessageTimeout=30
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmdSpoolDir=$dir/spool-%n
StateSaveLocation=$dir/state
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
NodeName=$PREFIX-n[1-$NODES] NodeAddr=198.19.0.[1-$NODES] CPUs=$cpus State=UNKNOWN
PartitionName=testbed Nodes=$PREFIX-n[1-$NODES] Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:16
EOF
    ((NODES == 1)) && sed -i "s/$PREFIX-n\[1-1\]/$PREFIX-n1/g; s/198.19.0.\[1-1\]/198.19.0.1/" "$conf"
    if ! (munge -n | unmunge) >/dev/null 2>&1; then
        mkdir -p /run/munge && chown munge:munge /run/munge
        [[ -f /etc/munge/munge.key ]] || mungekey -c
        chown -R munge:munge /etc/munge
        su -s /bin/sh munge -c /usr/sbin/munged
        echo yes >"$dir/our-munged"
    fi
    daemon_in_ns "$HEAD" /usr/sbin/slurmctld -D -f "$conf" >"$dir/log/slurmctld.out" 2>&1 &
    for ((i = 1; i <= NODES; i++)); do
        daemon_in_ns "$PREFIX-n$i" /usr/sbin/slurmd -D -N "$PREFIX-n$i" -f "$conf" >"$dir/log/slurmd-$PREFIX-n$i.out" 2>&1 &
    done
    local end=$((SECONDS + 60)) idle
    while ((SECONDS < end)); do
        idle=$(SLURM_CONF=$conf in_ns "$HEAD" sinfo -h -N -o '%N %T' 2>/dev/null | grep -cE ' (idle|mixed)$' || true)
        ((idle == NODES)) && { say "slurm: slurmctld on $HEAD, slurmd on $(node_list): SLURM_CONF=$conf"; return 0; }
        sleep 0.5
    done
    say "slurm did not come up in 60 s; last lines of its logs:"
    tail -n 5 "$dir"/log/*.log >&2
    return 1
}

# ---------------------------------------------------------------- exec

# daemon_in_ns NS COMMAND...: as in_ns, but keeping this machine's /sys (ip netns exec mounts the
# namespace's own sysfs, without /sys/fs/cgroup, and slurmd will not start without it): the node's
# network and UTS namespaces and a mount namespace of its own with the node's /etc/hosts. Tasks
# slurmd starts inherit all three.
daemon_in_ns() {
    local ns=$1
    shift
    exec_env "$ns"
    nsenter --net="/run/netns/$ns" --uts="$STATE/uts/$ns" -- unshare --mount --propagation private -- \
        sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' sh "/etc/netns/$ns/hosts" env "${ENVS[@]}" "$@"
}

# in_ns NS COMMAND...: the command in NS's network namespace (with NS's /etc/hosts) and UTS namespace.
in_ns() {
    local ns=$1
    shift
    exec_env "$ns"
    ip netns exec "$ns" nsenter --uts="$STATE/uts/$ns" -- env "${ENVS[@]}" "$@"
}

# What a job on the testbed needs to know, as a cluster's module file would set it; a variable
# already set wins. FABRIC_LINK_GBPS: the shaped rate (veth always reports 10G).
exec_env() {
    ENVS=()
    [[ -f $STATE/config ]] || return 0
    local RAILS RATE_BPS SLURM nics="" k
    # shellcheck disable=SC1091
    . "$STATE/config"
    for ((k = 0; k < RAILS; k++)); do nics+="${nics:+,}rail$k"; done
    ENVS+=("FI_PROVIDER=${FI_PROVIDER:-tcp}" "EFABENCH_NICS=${EFABENCH_NICS:-$nics}")
    ENVS+=("FABRIC_LINK_GBPS=${FABRIC_LINK_GBPS:-$(awk -v b="$RATE_BPS" 'BEGIN { printf "%.6g", b / 1e9 }')}")
    # The nodes share this machine's CPUs, which no rank sees from its own node: busy-polling waits
    # yield, as they do where a node's ranks outnumber its CPUs.
    ENVS+=("EFABENCH_YIELD=${EFABENCH_YIELD:-1}")
    [[ $SLURM == yes ]] && ENVS+=("SLURM_CONF=${SLURM_CONF:-$STATE/slurm/slurm.conf}")
    ENVS+=("EFABENCH_TESTBED=$STATE")
}

resolve_ns() {  # NODE -> namespace name; efb-n1, n1, 1 and head are accepted
    local n=$1
    case $n in
    "$PREFIX"-*) ;;
    head) n=$HEAD ;;
    n[0-9]*) n=$PREFIX-$n ;;
    [0-9]*) n=$PREFIX-n$n ;;
    esac
    [[ -e $STATE/uts/$n ]] || die 2 "no testbed node '$1' here (nodes: $(our_namespaces | grep -v -- -sw | tr '\n' ' ')); is the testbed up?"
    echo "$n"
}

cmd_exec() {
    need_root
    (($# >= 2)) || die 2 "usage: testbed exec NODE COMMAND..."
    local ns
    ns=$(resolve_ns "$1") || exit 2
    shift
    in_ns "$ns" "$@"
}

# Open MPI calls its rsh agent like ssh: AGENT HOST COMMAND-WORDS..., the words one shell line.
cmd_rsh() {
    (($# >= 2)) || die 2 "usage: testbed rsh NODE COMMAND..."
    cmd_exec "$1" sh -c "${*:2}"
}

# ---------------------------------------------------------------- links

# Each rail's own goodput: a plain TCP stream (io.efabench.launch.TcpStream) from node FROM to node
# TO over rail k, measured at the receiver; one rail at a time, or with --together every rail at
# once (what the machine carries with all of them busy: the ground truth for a figure over several
# rails), then their sum. JAVA and JAR come from run-jmh.sh.
cmd_links() {
    need_root
    local seconds=3 from=1 to=2 together=no k
    while (($#)); do
        case $1 in
        --seconds) seconds=${2:-}; shift ;;
        --from) from=${2:-}; shift ;;
        --to) to=${2:-}; shift ;;
        --together) together=yes ;;
        *) die 2 "usage: testbed links [--seconds S] [--from N] [--to M] [--together]" ;;
        esac
        shift
    done
    [[ -f $STATE/config ]] || die 2 "the testbed is not up"
    [[ -n ${JAVA:-} && -n ${JAR:-} ]] || die 2 "links needs JAVA and JAR (run it as ./run-jmh.sh testbed links)"
    # shellcheck disable=SC1091
    . "$STATE/config"
    [[ $from =~ ^[0-9]+$ && $to =~ ^[0-9]+$ ]] && ((from >= 1 && from <= NODES && to >= 1 && to <= NODES && from != to)) ||
        die 2 "links: --from and --to are two different nodes among 1-$NODES"
    local stream=("$JAVA" -cp "$JAR" io.efabench.launch.TcpStream)
    if [[ $together == no ]]; then
        for ((k = 0; k < RAILS; k++)); do streams "$k"; done
        return
    fi
    local rails=() out
    for ((k = 0; k < RAILS; k++)); do rails+=("$k"); done
    out=$(streams "${rails[@]}")
    printf '%s\n' "$out"
    printf '%s\n' "$out" | awk -v n="$RAILS" '{ sum += $NF == "Gbps" ? $(NF - 1) : 0 }
        END { printf "together %d rail(s): %.4f Gbps\n", n, sum }'
}

# streams RAIL...: one TcpStream per rail given, all at once, from node $from to node $to; a line each.
streams() {
    local k dir pid
    dir=$(mktemp -d)
    for k in "$@"; do
        in_ns "$PREFIX-n$to" "${stream[@]}" receive "198.18.$k.$to" $((5201 + k)) $((30 + ${seconds%.*})) >"$dir/$k" 2>&1 &
        pid=$!
        # A sender that fails takes its receiver down with it rather than leave it waiting.
        { in_ns "$PREFIX-n$from" "${stream[@]}" send "198.18.$k.$to" $((5201 + k)) "$seconds" "198.18.$k.$from" ||
            kill "$pid" 2>/dev/null; } &
    done
    wait
    for k in "$@"; do
        printf 'rail%d %s-n%d -> %s-n%d (%s): %s\n' "$k" "$PREFIX" "$from" "$PREFIX" "$to" "$RATE" "$(tail -n 1 "$dir/$k")"
    done
    rm -rf -- "$dir"
}

# ---------------------------------------------------------------- status

# nic_rate NS DEV: the rate DEV's tbf is shaped to.
nic_rate() {
    ip netns exec "$1" tc qdisc show dev "$2" | awk '/tbf/ {for (j = 1; j <= NF; j++) if ($j == "rate") { print $(j + 1); exit }}'
}

cmd_status() {
    need_root
    if [[ ! -f $STATE/config ]]; then
        local left
        left=$(our_namespaces | tr '\n' ' ')
        [[ -z $left ]] && { say "down"; exit 3; }
        say "half made: namespace(s) $left and no state; './run-jmh.sh testbed down' removes them"
        exit 1
    fi
    # shellcheck disable=SC1091
    . "$STATE/config"
    say "up: $NODES node(s), $RAILS rail(s), $RATE per NIC each way"
    local i k ns line
    for ((i = 1; i <= NODES; i++)); do
        ns=$PREFIX-n$i
        line="$ns mgmt0 198.19.0.$i"
        for ((k = 0; k < RAILS; k++)); do
            line+=", rail$k 198.18.$k.$i $(nic_rate "$ns" "rail$k")"
        done
        printf '  %s\n' "$line"
    done
    if [[ $SLURM == yes ]]; then
        printf '  slurm: SLURM_CONF=%s\n' "$STATE/slurm/slurm.conf"
        SLURM_CONF=$STATE/slurm/slurm.conf in_ns "$HEAD" sinfo -N -h -o '    %N %T' 2>&1
    fi
    exit 0
}

main() {
    case ${1:-} in
    up) shift; cmd_up "$@" ;;
    down) shift; (($# == 0)) || die 2 "usage: testbed down"; cmd_down ;;
    status) cmd_status ;;
    exec) shift; cmd_exec "$@" ;;
    rsh) shift; cmd_rsh "$@" ;;
    links) shift; cmd_links "$@" ;;
    rate) shift; cmd_rate "$@" ;;
    shape) shift; cmd_shape "$@" ;;
    tcp) shift; cmd_tcp "$@" ;;
    -h | --help | help) usage ;;
    *) usage >&2; exit 2 ;;
    esac
}

main "$@"

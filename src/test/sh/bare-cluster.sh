#!/usr/bin/env bash
# bare-cluster.sh: a cluster the project did not make, for the tests of how efabench meets one
# (BareClusterIT). Unlike the testbed: no management network and no /etc/hosts entries (host names
# resolve nowhere: the launcher's MASTER_ADDR is an address), no EFABENCH_NICS, IPv6 on (every NIC
# has a link-local address tcp lists too), NICs named ens6 and ens7 with the second subnet's NIC
# made (and listed by fi_getinfo) first. Needs root.
#
# usage: bare-cluster.sh up NODES RATE       (nodes 0..NODES-1, both rails shaped to RATE each way)
#        bare-cluster.sh run I COMMAND...     (COMMAND on node I: its network and host name)
#        bare-cluster.sh shape I RAIL RATE    (node I's NIC on RAIL reshaped, both ways)
#        bare-cluster.sh down                 (everything up made, also what a failed up left)
#
# Node i: namespace efbx-n<i>, host name bare-node-<i>; rail k on 198.19.<200+k>.0/24, node i at
# .<10+i>; rail 1's NIC is ens6, rail 0's ens7. Switches: bridges r0, r1 in efbx-sw. No namespace
# has a default route or a link outside: traffic stays inside.
set -uo pipefail
P=efbx
SW=$P-sw
STATE=/run/efabench-bare
die() { printf 'bare-cluster: %s\n' "$*" >&2; exit "${CODE:-1}"; }

addr() { echo "198.19.$((200 + $2)).$((10 + $1))"; }
ifname() { (($1 == 0)) && echo ens7 || echo ens6; }

shape() {  # shape NS DEV RATE add|replace: tbf as the testbed's (a 20 ms queue, a small bucket)
    ip netns exec "$1" tc qdisc "$4" dev "$2" root tbf rate "$3" burst 8192 latency 20ms
}

cmd_up() {
    (($# == 2)) && [[ $1 =~ ^[0-9]+$ ]] && (($1 >= 2 && $1 <= 16)) || CODE=2 die "usage: up NODES(2..16) RATE"
    cmd_down
    trap 'rc=$?; ((rc != 0)) && cmd_down; exit $rc' EXIT
    set -e
    mkdir -p "$STATE"
    ip netns add "$SW"
    ip -n "$SW" link set lo up
    ip netns exec "$SW" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    for k in 0 1; do
        ip -n "$SW" link add "r$k" type bridge
        ip -n "$SW" link set "r$k" up
    done
    for ((i = 0; i < $1; i++)); do
        local ns=$P-n$i
        ip netns add "$ns"
        ip -n "$ns" link set lo up
        touch "$STATE/uts-$i"
        unshare --uts="$STATE/uts-$i" hostname "bare-node-$i"
        for k in 1 0; do  # rail 1 first: the order fi_getinfo lists them in is not the rails' order
            local dev port=n${i}r$k
            dev=$(ifname "$k")
            ip link add "$port" netns "$SW" type veth peer name "$dev" netns "$ns"
            ip -n "$SW" link set "$port" master "r$k" up
            ip -n "$ns" addr add "$(addr "$i" "$k")/24" dev "$dev"
            ip -n "$ns" link set "$dev" up
            shape "$ns" "$dev" "$2" add
            shape "$SW" "$port" "$2" add
        done
    done
    set +e
    trap - EXIT
    echo "bare-cluster: up: $1 nodes, rails 198.19.200.0/24 (ens7) and 198.19.201.0/24 (ens6) at $2"
}

cmd_run() {
    (($# >= 2)) || CODE=2 die "usage: run I COMMAND..."
    local i=$1
    shift
    [[ -e $STATE/uts-$i ]] || CODE=2 die "no node $i"
    exec nsenter --net="/run/netns/$P-n$i" --uts="$STATE/uts-$i" -- "$@"
}

cmd_shape() {
    (($# == 3)) || CODE=2 die "usage: shape I RAIL RATE"
    shape "$P-n$1" "$(ifname "$2")" "$3" replace && shape "$SW" "n$1r$2" "$3" replace
}

cmd_down() {
    local ns pid
    for ns in $(ip netns list | awk '{print $1}' | grep "^$P-"); do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
    done
    for ns in $(ip netns list | awk '{print $1}' | grep "^$P-"); do
        ip netns del "$ns" 2>/dev/null || ip netns del "$ns" 2>/dev/null || die "could not remove $ns"
    done
    if [[ -d $STATE ]]; then
        for f in "$STATE"/uts-*; do
            [[ -e $f ]] && { umount "$f" 2>/dev/null; rm -f "$f"; }
        done
        rmdir "$STATE" 2>/dev/null
    fi
    return 0
}

case ${1:-} in
    up) shift; cmd_up "$@" ;;
    run) shift; cmd_run "$@" ;;
    shape) shift; cmd_shape "$@" ;;
    down) cmd_down ;;
    *) CODE=2 die "usage: bare-cluster.sh up NODES RATE | run I COMMAND... | shape I RAIL RATE | down" ;;
esac

#!/usr/bin/env bash
# Two network namespaces joined by a veth pair, for tests that put two machines' processes on two
# network stacks (the show link's main and backup): each namespace has its loopback up and one
# address on the pair. Prints one line when ready:
#   ready a=NS_A b=NS_B a_address=10.77.X.1 b_address=10.77.X.2
# (or "skip: REASON" and exit 77 when namespaces cannot be made here), then holds them until its
# standard input ends (the test closed it, or died) or its time limit passes, and deletes them.
# Processes run in one with `ip netns exec NS_A COMMAND…`; JACK's sockets are files, so a client in
# either namespace reaches a jackd started outside.
# Usage: netns-pair.sh [--seconds N]
set -uo pipefail

seconds=600
while (($#)); do
    case "$1" in
        --seconds) seconds=$2; shift 2 ;;
        *) echo "netns-pair: unknown option $1" >&2; exit 64 ;;
    esac
done

skip() { echo "skip: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "network namespaces need root"
command -v ip >/dev/null || skip "no ip (iproute2)"

id=$(( $$ % 60000 ))
a="lspa$id"
b="lspb$id"
subnet="10.77.$(( $$ % 250 ))"
cleanup() {
    trap - EXIT INT TERM HUP PIPE
    ip netns del "$a" 2>/dev/null || true
    ip netns del "$b" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 143' INT TERM HUP PIPE

ip netns add "$a" 2>/dev/null || skip "cannot create a network namespace here"
ip netns add "$b" || exit 1
ip -n "$a" link set lo up
ip -n "$b" link set lo up
ip -n "$a" link add eth0 type veth peer name eth0 netns "$b" || exit 1
ip -n "$a" addr add "$subnet.1/24" dev eth0
ip -n "$b" addr add "$subnet.2/24" dev eth0
ip -n "$a" link set eth0 up
ip -n "$b" link set eth0 up
echo "ready a=$a b=$b a_address=$subnet.1 b_address=$subnet.2"
# Hold until the input ends or the time is up.
timeout "$seconds" cat >/dev/null

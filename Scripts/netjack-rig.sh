#!/usr/bin/env bash
# A netjack2 rig on one machine, in network namespaces: one master and two slaves, each jackd in a
# namespace of its own, joined by veth pairs on a bridge that lives inside the master's namespace
# (no address, route or interface is added outside the namespaces the rig makes).
#
#   master  namespace <id>-m: bridge br0 10.253.N.1/24, jackd -d dummy + jack_load netmanager
#   slave B namespace <id>-b: eth0 10.253.N.2/24,        jackd -d net -l LATENCY -n <id>b
#   slave C namespace <id>-c: eth0 10.253.N.3/24,        jackd -d net -l LATENCY -n <id>c
#
# The JACK servers are reached by name from any namespace (their sockets and shared memory are in
# /dev/shm): the master is <id>-master, the slaves <id>-slave-b and <id>-slave-c, and on the master
# each slave shows as the client <id>b / <id>c with ports to_slave_N and from_slave_N.
#
# Once everything runs it prints one line,
#   ready master=SERVER slaves=NAME_B,NAME_C slave_servers=SERVER_B,SERVER_C period=P latency=L
# then reads commands on standard input, one per line, answering each with one line:
#   loss b|c PERCENT   drop PERCENT % of the UDP packets slave B/C receives (nftables, in the
#                      slave's input hook; 0 removes the rule)  -> "ok loss b 3"
#   loss m PERCENT     the same on the master's input (what the slaves send back)
#   cut b|c on|off     a network outage of slave B/C: every UDP packet it receives and every one
#                      the master receives from it is dropped (both receivers' input hooks), as
#                      an unplugged cable would; `off` ends it      -> "ok cut c on"
#   counters           packets dropped so far per namespace     -> "counters m=0 b=17 c=0"
#   slaves             the netjack2 slave clients the master has now -> "slaves NAME…"
#   quit               clean up and exit
# End of input, a signal, or the time limit (--seconds, default 60) clean up as well: every
# process it started is stopped (SIGTERM, then SIGKILL after 2 s), the nftables tables go with
# the namespaces, and the namespaces are deleted. Every process runs under `timeout`.
#
# Exit status: 0 after a clean run, 77 when namespaces cannot be made here (not root, no `ip`,
# no `nft`, no jackd with the net backend: the reason is printed as "skip: …"), 1 on a failure
# (the servers' logs are printed to standard error).
#
# Usage: Scripts/netjack-rig.sh [--seconds N] [--period FRAMES] [--rate HZ] [--latency L] [--id ID]
set -euo pipefail

seconds=60
period=256
rate=48000
latency=2
id="lsnj$$"
while (($#)); do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        --period) period="$2"; shift 2 ;;
        --rate) rate="$2"; shift 2 ;;
        --latency) latency="$2"; shift 2 ;;
        --id) id="$2"; shift 2 ;;
        *) echo "netjack-rig: unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ "$id" =~ ^[a-z0-9]{1,10}$ ]] || { echo "netjack-rig: --id must be 1-10 lowercase letters or digits" >&2; exit 2; }

skip() { echo "skip: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "network namespaces need root (uid $(id -u))"
command -v ip >/dev/null || skip "no 'ip' (iproute2)"
command -v nft >/dev/null || skip "no 'nft' (nftables)"
command -v jackd >/dev/null || skip "no jackd"
command -v jack_load >/dev/null || skip "no jack_load"
backends=$(jackd --help 2>&1 || true)
grep -q "^ *net (master)" <<<"$backends" || skip "jackd has no net backend (netjack2)"
grep -q "^ *netmanager" <<<"$backends" || skip "jackd has no netmanager internal client (netjack2)"

master_ns="$id-m"; b_ns="$id-b"; c_ns="$id-c"
master_server="$id-master"; b_server="$id-slave-b"; c_server="$id-slave-c"
b_name="${id}b"; c_name="${id}c"
subnet="10.253.$(( $$ % 250 + 1 ))"
logs=$(mktemp -d "${TMPDIR:-/tmp}/netjack-rig.XXXXXX")
pids=()
slave_pids=()
namespaces=()
deadline=$(( $(date +%s) + seconds ))
left() { local n=$(( deadline - $(date +%s) )); (( n > 1 )) && echo "$n" || echo 1; }

cleanup() {
    local status=$?
    trap - EXIT INT TERM HUP PIPE
    # The slaves first, while the master still drives them (a slave whose master is gone waits
    # for it in a blocking receive and may outlast its grace period), then everything else.
    stop_pids "${slave_pids[@]}"
    stop_pids "${pids[@]}"
    # Servers killed hard leave their socket, futex and shared-memory files behind.
    for server in "$master_server" "$b_server" "$c_server"; do
        rm -f "/dev/shm/jack_${server}_$(id -u)_"* 2>/dev/null || true
        rm -f /dev/shm/jack_sem.*_"${server}"_* 2>/dev/null || true
    done
    for ns in "${namespaces[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
    if ((status != 0 && status != 77)); then
        for f in "$logs"/*.log; do [[ -f "$f" ]] && { echo "--- $(basename "$f")" >&2; tail -n 20 "$f" >&2; }; done
    fi
    rm -rf "$logs"
    exit "$status"
}
# Stops processes: SIGTERM, up to 2 s, then SIGKILL, and reaps them.
stop_pids() {
    local pid
    (($#)) || return 0
    for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
    for _ in $(seq 20); do
        local alive=0
        for pid in "$@"; do kill -0 "$pid" 2>/dev/null && alive=1; done
        ((alive)) || break
        sleep 0.1
    done
    for pid in "$@"; do kill -KILL "$pid" 2>/dev/null || true; done
    for pid in "$@"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 143' INT TERM HUP PIPE

fail() { echo "netjack-rig: $*" >&2; exit 1; }

# The network: a bridge in the master's namespace, one veth pair per slave.
for ns in "$master_ns" "$b_ns" "$c_ns"; do
    ip netns add "$ns" 2>/dev/null || { [[ ${#namespaces[@]} -eq 0 ]] && skip "cannot create a network namespace here"; fail "cannot create namespace $ns"; }
    namespaces+=("$ns")
    ip -n "$ns" link set lo up
done
ip -n "$master_ns" link add br0 type bridge mcast_snooping 0
ip -n "$master_ns" addr add "$subnet.1/24" dev br0
ip -n "$master_ns" link set br0 up
ip -n "$master_ns" route add 224.0.0.0/4 dev br0
host=2
for ns in "$b_ns" "$c_ns"; do
    port="p$host"
    ip -n "$master_ns" link add "$port" type veth peer name eth0 netns "$ns"
    ip -n "$master_ns" link set "$port" master br0 up
    ip -n "$ns" addr add "$subnet.$host/24" dev eth0
    ip -n "$ns" link set eth0 up
    # netjack2 finds its master by multicast (225.3.19.154:19000 by default).
    ip -n "$ns" route add 224.0.0.0/4 dev eth0
    host=$((host + 1))
done
# An empty loss table per namespace; `loss` fills its chain input, `cut` its chain cut.
for ns in "$master_ns" "$b_ns" "$c_ns"; do
    ip netns exec "$ns" nft -f - <<EOF
table inet lockstep_loss {
    chain input {
        type filter hook input priority 0; policy accept;
    }
    chain cut {
        type filter hook input priority 1; policy accept;
    }
}
EOF
done

# Starts jackd in a namespace (realtime when the system allows, else without), in the background.
start_jackd() {   # ns server log args…
    local ns="$1" server="$2" log="$3"; shift 3
    timeout -k 2 "$(left)" ip netns exec "$ns" jackd -R -n "$server" "$@" >"$log" 2>&1 &
    local wrapper=$!
    pids+=("$wrapper")
    # jackd itself (ip netns exec runs it in place of itself), stopped by id at cleanup: killing
    # only its `timeout` would leave it running.
    local child=""
    for _ in $(seq 50); do child=$(pgrep -P "$wrapper" || true); [[ -n "$child" ]] && break; sleep 0.02; done
    [[ -n "$child" ]] && pids+=("$child")
    last_jackd="${child:-$wrapper}"
}
server_up() { JACK_NO_START_SERVER=1 timeout -k 1 3 jack_lsp -s "$1" >/dev/null 2>&1; }

start_jackd "$master_ns" "$master_server" "$logs/master.log" -d dummy -r "$rate" -p "$period" -C 2 -P 2
for _ in $(seq 50); do server_up "$master_server" && break; sleep 0.1; done
server_up "$master_server" || fail "the master jackd did not start"
timeout -k 1 5 jack_load -s "$master_server" netmanager >"$logs/netmanager.log" 2>&1 || fail "jack_load netmanager failed"

# A slave: waits until no stale port of an earlier slave of that name is left on the master, starts
# `jackd -d net`, and waits for its ports to appear on the master; a slave that exits is started again.
master_ports() { JACK_NO_START_SERVER=1 timeout -k 1 3 jack_lsp -s "$master_server" 2>/dev/null || true; }
start_slave() {   # ns server name
    local ns="$1" server="$2" name="$3" attempt
    for attempt in 1 2 3; do
        for _ in $(seq 50); do master_ports | grep -q "^$name:" || break; sleep 0.1; done
        start_jackd "$ns" "$server" "$logs/$name.$attempt.log" -d net -l "$latency" -n "$name" -s
        local pid="$last_jackd"
        slave_pids+=("$pid")
        for _ in $(seq 100); do
            master_ports | grep -q "^$name:to_slave_1\$" \
                && JACK_NO_START_SERVER=1 timeout -k 1 3 jack_lsp -s "$server" 2>/dev/null | grep -q "^system:capture_1\$" && return 0
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        echo "netjack-rig: slave $name did not come up (attempt $attempt); retrying" >&2
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    done
    fail "slave $name did not come up"
}
start_slave "$b_ns" "$b_server" "$b_name"
start_slave "$c_ns" "$c_server" "$c_name"

echo "ready master=$master_server slaves=$b_name,$c_name slave_servers=$b_server,$c_server period=$period latency=$latency"

ns_of() { case "$1" in m) echo "$master_ns" ;; b) echo "$b_ns" ;; c) echo "$c_ns" ;; *) return 1 ;; esac; }
address_of() { case "$1" in b) echo "$subnet.2" ;; c) echo "$subnet.3" ;; *) return 1 ;; esac; }
dropped() {   # ns [chain]: packets dropped so far by the rules there (default: the whole table)
    local what=(table inet lockstep_loss)
    [[ -n "${2:-}" ]] && what=(chain inet lockstep_loss "$2")
    ip netns exec "$1" nft list "${what[@]}" 2>/dev/null \
        | awk '/counter packets/ { for (i = 1; i < NF; i++) if ($i == "packets") n += $(i + 1) } END { print n + 0 }'
}
# Packets dropped by rules already removed, per namespace.
declare -A earlier=([m]=0 [b]=0 [c]=0)
total_dropped() {
    echo "counters m=$((earlier[m] + $(dropped "$master_ns"))) b=$((earlier[b] + $(dropped "$b_ns"))) c=$((earlier[c] + $(dropped "$c_ns")))"
}

while IFS= read -r -t "$(left)" line; do
    read -r command a b <<<"$line" || true
    case "$command" in
        loss)
            ns=$(ns_of "$a") || { echo "error: loss m|b|c PERCENT"; continue; }
            [[ "$b" =~ ^[0-9]+$ ]] && ((b <= 100)) || { echo "error: PERCENT is 0…100"; continue; }
            earlier[$a]=$((earlier[$a] + $(dropped "$ns" input)))
            ip netns exec "$ns" nft flush chain inet lockstep_loss input
            rule=()
            if ((b == 100)); then rule=(meta l4proto udp counter drop)
            elif ((b > 0)); then rule=(meta l4proto udp numgen random mod 100 "<" "$b" counter drop); fi
            if ((${#rule[@]})) && ! ip netns exec "$ns" nft add rule inet lockstep_loss input "${rule[@]}" 2>/dev/null; then
                echo "error: nft refused the rule"
                continue
            fi
            echo "ok loss $a $b"
            ;;
        cut)
            { ns=$(ns_of "$a") && address=$(address_of "$a"); } || { echo "error: cut b|c on|off"; continue; }
            case "$b" in
                on)
                    ip netns exec "$ns" nft add rule inet lockstep_loss cut meta l4proto udp counter drop \
                        && ip netns exec "$master_ns" nft add rule inet lockstep_loss cut ip saddr "$address" meta l4proto udp counter drop \
                        || { echo "error: nft refused the rule"; continue; }
                    ;;
                off)
                    # What the rules dropped stays in the counters.
                    earlier[$a]=$((earlier[$a] + $(dropped "$ns" cut)))
                    earlier[m]=$((earlier[m] + $(dropped "$master_ns" cut)))
                    ip netns exec "$ns" nft flush chain inet lockstep_loss cut
                    ip netns exec "$master_ns" nft flush chain inet lockstep_loss cut
                    ;;
                *) echo "error: cut b|c on|off"; continue ;;
            esac
            echo "ok cut $a $b"
            ;;
        counters) total_dropped ;;
        slaves) echo "slaves $(master_ports | sed -n 's/:to_slave_1$//p' | tr '\n' ' ')" ;;
        quit) break ;;
        "") ;;
        *) echo "error: unknown command $command" ;;
    esac
done
exit 0

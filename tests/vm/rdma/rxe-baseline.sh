#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The rxe baseline, run inside one guest (tests/vm/rdma/run-rxe-baseline.sh
# boots it): two virtio-net NICs joined by one emulated wire, Linux soft-RoCE
# (rdma_rxe) on each, and the stock tools between them: ibv_devinfo,
# ibv_rc_pingpong, ibv_ud_pingpong, perftest ib_write_bw (64 KiB),
# ib_read_bw (64 KiB) and ib_send_lat (2 bytes). It is the reference the hpu
# NIC's RoCE engine is measured against, and its capture is the reference
# the ICRC checker (icrc-check.py) is validated on.
#
# Environment:
#   RXE_MAC_A, RXE_MAC_B  the two NICs' MAC addresses (find them by address)
#   RXE_MODE              rules (default): both NICs in the initial network
#                         namespace with policy routing so that traffic between
#                         their addresses leaves through the wire;
#                         netns: each NIC in its own namespace (shows that
#                         Linux 6.12's rxe cannot work so: it routes and
#                         listens in the initial namespace only)
#   RXE_BW_ITERS          iterations of the bandwidth tests (default 2000)
#   RXE_LAT_ITERS         iterations of the latency test (default 2000)
#   RXE_LIMIT             time limit of each tool in seconds (default 300)
#   RXE_PERF_FLAGS        more perftest options for both sides (e.g. -e: sleep
#                         on completion events instead of polling)
#   RXE_LAT_FLAGS         more perftest options for ib_send_lat (e.g. -C:
#                         report cycles)
#   RXE_ONLY              the names of the steps to run after the set-up
#                         (ibv_rc_pingpong, ibv_ud_pingpong,
#                         ibv_rc_pingpong_ipv6, ib_write_bw, ib_read_bw,
#                         ib_send_lat), separated by spaces or commas;
#                         default all (make bench runs two of them)
#   HPU_RDMA_PROVIDER     the hpu provider (path without -rdmav34.so): when set,
#                         also check that libibverbs loads it beside real
#                         kernel devices
# Writes $HPU_OUT/rxe-results.txt: "PASS name", "FAIL name: why",
# "FIGURE name value unit" and "TIME step seconds" lines. Exit 1 on a failure.
#
# Copyright (c) 2026 The hpu authors
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

OUT=${HPU_OUT:-/tmp}
RES=$OUT/rxe-results.txt
: > "$RES"
MODE=${RXE_MODE:-rules}
MAC_A=${RXE_MAC_A:-52:54:00:c0:00:01}
MAC_B=${RXE_MAC_B:-52:54:00:c0:00:02}
IP_A=192.0.2.1
IP_B=192.0.2.2
BW_ITERS=${RXE_BW_ITERS:-2000}
LAT_ITERS=${RXE_LAT_ITERS:-2000}
LIMIT=${RXE_LIMIT:-300}  # seconds for any one tool
PERF_FLAGS=${RXE_PERF_FLAGS:-}
fails=0

log() { echo "rxe-baseline: $*"; }
pass() { echo "PASS rdma-rxe/$1" | tee -a "$RES"; }
fail() { echo "FAIL rdma-rxe/$1: $2" | tee -a "$RES"; fails=$((fails + 1)); }
figure() { echo "FIGURE $1 $2 $3" | tee -a "$RES"; }
now() { date +%s.%N; }
timed() { # timed NAME START: record the step's wall time
	echo "TIME $1 $(awk -v a="$2" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')" | tee -a "$RES"
}

# ifname_of, roce_v2_gid
. "$(dirname "$0")/roce-lib.sh"

# The RoCE v2 GID index of an rxe device for its IPv6 link-local address.
roce_v2_gid_ll() {
	local dev=$1 n g
	for g in /sys/class/infiniband/$dev/ports/1/gids/*; do
		n=${g##*/}
		case $(cat "$g" 2>/dev/null) in fe80:*) ;; *) continue ;; esac
		[ "$(cat /sys/class/infiniband/$dev/ports/1/gid_attrs/types/$n 2>/dev/null)" = "RoCE v2" ] || continue
		echo "$n"
		return 0
	done
	return 1
}

# An interface's IPv6 link-local address once duplicate address detection is over.
ll_addr() {
	local i a
	for i in $(seq 1 100); do
		a=$(ip -6 -o addr show dev "$1" scope link | awk '!/tentative/ { sub("/.*", "", $4); print $4; exit }')
		[ -n "$a" ] && { echo "$a"; return 0; }
		sleep 0.1
	done
	return 1
}

# wait_listen PORT: until a TCP listener on PORT exists (perftest and the
# pingpongs exchange QP numbers over TCP), in namespace $1's view.
wait_listen() {
	local i
	for i in $(seq 1 600); do
		"${NSB[@]}" ss -ltnH "sport = :$1" 2>/dev/null | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

# pair NAME SERVER-CMD... -- CLIENT-CMD...: the server in namespace B (rxe1),
# then the client in namespace A (rxe0); both outputs kept in $OUT/NAME.*.txt.
selected() {
	[ -z "${RXE_ONLY:-}" ] && return 0
	case " ${RXE_ONLY//,/ } " in *" $1 "*) return 0 ;; esac
	return 1
}

pair() {
	local name=$1 t0 srv=() cli=() spid rc src
	shift
	selected "$name" || return 1
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	t0=$(now)
	"${NSB[@]}" timeout $LIMIT "${srv[@]}" > "$OUT/$name.server.txt" 2>&1 &
	spid=$!
	if ! wait_listen 18515; then
		fail "$name" "the server did not listen on 18515 ($(tail -n 2 "$OUT/$name.server.txt" | tr '\n' ' '))"
		kill $spid 2>/dev/null
		wait $spid 2>/dev/null
		return 1
	fi
	"${NSA[@]}" timeout $LIMIT "${cli[@]}" > "$OUT/$name.client.txt" 2>&1
	rc=$?
	wait $spid
	src=$?
	timed "$name" "$t0"
	if [ $rc != 0 ] || [ $src != 0 ]; then
		fail "$name" "client exit $rc, server exit $src: $(tail -n 3 "$OUT/$name.client.txt" | tr '\n' ' ')"
		return 1
	fi
	pass "$name"
	return 0
}

# The row of perftest's result table whose first field is SIZE.
perf_row() {
	awk -v s="$2" '$1 == s && NF >= 4 { print; exit }' "$1"
}

T0=$(now)
t=$(now)
modprobe -a virtio_net rdma_rxe ib_uverbs || { fail "modules" "modprobe virtio_net rdma_rxe ib_uverbs"; exit 1; }
A=$(ifname_of "$MAC_A") && B=$(ifname_of "$MAC_B") ||
	{ fail "nics" "no interfaces with $MAC_A and $MAC_B: $(ls /sys/class/net | tr '\n' ' ')"; exit 1; }
log "NIC A $A ($MAC_A), NIC B $B ($MAC_B), mode $MODE"

case $MODE in
netns)
	NSA=(ip netns exec rxa)
	NSB=(ip netns exec rxb)
	ip netns add rxa && ip netns add rxb || { fail "netns" "ip netns add"; exit 1; }
	ip link set "$A" netns rxa && ip link set "$B" netns rxb
	"${NSA[@]}" ip link set lo up
	"${NSB[@]}" ip link set lo up
	"${NSA[@]}" ip addr add $IP_A/24 dev "$A"
	"${NSB[@]}" ip addr add $IP_B/24 dev "$B"
	"${NSA[@]}" ip link set "$A" up
	"${NSB[@]}" ip link set "$B" up
	;;
rules)
	# rxe in Linux 6.12 opens its UDP socket and looks up its routes in
	# the initial network namespace only (rxe_net.c: init_net), so both
	# NICs stay there. Two addresses of one host normally reach each other
	# through the local table (lo), never the wire. So: the local table
	# moves behind a rule that sends locally generated traffic for the
	# peer's address out of the other NIC (table 10); frames arriving
	# from the wire still find the local table. accept_local lets a NIC
	# take packets whose source is another local address, arp_ignore=1
	# makes each NIC answer ARP for its own address only.
	NSA=()
	NSB=()
	ip link set lo up
	for k in all default "$A" "$B"; do
		sysctl -qw net.ipv4.conf.$k.rp_filter=0 net.ipv4.conf.$k.accept_local=1 \
			net.ipv4.conf.$k.arp_ignore=1 net.ipv4.conf.$k.arp_announce=2 2>/dev/null
	done
	ip addr add $IP_A/32 dev "$A"
	ip addr add $IP_B/32 dev "$B"
	ip link set "$A" up
	ip link set "$B" up
	ip route add $IP_B/32 dev "$A" src $IP_A table 10
	ip route add $IP_A/32 dev "$B" src $IP_B table 10
	ip rule add pref 10 iif lo lookup 10
	ip rule add pref 100 lookup local
	ip rule del pref 0 lookup local
	# The same for the IPv6 link-local addresses (RoCE v2 over IPv6).
	if LL_A=$(ll_addr "$A") && LL_B=$(ll_addr "$B"); then
		ip -6 route add "$LL_B/128" dev "$A" table 10
		ip -6 route add "$LL_A/128" dev "$B" table 10
		ip -6 rule add pref 10 iif lo lookup 10
		ip -6 rule add pref 100 lookup local
		ip -6 rule del pref 0 lookup local
	fi
	;;
*)
	fail "mode" "RXE_MODE=$MODE (rules or netns)"; exit 1 ;;
esac

# Link up on both (virtio-net reports carrier at once; allow a moment).
for i in $(seq 1 50); do
	[ "$("${NSA[@]}" cat /sys/class/net/$A/operstate)" = up ] &&
		[ "$("${NSB[@]}" cat /sys/class/net/$B/operstate)" = up ] && break
	sleep 0.1
done
# ARP across the wire (the kernel resolves the peer's MAC at RTR).
if "${NSA[@]}" ping -c 3 -W 5 -I "$A" $IP_B > "$OUT/ping.txt" 2>&1; then
	pass "ping $IP_A -> $IP_B over the wire"
else
	fail "ping $IP_A -> $IP_B over the wire" "$(tail -n 2 "$OUT/ping.txt" | tr '\n' ' ')"
fi
timed network "$t"

# The hpu provider beside real kernel devices (no hpu device among them):
# libibverbs must dlopen it (LD_DEBUG=files) and it must claim nothing. The
# installed providers are hidden (a tmpfs over /etc/libibverbs.d in a
# private mount namespace) so that only the hpu provider is offered: a
# device named hpu* would be its, others nobody's. First an rxe device
# named hpu0 (a real uverbs device of ABI version 2): matched by name,
# refused by the ABI range.
if [ -n "${HPU_RDMA_PROVIDER:-}" ]; then
	t=$(now)
	"${NSA[@]}" rdma link add hpu0 type rxe netdev "$A"
	out=$(unshare --mount sh -c 'mount -t tmpfs tmpfs /etc/libibverbs.d && exec "$@"' sh \
		env RDMAV_DRIVERS="$HPU_RDMA_PROVIDER" LD_DEBUG=files ibv_devices 2>&1)
	echo "$out" > "$OUT/provider-hpu0.txt"
	if grep -q "calling init: $HPU_RDMA_PROVIDER-rdmav34.so" <<< "$out" &&
		grep -q 'Driver hpu does not support the kernel ABI of 2 (supports 1 to 1)' <<< "$out" &&
		! grep -qE '^\s+hpu0\s' <<< "$out"; then
		pass "provider: loaded beside a real device named hpu0 (rxe, uverbs ABI 2), refused by ABI version"
	else
		fail "provider: loaded beside a real device named hpu0" "$(grep -v '^ *[0-9]*:' <<< "$out" | tail -n 4 | tr '\n' ' ')"
	fi
	"${NSA[@]}" rdma link delete hpu0
	timed provider "$t"
fi

t=$(now)
"${NSA[@]}" rdma link add rxe0 type rxe netdev "$A" || fail "rdma link add rxe0" "exit $?"
"${NSB[@]}" rdma link add rxe1 type rxe netdev "$B" || fail "rdma link add rxe1" "exit $?"
# The GID table fills from the netdevs' addresses asynchronously.
for i in $(seq 1 100); do
	GA=$(roce_v2_gid rxe0 $IP_A) && GB=$(roce_v2_gid rxe1 $IP_B) && break
	sleep 0.1
done
if [ -z "${GA:-}" ] || [ -z "${GB:-}" ]; then
	fail "RoCE v2 GIDs" "no RoCE v2 GID for $IP_A on rxe0 or $IP_B on rxe1"
	exit 1
fi
log "RoCE v2 GID index: rxe0 $GA, rxe1 $GB"
rdma link show > "$OUT/rdma-link.txt" 2>&1
timed rxe-setup "$t"

if [ -n "${HPU_RDMA_PROVIDER:-}" ]; then
	out=$(unshare --mount sh -c 'mount -t tmpfs tmpfs /etc/libibverbs.d && exec "$@"' sh \
		env RDMAV_DRIVERS="$HPU_RDMA_PROVIDER" LD_DEBUG=files ibv_devices 2>&1)
	echo "$out" > "$OUT/provider-rxe.txt"
	if grep -q "calling init: $HPU_RDMA_PROVIDER-rdmav34.so" <<< "$out" &&
		! grep -qE '^\s+rxe[01]\s' <<< "$out"; then
		pass "provider: loaded beside rxe0 and rxe1, claims neither"
	else
		fail "provider: loaded beside rxe0 and rxe1" "$(grep -v '^ *[0-9]*:' <<< "$out" | tail -n 4 | tr '\n' ' ')"
	fi
fi

t=$(now)
"${NSA[@]}" ibv_devinfo -v > "$OUT/ibv_devinfo.txt" 2>&1
if grep -q 'hca_id:	rxe0' "$OUT/ibv_devinfo.txt" && grep -q 'hca_id:	rxe1' "$OUT/ibv_devinfo.txt" &&
	[ "$(grep -c 'state:.*PORT_ACTIVE' "$OUT/ibv_devinfo.txt")" = 2 ]; then
	pass "ibv_devinfo lists rxe0 and rxe1, ports active"
else
	fail "ibv_devinfo lists rxe0 and rxe1, ports active" "$(head -n 5 "$OUT/ibv_devinfo.txt" | tr '\n' ' ')"
fi
timed ibv_devinfo "$t"

# The pingpongs check their data (-c: validate buffers).
pair ibv_rc_pingpong ibv_rc_pingpong -d rxe1 -g "$GB" -n 200 -c -- \
	ibv_rc_pingpong -d rxe0 -g "$GA" -n 200 -c $IP_B
pair ibv_ud_pingpong ibv_ud_pingpong -d rxe1 -g "$GB" -n 200 -s 512 -c -- \
	ibv_ud_pingpong -d rxe0 -g "$GA" -n 200 -s 512 -c $IP_B

# RoCE v2 over IPv6 (link-local GIDs): frames for the ICRC checker's IPv6 path.
if [ "$MODE" = rules ] && [ -n "${LL_B:-}" ]; then
	if GA6=$(roce_v2_gid_ll rxe0) && GB6=$(roce_v2_gid_ll rxe1); then
		log "RoCE v2 link-local GID index: rxe0 $GA6, rxe1 $GB6"
		pair ibv_rc_pingpong_ipv6 ibv_rc_pingpong -d rxe1 -g "$GB6" -n 50 -c -- \
			ibv_rc_pingpong -d rxe0 -g "$GA6" -n 50 -c $IP_B
	else
		selected ibv_rc_pingpong_ipv6 && fail ibv_rc_pingpong_ipv6 "no RoCE v2 link-local GID on rxe0 or rxe1"
	fi
fi

# perftest: rxe1 serves, rxe0 drives; -F: no CPU frequency check (TCG).
if pair ib_write_bw ib_write_bw -d rxe1 -x "$GB" -s 65536 -n "$BW_ITERS" -F $PERF_FLAGS -- \
	ib_write_bw -d rxe0 -x "$GA" -s 65536 -n "$BW_ITERS" -F $PERF_FLAGS $IP_B; then
	row=$(perf_row "$OUT/ib_write_bw.client.txt" 65536)
	[ -n "$row" ] && figure ib_write_bw_64KiB_avg "$(awk '{ print $4 }' <<< "$row")" "MB/s(perftest)"
fi
if pair ib_read_bw ib_read_bw -d rxe1 -x "$GB" -s 65536 -n "$BW_ITERS" -F $PERF_FLAGS -- \
	ib_read_bw -d rxe0 -x "$GA" -s 65536 -n "$BW_ITERS" -F $PERF_FLAGS $IP_B; then
	row=$(perf_row "$OUT/ib_read_bw.client.txt" 65536)
	[ -n "$row" ] && figure ib_read_bw_64KiB_avg "$(awk '{ print $4 }' <<< "$row")" "MB/s(perftest)"
fi
if pair ib_send_lat ib_send_lat -d rxe1 -x "$GB" -s 2 -n "$LAT_ITERS" -F $PERF_FLAGS ${RXE_LAT_FLAGS:-} -- \
	ib_send_lat -d rxe0 -x "$GA" -s 2 -n "$LAT_ITERS" -F $PERF_FLAGS ${RXE_LAT_FLAGS:-} $IP_B; then
	row=$(perf_row "$OUT/ib_send_lat.client.txt" 2)
	if [ -n "$row" ]; then
		figure ib_send_lat_2B_typical "$(awk '{ print $5 }' <<< "$row")" usec
		figure ib_send_lat_2B_avg "$(awk '{ print $6 }' <<< "$row")" usec
	fi
fi

# rxe's own view (packets sent and received, sequence errors, retries) and
# the NICs': a lossy wire shows as rxe1's sent_pkts above rxe0's rcvd_pkts.
: > "$OUT/rdma-statistic.txt"
for d in rxe0 rxe1; do
	rdma statistic show link $d/1 >> "$OUT/rdma-statistic.txt" 2>&1
done
{ "${NSA[@]}" ip -s link show dev "$A"; "${NSB[@]}" ip -s link show dev "$B"; } > "$OUT/ip-link.txt" 2>&1
cat "$OUT/rdma-statistic.txt"
timed total "$T0"
[ $fails = 0 ]

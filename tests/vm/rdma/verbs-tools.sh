#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Debian's unchanged verbs tools over the HPU's RoCE ports, through the
# build tree's provider (Documentation/rdma.md, "End to end"): port 1 of
# the first HPU with two wired ports drives, its port 2 serves, the two
# joined by one emulated wire (tests/run-tests.py, nic_wiring()). Run by
# tests/vm/guest-suite.sh in the guest after rdma-tests.sh, with hpu.ko
# loaded; loads hpu_en.ko and hpu_ib.ko if they are not. Each check appends
# "PASS name" or "FAIL name: why" to $HPU_OUT/results.txt; perftest figures
# go to $HPU_OUT/rdma-figures.txt, every tool's output to
# $HPU_OUT/verbs-tools/.
#
# Checks: ibv_devinfo -v, ibv_rc_pingpong (-c: data checked) over the RoCE
# v2 IPv4 GIDs and over the IPv6 link-local ones, ibv_ud_pingpong (-s 512
# -c), perftest ib_write_bw, ib_read_bw, ib_send_bw (64 KiB), ib_write_lat,
# ib_send_lat, ib_read_lat (2 bytes), the port counters afterwards (frames
# received, none malformed or with a bad ICRC; retransmissions, NAKs and
# drops are printed, not yet asserted), and the
# wire itself: a capture by a passive virtio-net NIC on the same wire (the
# RoCE frames never reach the ports' own netdevs) checked by icrc-check.py.
#
# Environment: HPU_OUT (required), HPU_BUILD, HPU_KO, HPU_EN_KO, HPU_IB_KO,
# HPU_TIME_SCALE; VT_BW_ITERS, VT_LAT_ITERS (default 500), VT_TAP_MAC (the
# passive NIC, default 52:54:00:48:50:ff), VT_ONLY (the names of the tools
# to run, separated by spaces or commas; default all), VT_LAT_FLAGS (more
# perftest options for both sides of the latency tests, e.g. -C: cycles).
#
# Copyright (c) 2026 The hpu authors
set -u

REPO=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD=${HPU_BUILD:-$REPO/build}
OUT=${HPU_OUT:?HPU_OUT not set}
RES=$OUT/results.txt
FIG=$OUT/rdma-figures.txt
LOGD=$OUT/verbs-tools
KO=${HPU_KO:-$REPO/kernel/hpu.ko}
KO_EN=${HPU_EN_KO:-$(dirname "$KO")/hpu_en.ko}
KO_IB=${HPU_IB_KO:-$(dirname "$KO")/hpu_ib.ko}
export RDMAV_DRIVERS=$BUILD/rdma-provider/lib/libhpu
TS=${HPU_TIME_SCALE:-1}
BW_ITERS=${VT_BW_ITERS:-500}
LAT_ITERS=${VT_LAT_ITERS:-500}
TAP_MAC=${VT_TAP_MAC:-52:54:00:48:50:ff}
LIMIT=$(( ${VT_LIMIT:-240} * TS ))	# seconds for any one tool
IP1=192.0.2.61
IP2=192.0.2.62

mkdir -p "$LOGD"
pass() { echo "PASS vm/rdma/tools/$1" >> "$RES"; echo "PASS vm/rdma/tools/$1"; }
fail() { echo "FAIL vm/rdma/tools/$1: $2" >> "$RES"; echo "FAIL vm/rdma/tools/$1: $2"; }
log() { echo "verbs-tools: $*"; }
now() { date +%s.%N; }
figure() { echo "$1 $2 $3" | tee -a "$FIG"; }

# shellcheck source=tests/vm/rdma/rdma-lib.sh
. "$REPO/tests/vm/rdma/rdma-lib.sh"
mac_dev() {
	local d
	for d in /sys/class/net/*; do
		[ "$(cat "$d/address" 2>/dev/null)" = "$1" ] && { echo "${d##*/}"; return 0; }
	done
	return 1
}
carrier() { [ "$(cat "/sys/class/net/$1/carrier" 2>/dev/null)" = 1 ]; }
# The RoCE v2 GID index of $3 (sysfs form, or a prefix ending in '*') on
# port $2 of $1.
gid_index() {
	local i g
	for i in $(seq 0 15); do
		g=$(cat "/sys/class/infiniband/$1/ports/$2/gids/$i" 2>/dev/null) || continue
		# shellcheck disable=SC2254
		case $g in $3) ;; *) continue ;; esac
		[ "$(cat "/sys/class/infiniband/$1/ports/$2/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] &&
			echo "$i" && return 0
	done
	return 1
}
v4gid() {
	local a b c d
	IFS=. read -r a b c d <<< "$1"
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d"
}
# An interface's IPv6 link-local address once duplicate address detection is over.
ll_addr() {
	ip -6 -o addr show dev "$1" scope link | awk '!/tentative/ { sub("/.*", "", $4); print $4; exit }' | grep .
}
wait_listen() {
	local i
	for i in $(seq 1 $((600 * TS))); do
		ss -ltnH "sport = :$1" 2>/dev/null | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

# Whether the tool run NAME is among VT_ONLY's (or VT_ONLY is unset).
selected() {
	[ -z "${VT_ONLY:-}" ] && return 0
	case " ${VT_ONLY//,/ } " in *" $1 "*) return 0 ;; esac
	return 1
}

# pair NAME SERVER-CMD... -- CLIENT-CMD...: the server (port 2), then the
# client (port 1); both must exit 0. Outputs in $LOGD/NAME.{server,client}.txt.
pair() {
	local name=$1 t0 srv=() cli=() spid rc src
	shift
	selected "${name%.rev}" || return 1
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	t0=$(now)
	timeout -s KILL $LIMIT stdbuf -oL -eL "${srv[@]}" > "$LOGD/$name.server.txt" 2>&1 &
	spid=$!
	if ! wait_listen 18515; then
		fail "$name" "the server did not listen on 18515: $(tail -n 2 "$LOGD/$name.server.txt" | tr '\n' ' ')"
		kill -9 $spid 2>/dev/null
		wait $spid 2>/dev/null
		return 1
	fi
	timeout -s KILL $LIMIT stdbuf -oL -eL "${cli[@]}" > "$LOGD/$name.client.txt" 2>&1
	rc=$?
	wait $spid
	src=$?
	log "$name took $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s"
	if [ $rc != 0 ] || [ $src != 0 ]; then
		for p in 1 2; do rdma statistic show link "$IB/$p"; done > "$LOGD/$name.statistic.txt" 2>&1
		fail "$name" "client exit $rc, server exit $src: client: $(tail -n 3 "$LOGD/$name.client.txt" | tr '\n' ' ') server: $(tail -n 3 "$LOGD/$name.server.txt" | tr '\n' ' ')"
		return 1
	fi
	pass "$name"
	return 0
}

# The row of perftest's result table whose first field is SIZE.
perf_row() { awk -v s="$2" '$1 == s && NF >= 4 { print; exit }' "$1"; }

# A port counter of $1 (hpu_N/P) by name.
counter() { rdma statistic show link "$1" | tr ' ' '\n' | awk -v n="$2" 'p { print; exit } $0 == n { p = 1 }'; }

# ---- set-up ----
if ! modprobe -a ib_core ib_uverbs 2>/dev/null || [ ! -f "$KO_IB" ]; then
	log "no InfiniBand in this kernel or no $KO_IB: skipped"
	exit 0
fi
[ -e /sys/module/hpu_en ] || insmod "$KO_EN" || { fail "set-up" "insmod hpu_en failed"; exit 0; }
[ -e /sys/module/hpu_ib ] || insmod "$KO_IB" || { fail "set-up" "insmod hpu_ib failed"; exit 0; }
modprobe virtio_net 2>/dev/null

# The first HPU whose ports 0 and 1 are wired to each other.
BDF="" ; A="" ; B=""
for a in /sys/bus/auxiliary/devices/hpu.en.*; do
	[ -e "$a" ] || continue
	b=$(basename "$(readlink -f "$a/..")")
	na=$(port_netdev "$b" 0) && nb=$(port_netdev "$b" 1) || continue
	ip link set "$na" up; ip link set "$nb" up
	if wait_for 5 carrier "$na" && wait_for 5 carrier "$nb"; then
		BDF=$b; A=$na; B=$nb; break
	fi
done
if [ -z "$BDF" ]; then
	log "no HPU with ports 0 and 1 wired: skipped"
	exit 0
fi
wait_for 10 ibdev_of "$BDF"
IB=$(ibdev_of "$BDF") || { fail "set-up" "no ib device for $BDF"; exit 0; }
log "HPU $BDF, $IB, port 1 $A, port 2 $B"

# Both ports in one namespace: the kernel would take each address to the
# other through lo. Locally generated traffic for the peer leaves through
# the other port instead (policy routing, as rdma-tests.sh and
# rxe-baseline.sh do), so ARP and neighbour discovery run over the wire.
ip link set lo up
for k in all default "$A" "$B"; do
	sysctl -qw net.ipv4.conf.$k.rp_filter=0 net.ipv4.conf.$k.accept_local=1 \
		net.ipv4.conf.$k.arp_ignore=1 net.ipv4.conf.$k.arp_announce=2 2>/dev/null
done
ip addr add $IP1/32 dev "$A"
ip addr add $IP2/32 dev "$B"
ip route add $IP2/32 dev "$A" src $IP1 table 10
ip route add $IP1/32 dev "$B" src $IP2 table 10
ip rule add pref 10 iif lo lookup 10
ip rule add pref 100 lookup local
ip rule del pref 0 lookup local
LL1="" ; LL2=""
if wait_for 10 ll_addr "$A" && wait_for 10 ll_addr "$B"; then
	LL1=$(ll_addr "$A"); LL2=$(ll_addr "$B")
	ip -6 route add "$LL2/128" dev "$A" table 10
	ip -6 route add "$LL1/128" dev "$B" table 10
	ip -6 rule add pref 10 iif lo lookup 10
	ip -6 rule add pref 100 lookup local
	ip -6 rule del pref 0 lookup local
fi
cleanup() {
	ip rule add pref 0 lookup local 2>/dev/null
	ip rule del pref 100 lookup local 2>/dev/null
	ip rule del pref 10 iif lo lookup 10 2>/dev/null
	ip -6 rule add pref 0 lookup local 2>/dev/null
	ip -6 rule del pref 100 lookup local 2>/dev/null
	ip -6 rule del pref 10 iif lo lookup 10 2>/dev/null
	ip route flush table 10 2>/dev/null
	ip -6 route flush table 10 2>/dev/null
	ip addr del $IP1/32 dev "$A" 2>/dev/null
	ip addr del $IP2/32 dev "$B" 2>/dev/null
	[ -n "${TAP:-}" ] && ip link set "$TAP" down
}
trap cleanup EXIT

if ping -c 2 -W 5 -I "$A" $IP2 > "$LOGD/ping.txt" 2>&1; then
	pass "ping $IP1 -> $IP2 between ports 1 and 2 over the wire"
else
	fail "ping $IP1 -> $IP2 between ports 1 and 2 over the wire" "$(tail -n 2 "$LOGD/ping.txt" | tr '\n' ' ')"
fi
G1=""; G2=""
wait_for 10 gid_index "$IB" 1 "$(v4gid $IP1)" && G1=$(gid_index "$IB" 1 "$(v4gid $IP1)")
wait_for 10 gid_index "$IB" 2 "$(v4gid $IP2)" && G2=$(gid_index "$IB" 2 "$(v4gid $IP2)")
if [ -z "$G1" ] || [ -z "$G2" ]; then
	fail "RoCE v2 GIDs of $IP1 and $IP2" "port 1: '$G1', port 2: '$G2'"
	exit 0
fi
G1L=$(gid_index "$IB" 1 'fe80:*')
G2L=$(gid_index "$IB" 2 'fe80:*')
log "GID indexes: IPv4 $G1 / $G2, IPv6 link-local ${G1L:-none} / ${G2L:-none}"

# The passive NIC on the ports' wire (a QEMU hub): it sees both directions.
# Silent: no IPv4 address, IPv6 off, ARP off.
TAP=$(mac_dev "$TAP_MAC")
if [ -n "$TAP" ]; then
	sysctl -qw net.ipv6.conf."$TAP".disable_ipv6=1
	ip link set "$TAP" arp off
	ip link set "$TAP" up
	wait_for 5 carrier "$TAP"
fi
CAPPID=""
cap_start() {
	[ -n "$TAP" ] || return 0
	rm -f "$LOGD/$1.pcap"
	tcpdump -i "$TAP" -U -s 0 -w "$LOGD/$1.pcap" udp port 4791 > "$LOGD/$1.tcpdump.txt" 2>&1 &
	CAPPID=$!
	wait_for 10 grep -q "listening on" "$LOGD/$1.tcpdump.txt"
}
# cap_count WHAT NAME: tcpdump's last count of WHAT ("captured", "received
# by filter"): printed at SIGUSR1 as "tcpdump: N packets captured, N ...",
# at exit one count per line.
cap_count() {
	grep -Eo "[0-9]+ packets $1" "$LOGD/$2.tcpdump.txt" | tail -n 1 | cut -d' ' -f1
}
# cap_check NAME WHAT: stop the capture, every frame's ICRC must be right.
# tcpdump's "received by filter" is no measure of what it should have
# written: libpcap binds its socket before it attaches the filter, and a
# frame of any kind that reaches the wire in between (an IPv6 neighbour
# or MLD message of an earlier test's port) is counted by the kernel,
# then dropped by libpcap's own filter. So: the capture is complete when
# the kernel dropped nothing and the captured count stood still for 3 s
# (libpcap hands over a partly filled ring block after 1 s).
cap_check() {
	local out rc n=0 same=0 s0=-1 got seen drop
	[ -n "$TAP" ] || return 0
	# The tools are done. SIGUSR1 makes tcpdump (-U: each frame written
	# as taken) print its counts without stopping.
	while [ $n -lt $((120 * TS)) ] && [ $same -lt 6 ]; do
		kill -USR1 "$CAPPID" 2>/dev/null
		sleep 0.5
		got=$(cap_count captured "$1")
		if [ -n "$got" ] && [ "$got" = "$s0" ]; then
			same=$((same + 1))
		else
			same=0
		fi
		s0=$got; n=$((n + 1))
	done
	kill -INT "$CAPPID" 2>/dev/null
	wait "$CAPPID" 2>/dev/null
	got=$(cap_count captured "$1")
	seen=$(cap_count "received by filter" "$1")
	drop=$(cap_count "dropped by kernel" "$1")
	log "$1 capture: $got captured, $seen received by filter, $drop dropped by kernel"
	out=$(python3 "$REPO/tests/vm/rdma/icrc-check.py" --expect-roce "$LOGD/$1.pcap" 2>&1)
	rc=$?
	echo "$out" > "$LOGD/$1.icrc.txt"
	[ -n "$got" ] && [ "$drop" = 0 ] ||
		out="$out; tcpdump captured ${got:-?} frames, the kernel dropped ${drop:-?}"
	if [ $rc = 0 ] && [ -n "$got" ] && [ "$drop" = 0 ]; then
		pass "$2: every ICRC correct (icrc-check.py: $(echo "$out" | grep -Eo '[0-9]+ of [0-9]+ RoCE v2 frames' | head -n1))"
	else
		fail "$2: every ICRC correct (icrc-check.py)" "$(echo "$out" | tail -n 3 | tr '\n' ' ')"
	fi
}
if [ -z "$TAP" ]; then
	log "no passive NIC $TAP_MAC on the wire: no capture"
elif ! command -v tcpdump >/dev/null; then
	log "no tcpdump in the guest's root: no capture"
	TAP=""
fi

# ---- the tools ----
out=$(ibv_devinfo -v -d "$IB" 2>&1)
echo "$out" > "$LOGD/ibv_devinfo.txt"
if echo "$out" | grep -q "hca_id:	$IB" &&
	[ "$(echo "$out" | grep -c 'state:.*PORT_ACTIVE')" -ge 2 ] &&
	echo "$out" | grep -q "max_qp_rd_atom:.*[1-9]" &&
	echo "$out" | grep -q "GID\[ *$G1\]:.*::ffff:$IP1, RoCE v2"; then
	pass "ibv_devinfo -v: $IB, ports 1 and 2 active, RDMA READ depth, the RoCE v2 GID"
else
	fail "ibv_devinfo -v: $IB, ports 1 and 2 active, RDMA READ depth, the RoCE v2 GID" \
		"$(echo "$out" | grep -E "hca_id|state:|rd_atom|GID|rror" | head -n 8 | tr '\n' ' ')"
fi

# Each pingpong with the wire captured; data checked (-c).
if selected ibv_rc_pingpong; then
	cap_start rc
	pair ibv_rc_pingpong ibv_rc_pingpong -d "$IB" -i 2 -g "$G2" -n 200 -c -- \
		ibv_rc_pingpong -d "$IB" -i 1 -g "$G1" -n 200 -c $IP2
	cap_check rc "the wire of ibv_rc_pingpong"
fi
if selected ibv_ud_pingpong; then
	cap_start ud
	pair ibv_ud_pingpong ibv_ud_pingpong -d "$IB" -i 2 -g "$G2" -n 200 -s 512 -c -- \
		ibv_ud_pingpong -d "$IB" -i 1 -g "$G1" -n 200 -s 512 -c $IP2
	cap_check ud "the wire of ibv_ud_pingpong"
fi
if ! selected ibv_rc_pingpong_ipv6; then
	:
elif [ -n "$G1L" ] && [ -n "$G2L" ] && [ -n "$LL2" ]; then
	cap_start rc6
	pair ibv_rc_pingpong_ipv6 ibv_rc_pingpong -d "$IB" -i 2 -g "$G2L" -n 200 -c -- \
		ibv_rc_pingpong -d "$IB" -i 1 -g "$G1L" -n 200 -c $IP2
	cap_check rc6 "the wire of ibv_rc_pingpong over IPv6"
else
	fail ibv_rc_pingpong_ipv6 "no RoCE v2 link-local GID (port 1 '$G1L', port 2 '$G2L') or address"
fi

: > "$FIG"
# perftest both ways: port 1 drives and port 2 serves, then the reverse
# (runs and figures named .rev). Server port $1, client port $2.
perf() {
	local dir=$1 t=$2 kind=$3 size=$4 n=$5 sp cp gs gc ip name
	if [ "$dir" = fwd ]; then sp=2; cp=1; gs=$G2; gc=$G1; ip=$IP2; name=ib_${t}_$kind
	else sp=1; cp=2; gs=$G1; gc=$G2; ip=$IP1; name=ib_${t}_$kind.rev; fi
	local more=()
	[ "$kind" = lat ] && read -r -a more <<< "${VT_LAT_FLAGS:-}"
	pair "$name" ib_${t}_$kind -d "$IB" -i $sp -x "$gs" -s "$size" -n "$n" -F "${more[@]}" -- \
		ib_${t}_$kind -d "$IB" -i $cp -x "$gc" -s "$size" -n "$n" -F "${more[@]}" $ip || return
	row=$(perf_row "$LOGD/$name.client.txt" "$size")
	[ -n "$row" ] || { fail "$name figures" "no result row for $size bytes"; return; }
	if [ "$kind" = bw ]; then
		figure "${name}_64KiB_avg" "$(awk '{ print $4 }' <<< "$row")" "MB/s(perftest)"
	else
		figure "${name}_2B_typical" "$(awk '{ print $5 }' <<< "$row")" usec
		figure "${name}_2B_avg" "$(awk '{ print $6 }' <<< "$row")" usec
	fi
}
for dir in fwd rev; do
	for t in write read send; do perf $dir $t bw 65536 "$BW_ITERS"; done
	for t in write send read; do perf $dir $t lat 2 "$LAT_ITERS"; done
done

# The counters after all that: what went over the wire.
for p in 1 2; do rdma statistic show link "$IB/$p"; done > "$LOGD/rdma-statistic.txt" 2>&1
cat "$LOGD/rdma-statistic.txt"
# (A frame for an unknown QP is no fault: an ACK or a retransmission may
# arrive after the tool that was its peer destroyed its QP.)
bad=""
for p in 1 2; do
	for c in rx_icrc_errors rx_malformed; do
		v=$(counter "$IB/$p" $c)
		[ "${v:-x}" = 0 ] || bad="$bad $IB/$p $c ${v:-missing};"
	done
	v=$(counter "$IB/$p" rx_packets)
	[ "${v:-0}" -gt 0 ] 2>/dev/null || bad="$bad $IB/$p rx_packets ${v:-missing};"
done
[ -z "$bad" ] && pass "the ports received the tools' frames, none malformed or with a bad ICRC" ||
	fail "the ports received the tools' frames, none malformed or with a bad ICRC" "$bad"
exit 0

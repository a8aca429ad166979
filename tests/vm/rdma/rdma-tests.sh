#!/bin/bash
# SPDX-License-Identifier: MIT
#
# RDMA device tests (hpu_ib.ko and hpu.ko's hpu.rdma auxiliary device,
# Documentation/driver/rdma.md), run by tests/vm/guest-suite.sh in the guest
# with hpu.ko loaded; hpu_en.ko is loaded if it is not. Each check appends
# "PASS name" or "FAIL name: why" to $HPU_OUT/results.txt.
#
# Checks: the auxiliary device per HPU with ports, hpu_ib binds and
# registers hpu_N with one port per NIC port tied to hpu_en's netdev
# (rdma link), RoCE v2 GIDs from the netdev's addresses, ibv_devices and
# ibv_devinfo through the provider of the build tree, port counters (rdma
# statistic), verbs objects and their refusals (verbs-objects.c), the
# per-user limit of contexts, unload and reload, and a reset with a
# context open (the device goes, the context is dead, the device comes
# back). Without a RoCE engine in the device model, hpu_ib refuses the
# device and only that is checked.
#
# Usage: rdma-tests.sh
#   HPU_RDMA_PROVIDER: the provider to test (a path without -rdmav34.so;
#   default the build tree's), e.g. an older build to show a test failing.
#
# Copyright (c) 2026 The hpu authors

REPO=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD=${HPU_BUILD:-$REPO/build}
OUT=${HPU_OUT:?HPU_OUT not set}
RES=$OUT/results.txt
KO=${HPU_KO:-$REPO/kernel/hpu.ko}
KO_EN=${HPU_EN_KO:-$(dirname "$KO")/hpu_en.ko}
KO_IB=${HPU_IB_KO:-$(dirname "$KO")/hpu_ib.ko}
PROV=${HPU_RDMA_PROVIDER:-$BUILD/rdma-provider/lib/libhpu}
VO=$BUILD/tests/vm/hpu-verbs-objects
TS=${HPU_TIME_SCALE:-1}
# CQs one context may hold during the tests (hpu_ib's ctx_max_cq).
MAX_CQ=8

pass() { echo "PASS vm/rdma/$1" >> "$RES"; echo "PASS vm/rdma/$1"; }
fail() { echo "FAIL vm/rdma/$1: $2" >> "$RES"; echo "FAIL vm/rdma/$1: $2"; }
log() { echo "rdma: $*"; }
asuser() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# shellcheck source=tests/vm/rdma/rdma-lib.sh
. "$REPO/tests/vm/rdma/rdma-lib.sh"

uverbs_of() {
	local u
	for u in /sys/class/infiniband_verbs/uverbs*; do
		[ "$(cat "$u/ibdev" 2>/dev/null)" = "$1" ] && echo "/dev/infiniband/${u##*/}" && return 0
	done
	return 1
}

setup() {
	# A kernel without InfiniBand (or a build without hpu_ib.ko) skips.
	if ! modprobe -a ib_core ib_uverbs 2>/dev/null || [ ! -f "$KO_IB" ]; then
		log "no InfiniBand in this kernel or no $KO_IB: RDMA tests skipped"
		exit 0
	fi
	[ -e /sys/module/hpu_en ] || insmod "$KO_EN" || { fail "hpu_en loaded" "insmod failed"; exit 0; }
	if [ ! -x "$VO" ]; then
		VO=/tmp/hpu-verbs-objects
		gcc -O2 -Wall -I "$REPO/include/uapi" -I /usr/include/libdrm -o "$VO" "$REPO/tests/vm/rdma/verbs-objects.c" ||
			fail "verbs-objects builds" "gcc failed"
	fi
	BDF=$(hpus | head -n1)
	[ -n "$BDF" ] || { fail "an HPU with NIC ports" "none found"; exit 0; }
	# Page tables in use (every ASID has its root): back to this at the end.
	PT_USED=/sys/bus/pci/devices/$BDF/limits/page_tables_used
	PT0=$(cat "$PT_USED" 2>/dev/null)
}

hard_reset_since() { [ "$(cat /sys/bus/pci/devices/"$BDF"/hard_resets)" -gt "$1" ]; }
pt_back() { [ "$(cat "$PT_USED")" = "$PT0" ]; }

t_adev() {
	local b bad=""
	for b in $(hpus); do
		ls -d /sys/bus/pci/devices/"$b"/hpu.rdma.* >/dev/null 2>&1 || bad="$bad $b"
	done
	[ -z "$bad" ] && pass "$1" || fail "$1" "no hpu.rdma under$bad"
}

# 0: ib devices registered; 1: the model has no engine (hpu_ib refused it).
t_load() {
	local n l0
	# (the log is not cleared: hpu-vm scans all of it at the end)
	l0=$(dmesg | wc -l)
	insmod "$KO_IB" ctx_max_cq=$MAX_CQ || { fail "$1" "insmod failed"; exit 0; }
	n=$(ls -d /sys/bus/auxiliary/drivers/hpu_ib.ib/hpu.rdma.* 2>/dev/null | wc -l)
	if [ -z "$(ibdevs)" ] && dmesg | tail -n +$((l0 + 1)) | grep -q "no RoCE engine"; then
		pass "hpu_ib refuses a device whose model has no RoCE engine, cleanly"
		return 1
	fi
	if [ "$n" = "$(hpus | wc -l)" ] && [ "$(ibdevs | wc -l)" = "$n" ]; then
		pass "$1"
	else
		fail "$1" "$n bound, ib devices: $(ibdevs | tr '\n' ' ') $(dmesg | grep -i hpu_ib | tail -n 2)"
	fi
	return 0
}

t_link() {
	local b ib p nd ports bad="" out
	out=$(rdma link show 2>&1)
	echo "$out"
	for b in $(hpus); do
		ib=$(ibdev_of "$b") || { bad="$bad $b: no ib device;"; continue; }
		ports=$(ls /sys/bus/pci/devices/"$b"/hpu.en.*/net 2>/dev/null | wc -l)
		[ "$(cat /sys/class/infiniband/"$ib"/ports/*/link_layer | grep -c Ethernet)" = "$ports" ] ||
			bad="$bad $ib: not $ports Ethernet ports;"
		for p in $(seq 1 "$ports"); do
			nd=$(port_netdev "$b" $((p - 1))) || { bad="$bad $b port $p: no netdev;"; continue; }
			echo "$out" | grep -Eq "^link $ib/$p .*netdev $nd( |$)" ||
				bad="$bad $ib/$p not tied to $nd;"
		done
	done
	[ -z "$bad" ] && pass "$1" || fail "$1" "$bad"
}

# The RoCE v2 GID of 192.0.2.51 on port 1 of the first device.
has_gid() {
	local i
	for i in $(seq 0 15); do
		[ "$(cat "$GIDS/gids/$i" 2>/dev/null)" = "0000:0000:0000:0000:0000:ffff:c000:0233" ] &&
			[ "$(cat "$GIDS/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] && return 0
	done
	return 1
}

has_no_gid() { ! has_gid; }

t_gid() {
	IB=$(ibdev_of "$BDF")
	ND=$(port_netdev "$BDF" 0)
	GIDS=/sys/class/infiniband/$IB/ports/1
	ip link set "$ND" up && ip addr add 192.0.2.51/24 dev "$ND"
	if wait_for 10 has_gid; then pass "$1"; else fail "$1" "gids: $(cat "$GIDS"/gids/* | sort -u | tr '\n' ' ')"; fi
	ip addr del 192.0.2.51/24 dev "$ND"
	if wait_for 10 has_no_gid; then
		pass "the GID goes with the address"
	else
		fail "the GID goes with the address" "still there"
	fi
	ip addr add 192.0.2.51/24 dev "$ND"
	wait_for 10 has_gid
}

t_ibv() {
	local out
	out=$(RDMAV_DRIVERS=$PROV ibv_devices 2>&1)
	echo "$out" | grep -q "^ *$IB " && pass "$1" || fail "$1" "$(echo "$out" | tr '\n' ' ')"
	out=$(RDMAV_DRIVERS=$PROV ibv_devinfo -v -d "$IB" 2>&1)
	echo "$out" | head -n 60
	if echo "$out" | grep -q "phys_port_cnt:.*$(ls /sys/class/infiniband/"$IB"/ports | wc -l)" &&
	   echo "$out" | grep -q "link_layer:.*Ethernet" &&
	   echo "$out" | grep -q "GID\[ *[0-9]*\]:.*::ffff:192.0.2.51, RoCE v2"; then
		pass "ibv_devinfo -v shows the ports, Ethernet link layer and the RoCE v2 GID"
	else
		fail "ibv_devinfo -v shows the ports, Ethernet link layer and the RoCE v2 GID" \
			"$(echo "$out" | grep -E "phys_port|link_layer|GID|Failed|rror" | head -n 5 | tr '\n' ' ')"
	fi
}

t_stats() {
	local out
	out=$(rdma statistic show link "$IB/1" 2>&1)
	echo "$out" | grep -q "tx_packets" && echo "$out" | grep -q "doorbells_refused\|duplicate_requests" &&
		pass "$1" || fail "$1" "$(echo "$out" | head -n 2 | tr '\n' ' ')"
}

t_objects() {
	local dev out rc
	dev=$(uverbs_of "$IB") || { fail "objects" "no uverbs device for $IB"; return; }
	# PDs one context holds (ctx_max_pd), low for the check only.
	local pd0
	pd0=$(cat /sys/module/hpu_ib/parameters/ctx_max_pd)
	echo 8 > /sys/module/hpu_ib/parameters/ctx_max_pd
	out=$(timeout -s KILL $((120 * TS)) "$VO" "$dev" all $MAX_CQ 8 2>&1)
	rc=$?
	echo "$pd0" > /sys/module/hpu_ib/parameters/ctx_max_pd
	echo "$out" | grep -E "^(PASS|FAIL)" >> "$RES"
	echo "$out"
	[ "$rc" -lt 100 ] || fail "verbs-objects ran to the end" "exit $rc"
	# Same as another user: the device node is world-usable, objects too.
	out=$(asuser "$VO" "$dev" contexts 1 2>&1)
	[ "$out" = "opened 1 errno 0" ] && pass "a user without privileges opens a context" ||
		fail "a user without privileges opens a context" "$out"
	# What one user holds through all its contexts (user_max_cq).
	echo 12 > /sys/module/hpu_ib/parameters/user_max_cq
	out=$(timeout -s KILL $((120 * TS)) "$VO" "$dev" userlimit $MAX_CQ 12 2>&1)
	rc=$?
	echo 2048 > /sys/module/hpu_ib/parameters/user_max_cq
	echo "$out" | grep -E "^(PASS|FAIL)" >> "$RES"
	echo "$out"
	[ "$rc" -lt 100 ] || fail "verbs-objects userlimit ran to the end" "exit $rc"
	# Pinned memory counts against RLIMIT_MEMLOCK (ib_umem).
	out=$(asuser sh -c "ulimit -l 1024 && exec $VO $dev memlock" 2>&1)
	[ "$out" = "memlock: 12" ] && pass "pinning beyond RLIMIT_MEMLOCK is refused (ENOMEM)" ||
		fail "pinning beyond RLIMIT_MEMLOCK is refused (ENOMEM)" "$out"
}

# GID index of the RoCE v2 GID $3 (sysfs form) on port $2 of $1.
gid_index() {
	local i
	for i in $(seq 0 15); do
		[ "$(cat "/sys/class/infiniband/$1/ports/$2/gids/$i" 2>/dev/null)" = "$3" ] &&
			[ "$(cat "/sys/class/infiniband/$1/ports/$2/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] &&
			echo "$i" && return 0
	done
	return 1
}

# Data between ports 1 and 2 of the first device, which the wiring of
# tests/run-tests.py joins (port 0 <-> port 1 of the first HPU).
t_data() {
	local dev nd1 g1 g2 out rc
	dev=$(uverbs_of "$IB")
	nd1=$(port_netdev "$BDF" 1) || { log "no second port: no data test"; return; }
	ip link set "$nd1" up
	ip addr del 192.0.2.51/24 dev "$ND" 2>/dev/null
	ip addr add 192.0.2.51/32 dev "$ND"
	ip addr add 192.0.2.52/32 dev "$nd1"
	# Both ports in one namespace: the kernel would resolve each address
	# to the other through lo. Locally generated traffic for the peer
	# leaves through the other port instead (as tests/vm/rdma/
	# rxe-baseline.sh does), so the destination MAC at RTR comes from ARP
	# over the wire.
	local k
	ip link set lo up
	for k in all default "$ND" "$nd1"; do
		sysctl -qw net.ipv4.conf.$k.rp_filter=0 net.ipv4.conf.$k.accept_local=1 \
			net.ipv4.conf.$k.arp_ignore=1 net.ipv4.conf.$k.arp_announce=2 2>/dev/null
	done
	ip route add 192.0.2.52/32 dev "$ND" src 192.0.2.51 table 10
	ip route add 192.0.2.51/32 dev "$nd1" src 192.0.2.52 table 10
	ip rule add pref 10 iif lo lookup 10
	ip rule add pref 100 lookup local
	ip rule del pref 0 lookup local
	if ! wait_for 10 sh -c "[ \$(cat /sys/class/net/$ND/carrier) = 1 ] && [ \$(cat /sys/class/net/$nd1/carrier) = 1 ]"; then
		log "ports 0 and 1 not wired to each other: no data test"
		return
	fi
	wait_for 10 gid_index "$IB" 2 0000:0000:0000:0000:0000:ffff:c000:0234
	g1=$(gid_index "$IB" 1 0000:0000:0000:0000:0000:ffff:c000:0233)
	g2=$(gid_index "$IB" 2 0000:0000:0000:0000:0000:ffff:c000:0234)
	log "GID indexes: port 1 $g1, port 2 $g2"
	[ -e /sys/kernel/debug/dynamic_debug/control ] &&
		echo "module hpu_ib +p" > /sys/kernel/debug/dynamic_debug/control
	[ -n "$HPU_RDMA_DEBUG" ] && echo 0x1ff > /sys/module/drm/parameters/debug
	# AHs one context holds (ctx_max_ah), low for the check at the end only.
	local ah0
	ah0=$(cat /sys/module/hpu_ib/parameters/ctx_max_ah)
	echo 5 > /sys/module/hpu_ib/parameters/ctx_max_ah
	out=$(timeout -s KILL $((300 * TS)) "$VO" "$dev" data "$g1" 192.0.2.51 "$g2" 192.0.2.52 \
		"$(cat /sys/class/net/"$nd1"/address)" 5 2>&1)
	rc=$?
	echo "$ah0" > /sys/module/hpu_ib/parameters/ctx_max_ah
	echo "$out"
	echo "$out" | grep -E "^(PASS|FAIL)" >> "$RES"
	[ "$rc" -lt 100 ] || fail "data test ran to the end" "exit $rc"
	# HBM as an MR through libibverbs, the provider and <hpu/hpu_rdma.h>.
	local idx
	idx=$(basename "$(ls -d /sys/bus/pci/devices/"$BDF"/accel/accel* | head -n1)")
	out=$(RDMAV_DRIVERS=$PROV timeout -s KILL $((300 * TS)) "$BUILD/tests/vm/hpu-hbm-rdma" \
		"${idx#accel}" 1 "$g1" 2 "$g2" 2>&1)
	rc=$?
	echo "$out"
	echo "$out" | grep -E "^(PASS|FAIL)" >> "$RES"
	[ "$rc" -lt 100 ] || fail "hbm/hpu-hbm-rdma ran to the end" "exit $rc: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
	# The provider's own rules through libibverbs (provider-verbs.c).
	out=$(RDMAV_DRIVERS=$PROV HPU_TIME_SCALE=$TS timeout -s KILL $((300 * TS)) \
		"$BUILD/tests/vm/hpu-provider-verbs" "$IB" 1 "$g1" 2 "$g2" 2>&1)
	rc=$?
	echo "$out"
	echo "$out" | grep -E "^(PASS|FAIL)" >> "$RES"
	[ "$rc" -lt 100 ] || fail "provider/hpu-provider-verbs ran to the end" "exit $rc: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
	if rdma link show "$IB/1" | grep -q "state ACTIVE"; then
		pass "a port whose netdev is up with carrier is ACTIVE"
	else
		fail "a port whose netdev is up with carrier is ACTIVE" "$(rdma link show "$IB/1")"
	fi
	rdma statistic show link "$IB/1"
	rdma statistic show link "$IB/2"
	ip rule add pref 0 lookup local
	ip rule del pref 100 lookup local
	ip rule del pref 10 iif lo lookup 10
}

t_limits() {
	local lim=/sys/bus/pci/devices/$BDF/limits/user_contexts old out dev
	dev=$(uverbs_of "$IB")
	old=$(cat "$lim") || { fail "$1" "no $lim"; return; }
	echo 2 > "$lim"
	out=$(asuser "$VO" "$dev" contexts 4 2>&1)
	echo "$old" > "$lim"
	[ "$out" = "opened 2 errno 16" ] && pass "$1" || fail "$1" "$out"
}

t_reload() {
	local bad=""
	rmmod hpu_ib || bad="rmmod failed;"
	[ -z "$(ibdevs)" ] || bad="$bad devices left: $(ibdevs);"
	[ -e /sys/module/hpu_ib ] && bad="$bad module still there;"
	insmod "$KO_IB" ctx_max_cq=$MAX_CQ || bad="$bad insmod failed;"
	wait_for 10 ibdev_of "$BDF" || bad="$bad no device after the reload;"
	IB=$(ibdev_of "$BDF")
	[ -z "$bad" ] && pass "$1" || fail "$1" "$bad"
}

# hpu_en reloaded under a bound hpu_ib: the ports get their new netdevs
# and GIDs (the notifier's rescan once took rtnl inside rtnl: a hang).
t_en_reload() {
	local bad=""
	rmmod hpu_en || bad="rmmod hpu_en failed;"
	rdma link show "$IB/1" | grep -q " netdev " && bad="$bad port 1 keeps its netdev;"
	insmod "$KO_EN" || bad="$bad insmod hpu_en failed;"
	wait_for 10 port_netdev "$BDF" 0 || bad="$bad no netdev for port 0;"
	ND=$(port_netdev "$BDF" 0)
	ip link set "$ND" up && ip addr add 192.0.2.51/24 dev "$ND"
	wait_for 10 has_gid || bad="$bad no RoCE v2 GID of 192.0.2.51: $(cat "$GIDS"/gids/* | sort -u | tr '\n' ' ');"
	rdma link show "$IB/1" | grep -Eq "netdev $ND( |\$)" || bad="$bad port 1 not tied to $ND: $(rdma link show "$IB/1");"
	[ -z "$bad" ] && pass "$1" || fail "$1" "$bad"
}

# A context with a CQ, held by verbs-objects in the background (HOLD).
hold_start() {
	local reply
	coproc HOLD { "$VO" "$(uverbs_of "$IB")" hold 2>&1; }
	read -r -t $((60 * TS)) reply <&"${HOLD[0]}"
	[ "$reply" = "held 0" ] || BAD="$BAD holder: '$reply';"
}

# The held context must be dead after $1: its next command fails EIO
# (ENODEV accepted); then the device must be back ($2: 1 to wait for it).
hold_end() {
	local reply
	echo go >&"${HOLD[1]}"
	read -r -t $((60 * TS)) reply <&"${HOLD[0]}"
	case "$reply" in
	"after: 5"|"after: 19") ;;
	*) BAD="$BAD holder after the $1: '$reply';" ;;
	esac
	wait "$HOLD_PID" 2>/dev/null
	if [ "$2" = 1 ]; then
		wait_for 60 ibdev_of "$BDF" || BAD="$BAD no device after the $1;"
		IB=$(ibdev_of "$BDF")
		ND=$(port_netdev "$BDF" 0)
	fi
}

t_reset() {
	BAD=""
	hold_start
	echo "$2" > /sys/bus/pci/devices/"$BDF"/hpu_reset || BAD="$BAD $2 reset failed;"
	hold_end "$2 reset" 1
	[ -z "$BAD" ] && pass "$1" || fail "$1" "$BAD"
}

# A RoCE command the engine never completes (debugfs inject_roce_cmd):
# verbs-objects checks what the process sees; hpu_ib asks for a hard reset
# at the timeout, the context's teardown (the reset disassociates it, or
# the process closes it first) quarantines its address space and keeps its
# doorbell page, and the engine is back after the reset.
t_wedge() {
	local dev out rc mark h0 inj bad=""
	dev=$(uverbs_of "$IB") || { fail "$1" "no uverbs device for $IB"; return; }
	# The accel device's debugfs directory is named by its PCI address.
	inj=/sys/kernel/debug/accel/$BDF/inject_roce_cmd
	[ -e "$inj" ] || { fail "$1" "no $inj"; return; }
	mark="hpu rdma-tests: wedge $$ $(date +%s%N)"
	echo "<6>$mark" > /dev/kmsg
	h0=$(cat /sys/bus/pci/devices/"$BDF"/hard_resets)
	out=$(timeout -s KILL $((120 * TS)) "$VO" "$dev" wedge "$inj" \
		/sys/bus/pci/devices/"$BDF"/hard_resets "$h0" 2>&1)
	rc=$?
	echo "$out"
	echo "$out" | grep -E "^(PASS|FAIL)" >> "$RES"
	[ "$rc" -lt 100 ] || bad="$bad verbs-objects wedge exit $rc;"
	dmesg | sed -n "/$mark/,\$p" | grep -q "doorbell page [0-9]* kept out of use until the device is reset" ||
		bad="$bad no message of the kept doorbell page;"
	wait_for 60 hard_reset_since "$h0" || bad="$bad no hard reset asked for by the driver;"
	wait_for 60 ibdev_of "$BDF" || bad="$bad no device after the reset;"
	IB=$(ibdev_of "$BDF")
	ND=$(port_netdev "$BDF" 0)
	dev=$(uverbs_of "$IB")
	out=$("$VO" "$dev" cq 2>&1)
	[ "$out" = "cq: 0" ] || bad="$bad after the reset: '$out';"
	[ -z "$bad" ] && pass "$1" || fail "$1" "$bad"
}

# A function level reset by the PCI core, with a context open.
t_flr() {
	local m
	BAD=""
	hold_start
	m=$(cat /sys/bus/pci/devices/"$BDF"/reset_method)
	echo flr > /sys/bus/pci/devices/"$BDF"/reset_method &&
		echo 1 > /sys/bus/pci/devices/"$BDF"/reset || BAD="$BAD FLR failed;"
	echo "$m" > /sys/bus/pci/devices/"$BDF"/reset_method
	hold_end FLR 1
	[ -z "$BAD" ] && pass "$1" || fail "$1" "$BAD"
}

# Unbind the HPU from hpu.ko with a context open, then bind it again.
t_unbind() {
	BAD=""
	hold_start
	echo "$BDF" > /sys/bus/pci/drivers/hpu/unbind || BAD="$BAD unbind failed;"
	ibdev_of "$BDF" >/dev/null && BAD="$BAD ib device still there;"
	hold_end unbind 0
	echo "$BDF" > /sys/bus/pci/drivers/hpu/bind || BAD="$BAD bind failed;"
	wait_for 60 ibdev_of "$BDF" || BAD="$BAD no device after the bind;"
	IB=$(ibdev_of "$BDF")
	PT0=$(cat "$PT_USED" 2>/dev/null)
	[ -z "$BAD" ] && pass "$1" || fail "$1" "$BAD"
}

t_unload() {
	local bad=""
	rmmod hpu_ib || bad="rmmod failed;"
	[ -z "$(ibdevs)" ] || bad="$bad devices left;"
	[ -z "$PT0" ] || wait_for 10 pt_back ||
		bad="$bad page tables in use $(cat "$PT_USED"), $PT0 before: an RDMA address space leaked;"
	ls -d /sys/bus/pci/devices/"$BDF"/hpu.rdma.* >/dev/null 2>&1 || bad="$bad the auxiliary device went too;"
	[ -z "$bad" ] && pass "$1" || fail "$1" "$bad"
}

setup
t_adev "every HPU with NIC ports has an hpu.rdma auxiliary device"
if t_load "hpu_ib binds every hpu.rdma device and registers an ib device"; then
	t_link "rdma link shows hpu_N/1..P, each port tied to hpu_en's netdev of that port"
	t_gid "an IPv4 address on the netdev becomes a RoCE v2 GID of the port"
	t_ibv "ibv_devices lists the device through the build tree's provider"
	t_stats "rdma statistic shows the port counters"
	t_objects
	t_data
	t_limits "an RDMA context counts against the user's limit of contexts (EBUSY beyond)"
	t_reload "hpu_ib unloads with nothing left and loads again"
	GIDS=/sys/class/infiniband/$IB/ports/1
	t_en_reload "hpu_en reloaded under hpu_ib: the ports' new netdevs and their GIDs are taken up"
	t_reset "a soft reset takes the ib device away and back; an open context dies with it" soft
	t_reset "a hard reset takes the ib device away and back" hard
	t_wedge "a RoCE engine whose commands stop is wedged until a hard reset brings it back"
	t_flr "a function level reset takes the ib device away and back; an open context dies with it"
	t_unbind "unbinding the HPU with a context open removes the ib device; binding brings it back"
fi
t_unload "hpu_ib unloads cleanly, every RDMA address space given back, the auxiliary devices left"
exit 0

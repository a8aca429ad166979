#!/bin/bash
# SPDX-License-Identifier: MIT
#
# One side of the interop run (tests/vm/interop/run-interop.sh boots both
# guests and runs this script in each): guest A holds the device under test,
# guest B is the Linux soft-RoCE (rdma_rxe) peer. Up to two pairs, each on
# its own emulated wire:
#   hpu: A's HPU, NIC port 0 (hpu_en netdev, hpu_ib device hpu_N port 1),
#        192.0.2.1/26  <->  B's virtio-net $IX_MAC_BH with rxe "rxeh", 192.0.2.2/26
#   rxe: A's virtio-net $IX_MAC_AR with rxe "rxea", 192.0.2.65/26
#        <->  B's virtio-net $IX_MAC_BR with rxe "rxeb", 192.0.2.66/26
#        (the harness check and the baseline the hpu pair's figures are
#        compared with, measured in the same run)
# Per pair, in this order: ping both ways, a TCP transfer both ways, then
# ibv_rc_pingpong -c, ibv_ud_pingpong -c, ib_write_bw, ib_read_bw,
# ib_send_bw, ib_write_lat, ib_send_lat, ib_read_lat, each twice: A as
# the server and B as the client, then the other way round.
#
# The guests meet through a directory both mount (9p, tag hpuix, no cache:
# each lookup goes to the host), not over the wire, so that a broken wire
# or netdev fails the steps that need it instead of the whole run. Step K
# of pair P: the server starts its tool, waits until it listens, creates
# P.K.ready (or P.K.noserver); the client waits for that, runs its tool,
# creates P.K.cdone; a server still running GRACE seconds after that is
# killed. Both guests walk the same list, so the keys agree.
#
# Environment: IX_ROLE (a or b), IX_PAIRS ("rxe hpu", "rxe" or "hpu"),
#   IX_MAC_AR, IX_MAC_BH, IX_MAC_BR, IX_BW_ITERS (200), IX_LAT_ITERS (200),
#   IX_BW_SIZE (65536), IX_LIMIT (each tool's time limit, 90 s; once a tool
#   of a pair has timed out, the pair's later tools get IX_SHORT, 30 s),
#   IX_SETUP_WAIT (how long to wait for the other guest's setup, 600 s),
#   IX_ONLY (a bash regular expression: only the steps whose "pair/name"
#   matches, e.g. 'hpu/ib_write_bw hpu->'),
#   HPU_BUILD (the build directory: the provider), HPU_KO.
# Writes $HPU_OUT/ix-results.txt:
#   PLAN pair key server-role name
#                                 a step this guest will take part in
#   STEP pair key role rc seconds output-file name
#                                 its side of it (role server or client)
#   PASS name / FAIL name: why    checks of this guest alone
#   INFO ...
# and each tool's output as $HPU_OUT/<pair>.<key>.<role>.txt. The host
# (summarize.py) joins both guests' lines into PASS/FAIL per step.
#
# Copyright (c) 2026 The hpu authors
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

REPO=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD=${HPU_BUILD:-$REPO/build}
OUT=${HPU_OUT:?HPU_OUT not set}
RES=$OUT/ix-results.txt
: > "$RES"
ROLE=${IX_ROLE:?IX_ROLE a or b}
PAIRS=${IX_PAIRS:-rxe hpu}
MAC_AR=${IX_MAC_AR:-52:54:00:1c:00:01}
MAC_BH=${IX_MAC_BH:-52:54:00:1c:00:02}
MAC_BR=${IX_MAC_BR:-52:54:00:1c:00:03}
BW_ITERS=${IX_BW_ITERS:-200}
LAT_ITERS=${IX_LAT_ITERS:-200}
BW_SIZE=${IX_BW_SIZE:-65536}
LIMIT=${IX_LIMIT:-90}
SHORT=${IX_SHORT:-30}
SETUP_WAIT=${IX_SETUP_WAIT:-600}
ONLY=${IX_ONLY:-}
GRACE=20
KO=${HPU_KO:-$REPO/kernel/hpu.ko}
KO_EN=$(dirname "$KO")/hpu_en.ko
KO_IB=$(dirname "$KO")/hpu_ib.ko
SYNC=/tmp/ix
PERF_PORT=18515
TCP_PORT=5001
TCP_BYTES=1048576
fails=0

log() { echo "interop-$ROLE: $*"; }
pass() { echo "PASS interop/$1" | tee -a "$RES"; }
fail() { echo "FAIL interop/$1: $2" | tee -a "$RES"; fails=$((fails + 1)); }
info() { echo "INFO $*" | tee -a "$RES"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# ifname_of, roce_v2_gid, hpu_port0, hpu_ibdev, port_active
. "$REPO/tests/vm/rdma/roce-lib.sh"

wait_for() { # wait_for SECONDS COMMAND...
	local t=$(( $1 * 10 )); shift
	while [ "$t" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1; t=$((t - 1))
	done
	return 1
}

listening() { ss -ltnH "sport = :$1" 2>/dev/null | grep -q .; }

# ---- setup ----
# Per pair P on this guest: IF_P (netdev), DEV_P (RDMA device), IP_P,
# PEER_P (the other guest's address), GID_P (RoCE v2 GID index).
declare -A IF DEV IP PEER GID LIM
setup_ok=1

# The guest has no udev: no /dev/fd for bash's process substitution.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
mkdir -p "$SYNC"
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 hpuix "$SYNC"; then
	fail "$ROLE/sync directory" "cannot mount the 9p tag hpuix"
	exit 1
fi

addr() { # addr PAIR IFACE ADDR PEER
	IF[$1]=$2; IP[$1]=$3; PEER[$1]=$4
	sysctl -qw net.ipv4.conf."$2".rp_filter=0 net.ipv4.conf.all.rp_filter=0 2>/dev/null
	ip addr add "$3/26" dev "$2" && ip link set "$2" up
}

# rxe_end PAIR GUEST MAC RXE ADDR PEER: rxe device RXE on the virtio-net NIC MAC.
rxe_end() {
	local i
	i=$(ifname_of "$3") || { fail "$1/$2 has virtio-net $3" "not found"; setup_ok=0; return 1; }
	addr "$1" "$i" "$5" "$6"
	rdma link add "$4" type rxe netdev "$i" || fail "$1/$2 rdma link add $4" "exit $?"
	DEV[$1]=$4
}

t=$(now)
modprobe -a virtio_net rdma_rxe ib_core ib_uverbs || fail "$ROLE/modules" "modprobe virtio_net rdma_rxe ib_core ib_uverbs"
ip link set lo up
for p in $PAIRS; do
	case $ROLE.$p in
	a.rxe) rxe_end rxe A "$MAC_AR" rxea 192.0.2.65 192.0.2.66 || continue ;;
	b.rxe) rxe_end rxe B "$MAC_BR" rxeb 192.0.2.66 192.0.2.65 || continue ;;
	b.hpu) rxe_end hpu B "$MAC_BH" rxeh 192.0.2.2 192.0.2.1 || continue ;;
	a.hpu)
		# As tests/vm/guest-suite.sh and rdma-tests.sh load them.
		export RDMAV_DRIVERS=$BUILD/rdma-provider/lib/libhpu
		if ! modprobe -a drm drm_buddy drm_shmem_helper gpu-sched ||
			! insmod "$KO" || ! insmod "$KO_EN" || ! insmod "$KO_IB"; then
			fail "hpu/A loads hpu.ko, hpu_en.ko, hpu_ib.ko" "$(dmesg | tail -n 3 | tr '\n' ' ')"
			setup_ok=0; continue
		fi
		pass "hpu/A loads hpu.ko, hpu_en.ko, hpu_ib.ko"
		if ! wait_for 30 hpu_port0 || ! wait_for 30 hpu_ibdev; then
			fail "hpu/A has the port 0 netdev and the ib device" "netdevs: $(ls /sys/class/net | tr '\n' ' '), ib: $(ls /sys/class/infiniband 2>/dev/null | tr '\n' ' ')"
			setup_ok=0; continue
		fi
		i=$(hpu_port0)
		addr hpu "$i" 192.0.2.1 192.0.2.2
		DEV[hpu]=$(hpu_ibdev)
		info "hpu: port 0 netdev $i ($(cat /sys/class/net/$i/address)), ib device ${DEV[hpu]}"
		;;
	*) fail "$ROLE/pairs" "unknown pair $p"; setup_ok=0 ;;
	esac
done
for p in $PAIRS; do
	[ -n "${DEV[$p]:-}" ] || continue
	if ! wait_for 30 port_active "${DEV[$p]}"; then
		fail "$p/${ROLE^^} ${DEV[$p]} port 1 ACTIVE" "state $(cat /sys/class/infiniband/${DEV[$p]}/ports/1/state 2>&1), netdev ${IF[$p]} $(cat /sys/class/net/${IF[$p]}/operstate)"
	fi
	for k in $(seq 1 100); do
		GID[$p]=$(roce_v2_gid "${DEV[$p]}" "${IP[$p]}") && break
		sleep 0.1
	done
	if [ -z "${GID[$p]:-}" ]; then
		fail "$p/${ROLE^^} RoCE v2 GID of ${IP[$p]} on ${DEV[$p]}" "none: $(cat /sys/class/infiniband/${DEV[$p]}/ports/1/gids/* 2>/dev/null | sort -u | tr '\n' ' ')"
		GID[$p]=0
	fi
	info "$p: ${DEV[$p]} on ${IF[$p]} ${IP[$p]}, RoCE v2 GID index ${GID[$p]}, peer ${PEER[$p]}"
	LIM[$p]=$LIMIT
done
ibv_devinfo -v > "$OUT/ibv_devinfo.txt" 2>&1
rdma link show > "$OUT/rdma-link.txt" 2>&1
info "setup took $(since "$t") s"

# ---- meeting the other guest ----
OTHER=$([ "$ROLE" = a ] && echo b || echo a)
barrier() { # barrier NAME SECONDS
	echo "$setup_ok" > "$SYNC/$1.$ROLE"
	if ! wait_for "$2" test -e "$SYNC/$1.$OTHER"; then
		fail "$ROLE/meets the other guest ($1)" "no $1.$OTHER after $2 s"
		return 1
	fi
	return 0
}
t=$(now)
barrier setup "$SETUP_WAIT" || exit 1
info "waited $(since "$t") s for guest $OTHER's setup"

# ---- the steps ----
# step PAIR NAME SERVER-ROLE PORT SERVER-ARGS... -- CLIENT-ARGS...
# In the arguments @DEV, @GID, @PEER, @IP and @IF stand for this guest's values
# for the pair. PORT: the TCP port the server listens on before the client
# may start; "-" for a step without a server.
declare -A KEYN
subst() {
	local a p=$1; shift
	for a in "$@"; do
		a=${a//@DEV/${DEV[$p]:-none}}
		a=${a//@GID/${GID[$p]:-0}}
		a=${a//@PEER/${PEER[$p]:-0.0.0.0}}
		a=${a//@IP/${IP[$p]:-0.0.0.0}}
		a=${a//@IF/${IF[$p]:-lo}}
		printf '%s\n' "$a"
	done
}
step() {
	local p=$1 name=$2 srole=$3 port=$4 srv=() cli=() cmd=() key role out t0 pid rc lim k seen
	shift 4
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	KEYN[$p]=$(( ${KEYN[$p]:-0} + 1 ))
	key=$p.${KEYN[$p]}
	role=client
	[ "$srole" = "$ROLE" ] && role=server
	[ "$port" = - ] && [ $role = server ] && return 0
	[ -n "$ONLY" ] && ! [[ "$p/$name" =~ $ONLY ]] && return 0
	if [ "$DRY" = 1 ]; then
		echo "PLAN $p $key $srole $name" >> "$RES"
		return 0
	fi
	if [ $role = server ]; then
		mapfile -t cmd <<< "$(subst "$p" "${srv[@]}")"
	else
		mapfile -t cmd <<< "$(subst "$p" "${cli[@]}")"
	fi
	out=$OUT/$key.$role.txt
	lim=${LIM[$p]:-$LIMIT}
	t0=$(now)
	echo "# ${cmd[*]}" > "$out"
	log "$key $name: $role: ${cmd[*]}"
	if [ $role = server ]; then
		# stdbuf: what a tool printed is kept when the time limit kills it
		timeout "$lim" stdbuf -oL -eL "${cmd[@]}" >> "$out" 2>&1 &
		pid=$!
		k=0
		while ! listening "$port"; do
			kill -0 $pid 2>/dev/null || break
			k=$((k + 1)); [ $k -gt 600 ] && break
			sleep 0.1
		done
		if listening "$port"; then
			touch "$SYNC/$key.ready"
		else
			touch "$SYNC/$key.noserver"
			echo "# did not listen on TCP $port" >> "$out"
		fi
		seen=
		while kill -0 $pid 2>/dev/null; do
			if [ -z "$seen" ] && [ -e "$SYNC/$key.cdone" ]; then
				seen=$(date +%s)
			fi
			if [ -n "$seen" ] && [ $(( $(date +%s) - seen )) -ge $GRACE ]; then
				echo "# killed: still running $GRACE s after the client ended" >> "$out"
				kill $pid 2>/dev/null
				break
			fi
			sleep 0.2
		done
		wait $pid
		rc=$?
		touch "$SYNC/$key.sdone"
	else
		if [ "$port" != - ] && ! wait_for $((lim + 60)) test -e "$SYNC/$key.ready" -o -e "$SYNC/$key.noserver"; then
			echo "# the server never became ready ($key.ready)" >> "$out"
			rc=255
		elif [ -e "$SYNC/$key.noserver" ]; then
			echo "# the server did not listen (see the server's output)" >> "$out"
			rc=254
		else
			timeout "$lim" stdbuf -oL -eL "${cmd[@]}" >> "$out" 2>&1
			rc=$?
		fi
		touch "$SYNC/$key.cdone"
	fi
	echo "# exit $rc after $(since "$t0") s" >> "$out"
	echo "STEP $p $key $role $rc $(since "$t0") ${out##*/} $name" >> "$RES"
	log "$key $name: $role exit $rc"
	# A tool that ran into its time limit: the pair's later tools get a
	# shorter one (each still runs and still fails on its own).
	[ $rc = 124 ] && LIM[$p]=$SHORT
	return 0
}

all_steps() {
	local p la lb s d tool args PP=(-n 200 -c)
	KEYN=()
	for p in $PAIRS; do
		if [ $p = hpu ]; then la=hpu; lb=rxe; else la=rxeA; lb=rxeB; fi
		step $p "ping $la->$lb" b - -- ping -c 3 -W 5 -I @IF @PEER
		step $p "ping $lb->$la" a - -- ping -c 3 -W 5 -I @IF @PEER
		step $p "tcp $la->$lb" b $TCP_PORT python3 "$REPO/tests/vm/nic/nic_tcp.py" serve $TCP_PORT $TCP_BYTES 1 60 -- \
			python3 "$REPO/tests/vm/nic/nic_tcp.py" send @PEER $TCP_PORT $TCP_BYTES 1 60
		step $p "tcp $lb->$la" a $TCP_PORT python3 "$REPO/tests/vm/nic/nic_tcp.py" serve $TCP_PORT $TCP_BYTES 2 60 -- \
			python3 "$REPO/tests/vm/nic/nic_tcp.py" send @PEER $TCP_PORT $TCP_BYTES 2 60
		for s in b a; do
			if [ $s = b ]; then d="$la->$lb"; else d="$lb->$la"; fi
			step $p "ibv_rc_pingpong $d" $s $PERF_PORT ibv_rc_pingpong -d @DEV -g @GID "${PP[@]}" -- \
				ibv_rc_pingpong -d @DEV -g @GID "${PP[@]}" @PEER
		done
		for s in b a; do
			if [ $s = b ]; then d="$la->$lb"; else d="$lb->$la"; fi
			step $p "ibv_ud_pingpong $d" $s $PERF_PORT ibv_ud_pingpong -d @DEV -g @GID "${PP[@]}" -s 512 -- \
				ibv_ud_pingpong -d @DEV -g @GID "${PP[@]}" -s 512 @PEER
		done
		for tool in ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_send_lat ib_read_lat; do
			case $tool in
			*_bw) args=(-s "$BW_SIZE" -n "$BW_ITERS") ;;
			*) args=(-s 2 -n "$LAT_ITERS") ;;
			esac
			for s in b a; do
				if [ $s = b ]; then d="$la->$lb"; else d="$lb->$la"; fi
				step $p "$tool $d" $s $PERF_PORT $tool -d @DEV -x @GID "${args[@]}" -F -- \
					$tool -d @DEV -x @GID "${args[@]}" -F @PEER
			done
		done
	done
}

# First the plan (every step this guest takes part in, so that the host
# can tell a step that never ran from one that was never meant to), then
# the run.
DRY=1 all_steps
DRY=0 all_steps

# ---- the end ----
for p in $PAIRS; do
	[ -n "${DEV[$p]:-}" ] && rdma statistic show link "${DEV[$p]}/1" >> "$OUT/rdma-statistic.txt" 2>&1
	[ -n "${IF[$p]:-}" ] && ip -s link show dev "${IF[$p]}" >> "$OUT/ip-link.txt" 2>&1
done
barrier end 120
exit 0

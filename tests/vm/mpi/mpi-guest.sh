#!/bin/bash
# SPDX-License-Identifier: MIT
#
# One side of the MPI run (tests/vm/mpi/run-mpi.sh boots both guests and
# runs this script in each, IX_ROLE a or b). Each guest has:
#   - an HPU whose NIC port 0 is on the HPU wire (hpu_en netdev, hpu_ib
#     device, 192.0.2.1/26 in A, 192.0.2.2/26 in B);
#   - a virtio-net NIC on the rxe wire with a Linux soft-RoCE device "rxe0"
#     (192.0.2.65/26, .66): the baseline, measured in the same boot;
#   - a virtio-net NIC on the control link (192.0.2.129/26, .130): Open
#     MPI's own traffic (launch, out-of-band) and nothing else.
# Guest A runs mpirun, one rank per guest, once per case ("hpu hbm": HBM
# buffers over the HPU's RoCE; "hpu host": host buffers over it; "rxe
# host": host buffers over rxe), with Open MPI's pml ucx over UCX's rc_verbs
# on that RDMA device. Guest B runs the exec server (exec-server.sh) that
# mpirun's launch agent (hpu-rsh) reaches in place of ssh. They meet
# through a directory both mount over 9p (tag hpuix).
#
# Environment: IX_ROLE, MPI_CASES (default "hpu:hbm hpu:host rxe:host"),
# MPI_SIZES (hpu-mpi-allreduce --sizes, default 4:1M), MPI_ITERS (3),
# MPI_LIMIT (seconds per mpirun, 900), MPI_TOKEN, IX_MAC_* (the NICs),
# HPU_BUILD, HPU_OUT. Writes $HPU_OUT/mpi-results.txt (PASS, FAIL, FIGURE
# and INFO lines) and each run's output as $HPU_OUT/mpi-<case>.txt.
#
# Copyright (c) 2026 The hpu authors
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
BUILD=${HPU_BUILD:-$REPO/build}
OUT=${HPU_OUT:?HPU_OUT not set}
RES=$OUT/mpi-results.txt
: > "$RES"
ROLE=${IX_ROLE:?IX_ROLE a or b}
CASES=${MPI_CASES:-hpu:hbm hpu:host rxe:host}
SIZES=${MPI_SIZES:-4:1M}
ITERS=${MPI_ITERS:-3}
LIMIT=${MPI_LIMIT:-900}
export MPI_TOKEN=${MPI_TOKEN:?MPI_TOKEN not set}
KO=${HPU_KO:-$REPO/kernel/hpu.ko}
SYNC=/tmp/mx
fails=0

pass() { echo "PASS mpi/$1" | tee -a "$RES"; }
fail() { echo "FAIL mpi/$1: $2" | tee -a "$RES"; fails=$((fails + 1)); }
info() { echo "INFO $*" | tee -a "$RES"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
wait_for() { # wait_for SECONDS COMMAND...
	local t=$(( $1 * 10 )); shift
	while [ "$t" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1; t=$((t - 1))
	done
	return 1
}
. "$REPO/tests/vm/rdma/roce-lib.sh"     # ifname_of, roce_v2_gid, hpu_port0, hpu_ibdev, port_active
# dump_procs FILE: what the MPI processes of this guest are doing (a run
# that outlived its limit): each thread's state, wait channel, kernel stack.
dump_procs() {
	local p t
	for p in $(pgrep -f 'hpu-mpi-allreduce|orted|mpirun'); do
		echo "== $p $(tr '\0' ' ' < /proc/$p/cmdline)"
		for t in /proc/$p/task/*; do
			echo "-- thread ${t##*/} $(cut -d' ' -f3 $t/stat) wchan $(cat $t/wchan 2>/dev/null)"
			cat "$t/stack" 2>/dev/null
		done
	done > "$1" 2>&1
	rdma statistic show > "$1.rdma" 2>&1
	rdma resource show qp > "$1.qp" 2>&1
}
addr() { # addr IFACE ADDR
	sysctl -qw net.ipv4.conf."$1".rp_filter=0 net.ipv4.conf.all.rp_filter=0 2>/dev/null
	ip addr add "$2/26" dev "$1" && ip link set "$1" up
}

# ---- setup ----
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
mkdir -p "$SYNC" /dev/shm
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 hpuix "$SYNC" ||
	{ fail "$ROLE/sync directory" "cannot mount the 9p tag hpuix"; exit 1; }
mountpoint -q /dev/shm || mount -t tmpfs -o size=256M tmpfs /dev/shm
n=$([ "$ROLE" = a ] && echo 1 || echo 2)
hostname "mpi-$ROLE"
ip link set lo up
declare -A DEV
t=$(now)
modprobe -a virtio_net rdma_rxe ib_core ib_uverbs || fail "$ROLE/modules" "virtio_net rdma_rxe ib_core ib_uverbs"
ctl=$(ifname_of "$([ "$ROLE" = a ] && echo "$IX_MAC_CA" || echo "$IX_MAC_CB")") &&
	addr "$ctl" "192.0.2.$((128 + n))" || fail "$ROLE/control link" "no virtio-net NIC for it"
if rx=$(ifname_of "$([ "$ROLE" = a ] && echo "$IX_MAC_RA" || echo "$IX_MAC_RB")"); then
	addr "$rx" "192.0.2.$((64 + n))"
	rdma link add rxe0 type rxe netdev "$rx" && DEV[rxe]=rxe0 || fail "$ROLE/rdma link add rxe0" "exit $?"
else
	fail "$ROLE/rxe wire" "no virtio-net NIC for it"
fi
export RDMAV_DRIVERS=$BUILD/rdma-provider/lib/libhpu
if modprobe -a drm drm_buddy drm_shmem_helper gpu-sched && insmod "$KO" &&
	insmod "$(dirname "$KO")/hpu_en.ko" && insmod "$(dirname "$KO")/hpu_ib.ko" &&
	wait_for 30 hpu_port0 && wait_for 30 hpu_ibdev; then
	addr "$(hpu_port0)" "192.0.2.$n"
	DEV[hpu]=$(hpu_ibdev)
else
	fail "$ROLE/HPU: hpu.ko, hpu_en.ko, hpu_ib.ko, port 0 and its ib device" "$(dmesg | tail -n 3 | tr '\n' ' ')"
fi
for p in hpu rxe; do
	[ -n "${DEV[$p]:-}" ] || continue
	ip=$([ $p = hpu ] && echo "192.0.2.$n" || echo "192.0.2.$((64 + n))")
	if wait_for 30 port_active "${DEV[$p]}" && wait_for 10 roce_v2_gid "${DEV[$p]}" "$ip"; then
		info "$ROLE: $p is ${DEV[$p]} ($ip, RoCE v2 GID $(roce_v2_gid "${DEV[$p]}" "$ip"))"
	else
		fail "$ROLE/$p: ${DEV[$p]} active with the RoCE v2 GID of $ip" "state $(cat /sys/class/infiniband/${DEV[$p]}/ports/1/state 2>&1)"
		unset "DEV[$p]"
	fi
done
info "$ROLE: setup took $(since "$t") s"
# MPI_DYNDBG=1: hpu_ib's debug messages (why a verb was refused) in dmesg.
if [ "${MPI_DYNDBG:-0}" = 1 ]; then
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	echo 'module hpu_ib +p' > /sys/kernel/debug/dynamic_debug/control
	echo 0x2 > /sys/module/drm/parameters/debug     # hpu.ko's drm_dbg (DRM_UT_DRIVER)
fi

# What UCX and Open MPI need on both sides (section 1 of
# Documentation/rdma-scale-out.md); mpirun forwards them (-x) to B's rank.
export UCX_TLS=rc_v,self UCX_UD_VERBS_ETH_DGID_CHECK=n UCX_UD_VERBS_TIMEOUT=300s \
	UCX_WARN_UNUSED_ENV_VARS=n OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# MPI_ENV: more VAR=VALUE settings for both ranks (a reproducer, e.g.
# UCX_LOG_LEVEL=debug), passed on with -x.
XENV=()
for kv in ${MPI_ENV:-}; do
	export "${kv?}"
	XENV+=(-x "${kv%%=*}")
done

OTHER=$([ "$ROLE" = a ] && echo b || echo a)
echo "${!DEV[*]}" > "$SYNC/setup.$ROLE"
if ! wait_for 900 test -e "$SYNC/setup.$OTHER"; then
	fail "$ROLE/meets the other guest" "no setup.$OTHER after 900 s"
	exit 1
fi

if [ "$ROLE" = b ]; then
	busybox nc -ll -p 7001 -e "$HERE/exec-server.sh" &
	srv=$!
	echo up > "$SYNC/server.b"
	k=0
	while [ ! -e "$SYNC/done.a" ] && [ $k -lt $(( (LIMIT * 4 + 300) * 2 )) ]; do
		if [ -s "$SYNC/dump.req" ] && [ ! -e "$SYNC/dump.b" ]; then
			dump_procs "$OUT/stuck-b-$(cat "$SYNC/dump.req").txt"
			echo done > "$SYNC/dump.b"
		fi
		if [ -s "$SYNC/kill.req" ] && [ ! -e "$SYNC/kill.b" ]; then
			pkill -KILL -f 'hpu-mpi-allreduce|orted'
			echo done > "$SYNC/kill.b"
		fi
		sleep 0.5; k=$((k + 1))
	done
	[ -e "$SYNC/done.a" ] || fail "b/A finished" "no done.a"
	kill "$srv" 2>/dev/null
	exit $(( fails > 100 ? 100 : fails ))
fi

wait_for 60 test -e "$SYNC/server.b" || fail "a/B's exec server is up" "no server.b"
read -r bdevs < "$SYNC/setup.b"
for c in $CASES; do
	p=${c%%:*} mem=${c#*:}
	name="$p $mem"
	if [ -z "${DEV[$p]:-}" ] || [[ " $bdevs " != *" $p "* ]]; then
		fail "$p/$mem/allreduce across two guests" "no $p device in both guests"
		continue
	fi
	out=$OUT/mpi-$p-$mem.txt
	stat0=$(rdma statistic show link "${DEV[$p]}/1" 2>/dev/null)
	t=$(now)
	rm -f "$SYNC/dump.req" "$SYNC/dump.b"
	UCX_NET_DEVICES=${DEV[$p]}:1 setsid mpirun --allow-run-as-root \
		-np 2 --host 192.0.2.129:1,192.0.2.130:1 \
		--mca plm_rsh_agent "$HERE/hpu-rsh" --mca plm_rsh_no_tree_spawn 1 \
		--mca oob_tcp_if_include 192.0.2.128/26 \
		--mca pml ucx --mca pml_ucx_devices any --mca btl ^openib,ofi \
		-x RDMAV_DRIVERS -x UCX_NET_DEVICES -x UCX_TLS -x UCX_UD_VERBS_ETH_DGID_CHECK \
		-x UCX_UD_VERBS_TIMEOUT -x UCX_WARN_UNUSED_ENV_VARS -x MPI_TOKEN "${XENV[@]}" \
		"$HERE/rank-env.sh" "$BUILD/tests/vm/hpu-mpi-allreduce" --mem "$mem" \
		--sizes "$SIZES" --iters "$ITERS" > "$out" 2>&1 &
	mp=$!
	if ! wait_for "$LIMIT" eval '! kill -0 $mp'; then
		echo "$p-$mem" > "$SYNC/dump.req"
		dump_procs "$OUT/stuck-a-$p-$mem.txt"
		wait_for 20 test -e "$SYNC/dump.b"
		info "$name: mpirun still running after $LIMIT s: stacks in stuck-{a,b}-$p-$mem.txt"
		# mpirun leads its own session: its ranks go with it; B's too.
		kill -KILL -- -$mp
		echo "$p-$mem" > "$SYNC/kill.req"
		wait_for 20 test -e "$SYNC/kill.b"
		rm -f "$SYNC/kill.req" "$SYNC/kill.b"
	fi
	wait $mp
	rc=$?
	info "$name: mpirun exit $rc in $(since "$t") s"
	grep -E '^(PASS|FAIL) ' "$out" | sed "s#^\(PASS\|FAIL\) mpi/allreduce #\1 mpi/$p/allreduce #" | tee -a "$RES"
	fails=$((fails + $(grep -c '^FAIL ' "$out")))
	grep '^FIGURE ' "$out" | sed "s/^FIGURE allreduce /FIGURE allreduce dev=$p /" >> "$RES"
	if [ $rc = 0 ] && grep -q '^PASS ' "$out"; then
		pass "$p/$mem/mpirun of hpu-mpi-allreduce across two guests (pml ucx, rc_verbs on ${DEV[$p]})"
	else
		fail "$p/$mem/mpirun of hpu-mpi-allreduce across two guests (pml ucx, rc_verbs on ${DEV[$p]})" \
			"exit $rc: $(grep -v '^\(PASS\|FIGURE\)' "$out" | tail -n 4 | tr '\n' ' ' | cut -c1-400)"
	fi
	# The traffic went over this RDMA device (its port counters moved).
	stat1=$(rdma statistic show link "${DEV[$p]}/1" 2>/dev/null)
	if [ $p = hpu ]; then
		b0=$(echo "$stat0" | grep -o 'tx_bytes [0-9]*' | cut -d' ' -f2)
		b1=$(echo "$stat1" | grep -o 'tx_bytes [0-9]*' | cut -d' ' -f2)
		# Each rank sends at least half of the largest buffer to the
		# other (loopback frames count too, but UCX's own are small).
		want=$(( $(numfmt --from=iec "${SIZES#*:}") / 2 ))
		if [ -n "$b0" ] && [ -n "$b1" ] && [ $((b1 - b0)) -ge "$want" ]; then
			pass "$p/$mem/the HPU port sent the run's RoCE traffic ($((b1 - b0)) bytes, at least $want)"
		else
			fail "$p/$mem/the HPU port sent the run's RoCE traffic" "tx_bytes ${b0:-?} -> ${b1:-?}, want $want more"
		fi
	fi
done
echo done > "$SYNC/done.a"
exit $(( fails > 100 ? 100 : fails ))

#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The MPI run (issue 13, scale-out): Open MPI with UCX across two guests,
# an allreduce of buffers that live in HBM over the HPUs' RoCE v2 ports,
# beside the same allreduce of host buffers over the HPUs and over Linux
# soft-RoCE (rxe) on virtio-net, in one boot of the two guests.
#
#   tests/vm/mpi/run-mpi.sh [--log DIR] [--cases "hpu:hbm hpu:host rxe:host"]
#           [--sizes MIN:MAX] [--iters N] [--limit S] [--smp N] [--pcap]
#
# Guests A and B (tools/dev/vm/hpu-vm) each get an HPU (hbm-size=1G,
# nic-ports=1) whose port 0 is on the HPU wire, a virtio-net NIC on the
# rxe wire and one on the control link; each wire is -netdev stream over
# a Unix socket (A listens, B connects). tests/vm/mpi/mpi-guest.sh sets
# them up; A runs mpirun once per case. Results: DIR/results.txt (PASS and
# FAIL lines of both guests), DIR/figures.txt (the allreduce figures).
# DIR defaults to build/mpi; sizes 4:1M, 3 timed iterations, 900 s per
# mpirun. --pcap: capture the HPU wire on B's side (DIR/wire-hpu.pcap).
# Exit 1 on any failure.
#
# Copyright (c) 2026 The hpu authors
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
HERE=$ROOT/tests/vm/mpi
LOG=$ROOT/build/mpi
CASES="hpu:hbm hpu:host rxe:host"
SIZES=4:1M
ITERS=3
LIMIT=900
SMP=1
PCAP=0
BUILD=${HPU_BUILD:-$ROOT/build}
while [ $# -gt 0 ]; do
	case "$1" in
	--log) LOG=$2; shift ;;
	--cases) CASES=$2; shift ;;
	--sizes) SIZES=$2; shift ;;
	--iters) ITERS=$2; shift ;;
	--limit) LIMIT=$2; shift ;;
	--smp) SMP=$2; shift ;;
	--pcap) PCAP=1 ;;
	-h|--help) awk 'NR > 2 && !/^#/ { exit } NR > 2 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
	*) echo "run-mpi: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$LOG"
LOG=$(cd "$LOG" && pwd)
rm -rf "$LOG/sync" "$LOG/a" "$LOG/b"
rm -f "$LOG/results.txt" "$LOG/figures.txt"
mkdir -p "$LOG/sync" "$LOG/a" "$LOG/b"

SOCKDIR=$(mktemp -d)
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$SOCKDIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

MAC_CA=52:54:00:1d:00:01 MAC_CB=52:54:00:1d:00:02
MAC_RA=52:54:00:1d:00:03 MAC_RB=52:54:00:1d:00:04
TOKEN=$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
SYNCARGS=(--qemu-arg=-fsdev "--qemu-arg=local,id=hpuix,path=$LOG/sync,security_model=none"
	  --qemu-arg=-device --qemu-arg=virtio-9p-pci,fsdev=hpuix,mount_tag=hpuix)
ENVS=(--env "IX_MAC_CA=$MAC_CA" --env "IX_MAC_CB=$MAC_CB" --env "IX_MAC_RA=$MAC_RA"
      --env "IX_MAC_RB=$MAC_RB" --env "MPI_CASES=$CASES" --env "MPI_SIZES=$SIZES"
      --env "MPI_ITERS=$ITERS" --env "MPI_LIMIT=$LIMIT" --env "MPI_TOKEN=$TOKEN"
      --env "HPU_BUILD=$BUILD" --env "MPI_DYNDBG=${MPI_DYNDBG:-0}" --env "MPI_ENV=${MPI_ENV:-}")
# side a|b: the guest's wires (A listens, B connects).
wires() {
	local w srv mac
	for w in hpu rxe ctl; do
		if [ "$1" = a ]; then
			srv="server=on"
		else
			srv="server=off,reconnect-ms=100"
		fi
		echo "--qemu-arg=-netdev"
		echo "--qemu-arg=stream,id=w$w,$srv,addr.type=unix,addr.path=$SOCKDIR/$w"
		case $w in
		hpu)
			if [ "$1" = b ] && [ $PCAP = 1 ]; then
				echo "--qemu-arg=-object"
				echo "--qemu-arg=filter-dump,id=dhpu,netdev=whpu,file=$LOG/wire-hpu.pcap"
			fi
			continue ;;
		rxe) mac=$([ "$1" = a ] && echo $MAC_RA || echo $MAC_RB) ;;
		ctl) mac=$([ "$1" = a ] && echo $MAC_CA || echo $MAC_CB) ;;
		esac
		echo "--qemu-arg=-device"
		echo "--qemu-arg=virtio-net-pci,netdev=w$w,mac=$mac,romfile="
	done
}
mapfile -t WA < <(wires a)
mapfile -t WB < <(wires b)
# Each case's mpirun may take up to LIMIT; setup and the meeting on top.
TIMEOUT=$(( 900 + 4 * LIMIT ))
echo "run-mpi: cases \"$CASES\", sizes $SIZES, $ITERS iterations, logs in $LOG"
echo "run-mpi: host load before the boot: $(cut -d' ' -f1-3 /proc/loadavg)"
T0=$(date +%s)
for g in a b; do
	if [ $g = a ]; then W=("${WA[@]}"); else W=("${WB[@]}"); fi
	"$ROOT/tools/dev/vm/hpu-vm" --hpu "hbm-size=1G,nic-ports=1,port0=whpu,serial=MPI-${g^^}" \
		--qemu-arg=-d --qemu-arg=guest_errors --qemu-arg=-D "--qemu-arg=$LOG/$g-guest-errors.log" \
		--mem 1536M --smp "$SMP" --timeout "$TIMEOUT" --log "$LOG/$g" \
		--env IX_ROLE=$g "${ENVS[@]}" "${W[@]}" "${SYNCARGS[@]}" -- "$HERE/mpi-guest.sh" \
		> "$LOG/guest-$g.log" 2>&1 &
	PIDS+=($!)
done
wait "${PIDS[0]}"; rca=$?
wait "${PIDS[1]}"; rcb=$?
PIDS=()
echo "run-mpi: guests done in $(( $(date +%s) - T0 )) s; host load $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$LOG/results.txt"
for g in a b; do
	rc=$([ $g = a ] && echo $rca || echo $rcb)
	[ -f "$LOG/$g/mpi-results.txt" ] && grep -E '^(PASS|FAIL) ' "$LOG/$g/mpi-results.txt" >> "$LOG/results.txt"
	if [ "$rc" = 0 ]; then
		echo "PASS mpi/guest ${g^^} ran its script, clean kernel log" >> "$LOG/results.txt"
	else
		echo "FAIL mpi/guest ${g^^} ran its script, clean kernel log: hpu-vm exit $rc (log $LOG/guest-$g.log)" >> "$LOG/results.txt"
	fi
done
grep -h '^FIGURE ' "$LOG/a/mpi-results.txt" > "$LOG/figures.txt" 2>/dev/null
cat "$LOG/results.txt"
cat "$LOG/figures.txt"
! grep -q '^FAIL ' "$LOG/results.txt"

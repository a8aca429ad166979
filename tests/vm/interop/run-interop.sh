#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The interop run (issue 13): two guests on emulated wires, the HPU's RoCE v2
# against Linux soft-RoCE (rxe) in another guest, checked on the wire.
#
#   tests/vm/interop/run-interop.sh [--log DIR] [--pairs "rxe hpu"]
#           [--bw-iters N] [--lat-iters N] [--limit S] [--smp N] [--keep-pcap]
#           [--only REGEX] [--trace PATTERN]
#
# Guest A (tools/dev/vm/hpu-vm) holds, per pair, the end under test; guest B
# (hpu-vm --hpus 0) the rxe peer, each end on its own wire:
#   hpu: A's HPU (nic-ports=1, port0 = the wire; hpu.ko, hpu_en.ko, hpu_ib.ko
#        and the provider of the build tree)  <->  B's virtio-net with rxe
#   rxe: A's virtio-net with rxe  <->  B's virtio-net with rxe: the harness
#        check, and the baseline of the same run for the hpu pair's figures
# A wire is -netdev stream over a Unix socket (lossless, no Nagle delay; A
# listens, B connects with reconnect-ms), captured on B's side with
# -object filter-dump (wire-<pair>.pcap). Both guests start at once and run
# tests/vm/interop/interop-guest.sh (role a or b); they meet through a
# directory of the host (DIR/sync) that both mount over 9p. Afterwards,
# per wire: tshark must dissect every frame to UDP 4791 as RoCE (RRoCE),
# icrc-check.py --expect-roce must find every ICRC correct; on the hpu wire
# the HPU's own MAC must have sent RoCE frames. Then summarize.py joins
# both guests' halves: one PASS/FAIL line per step (DIR/results.txt), the
# figures of both pairs and their ratios (DIR/figures.txt).
#
# DIR defaults to build/interop; N bandwidth (64 KiB) and latency (2 B)
# iterations default to 200; S is each tool's time limit (default 90 s,
# 30 s for the rest of a pair once one of its tools timed out); --smp the
# vCPUs of each guest (default 1: two TCG guests share the host's cores).
# --only: only the steps whose "pair/name" matches this bash regular
# expression (a reproducer: --pairs hpu --only 'ib_write_bw hpu->' --keep-pcap).
# --trace: QEMU trace events of guest A (e.g. 'hpu_roce*'), in DIR/a/trace.log.
# The captures are deleted after the checks unless --keep-pcap (the first
# 2000 frames of each stay as wire-<pair>-sample.pcap). Exit 1 on any failure.
#
# Copyright (c) 2026 The hpu authors
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
HERE=$ROOT/tests/vm/interop
LOG=$ROOT/build/interop
PAIRS="rxe hpu"
BW_ITERS=200
LAT_ITERS=200
LIMIT=90
SMP=1
QA=(--hpus 0)
ONLY=
KEEP=0
BUILD=${HPU_BUILD:-$ROOT/build}
while [ $# -gt 0 ]; do
	case "$1" in
	--log) LOG=$2; shift ;;
	--pairs) PAIRS=$2; shift ;;
	--bw-iters) BW_ITERS=$2; shift ;;
	--lat-iters) LAT_ITERS=$2; shift ;;
	--limit) LIMIT=$2; shift ;;
	--smp) SMP=$2; shift ;;
	--only) ONLY=$2; shift ;;
	--trace) QA+=(--trace "$2"); shift ;;
	--keep-pcap) KEEP=1 ;;
	-h|--help) awk 'NR > 2 && !/^#/ { exit } NR > 2 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
	*) echo "run-interop: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
for p in $PAIRS; do
	case $p in rxe|hpu) ;; *) echo "run-interop: --pairs takes rxe and/or hpu" >&2; exit 2 ;; esac
done
mkdir -p "$LOG"
LOG=$(cd "$LOG" && pwd)
rm -rf "$LOG/sync" "$LOG/a" "$LOG/b"
rm -f "$LOG"/*.pcap "$LOG"/*.fields "$LOG"/*.senders "$LOG"/host-results.txt "$LOG"/results.txt "$LOG"/figures.txt "$LOG"/times.txt
mkdir -p "$LOG/sync" "$LOG/a" "$LOG/b"
HRES=$LOG/host-results.txt
: > "$HRES"
pass() { echo "PASS interop/$1" | tee -a "$HRES"; }
fail() { echo "FAIL interop/$1: $2" | tee -a "$HRES"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

MAC_AR=52:54:00:1c:00:01
MAC_BH=52:54:00:1c:00:02
MAC_BR=52:54:00:1c:00:03
SOCKDIR=$(mktemp -d)
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$SOCKDIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

SYNCARGS=(--qemu-arg=-fsdev "--qemu-arg=local,id=hpuix,path=$LOG/sync,security_model=none"
	  --qemu-arg=-device --qemu-arg=virtio-9p-pci,fsdev=hpuix,mount_tag=hpuix)
ENVS=(--env "IX_PAIRS=$PAIRS" --env "IX_MAC_AR=$MAC_AR" --env "IX_MAC_BH=$MAC_BH"
      --env "IX_MAC_BR=$MAC_BR" --env "IX_BW_ITERS=$BW_ITERS" --env "IX_LAT_ITERS=$LAT_ITERS"
      --env "IX_LIMIT=$LIMIT" --env "IX_ONLY=$ONLY" --env "HPU_BUILD=$BUILD")
QB=()
for p in $PAIRS; do
	QA+=(--qemu-arg=-netdev "--qemu-arg=stream,id=w$p,server=on,addr.type=unix,addr.path=$SOCKDIR/$p")
	QB+=(--qemu-arg=-netdev "--qemu-arg=stream,id=w$p,server=off,reconnect-ms=100,addr.type=unix,addr.path=$SOCKDIR/$p"
	     --qemu-arg=-object "--qemu-arg=filter-dump,id=d$p,netdev=w$p,file=$LOG/wire-$p.pcap")
	case $p in
	hpu)
		# One NIC port: the wire (the other ports would be unwired anyway).
		QA=(--hpu "hbm-size=1G,nic-ports=1,port0=w$p" "${QA[@]:2}")  # not --hpus 0
		QB+=(--qemu-arg=-device "--qemu-arg=virtio-net-pci,netdev=w$p,mac=$MAC_BH,romfile=")
		;;
	rxe)
		QA+=(--qemu-arg=-device "--qemu-arg=virtio-net-pci,netdev=w$p,mac=$MAC_AR,romfile=")
		QB+=(--qemu-arg=-device "--qemu-arg=virtio-net-pci,netdev=w$p,mac=$MAC_BR,romfile=")
		;;
	esac
done
# A guest's limit: setup, then every step at most its tool limit plus the
# wait for its server.
TIMEOUT=$(( 600 + 40 * (LIMIT + 30) ))

echo "run-interop: pairs \"$PAIRS\", $BW_ITERS bandwidth and $LAT_ITERS latency iterations, $SMP vCPU(s) per guest, logs in $LOG"
echo "run-interop: host load before the boot: $(cut -d' ' -f1-3 /proc/loadavg)"
T0=$(now)
"$ROOT/tools/dev/vm/hpu-vm" "${QA[@]}" --smp "$SMP" --timeout "$TIMEOUT" --log "$LOG/a" \
	--env IX_ROLE=a "${ENVS[@]}" "${SYNCARGS[@]}" -- "$HERE/interop-guest.sh" > "$LOG/guest-a.log" 2>&1 &
PIDS+=($!)
"$ROOT/tools/dev/vm/hpu-vm" --hpus 0 --mem 1G --smp "$SMP" --timeout "$TIMEOUT" --log "$LOG/b" \
	--env IX_ROLE=b "${ENVS[@]}" "${QB[@]}" "${SYNCARGS[@]}" -- "$HERE/interop-guest.sh" > "$LOG/guest-b.log" 2>&1 &
PIDS+=($!)
wait "${PIDS[0]}"; rca=$?
wait "${PIDS[1]}"; rcb=$?
PIDS=()
echo "TIME guests $(since "$T0")" | tee -a "$LOG/times.txt"
echo "run-interop: host load after the guests: $(cut -d' ' -f1-3 /proc/loadavg)"
for g in a b; do
	rc=$([ $g = a ] && echo $rca || echo $rcb)
	if [ "$rc" = 0 ]; then
		pass "guest ${g^^} ran its script, clean kernel log"
	else
		fail "guest ${g^^} ran its script, clean kernel log" \
			"hpu-vm exit $rc: $(grep -A3 'FAILED' "$LOG/guest-$g.log" | tr '\n' ' ' | cut -c1-300) (log $LOG/guest-$g.log)"
	fi
done

# The wires, as captured on B's side.
t=$(now)
for p in $PAIRS; do
	pcap=$LOG/wire-$p.pcap
	if [ ! -s "$pcap" ]; then
		fail "$p/wire captured" "no $pcap"
		continue
	fi
	# One pass of tshark: every frame to or from UDP 4791, its protocol
	# stack, BTH opcode, source MAC, time, destination QP, PSN, AckReq and
	# AETH (kept as wire-<pair>.fields for a look after the capture is
	# gone). The protocol column is not the test: tshark's heuristic
	# dissectors may claim a payload (ibv_rc_pingpong's) as CRTP or PPPMux.
	tshark -r "$pcap" -Y 'udp.port == 4791' -T fields -E separator=/t \
		-e frame.protocols -e infiniband.bth.opcode -e eth.src -e frame.time_relative \
		-e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.bth.a \
		-e infiniband.aeth.syndrome -e infiniband.aeth.msn 2>/dev/null > "$LOG/wire-$p.fields"
	n_udp=$(wc -l < "$LOG/wire-$p.fields")
	n_ib=$(awk -F'\t' '$1 ~ /:udp:infiniband/ && $2 != ""' "$LOG/wire-$p.fields" | wc -l)
	awk -F'\t' '{ print $3 }' "$LOG/wire-$p.fields" | sort | uniq -c > "$LOG/wire-$p.senders"
	if [ "$n_udp" -gt 0 ] && [ "$n_ib" = "$n_udp" ]; then
		pass "$p/tshark dissects all $n_ib frames of UDP 4791 as RoCE v2 (RRoCE)"
	else
		fail "$p/tshark dissects all frames of UDP 4791 as RoCE v2 (RRoCE)" \
			"$n_udp frames to or from UDP 4791, $n_ib of them RRoCE with a BTH"
	fi
	if [ $p = hpu ]; then
		# The HPU's port is the end whose MAC is not B's virtio-net.
		n_hpu=$(awk -v b="$MAC_BH" '$2 != b { n += $1 } END { print n + 0 }' "$LOG/wire-$p.senders")
		n_rxe=$(awk -v b="$MAC_BH" '$2 == b { n += $1 } END { print n + 0 }' "$LOG/wire-$p.senders")
		echo "FIGURE hpu-wire RoCE frames from the HPU $n_hpu, from rxe $n_rxe" >> "$LOG/times.txt"
		if [ "$n_hpu" -gt 0 ]; then
			pass "hpu/the HPU sent RoCE v2 frames on the wire ($n_hpu frames; rxe $n_rxe)"
		else
			fail "hpu/the HPU sent RoCE v2 frames on the wire" "none (rxe sent $n_rxe)"
		fi
	fi
	if /usr/bin/python3 "$ROOT/tests/vm/rdma/icrc-check.py" --expect-roce "$pcap" > "$LOG/icrc-check-$p.txt" 2>&1; then
		pass "$p/icrc-check finds every ICRC on the wire correct"
	else
		fail "$p/icrc-check finds every ICRC on the wire correct" "$(head -n 1 "$LOG/icrc-check-$p.txt"); $(grep -m3 'frame [0-9]*:' "$LOG/icrc-check-$p.txt" | tr '\n' ' ')"
	fi
	head -n 1 "$LOG/icrc-check-$p.txt"
	editcap -r "$pcap" "$LOG/wire-$p-sample.pcap" 1-2000 2>/dev/null
	echo "FIGURE wire-$p $(du -h "$pcap" | cut -f1) capture, $n_udp RoCE frames" >> "$LOG/times.txt"
	[ $KEEP = 1 ] || rm -f "$pcap"
done
echo "TIME wire-checks $(since "$t")" | tee -a "$LOG/times.txt"
echo "TIME run-interop $(since "$T0")" | tee -a "$LOG/times.txt"

echo "---- results"
/usr/bin/python3 "$HERE/summarize.py" "$LOG"
rc=$?
cat "$LOG/times.txt" >> "$LOG/figures.txt"
exit $rc

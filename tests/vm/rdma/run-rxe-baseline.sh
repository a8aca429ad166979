#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The rxe baseline on the host side: boot one guest (tools/dev/vm/hpu-vm, no
# HPU) with two virtio-net NICs joined by one emulated wire (a pair of QEMU
# network back ends on loopback, see --wire), capture that wire with
# filter-dump, run tests/vm/rdma/rxe-baseline.sh in the guest, then check the
# capture on the host: tshark must dissect it as RoCE (RRoCE) and
# icrc-check.py must find every ICRC correct.
#
#   tests/vm/rdma/run-rxe-baseline.sh [--log DIR] [--mode rules|netns]
#                                     [--bw-iters N] [--lat-iters N] [--limit S]
#                                     [--wire unix|stream|dgram] [--smp N]
#                                     [--perf-flags FLAGS] [--keep-pcap]
#
# DIR defaults to build/rdma-rxe-baseline; S is each tool's time limit in the
# guest (default 300 s); N the guest's CPUs (default 2); FLAGS more perftest
# options for both sides (e.g. -e: sleep on completion events). The full capture (hundreds of MB
# with the default iterations) is deleted after the checks unless
# --keep-pcap; its first 3000 frames stay as rxe-sample.pcap. Prints the
# guest's PASS/FAIL/FIGURE/TIME lines and the host checks'; exit 1 on any
# failure.
#
# The wire (--wire):
#   unix (default): -netdev stream over a Unix socket: lossless (a full
#     receive queue holds the sender back), no Nagle delay. The connecting
#     side retries (reconnect-ms): its first attempt may come before the
#     listening side listens, and without a retry the wire stays down;
#   stream: -netdev stream over TCP on loopback: QEMU 10.0's stream back end
#     disables Nagle's algorithm on the connecting side only (net/stream.c,
#     net_stream_client_connected; the listening side's accepted socket keeps
#     it), so small frames from the listening NIC wait for delayed ACKs (tens
#     of ms per round trip);
#   dgram: two UDP sockets on loopback, as NIC-NOTES.md proposes: frames are
#     lost when a burst overflows the receiving socket's buffer, and rxe then
#     retransmits (go-back-N after its timeout), so its figures depend on the
#     host's load.
#
# Copyright (c) 2026 The hpu authors
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
HERE=$ROOT/tests/vm/rdma
LOG=$ROOT/build/rdma-rxe-baseline
MODE=rules
BW_ITERS=2000
LAT_ITERS=2000
KEEP=0
WIRE=unix
SMP=2
PERF_FLAGS=
LIMIT=300
while [ $# -gt 0 ]; do
	case "$1" in
	--log) LOG=$2; shift ;;
	--mode) MODE=$2; shift ;;
	--bw-iters) BW_ITERS=$2; shift ;;
	--lat-iters) LAT_ITERS=$2; shift ;;
	--limit) LIMIT=$2; shift ;;
	--wire) WIRE=$2; shift ;;
	--smp) SMP=$2; shift ;;
	--perf-flags) PERF_FLAGS=$2; shift ;;
	--keep-pcap) KEEP=1 ;;
	-h|--help) awk 'NR > 2 && !/^#/ { exit } NR > 2 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
	*) echo "run-rxe-baseline: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$LOG"
LOG=$(cd "$LOG" && pwd)
PCAP=$LOG/wire.pcap
rm -f "$PCAP" "$LOG/rxe-sample.pcap" "$LOG/host-results.txt"

fails=0
pass() { echo "PASS rdma-rxe/$1" | tee -a "$LOG/host-results.txt"; }
fail() { echo "FAIL rdma-rxe/$1: $2" | tee -a "$LOG/host-results.txt"; fails=$((fails + 1)); }

# Two free ports on loopback for the two ends of the wire.
sock=SOCK_STREAM
[ "$WIRE" = dgram ] && sock=SOCK_DGRAM
read -r PORT_A PORT_B < <(/usr/bin/python3 -c "
import socket
s = [socket.socket(socket.AF_INET, socket.$sock) for _ in range(2)]
for x in s: x.bind(('127.0.0.1', 0))
print(*[x.getsockname()[1] for x in s])")
MAC_A=52:54:00:c0:00:01
MAC_B=52:54:00:c0:00:02
case $WIRE in
dgram)
	NET_A="dgram,id=v0,local.type=inet,local.host=127.0.0.1,local.port=$PORT_A,remote.type=inet,remote.host=127.0.0.1,remote.port=$PORT_B"
	NET_B="dgram,id=v1,local.type=inet,local.host=127.0.0.1,local.port=$PORT_B,remote.type=inet,remote.host=127.0.0.1,remote.port=$PORT_A"
	;;
unix)
	SOCKDIR=$(mktemp -d)
	trap 'rm -rf "$SOCKDIR"' EXIT
	NET_A="stream,id=v0,server=on,addr.type=unix,addr.path=$SOCKDIR/wire"
	NET_B="stream,id=v1,server=off,reconnect-ms=100,addr.type=unix,addr.path=$SOCKDIR/wire"
	;;
stream)
	NET_A="stream,id=v0,server=on,addr.type=inet,addr.host=127.0.0.1,addr.port=$PORT_A"
	NET_B="stream,id=v1,server=off,reconnect-ms=100,addr.type=inet,addr.host=127.0.0.1,addr.port=$PORT_A"
	;;
*) echo "run-rxe-baseline: --wire unix, stream or dgram" >&2; exit 2 ;;
esac
QARGS=(
	--qemu-arg=-netdev "--qemu-arg=$NET_A"
	--qemu-arg=-netdev "--qemu-arg=$NET_B"
	--qemu-arg=-device "--qemu-arg=virtio-net-pci,netdev=v0,mac=$MAC_A,romfile="
	--qemu-arg=-device "--qemu-arg=virtio-net-pci,netdev=v1,mac=$MAC_B,romfile="
	--qemu-arg=-object "--qemu-arg=filter-dump,id=d0,netdev=v0,file=$PCAP"
)
ENVS=(--env "RXE_MAC_A=$MAC_A" --env "RXE_MAC_B=$MAC_B" --env "RXE_MODE=$MODE"
      --env "RXE_BW_ITERS=$BW_ITERS" --env "RXE_LAT_ITERS=$LAT_ITERS" --env "RXE_LIMIT=$LIMIT" --env "RXE_PERF_FLAGS=$PERF_FLAGS")
if prov=$("$ROOT/tools/rdma-provider/build.sh" --print-path 2>/dev/null); then
	ENVS+=(--env "HPU_RDMA_PROVIDER=${prov%-rdmav34.so}")
else
	echo "run-rxe-baseline: the hpu provider is not built (make rdma-provider): its in-guest check is skipped"
fi

udp_drops() { awk '/^Udp:/ { if (!h) { for (i = 1; i <= NF; i++) c[$i] = i; h = 1 } else print $c["RcvbufErrors"] }' /proc/net/snmp; }
drops0=$(udp_drops)
echo "run-rxe-baseline: $WIRE wire (${NET_A%%,*} back ends), capture $PCAP, logs in $LOG"
echo "run-rxe-baseline: host load before the boot: $(cut -d' ' -f1-3 /proc/loadavg)"
t0=$(date +%s.%N)
"$ROOT/tools/dev/vm/hpu-vm" --hpus 0 --smp "$SMP" --timeout 1800 --log "$LOG" "${ENVS[@]}" "${QARGS[@]}" \
	-- "$HERE/rxe-baseline.sh"
rc=$?
echo "TIME guest-boot-to-poweroff $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" |
	tee -a "$LOG/host-results.txt"
echo "run-rxe-baseline: host load after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "run-rxe-baseline: the host's UDP receive-buffer drops during the run (all sockets): $(( $(udp_drops) - drops0 ))"
[ $rc = 0 ] || fail "guest run" "hpu-vm exit $rc (logs in $LOG)"

if [ ! -s "$PCAP" ]; then
	fail "capture" "no $PCAP"
else
	echo "run-rxe-baseline: capture $(du -h "$PCAP" | cut -f1), $(capinfos -c -M "$PCAP" 2>/dev/null | awk -F': *' '/Number of packets/ { print $2 }') frames"
	t=$(date +%s.%N)
	# tshark's own dissection: RRoCE on UDP 4791, an opcode on every frame.
	n_udp=$(tshark -r "$PCAP" -Y 'udp.dstport == 4791' -T fields -e frame.number 2>/dev/null | wc -l)
	n_ib=$(tshark -r "$PCAP" -Y 'infiniband.bth.opcode' -T fields -e frame.number 2>/dev/null | wc -l)
	tshark -r "$PCAP" -Y infiniband -T fields -e infiniband.bth.opcode 2>/dev/null |
		sort | uniq -c | sort -rn > "$LOG/tshark-opcodes.txt"
	editcap -r "$PCAP" "$LOG/rxe-sample.pcap" 1-3000 2>/dev/null
	tshark -r "$LOG/rxe-sample.pcap" -Y infiniband -V 2>/dev/null > "$LOG/tshark-sample.txt"
	proto=$(tshark -r "$LOG/rxe-sample.pcap" -Y 'udp.dstport == 4791' -T fields -e _ws.col.Protocol 2>/dev/null | sort -u | tr '\n' ' ')
	if [ "$n_udp" -gt 0 ] && [ "$n_ib" = "$n_udp" ] && [ "$proto" = "RRoCE " ]; then
		pass "tshark dissects all $n_ib frames to UDP 4791 as RoCE v2 (RRoCE)"
	else
		fail "tshark dissects the frames to UDP 4791 as RoCE v2" "$n_udp to UDP 4791, $n_ib with a BTH, protocols $proto"
	fi
	echo "TIME tshark $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" |
		tee -a "$LOG/host-results.txt"
	t=$(date +%s.%N)
	if /usr/bin/python3 "$HERE/icrc-check.py" --self-test --expect-roce "$PCAP" > "$LOG/icrc-check.txt" 2>&1; then
		pass "icrc-check: $(grep -m1 '^icrc-check: ' "$LOG/icrc-check.txt" | sed 's/^icrc-check: //')"
	else
		fail "icrc-check" "$(tail -n 5 "$LOG/icrc-check.txt" | tr '\n' ' ')"
	fi
	cat "$LOG/icrc-check.txt"
	echo "TIME icrc-check $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" |
		tee -a "$LOG/host-results.txt"
	[ $KEEP = 1 ] || rm -f "$PCAP"
fi

echo "---- results"
cat "$LOG/rxe-results.txt" "$LOG/host-results.txt" 2>/dev/null
n_fail=$(cat "$LOG/rxe-results.txt" "$LOG/host-results.txt" 2>/dev/null | grep -c '^FAIL')
n_pass=$(cat "$LOG/rxe-results.txt" "$LOG/host-results.txt" 2>/dev/null | grep -c '^PASS')
echo "$n_pass passed, $n_fail failed"
[ "$n_fail" = 0 ] && [ $fails = 0 ]

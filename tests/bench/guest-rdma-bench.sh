#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The guest side of make bench's RDMA rows (tests/bench/run-bench.py boots
# one guest with one HPU whose ports 0 and 1 share an in-QEMU hub, and two
# virtio-net NICs on a second hub of their own): the same perftest runs,
# ib_write_bw of 64 KiB and ib_send_lat of 2 bytes, first between the HPU's
# two ports through the build tree's provider (tests/vm/rdma/verbs-tools.sh),
# then between two Linux soft-RoCE (rxe) devices on the virtio NICs
# (tests/vm/rdma/rxe-baseline.sh): same guest, same kind of wire, same
# iterations (latencies in TSC cycles, see below). Writes "BENCH name=value" lines to $HPU_OUT/rdma-bench.txt,
# and "ERROR what" for a side that ran no figure.
#
# Copyright (c) 2026 The hpu authors
set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${HPU_OUT:?HPU_OUT not set}
RES=$OUT/rdma-bench.txt
ITERS=${RDMA_BENCH_ITERS:-1000}
: > "$RES"

# take SIDE LOG FILE WHO: appends "BENCH SIDE_write_bw_mbs=" and
# "BENCH SIDE_send_lat_cycles=" from FILE's figure lines ("name value",
# or "FIGURE name value"), and when either is missing an ERROR line naming
# WHO and quoting LOG's first failures.
take() {
	awk -v side="$1" '{ if ($1 == "FIGURE") $0 = substr($0, 8) }
		$1 == "ib_write_bw_64KiB_avg" { print "BENCH " side "_write_bw_mbs=" $2; bw = 1 }
		$1 == "ib_send_lat_2B_typical" { print "BENCH " side "_send_lat_cycles=" $2; lat = 1 }
		END { exit !(bw && lat) }' "$3" >> "$RES" 2>/dev/null ||
		echo "ERROR the $4 perftest runs gave no figure: $(grep FAIL "$2" | head -n 2 | tr '\n' ' ')" >> "$RES"
}

modprobe -a drm drm_buddy drm_shmem_helper gpu-sched && insmod "$REPO/kernel/hpu.ko" ||
	echo "ERROR hpu.ko does not load" >> "$RES"

# The HPU: port 1 drives, port 2 serves (and the reverse, named .rev).
VT_ONLY="ib_write_bw ib_send_lat" VT_BW_ITERS=$ITERS VT_LAT_ITERS=$ITERS VT_LAT_FLAGS=-C \
	bash "$REPO/tests/vm/rdma/verbs-tools.sh" > "$OUT/verbs-tools.log" 2>&1
cat "$OUT/verbs-tools.log"
take hpu "$OUT/verbs-tools.log" "$OUT/rdma-figures.txt" "HPU's"
rmmod hpu_ib hpu_en 2>/dev/null

# rxe on the two virtio NICs, rxe0 drives and rxe1 serves.
RXE_MAC_A=${RXE_MAC_A:?} RXE_MAC_B=${RXE_MAC_B:?} RXE_ONLY="ib_write_bw ib_send_lat" RXE_LAT_FLAGS=-C \
	RXE_BW_ITERS=$ITERS RXE_LAT_ITERS=$ITERS \
	bash "$REPO/tests/vm/rdma/rxe-baseline.sh" > "$OUT/rxe-baseline.log" 2>&1
cat "$OUT/rxe-baseline.log"
take rxe "$OUT/rxe-baseline.log" "$OUT/rxe-results.txt" rxe

# Latencies are taken in TSC cycles (perftest -C): perftest's own conversion
# to microseconds calibrates the clock against gettimeofday() and gives up
# (inf) when a loaded TCG guest's samples scatter; both sides' cycles are
# converted with the kernel's TSC frequency below, so their ratio is exact.
khz=$(awk -F': ' '/^cpu MHz/ { printf "%d", $2 * 1000; exit }' /proc/cpuinfo)
echo "BENCH tsc_khz=$khz" >> "$RES"
rmmod hpu || echo "ERROR hpu.ko does not unload" >> "$RES"
exit 0

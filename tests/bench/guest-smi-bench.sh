#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The guest side of the hpu-smi benchmark (tests/bench/run-bench.py boots a
# guest with eight HPUs): loads the driver, then times N runs of
# `hpu-smi -q` against N runs of hpu-bench-sysfs-floor, which reads the
# sysfs and hwmon files holding the same data (a plain loop, the floor).
# Both are separate processes per run, so process start-up is on both
# sides. Writes "BENCH name=value" lines to $HPU_OUT/bench-smi.txt.
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${HPU_BUILD:-$REPO/build}
OUT=${HPU_OUT:?HPU_OUT not set}
RES=$OUT/bench-smi.txt
N=${HPU_SMI_BENCH_RUNS:-50}
SMI=$BUILD/tools/hpu-smi/hpu-smi
FLOOR=$BUILD/tests/bench/hpu-bench-sysfs-floor
: > "$RES"

modprobe -a drm drm_buddy drm_shmem_helper gpu-sched && insmod "$REPO/kernel/hpu.ko" ||
	{ echo "ERROR hpu.ko does not load" >> "$RES"; exit 0; }
ndev=$(ls -d /sys/bus/pci/drivers/hpu/0000:* 2>/dev/null | wc -l)
echo "BENCH smi_devices=$ndev" >> "$RES"
# The firmware boots asynchronously: wait until every device says ok.
i=0
while [ $i -lt 100 ] && [ "$("$SMI" -Q status -f csv,noheader 2>/dev/null | grep -c '^ok$')" != "$ndev" ]; do
	sleep 0.1; i=$((i + 1))
done
"$SMI" -Q index,status -f csv,noheader
"$FLOOR" || echo "ERROR hpu-bench-sysfs-floor read no file" >> "$RES"
"$SMI" -q > /dev/null || echo "ERROR hpu-smi -q: exit $?" >> "$RES"

now() { date +%s%N; }
# One warm-up run each, then the timed loops.
"$SMI" -q > /dev/null 2>&1; "$FLOOR" > /dev/null 2>&1
t0=$(now)
k=0; while [ $k -lt "$N" ]; do "$SMI" -q > /dev/null; k=$((k + 1)); done
t1=$(now)
k=0; while [ $k -lt "$N" ]; do "$FLOOR" > /dev/null; k=$((k + 1)); done
t2=$(now)
smi_us=$(( (t1 - t0) / 1000 / N ))
floor_us=$(( (t2 - t1) / 1000 / N ))
echo "BENCH smi_q_us=$smi_us" >> "$RES"
echo "BENCH sysfs_floor_us=$floor_us" >> "$RES"
echo "BENCH smi_runs=$N" >> "$RES"
cat "$RES"
rmmod hpu || echo "ERROR hpu.ko does not unload" >> "$RES"
exit 0

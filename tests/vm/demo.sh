#!/bin/sh
# SPDX-License-Identifier: MIT
# The `make run` demo, run inside the guest: load the driver (which boots the
# signed firmware), then show what an operator sees: hpu-smi, the hwmon
# sensors and devlink; then train the seed's model (and an MLP with AdamW)
# on Fashion-MNIST on the HPU, eager and lazy, beside the CPU reference that
# make run computed on the host (Documentation/training.md).
set -e
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${HPU_BUILD:-$REPO/build}
SMI=$BUILD/tools/hpu-smi/hpu-smi
TRAIN=$BUILD/tools/hpu-train/hpu-train
modprobe -a drm drm_buddy drm_shmem_helper gpu-sched
insmod "$REPO/kernel/hpu.ko"
# Let the firmware's sensors settle for a moment.
sleep 1
echo "\$ hpu-smi"
"$SMI"
echo
echo "\$ hpu-smi -L"
"$SMI" -L
echo
echo "\$ hpu-smi --fw-versions"
"$SMI" --fw-versions
echo
echo "\$ sensors"
sensors 'hpu-*'
echo "\$ devlink dev info"
devlink dev info
echo
echo "\$ devlink health show"
devlink health show
echo
echo "\$ dmesg | grep hpu | grep firmware"
dmesg | grep hpu | grep -i firmware || true
# The seed's model; then the MLP, with hpu-smi sampled while it trains
# (its output follows once it ends, so that the two do not interleave).
echo
echo "\$ hpu-train --model linear --mode both --compare build/train/cpu-linear.txt"
"$TRAIN" --model linear --mode both --data "$BUILD/train/data" --compare "$BUILD/train/cpu-linear.txt"
echo
echo "\$ hpu-train --model mlp --mode both --compare build/train/cpu-mlp.txt &"
"$TRAIN" --model mlp --mode both --data "$BUILD/train/data" --compare "$BUILD/train/cpu-mlp.txt" \
	> /tmp/train-mlp.log 2>&1 &
pid=$!
sleep 25
echo "\$ hpu-smi   # while it trains"
smi_rc=0
"$SMI" || smi_rc=$?
rc=0
wait $pid || rc=$?
cat /tmp/train-mlp.log
[ $rc = 0 ] || exit $rc
[ $smi_rc = 0 ] || exit $smi_rc
rmmod hpu

#!/bin/sh
# SPDX-License-Identifier: MIT
# The `make run` demo, run inside the guest: load the driver (which boots the
# signed firmware), then show what an operator sees: hpu-smi, the hwmon
# sensors and devlink.
set -e
REPO=$(cd "$(dirname "$0")/../.." && pwd)
SMI=$REPO/build/tools/hpu-smi/hpu-smi
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
rmmod hpu

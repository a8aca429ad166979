#!/bin/sh
# SPDX-License-Identifier: MIT
# The `make run` demo, run inside the guest: load the driver, show hpu-smi.
set -e
REPO=$(cd "$(dirname "$0")/../.." && pwd)
SMI=$REPO/build/tools/hpu-smi/hpu-smi
modprobe -a drm drm_buddy drm_shmem_helper gpu-sched
insmod "$REPO/kernel/hpu.ko"
echo "\$ hpu-smi"
"$SMI"
echo
echo "\$ hpu-smi -L"
"$SMI" -L
rmmod hpu

#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Only the PyTorch backend's tests, in one guest with make test's two HPUs
# (2 and 4 GiB): the quick way to run the group "-torch" of
# tests/vm/guest-suite.sh without the rest of the VM suite.
#
#   tests/vm/torch/run-in-guest.sh [unittest arguments, e.g. TestEveryOp]
#
# HPU_BUILD (default build/) holds python/hpu_torch and tools/hpu-smi; HPU_KO
# (default kernel/hpu.ko) is the driver. The JUnit file and the log go to
# $HPU_BUILD/vm-test-torch/ (HPU_LOG overrides; HPU_FW_DIR the firmware, default
# $HPU_BUILD/firmware). Run it under the machine's guest lock where
# several workers share a host (flock /tmp/hpu-guest.lock ...).
#
# Copyright (c) 2026 The hpu authors
REPO=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD=$(cd "${HPU_BUILD:-$REPO/build}" && pwd)
KO=${HPU_KO:-$REPO/kernel/hpu.ko}
LOG=${HPU_LOG:-$BUILD/vm-test-torch}
mkdir -p "$LOG"
rm -f "$LOG/hpu-vm-tests-torch.xml"
cd "$REPO" || exit 1
exec tools/dev/vm/hpu-vm --timeout 1500 --mem 3G --log "$LOG" --fw-dir "${HPU_FW_DIR:-$BUILD/firmware}" \
	--hpu hbm-size=2G,serial=HPU-TEST-A,nic-ports=10 --hpu hbm-size=4G,serial=HPU-TEST-B,nic-ports=4 -- \
	sh -c "modprobe -a drm drm_buddy drm_shmem_helper gpu-sched && insmod $KO && \
	       PYTHONPATH=$BUILD/python /usr/bin/python3 $REPO/tests/vm/torch/test_torch.py \
	       --junit \$HPU_OUT/hpu-vm-tests-torch.xml $*"

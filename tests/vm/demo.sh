#!/bin/sh
# SPDX-License-Identifier: MIT
# The `make run` demo, run inside the guest: load the driver (which boots the
# signed firmware), then show what an operator sees: hpu-smi, the hwmon
# sensors and devlink; then train on Fashion-MNIST on the HPU:
#   demo.sh torch   (make run) the PyTorch guide's getting-started script,
#                   tools/hpu-train/getting_started_hpu.py, the seed's model in
#                   lazy mode (Documentation/pytorch.md), beside its CPU twin
#                   getting_started_cpu.py run on the host by make run: loss
#                   per epoch and test accuracy side by side
#   demo.sh libhpu  (make run-libhpu) the libhpu C++ trainer, the seed's
#                   model and an MLP with AdamW, eager and lazy, beside its
#                   CPU reference (Documentation/training.md)
set -e
WHAT=${1:-torch}
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
# smi_while PID SECONDS LOG: hpu-smi after SECONDS while job PID trains,
# then the job's LOG once it ends; exits with the first failure of either.
smi_while() {
	sleep "$2"
	echo "\$ hpu-smi   # while it trains"
	smi_rc=0
	"$SMI" || smi_rc=$?
	rc=0
	wait "$1" || rc=$?
	cat "$3"
	[ $rc = 0 ] || exit $rc
	[ $smi_rc = 0 ] || exit $smi_rc
}
if [ "$WHAT" = torch ]; then
	# hpu-smi is sampled while the script trains; the script's output
	# follows once it ends, so that the two do not interleave.
	echo
	echo "\$ PT_HPU_LAZY_MODE=1 python3 tools/hpu-train/getting_started_hpu.py &"
	PT_HPU_LAZY_MODE=1 PYTHONPATH="$BUILD/python" /usr/bin/python3 \
		"$REPO/tools/hpu-train/getting_started_hpu.py" > /tmp/torch-hpu.txt 2>&1 &
	smi_while $! 90 /tmp/torch-hpu.txt
	echo
	echo "Side by side with the same script on the host's CPU (getting_started_cpu.py, run by make run):"
	# Loss per epoch and test accuracy of both; the last epoch's test
	# accuracies must agree within half a point.
	/usr/bin/python3 - "$BUILD/train/torch-cpu.txt" /tmp/torch-hpu.txt <<'PY'
import re
import sys
runs = []
for path in sys.argv[1:]:
    found = re.findall(r"epoch (\d+): loss ([0-9.]+), test accuracy ([0-9.]+)%", open(path).read())
    if not found:
        sys.exit(f"demo: no epoch lines in {path}")
    runs.append(found)
cpu, hpu = runs
print(f"{'epoch':>5}  {'CPU loss':>8}  {'HPU loss':>8}  {'CPU test acc':>12}  {'HPU test acc':>12}")
for c, h in zip(cpu, hpu):
    print(f"{c[0]:>5}  {c[1]:>8}  {h[1]:>8}  {c[2] + ' %':>12}  {h[2] + ' %':>12}")
if len(cpu) != len(hpu):
    sys.exit(f"demo: {len(cpu)} CPU epochs but {len(hpu)} HPU epochs")
acc = [float(cpu[-1][2]), float(hpu[-1][2])]
d = acc[1] - acc[0]
print(f"demo: final test accuracy HPU {acc[1]:.2f} % vs CPU {acc[0]:.2f} %: {d:+.2f} points "
      f"({'agree' if abs(d) <= 0.5 else 'DISAGREE'}, limit 0.50)")
sys.exit(0 if abs(d) <= 0.5 else 1)
PY
	rmmod hpu
	exit 0
fi
# The seed's model; then the MLP, with hpu-smi sampled while it trains
# (its output follows once it ends, so that the two do not interleave).
echo
echo "\$ hpu-train --model linear --mode both --compare build/train/cpu-linear.txt"
"$TRAIN" --model linear --mode both --data "$BUILD/train/data" --compare "$BUILD/train/cpu-linear.txt"
echo
echo "\$ hpu-train --model mlp --mode both --compare build/train/cpu-mlp.txt &"
"$TRAIN" --model mlp --mode both --data "$BUILD/train/data" --compare "$BUILD/train/cpu-mlp.txt" \
	> /tmp/train-mlp.log 2>&1 &
smi_while $! 25 /tmp/train-mlp.log
rmmod hpu

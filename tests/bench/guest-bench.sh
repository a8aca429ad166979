#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The guest side of `make bench` (tests/bench/run-bench.py boots one guest
# with one HPU and an NVMe drive and runs this): loads the drivers, runs the
# HPU and NVMe benchmarks and writes their "BENCH name=value" lines to
# $HPU_OUT/bench.txt. A program that fails to run, or finds a wrong result,
# leaves "ERROR what" there.
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${HPU_BUILD:-$REPO/build}
OUT=${HPU_OUT:?HPU_OUT not set}
RES=$OUT/bench.txt
: > "$RES"

run() { # name, command...
	name=$1; shift
	"$@" > "$OUT/$name.log" 2>&1
	rc=$?
	grep -E '^(BENCH|ERROR) ' "$OUT/$name.log" >> "$RES"
	[ $rc -eq 0 ] ||
		echo "ERROR $name: exit $rc: $(tail -n 3 "$OUT/$name.log" | tr '\n' ' ')" >> "$RES"
	cat "$OUT/$name.log"
}

# hpu.ko's dependencies first (the guest has no udev or depmod for it).
modprobe -a drm drm_buddy drm_shmem_helper gpu-sched && insmod "$REPO/kernel/hpu.ko" ||
	echo "ERROR hpu.ko does not load" >> "$RES"
modprobe nvme || echo "ERROR nvme does not load" >> "$RES"
# The NVMe namespace appears asynchronously.
i=0
while [ ! -b /dev/nvme0n1 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
idx=$(ls /dev/accel/ 2>/dev/null | sed -n 's/^accel//p' | head -n 1)

run hpu-bench-dma "$BUILD/tests/bench/hpu-bench-dma" "${idx:-0}"
# The same jobs on the kernel path (SUBMIT), for the user queues' rows.
run hpu-bench-dma-kpath env HPU_USER_QUEUES=0 "$BUILD/tests/bench/hpu-bench-dma" "${idx:-0}" \
	--jobs-only --prefix kpath_
run hpu-bench-nvme "$BUILD/tests/bench/hpu-bench-nvme" /dev/nvme0n1
run hpu-bench-compute "$BUILD/tests/bench/hpu-bench-compute" "${idx:-0}"
# The training demo, one epoch of each model in each mode (Documentation/training.md).
for m in linear mlp; do
	run hpu-train-$m "$BUILD/tools/hpu-train/hpu-train" --model $m --epochs 1 --mode both \
		--hpu "${idx:-0}" --bench
done
# The PyTorch backend: a training step of each of its three models on the
# guest's CPU, on the HPU eager and lazy (Documentation/pytorch.md).
if [ -f "$BUILD/python/hpu_torch/libhpu_torch.so" ]; then
	run hpu-bench-torch env PYTHONPATH="$BUILD/python" /usr/bin/python3 "$REPO/tests/bench/torch_bench.py"
else
	echo "ERROR hpu_torch is not built in $BUILD (PyTorch's CMake package missing?)" >> "$RES"
fi
rmmod hpu || echo "ERROR hpu.ko does not unload" >> "$RES"
exit 0

#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-kernel.sh: static checks of the kernel driver and its uapi header.
#
#   tools/dev/check-kernel.sh
#
# Runs, and fails (non-zero) on any finding of:
#   - checkpatch.pl --strict on kernel/*.[ch] (hpu.ko, hpu_en.ko, hpu_ib.ko),
#     kernel/tests/*.[ch] (the KUnit suites, hpu_test_squat.ko), kernel/Kbuild,
#     kernel/Makefile, include/uapi/drm/hpu_accel.h and
#     include/uapi/rdma/hpu-abi.h;
#   - kernel-doc -Wall on the same C files;
#   - a W=1 build of kernel/ with sparse on every file (C=2): any compiler
#     or sparse warning fails;
#   - when the debug kernel of make test-debug is built (it has
#     CONFIG_KUNIT), the same build against it in a copy of kernel/, which
#     also builds the KUnit suites and the exports they use (hpu_kunit.h).
#
# Environment: KDIR (default: the 6.12 build tree), CHECKPATCH (default:
# the copy tools/dev/bootstrap.sh extracts under /var/cache/hpu), KDIR_DEBUG
# (default: tools/dev/build-debug-kernel.sh --print-kdir; "none" skips it).
#
# Copyright (c) 2026 The hpu authors

set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
KDIR=${KDIR:-$(ls -d /lib/modules/6.12*/build 2>/dev/null | grep -v -- -hpu-debug/build | head -n1)}
CHECKPATCH=${CHECKPATCH:-${HPU_CACHE:-/var/cache/hpu}/linux-scripts/scripts/checkpatch.pl}

die() {
	printf 'check-kernel: %s\n' "$*" >&2
	exit 1
}

[ -n "$KDIR" ] && [ -d "$KDIR" ] || die "no 6.12 kernel build tree: run tools/dev/bootstrap.sh or set KDIR"
[ -f "$CHECKPATCH" ] || die "checkpatch.pl not found at $CHECKPATCH: run tools/dev/bootstrap.sh or set CHECKPATCH"
command -v sparse >/dev/null || die "sparse not found: install sparse"

KERNELDOC=$KDIR/scripts/kernel-doc
[ -f "$KERNELDOC" ] || KERNELDOC=$(dirname "$(readlink -f "$KDIR/Makefile")")/scripts/kernel-doc

cd "$ROOT" || exit 1
fail=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

# Not the build's generated *.mod.c (hpu_en.mod.c matches hpu_*.c).
sources=$(ls kernel/hpu_*.c kernel/hpu_*.h kernel/tests/*.c kernel/tests/*.h | grep -v '\.mod\.c$')

echo "check-kernel: checkpatch --strict"
# shellcheck disable=SC2086
if ! perl "$CHECKPATCH" --strict --no-tree --quiet --show-types -f \
	$sources kernel/Kbuild kernel/Makefile include/uapi/drm/hpu_accel.h \
	include/uapi/rdma/hpu-abi.h; then
	echo "check-kernel: checkpatch: findings above" >&2
	fail=1
fi

echo "check-kernel: kernel-doc"
if [ -f "$KERNELDOC" ]; then
	# shellcheck disable=SC2086
	perl "$KERNELDOC" -Wall -none $sources >"$tmp" 2>&1
	if [ -s "$tmp" ]; then
		cat "$tmp" >&2
		echo "check-kernel: kernel-doc: findings above" >&2
		fail=1
	fi
else
	echo "check-kernel: note: scripts/kernel-doc not found, skipped" >&2
fi

# W=1 build with sparse of the module directory $2 against the tree $1;
# $3 names the kernel in the messages.
sparse_build() {
	if ! make -s -C "$1" M="$2" W=1 C=2 modules >"$tmp" 2>&1; then
		cat "$tmp" >&2
		echo "check-kernel: build failed$3" >&2
		return 1
	elif grep -E -q 'warning:|error:' "$tmp"; then
		grep -E -B2 -A4 'warning:|error:' "$tmp" >&2
		echo "check-kernel: compiler or sparse warnings above$3" >&2
		return 1
	fi
}

echo "check-kernel: W=1 build with sparse (C=2)"
sparse_build "$KDIR" "$ROOT/kernel" "" || fail=1

KDIR_DEBUG=${KDIR_DEBUG:-$(bash tools/dev/build-debug-kernel.sh --print-kdir 2>/dev/null)}
if [ -n "$KDIR_DEBUG" ] && [ "$KDIR_DEBUG" != none ] && [ -d "$KDIR_DEBUG" ]; then
	echo "check-kernel: W=1 build with sparse (C=2) against the debug kernel, KUnit suites included"
	dbg=$(mktemp -d)
	mkdir -p "$dbg/kernel/tests"
	cp kernel/*.[ch] kernel/Kbuild kernel/Makefile "$dbg/kernel/"
	cp kernel/tests/*.[ch] "$dbg/kernel/tests/"
	ln -s "$ROOT/include" "$dbg/include"
	if ! sparse_build "$KDIR_DEBUG" "$dbg/kernel" " (debug kernel)"; then
		fail=1
	elif [ ! -f "$dbg/kernel/hpu_kunit.ko" ]; then
		echo "check-kernel: the debug kernel build made no hpu_kunit.ko" >&2
		fail=1
	fi
	rm -rf "$dbg"
else
	echo "check-kernel: note: no debug kernel built, the KUnit suites were not compiled" >&2
fi

if [ $fail -ne 0 ]; then
	echo "check-kernel: FAILED"
	exit 1
fi
echo "check-kernel: OK"

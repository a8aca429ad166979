#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-uapi-padding.sh: fail when a struct drm_hpu_* in the ioctl ABI header
# has a hole, tail padding or a size that is not a multiple of 64 bits.
#
#   tools/dev/check-uapi-padding.sh [HEADER]
#
# HEADER defaults to include/uapi/drm/hpu_accel.h. Each struct is compiled
# with -g for x86_64 (and for i386 too when the compiler can, since __u64
# is only 4-byte aligned there) and laid out by pahole; any "XXX" (hole) or
# "padding:" in pahole's output is a failure.
#
# Copyright (c) 2026 The hpu authors

set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HEADER=${1:-$ROOT/include/uapi/drm/hpu_accel.h}
CC=${CC:-gcc}
PAHOLE=${PAHOLE:-pahole}

# drm.h: libdrm-dev's copy, or the kernel headers' uapi copy.
DRM_INC=
for d in /usr/include/libdrm /lib/modules/6.12*/build/include/uapi/drm \
	 /lib/modules/6.12*/source/include/uapi/drm; do
	if [ -f "$d/drm.h" ]; then
		DRM_INC=$d
		break
	fi
done

die() {
	printf 'check-uapi-padding: %s\n' "$*" >&2
	exit 1
}

[ -f "$HEADER" ] || die "no such header: $HEADER"
[ -n "$DRM_INC" ] || die "drm.h not found: install libdrm-dev"
command -v "$PAHOLE" >/dev/null || die "pahole not found: install dwarves"

structs=$(sed -n 's/^struct \(drm_hpu_[A-Za-z0-9_]*\|hpu_ib_[A-Za-z0-9_]*\) {.*/\1/p' "$HEADER")
[ -n "$structs" ] || die "no struct drm_hpu_* or hpu_ib_* found in $HEADER"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

{
	printf '#include "%s"\n' "$HEADER"
	for s in $structs; do
		printf 'struct %s check_%s;\n' "$s" "$s"
	done
} >"$tmp/uapi.c"

check_abi() {
	abi=$1
	shift
	if ! "$CC" "$@" -g -c -I"$DRM_INC" -o "$tmp/uapi-$abi.o" \
	     "$tmp/uapi.c" 2>"$tmp/cc-$abi.log"; then
		return 2
	fi
	"$PAHOLE" -C "$(echo $structs | tr ' ' ',')" "$tmp/uapi-$abi.o" \
		>"$tmp/pahole-$abi.txt" || die "pahole failed on $abi"

	bad=0
	for s in $structs; do
		# One struct's block: from its "struct X {" line to its closing "}".
		sed -n "/^struct $s {/,/^}/p" "$tmp/pahole-$abi.txt" \
			>"$tmp/$s-$abi.txt"
		if [ ! -s "$tmp/$s-$abi.txt" ]; then
			echo "check-uapi-padding: $abi: struct $s: missing from pahole's output" >&2
			bad=1
			continue
		fi
		if grep -q -e 'XXX' -e 'padding:' "$tmp/$s-$abi.txt"; then
			echo "check-uapi-padding: $abi: struct $s has implicit padding:" >&2
			grep -e 'XXX' -e 'padding:' "$tmp/$s-$abi.txt" | \
				sed 's/^/    /' >&2
			bad=1
		fi
		size=$(sed -n 's/.*size: \([0-9]*\),.*/\1/p' "$tmp/$s-$abi.txt" | head -n1)
		if [ -z "$size" ] || [ $((size % 8)) -ne 0 ]; then
			echo "check-uapi-padding: $abi: struct $s: size ${size:-unknown} is not a multiple of 8 bytes" >&2
			bad=1
		fi
	done
	return $bad
}

fail=0
check_abi x86_64 -m64 || {
	[ $? -eq 2 ] && { cat "$tmp/cc-x86_64.log" >&2; die "cannot compile $HEADER"; }
	fail=1
}
if check_abi i386 -m32; then
	:
else
	rc=$?
	if [ $rc -eq 2 ]; then
		echo "check-uapi-padding: note: no i386 compiler support, checked x86_64 only" >&2
	else
		fail=1
	fi
fi

if [ $fail -ne 0 ]; then
	echo "check-uapi-padding: FAILED: $HEADER: pad explicitly (Documentation/process/botching-up-ioctls.rst)" >&2
	exit 1
fi
echo "check-uapi-padding: OK: $(echo $structs | wc -w) structs in $HEADER have no implicit padding"

#!/bin/sh
# SPDX-License-Identifier: MIT
# check-abi.sh LIB MAP SONAME [OBJDUMP]: the ABI of libhpu.so.1 against its
# version script. Passes when LIB's SONAME is SONAME and the symbols it
# exports (defined dynamic symbols, with their version node) are exactly
# those MAP lists under "global:", each in its node: nothing missing,
# nothing extra, nothing unversioned, nothing in the wrong node.
#
# Copyright (c) 2026 The hpu authors
set -eu

lib=$1
map=$2
soname=$3
od=${4:-objdump}

"$od" -p "$lib" | grep -q "SONAME *$soname\$" || { echo "check-abi: SONAME is not $soname"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "NODE symbol" for every symbol a node's global: section names.
sed 's|/\*.*\*/||g' "$map" | awk '
	/^[ \t]*[A-Za-z0-9_.]+[ \t]*\{/ { node = $1; sub(/\{.*/, "", node); scope = ""; next }
	/^[ \t]*}/ { node = ""; next }
	/global:/ { scope = "global"; next }
	/local:/ { scope = "local"; next }
	node != "" && scope == "global" {
		for (i = 1; i <= NF; i++) {
			s = $i; sub(/;$/, "", s)
			if (s != "") print node, s
		}
	}' | sort >"$tmp/want"

# "VERSION symbol" for every defined dynamic symbol of LIB except the
# version definitions themselves (ABS symbols named like their node).
"$od" -T "$lib" | awk '
	$0 ~ /\*UND\*/ { next }
	NF >= 6 && $(NF - 1) != $NF { v = $(NF - 1); gsub(/[()]/, "", v); print v, $NF }
	NF == 5 { print "(unversioned)", $NF }' | grep -v '^(unversioned) \(DYNAMIC\|_init\|_fini\)$' | sort >"$tmp/have" || true

for node in $(cut -d' ' -f1 "$tmp/want" | sort -u); do
	printf '%s: %s\n' "$node" "$(grep -c "^$node " "$tmp/want")"
done
printf 'all: %s\n' "$(wc -l <"$tmp/want")"

if ! diff -u "$tmp/want" "$tmp/have" >"$tmp/diff"; then
	echo "check-abi: exported symbols differ from $map (- missing, + extra):"
	grep '^[-+][^-+]' "$tmp/diff"
	exit 1
fi
[ -s "$tmp/want" ] || { echo "check-abi: no symbol in $map"; exit 1; }
echo "check-abi: OK"

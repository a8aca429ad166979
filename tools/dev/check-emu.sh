#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-emu.sh: static checks of the device model (emu/).
#
#   tools/dev/check-emu.sh
#
# Runs, and fails (non-zero) on any finding of:
#   - QEMU's scripts/checkpatch.pl on every C file of emu/ (the QEMU glue
#     and the QEMU-free core alike: the core needs no exception);
#   - a name check: no function or type defined in emu/ has the name of
#     one defined in kernel/, so grep and ctags find one thing (the model
#     uses CamelCase types and the hpum_ prefix, the driver hpu_).
#
# Environment: CHECKPATCH_QEMU (default: scripts/checkpatch.pl of the QEMU
# source tree tools/dev/build-qemu.sh unpacks under ${HPU_CACHE:-/var/cache/hpu},
# the same Debian source it builds).
#
# Copyright (c) 2026 The hpu authors

set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${HPU_CACHE:-/var/cache/hpu}
CHECKPATCH_QEMU=${CHECKPATCH_QEMU:-$(ls -d "$CACHE"/qemu-build/qemu-*/scripts/checkpatch.pl 2>/dev/null | sort -V | tail -n1)}

die() {
	printf 'check-emu: %s\n' "$*" >&2
	exit 1
}

[ -n "$CHECKPATCH_QEMU" ] && [ -f "$CHECKPATCH_QEMU" ] ||
	die "QEMU's checkpatch.pl not found under $CACHE/qemu-build: run tools/dev/build-qemu.sh or set CHECKPATCH_QEMU"
command -v perl >/dev/null || die "perl not found"

cd "$ROOT" || exit 1
fail=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

echo "check-emu: QEMU checkpatch"
for f in emu/*.c emu/*.h; do
	if ! perl "$CHECKPATCH_QEMU" --no-tree --terse -f "$f" > "$tmp" 2>&1; then
		cat "$tmp"
		fail=1
	fi
done

echo "check-emu: no name shared by emu/ and kernel/"
python3 - <<'EOF' || fail=1
import glob, re, sys

# Definitions at the start of a line, in either tree's style: a function
# (its name before the parameter list), a struct/union/enum tag, a typedef.
FUNC = re.compile(r"^(?!typedef\b)[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*\(")
TAG = re.compile(r"^(?:typedef\s+)?(?:struct|union|enum)\s+(\w+)\s*\{")
TYPEDEF_END = re.compile(r"^\}\s*(\w+)\s*;")
TYPEDEF_FWD = re.compile(r"^typedef\s+(?:struct|union|enum)\s+\w+\s+(\w+)\s*;")
NOT_FUNC = {"if", "for", "while", "switch", "return", "sizeof", "defined",
            "static_assert", "_Static_assert", "MODULE_FIRMWARE",
            "MODULE_DEVICE_TABLE", "EXPORT_SYMBOL", "EXPORT_SYMBOL_GPL",
            "module_init", "module_exit", "type_init", "OBJECT_DECLARE_SIMPLE_TYPE",
            "G_GNUC_PRINTF", "DEFINE_SIMPLE_ATTRIBUTE", "DEFINE_SHOW_ATTRIBUTE",
            "late_initcall", "module_param", "MODULE_PARM_DESC"}


def names(paths):
    out = {}
    for path in paths:
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith(("#", " ", "\t", "/", "*")):
                    continue
                for rx in (TAG, TYPEDEF_END, TYPEDEF_FWD, FUNC):
                    m = rx.match(line)
                    if m and m.group(1) not in NOT_FUNC and not m.group(1).isupper():
                        out.setdefault(m.group(1), path)
                        break
    return out


emu = names(sorted(glob.glob("emu/*.[ch]")))
kern = names(sorted(glob.glob("kernel/*.[ch]") + glob.glob("kernel/tests/*.[ch]")))
both = sorted(set(emu) & set(kern))
for n in both:
    print(f"check-emu: {n}: defined in {emu[n]} and in {kern[n]}")
if both:
    sys.exit(1)
print(f"check-emu: {len(emu)} names in emu/, {len(kern)} in kernel/, none shared")
EOF

if [ $fail != 0 ]; then
	echo "check-emu: findings above" >&2
	exit 1
fi
echo "check-emu: OK"

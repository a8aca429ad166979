#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs clang-tidy (config: .clang-tidy) on every C++ source of libhpu, the
# tools and the tests, with the compile_commands.json of a CMake build.
# Usage: tools/dev/check-tidy.sh [BUILD_DIR]   (default: build)
# Exits non-zero on any finding.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
tidy=${CLANG_TIDY:-$(command -v clang-tidy-14 || command -v clang-tidy || true)}
if [ -z "$tidy" ]; then
	echo "check-tidy: clang-tidy not found (apt-get install clang-tidy)" >&2
	exit 2
fi
if [ ! -f "$build/compile_commands.json" ]; then
	echo "check-tidy: $build/compile_commands.json missing; configure first:" >&2
	echo "  cmake -S $root -B $build -G Ninja" >&2
	exit 2
fi
cd "$root"
files=$(find libhpu tools tests -name '*.cpp' -not -path '*/emu/*' | sort)
# Only files the build knows (tidy needs their flags).
list=""
for f in $files; do
	if grep -q "\"$root/$f\"" "$build/compile_commands.json"; then
		list="$list $f"
	else
		echo "check-tidy: skipping $f (not in compile_commands.json)" >&2
	fi
done
[ -n "$list" ] || { echo "check-tidy: nothing to check" >&2; exit 2; }
# One process per file, as many at once as there are CPUs.
# shellcheck disable=SC2086
if printf '%s\n' $list | xargs -P "$(nproc)" -n 1 "$tidy" -p "$build" --quiet; then
	echo "check-tidy: clean ($(echo $list | wc -w) files)"
else
	echo "check-tidy: findings above" >&2
	exit 1
fi

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
# The PyTorch extension's sources (libhpu/torch/csrc) apart: clang 14
# cannot compile PyTorch 1.13's headers as C++20 (libstdc++'s constexpr
# std::vector members are instantiated while c10::IValue is incomplete;
# GCC compiles them), so tidy reports errors inside those system headers
# for these files. It still checks our code: only its findings in
# libhpu/torch count.
torch_list=""
other=""
for f in $list; do
	case "$f" in
	libhpu/torch/*) torch_list="$torch_list $f" ;;
	*) other="$other $f" ;;
	esac
done
status=0
# One process per file, as many at once as there are CPUs.
# shellcheck disable=SC2086
if [ -n "$other" ] && ! printf '%s\n' $other | xargs -P "$(nproc)" -n 1 "$tidy" -p "$build" --quiet; then
	status=1
fi
if [ -n "$torch_list" ]; then
	# shellcheck disable=SC2086
	found=$(printf '%s\n' $torch_list | xargs -P "$(nproc)" -n 1 "$tidy" -p "$build" --quiet 2>&1 |
		grep -E "^$root/libhpu/torch/[^:]+:[0-9]+:[0-9]+: (warning|error): " | sort -u || true)
	if [ -n "$found" ]; then
		echo "$found"
		status=1
	fi
fi
if [ "$status" = 0 ]; then
	echo "check-tidy: clean ($(echo $list | wc -w) files)"
else
	echo "check-tidy: findings above" >&2
	exit 1
fi

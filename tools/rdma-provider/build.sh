#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Build the hpu verbs provider (tools/rdma-provider/hpu) inside rdma-core's
# own source, so that Debian's libibverbs loads it (Documentation/rdma.md).
#
#   tools/rdma-provider/build.sh [--out DIR]               build if needed
#   tools/rdma-provider/build.sh [--out DIR] --print-path  path if built, else exit 1
#
# Debian 12 ships libibverbs 44 without the provider headers
# (infiniband/driver.h and the rest are internal to rdma-core), so the
# provider is compiled in an unpacked rdma-core tree: the 56.1 source from
# trixie, fetched by tools/dev/bootstrap.sh into
# ${HPU_CACHE:-/var/cache/hpu}/rdma-core-src/. 44 to 56 share the private
# provider ABI (IBVERBS_PRIVATE_34, libraries named lib<name>-rdmav34.so);
# after the build every libibverbs symbol the provider imports is checked
# against the installed libibverbs.so.1.
#
# Layout under DIR (default <repo>/build/rdma-provider):
#   rdma-core-<ver>-<hash>/     the unpacked tree (<hash>: the tarball's
#                               sha256, the cmake options and the patch);
#                               providers/hpu is synced from the sources,
#                               ninja rebuilds incrementally; build/ inside,
#                               configure.log and build.log beside it
#   lib/libhpu-rdmav34.so       the provider
#   hpu.driver                  "driver hpu": for /etc/libibverbs.d/ once the
#                               .so is installed in libibverbs' provider dir
#   libibverbs.d/hpu.driver     "driver DIR/lib/libhpu": a config file that
#                               loads the provider from this build tree
#   .inputs                     hash of every input; equal means up to date
#
# Loading from the build tree without installing anything:
#   RDMAV_DRIVERS=DIR/lib/libhpu ibv_devices
# (libibverbs appends -rdmav34.so to an absolute name).
#
# Progress goes to stderr; the last stdout line is the provider's path.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SELF=$ROOT/tools/rdma-provider/build.sh
SRC=$ROOT/tools/rdma-provider/hpu
ABI=$ROOT/include/uapi/rdma/hpu-abi.h
CACHE=${HPU_CACHE:-/var/cache/hpu}
JOBS=${HPU_JOBS:-2}
OUT=$ROOT/build/rdma-provider

say() { printf 'rdma-provider: %s\n' "$*" >&2; }
die() { printf 'rdma-provider: error: %s\n' "$*" >&2; exit 1; }

usage() {
	cat >&2 <<EOF
usage: $0 [--out DIR] [--print-path]
  Build the hpu rdma-core provider into DIR (default $OUT).
  --print-path  print the provider's path if it is built and current, else exit 1
EOF
}

print_only=0
while [ $# -gt 0 ]; do
	case "$1" in
	--out) [ $# -ge 2 ] || { usage; exit 2; }; OUT=$2; shift ;;
	--out=*) OUT=${1#--out=} ;;
	--print-path) print_only=1 ;;
	-h|--help) usage; exit 0 ;;
	*) usage; exit 2 ;;
	esac
	shift
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

tarball=$(find "$CACHE/rdma-core-src" -maxdepth 1 -name 'rdma-core_*.orig.tar.gz' 2>/dev/null |
	sort -V | tail -n1 || true)
[ -n "$tarball" ] || die "rdma-core source tarball (rdma-core_*.orig.tar.gz) not found in $CACHE/rdma-core-src: run tools/dev/bootstrap.sh as root (make bootstrap), which downloads it"
version=$(basename "$tarball")
version=${version#rdma-core_}
version=${version%.orig.tar.gz}

provider_files() {
	(cd "$SRC" && find . -type f ! -name '*~' ! -name '.*' | sed 's|^\./||' | LC_ALL=C sort)
}
[ -f "$SRC/CMakeLists.txt" ] || die "$SRC/CMakeLists.txt missing"
[ -f "$ABI" ] || die "$ABI missing"

# Debian's libibverbs: the library the provider must load into (an update
# of it is an input too: the provider's imports are checked against it).
sysverbs=$(ldconfig -p | awk '$1 == "libibverbs.so.1" && /x86-64|x86_64/ && !p { p = $NF } END { print p }')
[ -n "$sysverbs" ] || die "libibverbs.so.1 not installed (package libibverbs1): run tools/dev/bootstrap.sh"

tar_sha=$(sha256sum "$tarball" | cut -c1-64)
CMAKE_ARGS=(
	-G Ninja
	-DCMAKE_BUILD_TYPE=RelWithDebInfo
	-DNO_MAN_PAGES=1
	-DNO_PYVERBS=1
	-DENABLE_STATIC=0
	-DENABLE_RESOLVE_NEIGH=0
	-DENABLE_VALGRIND=0
	-DENABLE_LTTNG=0
	-DCMAKE_SKIP_RPATH=ON
	# Debian's hardening flags, as the top-level CMakeLists.txt sets them.
	"-DCMAKE_C_FLAGS=-fstack-protector-strong -fstack-clash-protection -fcf-protection -D_FORTIFY_SOURCE=2"
	"-DCMAKE_SHARED_LINKER_FLAGS=-Wl,-z,relro -Wl,-z,now"
)
# The one change to rdma-core's own files: providers/hpu among its providers.
PATCH_LINE='add_subdirectory(providers/hpu)'

inputs=$(
	{
		printf 'tarball %s\n' "$tar_sha"
		printf 'libibverbs %s\n' "$(readlink -f "$sysverbs")"
		printf 'file build.sh\n'; cat "$SELF"
		printf 'file hpu-abi.h\n'; cat "$ABI"
		for f in $(provider_files); do
			printf 'file hpu/%s\n' "$f"
			cat "$SRC/$f"
		done
	} | sha256sum | cut -c1-16
)
so=$OUT/lib/libhpu-rdmav34.so

if [ -f "$so" ] && [ -f "$OUT/.inputs" ] && [ "$(cat "$OUT/.inputs")" = "$inputs" ]; then
	echo "$so"
	exit 0
fi
[ $print_only = 0 ] || exit 1

for t in cmake ninja cc objdump; do
	command -v $t >/dev/null || die "$t not found: run tools/dev/bootstrap.sh"
done
exec 9>"$OUT/.lock"
flock 9

tree_key=$(
	{
		printf '%s\n' "$tar_sha" "${CMAKE_ARGS[@]}" "$PATCH_LINE"
	} | sha256sum | cut -c1-12
)
tree=$OUT/rdma-core-$version-$tree_key

# Copy providers/hpu where the content changed (ninja then rebuilds only
# that), the uapi header beside the sources; drop files no longer there.
# The wanted names are looked up in an associative array, not with
# `printf "$want" | grep -qxF`: under pipefail that pipeline fails when grep
# exits on its match before printf (one write() per line) has written the
# rest, and printf's SIGPIPE then deleted a wanted file (hpu_wq.c once, on
# a loaded host: configure could not find it).
sync_provider() {
	local dst=$tree/providers/hpu rel f files
	local -a want
	local -A wanted=()

	mkdir -p "$dst"
	files=$(provider_files) && [ -n "$files" ] || die "cannot list $SRC"
	mapfile -t want <<< "$files"
	want+=(hpu-abi.h)
	for rel in "${want[@]}"; do
		wanted[$rel]=1
		f=$SRC/$rel
		[ "$rel" = hpu-abi.h ] && f=$ABI
		mkdir -p "$(dirname "$dst/$rel")"
		if ! cmp -s "$f" "$dst/$rel"; then
			cp "$f" "$dst/$rel"
		fi
	done
	(cd "$dst" && find . -type f | sed 's|^\./||') | while IFS= read -r rel; do
		[ -n "${wanted[$rel]+set}" ] || rm -f -- "$dst/$rel"
	done
	# What configure and ninja will see: every wanted file, current.
	for rel in "${want[@]}"; do
		f=$SRC/$rel
		[ "$rel" = hpu-abi.h ] && f=$ABI
		cmp -s "$f" "$dst/$rel" || die "providers/hpu/$rel did not sync from $f"
	done
}

prepare_tree() {
	local tmp=$OUT/.unpack.$$ top

	# Older trees of other tarballs or options: only the current one is kept.
	find "$OUT" -mindepth 1 -maxdepth 1 -type d -name 'rdma-core-*' -exec rm -rf {} +
	say "unpacking $(basename "$tarball") into $tree"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	tar -C "$tmp" -xzf "$tarball" || die "cannot unpack $tarball"
	top=$(ls "$tmp")
	if [ "$(echo "$top" | wc -l)" != 1 ] || [ ! -f "$tmp/$top/CMakeLists.txt" ]; then
		die "unexpected layout in $tarball"
	fi
	mv "$tmp/$top" "$tree"
	rmdir "$tmp"

	grep -qx 'add_subdirectory(providers/rxe)' "$tree/CMakeLists.txt" ||
		die "no add_subdirectory(providers/rxe) in rdma-core's CMakeLists.txt: cannot place providers/hpu"
	sed -i "/^add_subdirectory(providers\/rxe)\$/a $PATCH_LINE" "$tree/CMakeLists.txt"
	sync_provider

	say "configuring (log: $tree/configure.log)"
	if ! cmake -S "$tree" -B "$tree/build" "${CMAKE_ARGS[@]}" > "$tree/configure.log" 2>&1; then
		tail -n 20 "$tree/configure.log" >&2
		die "rdma-core configure failed; see $tree/configure.log"
	fi
	echo "$tree_key" > "$tree/.hpu-tree-key"
}

if [ ! -f "$tree/.hpu-tree-key" ] || [ "$(cat "$tree/.hpu-tree-key")" != "$tree_key" ]; then
	prepare_tree
else
	sync_provider
fi

# The private ABI of this source must be the one the installed libibverbs
# provides (the suffix of the library name and of verbs_register_driver_N).
pabi=$(sed -n 's/^set(IBVERBS_PABI_VERSION "\([0-9]*\)")$/\1/p' "$tree/CMakeLists.txt")
[ -n "$pabi" ] || die "cannot read IBVERBS_PABI_VERSION from $tree/CMakeLists.txt"
sysdyn=$(objdump -T "$sysverbs")
grep -q "IBVERBS_PRIVATE_$pabi\$" <<< "$sysdyn" ||
	die "rdma-core $version has private ABI $pabi, but $sysverbs provides $(grep -o 'IBVERBS_PRIVATE_[0-9]*' <<< "$sysdyn" | sort -u | tr '\n' ' ')"
[ "$pabi" = 34 ] || die "private ABI $pabi: this script and the docs assume 34 (libhpu-rdmav34.so)"

say "building hpu-rdmav$pabi with rdma-core $version (log: $tree/build.log)"
if ! ninja -C "$tree/build" -j "$JOBS" "hpu-rdmav$pabi" > "$tree/build.log" 2>&1; then
	grep -E 'error|warning|FAILED' "$tree/build.log" | head -n 40 >&2 || true
	die "build failed; see $tree/build.log"
fi
built=$tree/build/lib/libhpu-rdmav$pabi.so
[ -f "$built" ] || die "ninja succeeded but $built is missing"

# Every libibverbs symbol the provider imports must exist, at the same
# version, in the installed library: a symbol rdma-core added after 44
# would make dlopen fail at run time (libibverbs then skips the provider
# with only a warning).
missing=""
while read -r sym ver; do
	awk -v s="$sym" -v v="$ver" <<< "$sysdyn" \
		'$NF == s && ($(NF-1) == v || $(NF-1) == "(" v ")") { f = 1 } END { exit !f }' ||
		missing="$missing $sym@$ver"
done < <(objdump -T "$built" | awk '/\*UND\*/ { v = $(NF-1); gsub(/[()]/, "", v); if (v ~ /^IBVERBS_/) print $NF, v }')
objdump -T "$built" | grep -c "verbs_register_driver_$pabi\$" >/dev/null || die "$built does not register with libibverbs"

[ -z "$missing" ] || die "the provider imports symbols $sysverbs lacks:$missing"

mkdir -p "$OUT/lib" "$OUT/libibverbs.d"
cp "$built" "$so.tmp" && mv "$so.tmp" "$so"
echo "driver hpu" > "$OUT/hpu.driver"
echo "driver $OUT/lib/libhpu" > "$OUT/libibverbs.d/hpu.driver"
echo "$inputs" > "$OUT/.inputs"
say "built $so (loads into $sysverbs)"
echo "$so"

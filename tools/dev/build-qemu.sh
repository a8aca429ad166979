#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Build qemu-system-x86_64 with the HPU device model (emu/) from Debian's
# QEMU 10.0 source, cached outside the repository.
#
#   tools/dev/build-qemu.sh               build if needed; print the binary path
#   tools/dev/build-qemu.sh --print-path  print the path if built, else exit 1
#
# Cache layout under ${HPU_CACHE:-/var/cache/hpu}:
#   qemu-src/qemu_10.0.*.orig.tar.*   the source (tools/dev/bootstrap.sh)
#   qemu-build/qemu-<ver>/            one unpacked, configured tree; emu/ is
#                                     synced into hw/misc/hpu/ and ninja
#                                     rebuilds incrementally
#   qemu-bin/<hash>/qemu-system-x86_64
#                                     installed binaries; <hash> covers the
#                                     tarball name, this script, emu/ and
#                                     include/hw/*.h
#
# Progress goes to stderr; the last stdout line is the binary path.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SELF=$ROOT/tools/dev/build-qemu.sh
CACHE=${HPU_CACHE:-/var/cache/hpu}
DEVICES=hpu                     # configs/devices/x86_64-softmmu/$DEVICES.mak

say() { printf 'build-qemu: %s\n' "$*" >&2; }
die() { printf 'build-qemu: error: %s\n' "$*" >&2; exit 1; }

usage() {
	cat >&2 <<EOF
usage: $0 [--print-path]
  Build qemu-system-x86_64 with the HPU device model (cached in $CACHE).
  --print-path  print the binary path if it is already built, else exit 1
EOF
}

print_only=0
case "${1:-}" in
"") ;;
--print-path) print_only=1 ;;
-h|--help) usage; exit 0 ;;
*) usage; exit 2 ;;
esac

tarball=$(find "$CACHE/qemu-src" -maxdepth 1 -name 'qemu_10.0.*.orig.tar.*' 2>/dev/null |
	sort -V | tail -n1 || true)
[ -n "$tarball" ] || die "QEMU 10.0 source tarball not found in $CACHE/qemu-src: run tools/dev/bootstrap.sh"
tarname=$(basename "$tarball")

# The shared hardware headers the model includes (include/hw/*.h).
hw_headers() {
	(cd "$ROOT" && ls include/hw/*.h)
}

# The files that make up the device model, relative to $ROOT, sorted.
model_files() {
	(cd "$ROOT" && find emu -type f ! -name '*~' ! -name '.*' | LC_ALL=C sort)
}
[ -f "$ROOT/emu/meson.build" ] || die "$ROOT/emu/meson.build missing"
[ -f "$ROOT/include/hw/hpu_regs.h" ] || die "$ROOT/include/hw/hpu_regs.h missing"

hash=$(
	{
		printf 'tarball %s\n' "$tarname"
		printf 'file tools/dev/build-qemu.sh\n'
		cat "$SELF"
		for f in $(model_files) $(hw_headers); do
			printf 'file %s\n' "$f"
			cat "$ROOT/$f"
		done
	} | sha256sum | cut -c1-16
)
bin=$CACHE/qemu-bin/$hash/qemu-system-x86_64

if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi
[ $print_only = 0 ] || exit 1

command -v ninja >/dev/null || die "ninja not found: run tools/dev/bootstrap.sh"
command -v bzip2 >/dev/null || die "bzip2 not found: run tools/dev/bootstrap.sh"

mkdir -p "$CACHE/qemu-build" "$CACHE/qemu-bin"
exec 9>"$CACHE/qemu-build/.lock"
flock 9

# Another run may have built it while we waited for the lock.
if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi

version=${tarname#qemu_}
version=${version%%+*}
version=${version%.orig.tar.*}
tree=$CACHE/qemu-build/qemu-$version

CONFIGURE_ARGS=(
	--python=/usr/bin/python3
	--target-list=x86_64-softmmu
	--without-default-features
	--without-default-devices
	"--with-devices-x86_64=$DEVICES"
	--enable-kvm --enable-tcg
	--enable-attr --enable-cap-ng --enable-virtfs --enable-slirp
	--disable-docs --disable-install-blobs
)

devices_mak() {
	cat <<EOF
# Minimal x86_64 device set for the hpu VM bench (tools/dev/build-qemu.sh)
CONFIG_Q35=y
CONFIG_PCIE_PORT=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_NET=y
CONFIG_VIRTIO_SERIAL=y
CONFIG_VIRTIO_9P=y
CONFIG_NVME_PCI=y
CONFIG_SPDM_SOCKET=y
CONFIG_VTD=y
CONFIG_E1000E_PCI_EXPRESS=y
CONFIG_EDU=y
CONFIG_HPU=y
EOF
}

# Anything that requires a fresh unpack + configure when it changes.
tree_key=$(
	{
		printf '%s\n' "$tarname" "${CONFIGURE_ARGS[@]}"
		devices_mak
	} | sha256sum | cut -c1-16
)

prepare_tree() {
	local tmp=$CACHE/qemu-build/.unpack.$$ top f

	say "unpacking $tarname into $tree"
	rm -rf "$tree" "$tmp"
	mkdir -p "$tmp"
	tar -C "$tmp" -xf "$tarball" || die "cannot unpack $tarball"
	top=$(ls "$tmp")
	if [ "$(echo "$top" | wc -l)" != 1 ] || [ ! -d "$tmp/$top" ]; then
		die "unexpected layout in $tarball"
	fi
	mv "$tmp/$top" "$tree"
	rmdir "$tmp"

	# The +ds tarball lacks the edk2 blobs that pc-bios/meson.build lists.
	for f in $(grep -o "'edk2-[A-Za-z0-9_-]*\.fd'" "$tree/pc-bios/meson.build" | tr -d "'"); do
		[ -e "$tree/pc-bios/$f.bz2" ] || printf '' | bzip2 > "$tree/pc-bios/$f.bz2"
	done

	devices_mak > "$tree/configs/devices/x86_64-softmmu/$DEVICES.mak"

	wire_tree
	sync_model

	say "configuring (log: $tree/configure.log)"
	(cd "$tree" && mkdir -p build && cd build &&
		../configure "${CONFIGURE_ARGS[@]}") > "$tree/configure.log" 2>&1 ||
		die "configure failed; see $tree/configure.log"
	echo "$tree_key" > "$tree/.hpu-tree-key"
}

# Wire hw/misc/hpu/ into the tree (idempotent, also on an existing tree):
# its meson.build and Kconfig, and its trace-events among QEMU's
# trace_events_subdirs (the top-level meson.build, before subdir('trace')).
# The trace group counts only while the synced model has a trace-events
# file, so the same tree still configures when a checkout without one is
# synced into it.
wire_tree() {
	mkdir -p "$tree/hw/misc/hpu"
	grep -qx "subdir('hpu')" "$tree/hw/misc/meson.build" ||
		echo "subdir('hpu')" >> "$tree/hw/misc/meson.build"
	grep -qx "source hpu/Kconfig" "$tree/hw/misc/Kconfig" ||
		printf '\nsource hpu/Kconfig\n' >> "$tree/hw/misc/Kconfig"
	if ! grep -qF "hw/misc/hpu/trace-events" "$tree/meson.build"; then
		grep -qx "subdir('trace')" "$tree/meson.build" ||
			die "no subdir('trace') in $tree/meson.build"
		sed -i "/^subdir('trace')\$/i\\
if fs.is_file('hw/misc/hpu/trace-events')\\
  trace_events_subdirs += [ 'hw/misc/hpu' ]\\
endif" "$tree/meson.build"
	fi
}

# Copy emu/* and include/hw/*.h into hw/misc/hpu/ where the content changed,
# so ninja rebuilds only what is affected; drop files no longer in emu/.
# Wanted names are looked up in an associative array: `printf "$want" |
# grep -qxF` fails under pipefail when grep exits on its match before
# printf has written the rest (SIGPIPE), which removed a wanted file.
sync_model() {
	local dst=$tree/hw/misc/hpu f rel files
	local -a want
	local -A wanted=()

	mkdir -p "$dst"
	files=$(model_files | sed 's|^emu/||'; hw_headers | sed 's|^include/hw/||') &&
		[ -n "$files" ] || die "cannot list emu/ and include/hw/"
	mapfile -t want <<< "$files"
	for rel in "${want[@]}"; do
		wanted[$rel]=1
		if [ -f "$ROOT/include/hw/$rel" ]; then
			f=$ROOT/include/hw/$rel
		else
			f=$ROOT/emu/$rel
		fi
		mkdir -p "$(dirname "$dst/$rel")"
		if ! cmp -s "$f" "$dst/$rel"; then
			say "sync $rel"
			cp "$f" "$dst/$rel"
		fi
	done
	(cd "$dst" && find . -type f | sed 's|^\./||') | while IFS= read -r rel; do
		if [ -z "${wanted[$rel]+set}" ]; then
			say "remove stale $rel"
			rm -f -- "$dst/$rel"
		fi
	done
}

if [ ! -f "$tree/.hpu-tree-key" ] || [ "$(cat "$tree/.hpu-tree-key")" != "$tree_key" ]; then
	prepare_tree
else
	wire_tree
	sync_model
fi

say "building qemu-system-x86_64 (log: $tree/build.log)"
if ! ninja -C "$tree/build" qemu-system-x86_64 > "$tree/build.log" 2>&1; then
	grep -E 'error|Error|FAILED' "$tree/build.log" | head -n 40 >&2 || true
	die "build failed; see $tree/build.log"
fi

tmpdir=$CACHE/qemu-bin/.tmp.$$
rm -rf "$tmpdir"
mkdir -p "$tmpdir"
cp "$tree/build/qemu-system-x86_64" "$tmpdir/"
rm -rf "$CACHE/qemu-bin/$hash"
mv "$tmpdir" "$CACHE/qemu-bin/$hash"

# Keep the eight most recent builds.
find "$CACHE/qemu-bin" -mindepth 1 -maxdepth 1 -type d ! -name '.*' -printf '%T@ %p\n' |
	sort -rn | tail -n +9 | cut -d' ' -f2- | xargs -r rm -rf

say "installed $bin"
echo "$bin"

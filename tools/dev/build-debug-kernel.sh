#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Build the debug kernel of `make test-debug`: Linux 6.12 from Debian's
# linux-source-6.12 with KASAN, lockdep (PROVE_LOCKING, PROVE_RCU),
# DEBUG_ATOMIC_SLEEP, DEBUG_OBJECTS, KMEMLEAK, DMA_API_DEBUG, failslab and
# fail_page_alloc and KUnit (tools/dev/vm/debug-kernel.config over
# x86_64_defconfig). Cached under $HPU_CACHE/debug-kernel by a hash of the
# source tarball, the configuration and this script; only a change to one
# of them rebuilds it.
#
# Installs the image as /boot/vmlinuz-<version> and the modules under
# /lib/modules/<version> (<version> ends in -hpu-debug; tools/dev/vm/hpu-vm
# never picks it by default), since the guest shares the host's root.
# Prints the version. The build tree stays in the cache: hpu.ko builds
# against it with KDIR=<cache>/build.
#
#   tools/dev/build-debug-kernel.sh [--print-version | --print-kdir]
# (the two options print what an earlier build made, or exit 1)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE=${HPU_CACHE:-/var/cache/hpu}
TARBALL=/usr/src/linux-source-6.12.tar.xz
FRAGMENT=$ROOT/tools/dev/vm/debug-kernel.config
# Symbols hpu.ko needs that have no prompt of their own (other drivers
# select them): the build gives them one so the fragment can set them.
PROMPTLESS="DRM_EXEC DRM_GPUVM DRM_BUDDY DRM_GEM_SHMEM_HELPER DRM_SCHED AUXILIARY_BUS NET_DEVLINK"

say() { printf 'build-debug-kernel: %s\n' "$*" >&2; }
die() { printf 'build-debug-kernel: error: %s\n' "$*" >&2; exit 1; }

[ -r "$TARBALL" ] || die "$TARBALL missing: run tools/dev/bootstrap.sh (package linux-source-6.12)"
hash=$( { stat -c '%s %Y' "$TARBALL"; cat "$FRAGMENT" "${BASH_SOURCE[0]}"; } | sha256sum | cut -c1-16)
dir=$CACHE/debug-kernel/$hash
src=$dir/src
stamp=$dir/built
configured=$dir/configured

case "${1:-}" in
--print-version) [ -f "$stamp" ] && cat "$stamp"; exit $? ;;
--print-kdir) [ -f "$stamp" ] && echo "$src"; exit $? ;;
"") ;;
*) die "usage: $0 [--print-version | --print-kdir]" ;;
esac

# Build dependencies of a kernel beyond what tools/dev/bootstrap.sh installs.
need=""
for p in libelf-dev libssl-dev bc; do
	[[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == *'install ok installed'* ]] || need="$need $p"
done
if [ -n "$need" ]; then
	say "installing$need"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $need >/dev/null ||
		die "apt-get install$need"
fi

mkdir -p "$CACHE/debug-kernel"
exec 9>"$CACHE/debug-kernel/.lock"
flock 9

# An interrupted build resumes: the unpacked, configured tree is kept
# (stamp "configured") and make picks up where it stopped.
if [ ! -f "$stamp" ] && [ ! -f "$configured" ]; then
	rm -rf "$dir"
	mkdir -p "$src"
	say "unpacking $TARBALL"
	tar -xJf "$TARBALL" -C "$src" --strip-components=1
	for sym in $PROMPTLESS; do
		# "config SYM" followed by a bare "tristate" or "bool": add a prompt.
		kc=$(grep -rlx --include='Kconfig*' "config $sym" "$src/drivers" "$src/net" | head -n 1)
		[ -n "$kc" ] || die "no Kconfig defines $sym"
		sed -i -E "/^config $sym\$/{n;s/^\t(tristate|bool)\$/\t\1 \"$sym (hpu debug kernel)\"/}" "$kc"
		grep -q "\"$sym (hpu debug kernel)\"" "$kc" || die "cannot give $sym a prompt in $kc"
	done
	say "configuring (x86_64_defconfig + $(basename "$FRAGMENT"))"
	make -C "$src" -s x86_64_defconfig
	"$src/scripts/kconfig/merge_config.sh" -m -O "$src" "$src/.config" "$FRAGMENT" >/dev/null
	make -C "$src" -s olddefconfig
	# Every line of the fragment must have survived the dependencies.
	missing=""
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*) grep -qxF "$line" "$src/.config" || missing="$missing ${line%%=*}" ;;
		esac
	done < "$FRAGMENT"
	[ -z "$missing" ] || die "not set as asked after olddefconfig:$missing"
	touch "$configured"
fi
if [ ! -f "$stamp" ]; then
	say "building (log: $dir/build.log; about 40 minutes on 2 cores)"
	if ! make -C "$src" -j"$(nproc)" bzImage modules >> "$dir/build.log" 2>&1; then
		grep -E 'error|Error' "$dir/build.log" | head -n 30 >&2 || true
		die "build failed; see $dir/build.log"
	fi
	make -C "$src" -s kernelrelease > "$dir/version"
	cp "$dir/version" "$stamp"
fi

ver=$(cat "$stamp")
if [ ! -f "/boot/vmlinuz-$ver" ] || ! cmp -s "$src/arch/x86/boot/bzImage" "/boot/vmlinuz-$ver" ||
	[ ! -f "/lib/modules/$ver/modules.dep" ]; then
	say "installing /boot/vmlinuz-$ver and /lib/modules/$ver"
	cp "$src/arch/x86/boot/bzImage" "/boot/vmlinuz-$ver"
	make -C "$src" -s modules_install INSTALL_MOD_STRIP=1 >/dev/null
fi
echo "$ver"

#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Install everything hpu needs to build and test on Debian 12 (bookworm).
# Idempotent: each step is skipped when its result is already present.
# The package mirror is taken from this machine's own apt configuration.
set -euo pipefail

say() { printf 'bootstrap: %s\n' "$*"; }
die() { printf 'bootstrap: FAILED: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (it installs Debian packages)"
[ -r /etc/os-release ] && . /etc/os-release
[ "${VERSION_CODENAME:-}" = bookworm ] || say "warning: written for Debian 12 (bookworm), this is '${VERSION_CODENAME:-unknown}'"

export DEBIAN_FRONTEND=noninteractive
CACHE=${HPU_CACHE:-/var/cache/hpu}
mkdir -p "$CACHE"

mirror_uri() {
	local uri=""
	if [ -r /etc/apt/sources.list.d/debian.sources ]; then
		uri=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
	fi
	if [ -z "$uri" ] && [ -r /etc/apt/sources.list ]; then
		uri=$(awk '$1 == "deb" && $0 ~ /bookworm/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list)
	fi
	[ -n "$uri" ] || die "cannot find the Debian mirror URI in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list"
	echo "$uri"
}

# 1. apt sources: bookworm-backports (binary + source), trixie and bookworm source.
added=0
uri=$(mirror_uri)
if [ ! -f /etc/apt/sources.list.d/hpu-backports.sources ]; then
	say "adding bookworm-backports (deb, deb-src) from $uri"
	cat > /etc/apt/sources.list.d/hpu-backports.sources <<X
Types: deb deb-src
URIs: $uri
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
X
	added=1
fi
if [ ! -f /etc/apt/sources.list.d/hpu-src.sources ]; then
	say "adding deb-src for trixie (QEMU 10 source) and bookworm"
	cat > /etc/apt/sources.list.d/hpu-src.sources <<X
Types: deb-src
URIs: $uri
Suites: trixie bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
X
	added=1
fi
stamp=$CACHE/apt-updated
if [ $added = 1 ] || [ ! -f "$stamp" ] || [ -n "$(find "$stamp" -mmin +1440 2>/dev/null)" ]; then
	say "apt-get update"
	apt-get update -q || die "apt-get update"
	touch "$stamp"
fi

# 2. packages (debhelper, dh-dkms, dh-python, dkms, lintian, chrpath: make deb and its test).
PKGS_MAIN="build-essential cmake ninja-build pkg-config git make gcc g++ python3
	libglib2.0-dev libpixman-1-dev libfdt-dev libslirp-dev libcap-ng-dev libattr1-dev
	flex bison bzip2 xz-utils zstd dpkg-dev seabios qemu-system-data
	busybox-static cpio kmod sparse dwarves libdrm-dev pciutils
	clang-tidy jq nettle-dev libopenblas-dev iproute2 iputils-ping ethtool lm-sensors python3-jsonschema
	zlib1g-dev dataset-fashion-mnist python3-torch libtorch-dev groff-base
	debhelper dh-dkms dh-python dkms lintian chrpath"
# The NIC's RDMA side (Documentation/rdma.md): Debian's rdma-core 44 user space
# (libibverbs and its providers, rxe's among them, the ibv_* tools, `rdma` is in
# iproute2), perftest, the headers the provider build and tests use, the wire
# tools (tshark, tcpdump for the guests' captures, scapy for the ICRC checker),
# Open MPI and UCX for scale-out.
# VM guests share this root read-only, so what the guests run is installed here.
PKGS_RDMA="rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest
	libibverbs-dev librdmacm-dev iputils-ping ethtool tshark tcpdump python3-scapy
	openmpi-bin libopenmpi-dev libucx-dev ucx-utils"
PKGS_BPO="linux-image-amd64 linux-headers-amd64 linux-source-6.12 meson python3-pycotap catch2"

# tshark's package asks whether non-root users may capture: answer no.
if ! [[ $(dpkg-query -W -f='${Status}' wireshark-common 2>/dev/null) == *'install ok installed'* ]]; then
	echo 'wireshark-common wireshark-common/install-setuid boolean false' | debconf-set-selections \
		|| die "debconf-set-selections (wireshark-common/install-setuid)"
fi
missing=""
for p in $PKGS_MAIN $PKGS_RDMA; do
	[[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == *'install ok installed'* ]] || missing="$missing $p"
done
if [ -n "$missing" ]; then
	say "installing from bookworm:$missing"
	apt-get install -y -q --no-install-recommends $missing || die "apt-get install$missing"
fi
missing=""
for p in $PKGS_BPO; do
	[[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == *'install ok installed'* ]] || missing="$missing $p"
done
if ! ls /boot/vmlinuz-6.12* >/dev/null 2>&1; then
	missing="$missing linux-image-amd64"
fi
if [ -n "$missing" ]; then
	say "installing from bookworm-backports:$missing"
	apt-get install -y -q --no-install-recommends -t bookworm-backports $missing \
		|| die "apt-get install -t bookworm-backports$missing"
fi
ls /boot/vmlinuz-6.12* >/dev/null 2>&1 || die "no /boot/vmlinuz-6.12* after installing linux-image-amd64"

# 3. QEMU 10.0 source from trixie (downloaded once, kept in the cache).
if ! ls "$CACHE"/qemu-src/qemu_10.0.*.orig.tar.* >/dev/null 2>&1; then
	say "downloading QEMU source (qemu/trixie) into $CACHE/qemu-src"
	mkdir -p "$CACHE/qemu-src"
	(cd "$CACHE/qemu-src" && apt-get source -q --download-only qemu/trixie) \
		|| die "apt-get source --download-only qemu/trixie"
fi

# 4. rdma-core 56.1 source (trixie) for the verbs provider build
#    (tools/rdma-provider/build.sh): Debian 12 ships no provider headers and
#    bookworm's own orig tarball is gone from the archive. apt-get exits
#    non-zero because trixie's .dsc is missing (404), after fetching the orig
#    tarball and checking it against the Sources index's hash: accept that,
#    then insist on the tarball.
RSRC=$CACHE/rdma-core-src
if ! ls "$RSRC"/rdma-core_*.orig.tar.gz >/dev/null 2>&1; then
	say "downloading rdma-core source (rdma-core/trixie) into $RSRC"
	mkdir -p "$RSRC"
	(cd "$RSRC" && apt-get source -q --download-only rdma-core/trixie) \
		|| say "apt-get source rdma-core/trixie exited non-zero (expected: its .dsc is missing); checking for the tarball"
	rtar=$(ls "$RSRC"/rdma-core_*.orig.tar.gz 2>/dev/null | sort -V | tail -n1)
	[ -n "$rtar" ] || die "no rdma-core_*.orig.tar.gz in $RSRC after apt-get source rdma-core/trixie"
	gzip -t "$rtar" || { rm -f "$rtar"; die "$rtar is corrupt (removed)"; }
	say "rdma-core source: $(basename "$rtar")"
fi

# 5. checkpatch.pl from the kernel source package (for the style checks).
KSRC=$CACHE/linux-scripts
if [ ! -x "$KSRC/scripts/checkpatch.pl" ]; then
	tarball=$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -n1)
	[ -n "$tarball" ] || die "linux-source-6.12 tarball missing under /usr/src"
	say "extracting checkpatch.pl from $tarball"
	mkdir -p "$KSRC"
	tar -C "$KSRC" --strip-components=1 -xf "$tarball" \
		--wildcards '*/scripts/checkpatch.pl' '*/scripts/spelling.txt' '*/scripts/const_structs.checkpatch' \
		|| die "extracting checkpatch.pl"
fi

touch "$CACHE/bootstrap.done"
say "done"

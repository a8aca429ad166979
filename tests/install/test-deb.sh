#!/bin/bash
# SPDX-License-Identifier: MIT
#
# make test-install: the Debian packages of `make deb` on a clean machine
# (Documentation/install.md), from installation to removal.
#
#   tests/install/test-deb.sh [BUILD]      (as root; default BUILD: build)
#
# The clean machine is an overlay over this host's root with an empty
# upper layer on a tmpfs, in a mount namespace of its own: it has what the
# host has installed (Debian's packages, the reference 6.12 kernel and its
# headers) and nothing of hpu's; nothing is written to the host's root. The
# package operations run in a chroot into it, natively (under TCG a DKMS
# build of the driver would take most of an hour); then a guest boots on it
# (hpu-vm --root) with one HPU, as the machine would after the installation,
# and tests/install/guest-deb.sh checks it from the inside:
#
# 1. make deb builds the seven packages at the tree's version (lintian
#    clean) and at a newer one for the upgrade; each has its files;
# 2. dpkg -i installs them; DKMS builds and installs the three modules for
#    the guest's kernel (the package's postinst, and `dkms autoinstall -k`,
#    what dkms.service runs at boot); a C program built with
#    `pkg-config hpu` and a C++ one with CMake's find_package(hpu) build
#    against the installed libhpu-dev, as a user in group render;
# 3. boot: udev loads the DKMS build of hpu.ko for the device, hpu_en and
#    hpu_ib for its auxiliary devices, the firmware comes from
#    hpu-firmware, /dev/accel/accel0 is render 0660; hpu-smi works for the
#    render member and is refused (exit 4) to a user outside the group and
#    for a reset; libibverbs finds the installed provider; both programs
#    run; the PyTorch example of python3-hpu-torch trains the seed's model;
# 4. dpkg -i of the newer packages upgrades: DKMS drops the old version's
#    tree and modules and installs the new ones; a second boot checks the
#    upgraded driver and tools;
# 5. dpkg --purge removes everything: no package, DKMS entry, module, source
#    tree or file of hpu's is left, and nothing else changed on the machine
#    but the package manager's own records (a list below, with reasons).
#
# Prints "PASS deb/..." and "FAIL deb/...: why"; exit 1 on any failure.
#
# Copyright (c) 2026 The hpu authors
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

if [ "${HPU_DEB_NS:-}" != 1 ]; then
	[ "$(id -u)" = 0 ] || { echo "FAIL deb/run as root: the test mounts an overlay and chroots"; exit 1; }
	# Mounts made from here on vanish with the namespace, whatever happens;
	# the directory they were made on is removed here.
	ovl=$(mktemp -d /var/tmp/hpu-deb.XXXXXX)
	HPU_DEB_NS=1 HPU_DEB_OVL=$ovl unshare --mount --propagation private bash "$0" "$BUILD"
	rc=$?
	rmdir "$ovl"
	exit $rc
fi

fails=0 passes=0
pass() { echo "PASS deb/$1"; passes=$((passes + 1)); }
fail() { echo "FAIL deb/$1: $2"; fails=$((fails + 1)); }
check() { # check NAME WHY command...
	local name=$1 why=$2
	shift 2
	if "$@"; then pass "$name"; else fail "$name" "$why"; fi
}
finish() {
	echo "test-deb: $passes passed, $fails failed (logs in $LOGS)"
	[ $fails = 0 ]
	exit
}

VERSION=$(head -n1 "$ROOT/VERSION")
NEWER=$VERSION+upgradetest1
PKGS="hpu-dkms hpu-firmware libhpu1 libhpu-dev hpu-tools ibverbs-provider-hpu python3-hpu-torch"
TRIPLET=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
# The guest's kernel: hpu-vm's default, the newest reference 6.12 kernel.
KVER=$(cd /boot && ls vmlinuz-6.12.* 2>/dev/null | sed 's/^vmlinuz-//' | grep -v -- '-hpu-debug$' | sort -V | tail -n1)
USER_IN=hputest USER_OUT=hpuother
LOGS=$BUILD/test-deb
rm -rf "$LOGS" && mkdir -p "$LOGS"

[ -n "$KVER" ] || { fail "reference kernel" "no /boot/vmlinuz-6.12.*: run make bootstrap"; finish; }
[ -e "/lib/modules/$KVER/build/Makefile" ] ||
	{ fail "kernel headers" "no headers for $KVER (linux-headers-$KVER): run make bootstrap"; finish; }

# 1. The packages.
for v in "$VERSION" "$NEWER"; do
	if bash "$ROOT/packaging/build-deb.sh" "$BUILD" "$LOGS/debs-$v" "$v" > "$LOGS/build-deb-$v.log" 2>&1; then
		pass "make deb builds the packages of $v, lintian clean"
	else
		fail "make deb builds the packages of $v, lintian clean" "$(tail -n 15 "$LOGS/build-deb-$v.log")"
		finish
	fi
done
debs=$LOGS/debs-$VERSION
has() { # has PACKAGE PATH...: the package's data holds each path
	local p=$1 f list
	shift
	list=$(dpkg-deb -c "$debs/${p}_${VERSION}_"*.deb | awk '{ print $6 }' | sed 's|^\./|/|')
	for f in "$@"; do
		echo "$list" | grep -qx -- "$f" || { echo "  $p has no $f"; return 1; }
	done
}
check "hpu-dkms holds the driver's tree and the udev rule" "files missing" \
	has hpu-dkms "/usr/src/hpu-$VERSION/dkms.conf" "/usr/src/hpu-$VERSION/kernel/hpu_drv.c" \
	"/usr/src/hpu-$VERSION/include/uapi/drm/hpu_accel.h" /lib/udev/rules.d/70-hpu.rules
check "hpu-firmware holds the image" "files missing" has hpu-firmware /lib/firmware/hpu/hpu-h1-fw.bin
check "libhpu1 holds the library and its SONAME link" "files missing" \
	has libhpu1 "/usr/lib/$TRIPLET/libhpu.so.1"
check "libhpu-dev holds headers, link, hpu.pc and the CMake package" "files missing" \
	has libhpu-dev /usr/include/hpu/hpu.h "/usr/lib/$TRIPLET/libhpu.so" \
	"/usr/lib/$TRIPLET/pkgconfig/hpu.pc" "/usr/lib/$TRIPLET/cmake/hpu/hpuConfig.cmake"
check "hpu-tools holds the tools and their manual pages" "files missing" \
	has hpu-tools /usr/bin/hpu-smi /usr/bin/hpu-fwpack /usr/bin/hpu-as /usr/bin/hpu-train \
	/usr/share/man/man1/hpu-smi.1.gz /usr/share/man/man1/hpu-fwpack.1.gz \
	/usr/share/man/man1/hpu-as.1.gz /usr/share/man/man1/hpu-train.1.gz
check "ibverbs-provider-hpu holds the provider and its .driver file" "files missing" \
	has ibverbs-provider-hpu "/usr/lib/$TRIPLET/libibverbs/libhpu-rdmav34.so" /etc/libibverbs.d/hpu.driver
check "python3-hpu-torch holds hpu_torch and the getting-started example" "files missing" \
	has python3-hpu-torch /usr/lib/python3/dist-packages/hpu_torch/__init__.py \
	/usr/lib/python3/dist-packages/hpu_torch/libhpu_torch.so \
	/usr/share/doc/python3-hpu-torch/examples/getting_started_hpu.py
# Each file in one package only (dpkg would refuse the second).
dups=$(for p in $PKGS; do dpkg-deb -c "$debs/${p}_${VERSION}_"*.deb | awk '$1 !~ /^d/ { print $6 }'; done | sort | uniq -d)
check "no file is in two packages" "$dups" test -z "$dups"
deps=$(dpkg-deb -f "$debs/libhpu-dev_${VERSION}_"*.deb Depends)
check "libhpu-dev depends on libhpu1 of its own version" "Depends: $deps" \
	grep -q "libhpu1 (= $VERSION)" <<< "$deps"
deps=$(dpkg-deb -f "$debs/hpu-tools_${VERSION}_"*.deb Depends)
check "hpu-tools depends on libhpu1 (from the symbols file)" "Depends: $deps" \
	grep -q "libhpu1 (>= " <<< "$deps"

# The clean machine: an overlay over the host's root, its upper layer on a
# tmpfs (an upper layer on the root's own file system would overlap it).
OVL=$HPU_DEB_OVL
mount -t tmpfs -o mode=0755 hpu-deb "$OVL" || { fail "tmpfs for the clean root" "mount failed"; finish; }
mkdir -p "$OVL/upper" "$OVL/work" "$OVL/root"
R=$OVL/root
if ! mount -t overlay overlay -o "lowerdir=/,upperdir=$OVL/upper,workdir=$OVL/work" "$R"; then
	fail "an overlay over the host's root" "mount -t overlay failed (modprobe overlay?)"
	finish
fi
mount --rbind /proc "$R/proc" && mount --rbind /sys "$R/sys" && mount --rbind /dev "$R/dev" &&
	mount -t tmpfs tmpfs "$R/run" && mount -t tmpfs tmpfs "$R/tmp" ||
	{ fail "the chroot's /proc, /sys, /dev, /run, /tmp" "mount failed"; finish; }
in_root() { # a command in the clean root, with a clean environment
	chroot "$R" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}
as_user() { # a command in the clean root as the render member
	in_root su -s /bin/sh "$USER_IN" -c "cd ~ && env -i PATH=/usr/bin:/bin HOME=\$HOME $*"
}

# Nothing of hpu's in the base: the test would prove nothing otherwise.
installed=$(in_root dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' $PKGS 2>/dev/null | grep -v '^un' || true)
leftover=$(ls -d "$R"/usr/src/hpu-* "$R"/lib/modules/*/updates/dkms/hpu*.ko* "$R"/var/lib/dkms/hpu \
	"$R"/usr/local/share/hpu "$R"/usr/local/lib/*/libhpu.so* "$R"/usr/local/bin/hpu-smi \
	"$R"/etc/udev/rules.d/70-hpu.rules "$R"/lib/udev/rules.d/70-hpu.rules "$R"/etc/libibverbs.d/hpu.driver \
	"$R"/lib/firmware/hpu 2>/dev/null || true)
if [ -n "$installed$leftover" ]; then
	fail "the base has nothing of hpu's" "$installed $leftover"
	finish
fi
pass "the base has nothing of hpu's (no package, DKMS tree, module, make install, rule, firmware)"

in_root groupadd -f render
in_root useradd -m -G render -s /bin/sh "$USER_IN" && in_root useradd -m -s /bin/sh "$USER_OUT" ||
	{ fail "users $USER_IN (group render) and $USER_OUT" "useradd failed"; finish; }
mkdir -p "$R/mnt/hpu-debs" && mount --bind "$LOGS" "$R/mnt/hpu-debs"
# What the upper layer holds before the packages: the test's own setup.
# One line per entry: type, mode, owner, path, and a regular file's sha256
# (so that an edit of a file already in the upper layer shows as well).
snapshot() {
	(cd "$OVL/upper" && find . -mindepth 1 -printf '%y %m %u:%g %P\n' | sort -k4 |
		while read -r t m o path; do
			if [ "$t" = f ]; then
				echo "$t $path $m $o $(sha256sum < "$path" | cut -c1-16)"
			else
				echo "$t $path $m $o"
			fi
		done | sort)
}
snapshot > "$LOGS/upper-before.txt"

# 2. Install.
debs_of() { # the seven packages' files of version $1, as the chroot sees them
	local p
	for p in $PKGS; do printf '/mnt/hpu-debs/debs-%s/%s_%s_*.deb ' "$1" "$p" "$1"; done
}
if in_root sh -c "dpkg -i $(debs_of "$VERSION")" > "$LOGS/install.log" 2>&1; then
	pass "dpkg -i installs the seven packages of $VERSION"
else
	fail "dpkg -i installs the seven packages of $VERSION" "$(tail -n 20 "$LOGS/install.log")"
	finish
fi
# The package's postinst alone built and installed the modules (in a chroot
# whose running kernel is not installed, Debian's DKMS builds for every
# kernel in /lib/modules).
st=$(in_root dkms status -m hpu -k "$KVER" 2>/dev/null)
check "hpu-dkms's postinst built and installed hpu $VERSION for $KVER" "dkms status: $st" \
	grep -q "^hpu/$VERSION, $KVER, [^:]*: installed" <<< "$st"
# What dkms.service does at boot for a kernel without the modules.
in_root dkms uninstall -m hpu -v "$VERSION" -k "$KVER" > "$LOGS/dkms-uninstall.log" 2>&1
in_root dkms autoinstall -k "$KVER" > "$LOGS/dkms-autoinstall.log" 2>&1
st=$(in_root dkms status -m hpu -k "$KVER" 2>/dev/null)
check "dkms autoinstall (the boot service) installs them again for $KVER" "dkms status: $st" \
	grep -q "^hpu/$VERSION, $KVER, [^:]*: installed" <<< "$st"
for m in hpu hpu_en hpu_ib; do
	check "$m.ko is in /lib/modules/$KVER/updates/dkms" "not there" \
		sh -c "ls '$R/lib/modules/$KVER/updates/dkms/$m.ko'* >/dev/null 2>&1"
done
alias=$(in_root modprobe -S "$KVER" -R "pci:v00001234d00004850sv00001234sd00001100bc12sc00i00" 2>&1)
check "the device's modalias resolves to hpu" "modprobe -R: $alias" test "$alias" = hpu

# Programs built against the installed libhpu-dev, as the user.
mkdir -p "$R/home/$USER_IN/src/cmake" "$R/home/$USER_IN/bin"
cat > "$R/home/$USER_IN/src/prog.c" <<'EOF'
#include <stdio.h>
#include <hpu/hpu.h>

int main(void)
{
	int n = hpu_device_count();
	hpu_device_t *dev = NULL;
	int err;

	printf("devices %d\n", n);
	if (n < 1)
		return 1;
	err = hpu_open_by_index(0, &dev);
	if (err) {
		fprintf(stderr, "hpu_open_by_index: %s\n", hpu_strerror(err));
		return 1;
	}
	hpu_close(dev);
	printf("opened device 0 (C, pkg-config)\n");
	return 0;
}
EOF
cat > "$R/home/$USER_IN/src/cmake/main.cpp" <<'EOF'
#include <cstdio>
#include <hpu/hpu.hpp>

int main()
{
	int n = hpu_device_count();
	std::printf("devices %d\n", n);
	if (n < 1)
		return 1;
	hpu::Device dev = hpu::Device::open(0);
	std::printf("opened device 0 (C++, find_package)\n");
	return 0;
}
EOF
cat > "$R/home/$USER_IN/src/cmake/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(hpu_user_prog CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(hpu REQUIRED)
add_executable(hpu-cmake-prog main.cpp)
target_link_libraries(hpu-cmake-prog PRIVATE hpu::hpu)
EOF
in_root chown -R "$USER_IN:$USER_IN" "/home/$USER_IN/src" "/home/$USER_IN/bin"
build_pc() {
	as_user 'cc -Wall -Werror -o bin/hpu-pc-prog src/prog.c $(pkg-config --cflags --libs hpu)' \
		> "$LOGS/prog-pc.log" 2>&1
}
build_cmake() {
	as_user 'cmake -S src/cmake -B src/cmake/b && cmake --build src/cmake/b && cp src/cmake/b/hpu-cmake-prog bin/' \
		> "$LOGS/prog-cmake.log" 2>&1
}
check "a C program builds with \`pkg-config --cflags --libs hpu\`" "see $LOGS/prog-pc.log" build_pc
check "a C++ program builds with CMake's find_package(hpu)" "see $LOGS/prog-cmake.log" build_cmake
# (Debian 12 is merged-/usr: ldd may name it by its /lib path.)
want=$(in_root readlink -f "/usr/lib/$TRIPLET/libhpu.so.1")
for p in hpu-pc-prog hpu-cmake-prog; do
	lib=$(in_root ldd "/home/$USER_IN/bin/$p" 2>/dev/null | awk '$1 == "libhpu.so.1" { print $3 }')
	got=$([ -n "$lib" ] && in_root readlink -f "$lib")
	check "$p loads the installed libhpu ($want)" "ldd: '$lib' ($got)" test -n "$want" -a "$got" = "$want"
done

# 3. Boot on it.
boot() { # boot VERSION MODE
	local v=$1 mode=$2 log=$LOGS/vm-$1
	flock /tmp/hpu-guest.lock "$ROOT/tools/dev/vm/hpu-vm" --root "$R" --fw-dir "" --hpus 1 \
		--timeout $((1500 * ${HPU_TIME_SCALE:-1})) --log "$log" -- \
		bash "$ROOT/tests/install/guest-deb.sh" "$v" "$USER_IN" "$USER_OUT" "$mode" \
		> "$log.out" 2>&1
	local rc=$?
	grep -E "^(PASS|FAIL) " "$log.out" | while read -r verdict rest; do echo "$verdict $rest"; done
	passes=$((passes + $(grep -c "^PASS " "$log.out")))
	fails=$((fails + $(grep -c "^FAIL " "$log.out")))
	check "the guest booted on the installed machine ran to the end ($v)" "hpu-vm exit $rc: $(tail -n 5 "$log.out")" \
		test $rc = 0
}
boot "$VERSION" full

# 4. Upgrade.
if in_root sh -c "dpkg -i $(debs_of "$NEWER")" > "$LOGS/upgrade.log" 2>&1; then
	pass "dpkg -i upgrades the seven packages to $NEWER"
else
	fail "dpkg -i upgrades the seven packages to $NEWER" "$(tail -n 20 "$LOGS/upgrade.log")"
fi
in_root dkms autoinstall -k "$KVER" > "$LOGS/dkms-autoinstall-upgrade.log" 2>&1
st=$(in_root dkms status -m hpu 2>/dev/null)
upgraded() {
	grep -q "^hpu/$NEWER, $KVER, [^:]*: installed" <<< "$st" && ! grep -q "^hpu/$VERSION," <<< "$st"
}
check "after the upgrade DKMS has hpu $NEWER installed for $KVER, and no $VERSION" "dkms status: $st" upgraded
check "the old DKMS tree /usr/src/hpu-$VERSION is gone" "still there" test ! -e "$R/usr/src/hpu-$VERSION"
vers=$(in_root dpkg-query -W -f '${Version}\n' $PKGS | sort -u)
check "every package is at $NEWER" "versions: $vers" test "$vers" = "$NEWER"
boot "$NEWER" quick

# 5. Remove.
if in_root dpkg --purge $PKGS > "$LOGS/purge.log" 2>&1; then
	pass "dpkg --purge removes the seven packages"
else
	fail "dpkg --purge removes the seven packages" "$(tail -n 20 "$LOGS/purge.log")"
fi
installed=$(in_root dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' $PKGS 2>/dev/null | grep -v '^un' || true)
check "no package is left (not even config-files)" "$installed" test -z "$installed"
st=$(in_root dkms status -m hpu 2>/dev/null)
check "DKMS has no hpu left" "dkms status: $st" test -z "$st"
left=$(ls -d "$R"/usr/src/hpu-* "$R"/lib/modules/*/updates/dkms/hpu*.ko* "$R"/var/lib/dkms/hpu "$R/etc/libibverbs.d/hpu.driver" \
	"$R"/lib/udev/rules.d/70-hpu.rules "$R"/lib/firmware/hpu 2>/dev/null || true)
check "no DKMS tree, module, rule, firmware or provider file is left" "$left" test -z "$left"
umount "$R/mnt/hpu-debs"
snapshot > "$LOGS/upper-after.txt"
# What may differ from before the installation. A directory of the base
# system shows in the upper layer once something in it changed (dpkg put a
# file there and took it away again): it is not a leftover. Files may
# differ only in the package manager's and the tools' own records, none of
# them hpu's:
#   var/lib/dpkg, var/log, var/cache/debconf  dpkg's database and logs
#   var/cache/ldconfig, etc/ld.so.cache       ldconfig's trigger
#   var/cache/man                             man-db's trigger
#   (usr/)lib/modules/<kver>/modules.*        depmod, run by DKMS
#   (usr/)lib/modules/<kver>/updates(/dkms)   the directories DKMS made
#   var/lib/dkms                              DKMS's own directory
#   home/hputest                              the user's own programs
allowed='^. (var/lib/dpkg|var/log|var/cache/debconf|var/cache/ldconfig|etc/ld\.so\.cache|var/cache/man|var/lib/dkms|home/'"$USER_IN"')(/|$)|^. (usr/)?lib/modules/[^/]+(/modules\.[a-z.]+|/updates|/updates/dkms)?$'
# Lines only before (a file deleted or changed) or only after (new or changed).
comm -3 "$LOGS/upper-before.txt" "$LOGS/upper-after.txt" | sed 's/^\t//' | while read -r type path _; do
	[ "$type" = d ] && [ -d "/$path" ] && continue
	echo "$type $path"
done | sort -u > "$LOGS/upper-changed.txt"
changed=$(grep -Ev "$allowed" "$LOGS/upper-changed.txt" || true)
check "nothing else is left on the machine or changed on it" "$(echo "$changed" | head -n 20)" test -z "$changed"
echo "test-deb: what differs after the removal, all in the package manager's records:"
grep -E "$allowed" "$LOGS/upper-changed.txt" | grep -Ev "^d |^. home/" | sed 's/^/  /' | head -n 40
finish

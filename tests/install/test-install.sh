#!/bin/bash
# SPDX-License-Identifier: MIT
#
# make install and make uninstall, on the host, into a scratch DESTDIR
# (Documentation/install.md). No VM, no root needed beyond what the build
# needs, nothing outside the scratch directory touched.
#
#   tests/install/test-install.sh [BUILD]     (default: build)
#
# 0. make install refuses PREFIX=/usr for a build whose library directory is
#    not Debian's lib/<triplet>, writing nothing;
# 1. make install DESTDIR=$root PREFIX=/usr from the built tree BUILD, under
#    umask 077; every expected file is there (libraries in lib/<triplet>,
#    whatever the build says) (libhpu with its SONAME links, headers, hpu.pc,
#    the CMake package, the tools and their man pages, the TPC kernels, the
#    firmware, the udev rule, the rdma-core provider and its .driver file,
#    the DKMS tree, hpu_torch when the build has it), and every installed
#    file is in the install manifest and readable by all; the build
#    directory gets no install manifests of CMake's;
# 2. the installed tools run against the installed libhpu (hpu-smi
#    --version, hpu-fwpack --check of the installed firmware, hpu-as --check
#    of an installed kernel), the man pages (hpu-smi, hpu-fwpack, hpu-as,
#    hpu-train) format without warnings and lexgrog reads their NAME lines;
# 3. a C program built with `pkg-config hpu` and a C++ program built with
#    CMake's find_package(hpu) link the installed libhpu and run (version
#    query, error text, driver probe: no device needed);
# 4. the DKMS tree: dkms.conf's fields, every source Kbuild names for the
#    three modules and nothing git does not track, the PCI and auxiliary device tables that make the
#    modules load when the device is there; with HPU_TEST_DKMS_BUILD=1 the
#    tree is also built as dkms would (minutes) and hpu.ko's modalias checked;
# 5. installing again over it removes a file the "previous" install listed
#    and this one does not; make uninstall then leaves exactly what was
#    there before (a file placed beforehand), nothing else;
# 6. an install that cannot create a directory copies nothing; one that
#    fails half-way leaves a manifest with which make uninstall removes what
#    it copied.
# 7. packaging/debian/libhpu1.symbols lists exactly the exported symbols.
# Prints "PASS install/name" and "FAIL install/name: why"; exit 1 on failure.
#
# Copyright (c) 2026 The hpu authors
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

fails=0
pass() { echo "PASS install/$1"; }
fail() { echo "FAIL install/$1: $2"; fails=$((fails + 1)); }
check() { # check NAME WHY command...: PASS when the command succeeds
	local name=$1 why=$2
	shift 2
	if "$@"; then pass "$name"; else fail "$name" "$why"; fi
}
libhpu_of() { # the libhpu.so.1 a program or library loads, as a real path
	local lib
	lib=$(ldd "$1" 2>/dev/null | awk '$1 == "libhpu.so.1" { print $3 }')
	[ -n "$lib" ] && realpath -m "$lib"
}

[ -f "$BUILD/CMakeCache.txt" ] || { fail "build present" "no $BUILD/CMakeCache.txt: run make"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root/etc"
echo "not ours" > "$root/etc/keep.conf"

VERSION=$(cat "$ROOT/VERSION")
LIBVER=$(sed -n 's/^set(HPU_LIB_VERSION \([0-9.]*\))$/\1/p' "$ROOT/libhpu/CMakeLists.txt")
TRIPLET=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
# Where Debian wants libraries under /usr, not what the build was told.
LIBDIR=lib/$TRIPLET
UDEVDIR=$(pkg-config --variable=udevdir udev 2>/dev/null || echo /lib/udev)
MANIFEST=$root/usr/share/hpu/install-manifest
log=$work/make.log
INSTALL=(python3 "$ROOT/packaging/hpu-install.py" install --build)

# 0. A build configured for plain lib (GNUInstallDirs' choice for a prefix
# other than /usr) must not install into /usr/lib; only the cache is read
# before the refusal, so a stand-in build directory does.
mkdir -p "$work/libbuild" "$work/refused"
printf 'CMAKE_INSTALL_LIBDIR:PATH=lib\n' > "$work/libbuild/CMakeCache.txt"
: > "$work/libbuild/cmake_install.cmake"
if "${INSTALL[@]}" "$work/libbuild" --prefix /usr --destdir "$work/refused" --only runtime,dev \
	> "$work/refused.log" 2>&1; then
	fail "PREFIX=/usr is refused for a build with CMAKE_INSTALL_LIBDIR=lib" "it installed"
else
	check "PREFIX=/usr is refused for a build with CMAKE_INSTALL_LIBDIR=lib, naming lib/$TRIPLET" \
		"$(tr '\n' ' ' < "$work/refused.log")" grep -q "CMAKE_INSTALL_LIBDIR is lib/$TRIPLET" "$work/refused.log"
fi
check "the refused install writes nothing" "$(find "$work/refused" -mindepth 1 | head -n 3)" \
	test -z "$(find "$work/refused" -mindepth 1)"

# 1. make install, under a umask that would hide every file from others.
touch "$work/stamp"
if ! (umask 077 && make -s -C "$ROOT" --no-print-directory install BUILD="$BUILD" DESTDIR="$root" \
	PREFIX=/usr) > "$log" 2>&1; then
	fail "make install DESTDIR PREFIX=/usr succeeds" "$(tail -n 5 "$log" | tr '\n' ' ')"
	exit 1
fi
pass "make install DESTDIR PREFIX=/usr succeeds"
hidden=$(cd "$root" && find . -mindepth 1 ! -path ./etc ! -path ./etc/keep.conf ! -type l \
	\( ! -perm -o=r -o -type d ! -perm -o=x \) | head -n 5 | tr '\n' ' ')
check "under umask 077 every installed file and directory is readable by all" "not: $hidden" \
	test -z "$hidden"
notexec=$(find "$root/usr/bin" -type f ! -perm 0755 | tr '\n' ' ')
check "installed programs have mode 0755" "not: $notexec" test -z "$notexec"
inbuild=$(find "$BUILD" -maxdepth 1 -newer "$work/stamp" \( -name 'install_manifest*' -o -name 'install-stage' \) | tr '\n' ' ')
check "make install writes no staging or manifest into the build directory" "$inbuild" test -z "$inbuild"

expected=(
	"usr/$LIBDIR/libhpu.so.$LIBVER"
	"usr/$LIBDIR/libhpu.so.1"
	"usr/$LIBDIR/libhpu.so"
	usr/include/hpu/hpu.h usr/include/hpu/hpu.hpp usr/include/hpu/hpu_rdma.h
	"usr/$LIBDIR/pkgconfig/hpu.pc"
	"usr/$LIBDIR/cmake/hpu/hpuConfig.cmake"
	"usr/$LIBDIR/cmake/hpu/hpuConfigVersion.cmake"
	"usr/$LIBDIR/cmake/hpu/hpuTargets.cmake"
	usr/bin/hpu-smi usr/bin/hpu-fwpack usr/bin/hpu-as usr/bin/hpu-train
	usr/share/man/man1/hpu-smi.1 usr/share/man/man1/hpu-fwpack.1
	usr/share/man/man1/hpu-as.1 usr/share/man/man1/hpu-train.1
	lib/firmware/hpu/hpu-h1-fw.bin
	"${UDEVDIR#/}/rules.d/70-hpu.rules"
	"usr/lib/$TRIPLET/libibverbs/libhpu-rdmav34.so"
	etc/libibverbs.d/hpu.driver
	"usr/src/hpu-$VERSION/dkms.conf"
	"usr/src/hpu-$VERSION/kernel/Kbuild"
	"usr/src/hpu-$VERSION/kernel/Makefile"
	"usr/src/hpu-$VERSION/include/uapi/drm/hpu_accel.h"
	"usr/src/hpu-$VERSION/include/uapi/rdma/hpu-abi.h"
	"usr/src/hpu-$VERSION/include/hw/hpu_regs.h"
	usr/share/hpu/install-manifest
)
PYDIR=usr/lib/python3/dist-packages/hpu_torch
if [ -f "$BUILD/python/hpu_torch/libhpu_torch.so" ]; then
	for f in libhpu_torch.so __init__.py core.py hpu.py optim.py random.py; do
		expected+=("$PYDIR/$f")
	done
fi
missing=""
for f in "${expected[@]}"; do
	[ -e "$root/$f" ] || missing="$missing $f"
done
check "every expected file is installed" "missing:$missing" test -z "$missing"
check "libhpu.so.1 is the SONAME link to libhpu.so.$LIBVER" "$(readlink "$root/usr/$LIBDIR/libhpu.so.1")" \
	test "$(readlink "$root/usr/$LIBDIR/libhpu.so.1")" = "libhpu.so.$LIBVER"
soname=$(objdump -p "$root/usr/$LIBDIR/libhpu.so.$LIBVER" 2>/dev/null | awk '$1 == "SONAME" { print $2 }')
check "libhpu's SONAME is libhpu.so.1" "SONAME '$soname'" test "$soname" = libhpu.so.1
nsrc=$(find "$ROOT/libhpu/kernels/src" -maxdepth 1 -name '*.s' | wc -l)
nbin=$(find "$root/usr/share/hpu/tpc" -name '*.tpcbin' 2>/dev/null | wc -l)
check "every TPC kernel of the library is installed" "$nbin binaries for $nsrc sources" \
	test "$nsrc" -gt 0 -a "$nsrc" = "$nbin"
check "hpu.driver names the provider for Debian's libibverbs" "$(cat "$root/etc/libibverbs.d/hpu.driver" 2>&1)" \
	test "$(cat "$root/etc/libibverbs.d/hpu.driver" 2>/dev/null)" = "driver hpu"
prov=$(bash "$ROOT/tools/rdma-provider/build.sh" --out "$BUILD/rdma-provider" --print-path 2>/dev/null)
check "the installed provider is the built one" "differs from ${prov:-(not built)}" \
	cmp -s "${prov:-/nonexistent}" "$root/usr/lib/$TRIPLET/libibverbs/libhpu-rdmav34.so"

# The udev rule: the accel nodes of devices bound to the driver of this
# tree (its HPU_DRIVER_NAME), group render, 0660.
drv=$(sed -n 's/^#define HPU_DRIVER_NAME[[:space:]]*"\(.*\)"$/\1/p' "$ROOT/kernel/hpu_drv.h")
rule=$(grep -v '^#' "$root/${UDEVDIR#/}/rules.d/70-hpu.rules" 2>/dev/null)
ok=1
for want in 'SUBSYSTEM=="accel"' 'KERNEL=="accel[0-9]*"' "DRIVERS==\"$drv\"" 'GROUP="render"' 'MODE="0660"'; do
	grep -qF "$want" <<< "$rule" || ok=0
done
check "the udev rule gives the $drv accel nodes to group render, mode 0660" "rule: $rule" test $ok = 1
if udevadm verify --help >/dev/null 2>&1; then
	check "udevadm verify accepts the rule" "udevadm verify failed" \
		udevadm verify --no-style "$root/${UDEVDIR#/}/rules.d/70-hpu.rules"
fi

# Every file under the root (but the one placed before) is in the manifest,
# so that make uninstall can remove it.
unlisted=$(cd "$root" && find . ! -type d ! -path ./etc/keep.conf ! -path ./usr/share/hpu/install-manifest |
	sed 's|^\.||' | sort | comm -23 - <(awk -F'\t' '$1 == "f" { print $3 }' "$MANIFEST" | sort))
check "the manifest lists every installed file" "unlisted: $(tr '\n' ' ' <<< "$unlisted")" test -z "$unlisted"

# 2. The installed tools, against the installed library.
out=$("$root/usr/bin/hpu-smi" --version 2>&1)
check "installed hpu-smi runs: version $VERSION, libhpu $LIBVER" "$out" \
	test "$out" = "hpu-smi $VERSION (libhpu $LIBVER)"
ourlib=$root/usr/$LIBDIR/libhpu.so.$LIBVER
lib=$(libhpu_of "$root/usr/bin/hpu-smi")
check "installed hpu-smi loads libhpu from the install" "libhpu.so.1 => $lib" test "$lib" = "$ourlib"
check "installed hpu-fwpack accepts the installed firmware" "hpu-fwpack --check failed" \
	"$root/usr/bin/hpu-fwpack" --check "$root/lib/firmware/hpu/hpu-h1-fw.bin" \
	--pubkey-file "$ROOT/firmware/keys/hpu-dev-ed25519.pub" > /dev/null
kern=$(find "$root/usr/share/hpu/tpc" -name '*.tpcbin' 2>/dev/null | sort | head -n 1)
check "installed hpu-as checks an installed TPC kernel" "hpu-as --check ${kern:-(none)} failed" \
	"$root/usr/bin/hpu-as" --check "${kern:-/nonexistent}" > /dev/null
for m in hpu-smi hpu-fwpack hpu-as hpu-train; do
	page=$root/usr/share/man/man1/$m.1
	warn=$(groff -man -ww -z -Tutf8 "$page" 2>&1)
	check "man page $m.1 formats without warnings" "$warn" test -f "$page" -a -z "$warn"
	check "man page $m.1 carries the version $VERSION" "no '\"hpu $VERSION\"' in .TH" \
		grep -q "^\.TH .*\"hpu $VERSION\"" "$page"
	# The NAME line is what whatis and apropos index (man-db's lexgrog, when installed).
	if command -v lexgrog > /dev/null; then
		whatis=$(lexgrog "$page" 2>&1)
		check "man page $m.1 has a NAME line lexgrog reads" "$whatis" grep -qF ": \"$m - " <<< "$whatis"
	fi
done
if [ -f "$BUILD/python/hpu_torch/libhpu_torch.so" ]; then
	lib=$(libhpu_of "$root/$PYDIR/libhpu_torch.so")
	check "installed hpu_torch extension loads libhpu from the install" "libhpu.so.1 => $lib" \
		test "$lib" = "$ourlib"
	out=$(PYTHONPATH=$root/usr/lib/python3/dist-packages /usr/bin/python3 -c \
		'import hpu_torch; print(hpu_torch.__file__)' 2>&1)
	check "python3 imports the installed hpu_torch" "$(tail -n 1 <<< "$out")" \
		test "$out" = "$root/$PYDIR/__init__.py"
fi

# Under another prefix hpu_torch goes where Debian's python3 looks there.
if [ -f "$BUILD/python/hpu_torch/libhpu_torch.so" ] && [ -x /usr/bin/python3 ]; then
	site=$(/usr/bin/python3 -c 'import sys; print("/usr/local/lib/python%d.%d/dist-packages" % sys.version_info[:2])')
	python3 "$ROOT/packaging/hpu-install.py" install --build "$BUILD" --prefix /usr/local \
		--destdir "$work/local" --only python --no-manifest > "$work/local.log" 2>&1
	check "PREFIX=/usr/local puts hpu_torch on python3's path ($site)" "$(find "$work/local" | head -n 8 | tr '\n' ' ')" \
		test -f "$work/local$site/hpu_torch/__init__.py" -a -f "$work/local$site/hpu_torch/libhpu_torch.so"
	check "python3's sys.path holds $site" "not in sys.path" \
		/usr/bin/python3 -c "import sys; sys.exit('$site' not in sys.path)"
fi

# 3. Programs built against the install.
cat > "$work/prog.c" <<'EOF'
#include <errno.h>
#include <stdio.h>
#include <hpu/hpu.h>

int main(void)
{
	uint32_t v = hpu_get_version();
	const char *e = hpu_strerror(-ENODEV);
	int loaded = hpu_driver_loaded();

	printf("%u.%u.%u\n", HPU_VERSION_MAJOR(v), HPU_VERSION_MINOR(v), HPU_VERSION_PATCH(v));
	if (v != HPU_API_VERSION || !e || !*e || loaded < 0) {
		fprintf(stderr, "version %#x, header %#x, strerror '%s', driver_loaded %d\n",
			v, HPU_API_VERSION, e ? e : "(null)", loaded);
		return 1;
	}
	return 0;
}
EOF
export PKG_CONFIG_PATH=$root/usr/$LIBDIR/pkgconfig
unset PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR
modver=$(pkg-config --modversion hpu 2>&1)
check "pkg-config hpu finds the installed hpu.pc, version $LIBVER" "$modver" test "$modver" = "$LIBVER"
flags=$(pkg-config --cflags --libs hpu 2>/dev/null)
inc=$(pkg-config --cflags-only-I hpu 2>/dev/null | sed 's/^ *-I//; s/ *$//')
check "pkg-config hpu's include directory is the installed one" "-I$inc" \
	test "$(realpath -m "${inc:-/nonexistent}")" = "$root/usr/include"
# A cross or staged build's way: the sysroot prepended once, not twice.
inc=$(PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/usr/$LIBDIR/pkgconfig PKG_CONFIG_PATH='' \
	pkg-config --cflags-only-I hpu 2>/dev/null | sed 's/^ *-I//; s/ *$//')
check "pkg-config hpu with PKG_CONFIG_SYSROOT_DIR gives the installed include directory" "-I$inc" \
	test "$(realpath -m "${inc:-/nonexistent}")" = "$root/usr/include"
# shellcheck disable=SC2086 # the flags are words
if cc -Wall -Wextra -Werror -o "$work/prog-pc" "$work/prog.c" $flags > "$work/cc.log" 2>&1; then
	pass "a C program builds with pkg-config hpu"
	out=$(LD_LIBRARY_PATH=$root/usr/$LIBDIR "$work/prog-pc" 2>&1)
	check "the pkg-config program runs against the installed libhpu" "$out" \
		test "$out" = "$LIBVER"
	lib=$(LD_LIBRARY_PATH=$root/usr/$LIBDIR libhpu_of "$work/prog-pc")
	check "the pkg-config program loads libhpu from the install" "libhpu.so.1 => $lib" \
		test "$lib" = "$ourlib"
else
	fail "a C program builds with pkg-config hpu" "$(head -n 5 "$work/cc.log" | tr '\n' ' ')"
fi

mkdir -p "$work/cmake-src"
cat > "$work/cmake-src/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.20)
project(hpu_consumer CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(hpu 1 REQUIRED)
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE hpu::hpu)
EOF
cat > "$work/cmake-src/main.cpp" <<'EOF'
#include <cstdio>
#include <hpu/hpu.hpp>

int main()
{
    const std::uint32_t v = hpu_get_version();
    std::printf("%u.%u.%u\n", HPU_VERSION_MAJOR(v), HPU_VERSION_MINOR(v), HPU_VERSION_PATCH(v));
    return v == HPU_API_VERSION && hpu_driver_loaded() >= 0 ? 0 : 1;
}
EOF
if cmake -S "$work/cmake-src" -B "$work/cmake-build" -G "Unix Makefiles" -DCMAKE_PREFIX_PATH="$root/usr" \
	-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF > "$work/cmake.log" 2>&1 &&
	cmake --build "$work/cmake-build" > "$work/build.log" 2>&1; then
	pass "a C++ program builds with find_package(hpu) and hpu::hpu"
	dir=$(sed -n 's/^hpu_DIR:PATH=//p' "$work/cmake-build/CMakeCache.txt")
	check "find_package(hpu) takes the installed package" "hpu_DIR=$dir" \
		test "$dir" = "$root/usr/$LIBDIR/cmake/hpu"
	out=$("$work/cmake-build/consumer" 2>&1)
	check "the find_package program runs against the installed libhpu" "$out" test "$out" = "$LIBVER"
	lib=$(libhpu_of "$work/cmake-build/consumer")
	check "the find_package program loads libhpu from the install" "libhpu.so.1 => $lib" \
		test "$lib" = "$ourlib"
else
	fail "a C++ program builds with find_package(hpu) and hpu::hpu" \
		"$(tail -n 8 "$work/cmake.log" "$work/build.log" 2>/dev/null | tr '\n' ' ')"
fi

# 4. The DKMS tree.
src=$root/usr/src/hpu-$VERSION
conf=$(kernel_source_dir=/KDIR bash -c '
	set -e; . "$1"
	echo "$PACKAGE_NAME $PACKAGE_VERSION $AUTOINSTALL ${#BUILT_MODULE_NAME[@]}"
	for i in "${!BUILT_MODULE_NAME[@]}"; do
		echo "${BUILT_MODULE_NAME[$i]} ${BUILT_MODULE_LOCATION[$i]} ${DEST_MODULE_LOCATION[$i]}"
	done
	echo "${MAKE[0]}"' _ "$src/dkms.conf" 2>&1)
want="hpu $VERSION yes 3
hpu kernel/ /updates/dkms
hpu_en kernel/ /updates/dkms
hpu_ib kernel/ /updates/dkms
make -C kernel KDIR=/KDIR HPU_DKMS=1 modules"
check "dkms.conf: hpu $VERSION, AUTOINSTALL, hpu hpu_en hpu_ib, built against the kernel's headers" \
	"$(echo "$conf" | tr '\n' '|')" test "$conf" = "$want"
missing=""
for m in hpu hpu_en hpu_ib; do
	grep -q "^obj-m += $m\.o" "$src/kernel/Kbuild" 2>/dev/null || missing="$missing obj-m:$m"
	objs=$(awk -v m="$m-y" '$1 == m { on = 1; next } on { if ($1 ~ /\.o$/) print $1; if ($0 !~ /\\$/) on = 0 }' \
		"$src/kernel/Kbuild" 2>/dev/null)
	[ -n "$objs" ] || missing="$missing $m-y"
	for o in $objs; do
		[ -f "$src/kernel/${o%.o}.c" ] || missing="$missing kernel/${o%.o}.c"
	done
done
if git -C "$ROOT" rev-parse --git-dir > /dev/null 2>&1; then
	ksrc=$(git -C "$ROOT" ls-files 'kernel/*.[ch]' | grep -v '^kernel/tests/')
	untracked=$(cd "$src" && find . -type f ! -name dkms.conf | sed 's|^\./||' | sort |
		comm -23 - <(git -C "$ROOT" ls-files | sort) | tr '\n' ' ')
	check "the DKMS tree holds only files git tracks" "untracked: $untracked" test -z "$untracked"
else
	ksrc=$(cd "$ROOT" && printf '%s\n' kernel/*.[ch] | grep -v '\.mod\.c$')
fi
for f in $ksrc; do
	[ -f "$src/$f" ] || missing="$missing $f"
done
check "the DKMS tree holds every source of hpu, hpu_en and hpu_ib" "missing:$missing" test -z "$missing"
check "hpu.ko autoloads: a PCI MODULE_DEVICE_TABLE in the DKMS tree" "none in hpu_drv.c" \
	grep -q "^MODULE_DEVICE_TABLE(pci," "$src/kernel/hpu_drv.c"
for f in hpu_en_main.c hpu_ib_main.c; do
	check "${f%_main.c}.ko autoloads: an auxiliary MODULE_DEVICE_TABLE in the DKMS tree" "none in $f" \
		grep -q "^MODULE_DEVICE_TABLE(auxiliary," "$src/kernel/$f"
done
if [ "${HPU_TEST_DKMS_BUILD:-0}" = 1 ]; then
	kdir=$(find /lib/modules -mindepth 2 -maxdepth 2 -path '/lib/modules/6.12*/build' ! -path '*-hpu-debug/*' | sort | head -n 1)
	cp -a "$src" "$work/dkms-build"
	if (cd "$work/dkms-build" && eval "$(kernel_source_dir=$kdir bash -c '. ./dkms.conf; echo "${MAKE[0]}"')") \
		> "$work/kbuild.log" 2>&1; then
		ko=$(find "$work/dkms-build/kernel" -maxdepth 1 -name '*.ko' -printf '%f\n' | sort | tr '\n' ' ')
		check "the DKMS tree builds hpu.ko, hpu_en.ko, hpu_ib.ko and no test module against $kdir" "built: $ko" \
			test "$ko" = "hpu.ko hpu_en.ko hpu_ib.ko "
		alias=$(modinfo -F alias "$work/dkms-build/kernel/hpu.ko" 2>&1)
		check "hpu.ko's modalias matches the PCI id 1234:4850" "$alias" grep -q '^pci:v00001234d00004850' <<< "$alias"
	else
		fail "the DKMS tree builds against $kdir" "$(grep -m3 -E 'error|Error' "$work/kbuild.log" | tr '\n' ' ')"
	fi
fi

# 5. Install again: what the previous install listed and this one does not
# (a file of an older version) goes; then uninstall.
cp "$MANIFEST" "$work/manifest.1"
echo old > "$root/usr/bin/hpu-old-tool"
printf 'f\ttools\t/usr/bin/hpu-old-tool\n' >> "$MANIFEST"
if make -s -C "$ROOT" --no-print-directory install BUILD="$BUILD" DESTDIR="$root" PREFIX=/usr \
	> "$log" 2>&1; then
	check "installing again removes a file only the previous install had" "hpu-old-tool is still there" \
		test ! -e "$root/usr/bin/hpu-old-tool"
	check "installing again writes the same manifest" "$(diff "$work/manifest.1" "$MANIFEST" | head -n 4 | tr '\n' ' ')" \
		cmp -s "$work/manifest.1" "$MANIFEST"
else
	fail "make install over an install succeeds" "$(tail -n 5 "$log" | tr '\n' ' ')"
fi
if make -s -C "$ROOT" --no-print-directory uninstall BUILD="$BUILD" DESTDIR="$root" PREFIX=/usr \
	> "$log" 2>&1; then
	pass "make uninstall DESTDIR PREFIX=/usr succeeds"
	left=$(cd "$root" && find . -mindepth 1 | sort | tr '\n' ' ')
	check "make uninstall leaves only what was there before" "left: $left" \
		test "$left" = "./etc ./etc/keep.conf "
else
	fail "make uninstall DESTDIR PREFIX=/usr succeeds" "$(tail -n 5 "$log" | tr '\n' ' ')"
fi

# 6. Failed installs. A file where the man pages' directory would be: the
# directory cannot be created, so nothing may be copied.
rm -rf "$root" && mkdir -p "$root/usr/share"
echo blocker > "$root/usr/share/man"
if "${INSTALL[@]}" "$BUILD" --prefix /usr --destdir "$root" --only tools > "$log" 2>&1; then
	fail "an install that cannot create a directory fails" "it succeeded"
else
	left=$(cd "$root" && find . -mindepth 1 | sort | tr '\n' ' ')
	check "an install that cannot create a directory fails and copies nothing" "left: $left" \
		test "$left" = "./usr ./usr/share ./usr/share/man "
	check "... and names the directory" "$(tr '\n' ' ' < "$log")" grep -qF "$root/usr/share/man" "$log"
fi
# A directory where hpu-smi goes: runtime and dev are copied before tools
# fails; the manifest must list them so that uninstall removes them.
rm -rf "$root" && mkdir -p "$root/usr/bin/hpu-smi"
if "${INSTALL[@]}" "$BUILD" --prefix /usr --destdir "$root" --only runtime,dev,tools > "$log" 2>&1; then
	fail "an install that fails half-way fails" "it succeeded"
else
	check "an install that fails half-way lists libhpu, copied before, in its manifest" \
		"$(head -n 3 "$MANIFEST" 2>&1 | tr '\n' ' ')" grep -qs "/usr/$LIBDIR/libhpu.so.$LIBVER\$" "$MANIFEST"
	python3 "$ROOT/packaging/hpu-install.py" uninstall --prefix /usr --destdir "$root" > "$log" 2>&1
	left=$(cd "$root" && find . -mindepth 1 | sort | tr '\n' ' ')
	check "make uninstall after a failed install leaves only what was there before" "left: $left" \
		test "$left" = "./usr ./usr/bin ./usr/bin/hpu-smi "
fi

# 7. The Debian package's symbols file (packaging/debian/libhpu1.symbols)
# lists exactly what libhpu.so.1 exports, with symbol versions: make deb
# fails on a difference, and make test finds it before anyone packages.
syms=$ROOT/packaging/debian/libhpu1.symbols
built=$(nm -D --defined-only --with-symbol-versions "$BUILD/libhpu/libhpu.so.$LIBVER" 2>/dev/null |
	awk '{ n = $3; sub(/@@/, "@", n); if (n !~ /@/) n = n "@" n; print n }' | sort)
listed=$(sed -n 's/^ \([^ ]*@[^ ]*\) .*/\1/p' "$syms" | sort)
missing=$(comm -23 <(echo "$built") <(echo "$listed") | tr '\n' ' ')
extra=$(comm -13 <(echo "$built") <(echo "$listed") | tr '\n' ' ')
check "libhpu1.symbols lists every symbol libhpu.so.1 exports, and no other" \
	"exported but not listed: ${missing:-none}; listed but not exported: ${extra:-none}" \
	test -n "$built" -a -z "$missing$extra"
[ $fails = 0 ]

#!/bin/bash
# SPDX-License-Identifier: MIT
#
# make deb: the Debian packages of the hpu stack (Documentation/install.md),
# made with debhelper from a tree `make all` has built, then checked with
# lintian (an error or a warning that packaging/debian/*.lintian-overrides
# does not explain fails the build).
#
#   packaging/build-deb.sh BUILD OUTDIR [VERSION]
#
# BUILD is the build directory, OUTDIR gets the .deb files (and nothing
# else: it is emptied of .deb files first), VERSION defaults to the
# top-level VERSION file (the packages are native: no Debian revision).
#
# Copyright (c) 2026 The hpu authors
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() { printf 'build-deb: error: %s\n' "$*" >&2; exit 1; }
say() { printf 'build-deb: %s\n' "$*"; }

[ $# -ge 2 ] || die "usage: build-deb.sh BUILD OUTDIR [VERSION]"
build=$(cd "$1" && pwd) || die "no build directory $1"
mkdir -p "$2"
out=$(cd "$2" && pwd)
ver=${3:-$(head -n1 "$ROOT/VERSION")}
[[ $ver =~ ^[0-9][A-Za-z0-9.+~]*$ ]] || die "version '$ver': digits first, then letters, digits, . + ~"
# libhpu1.symbols says which package version added each symbol: packages
# built at an older version would depend on a libhpu1 that cannot exist.
newest=$(awk '$1 ~ /@/ { print $2 }' "$ROOT/packaging/debian/libhpu1.symbols" | sort -V | tail -n1)
if [ -n "$newest" ] && dpkg --compare-versions "$ver" lt "$newest"; then
	die "version $ver is older than $newest, which packaging/debian/libhpu1.symbols names for a symbol"
fi
for t in dpkg-buildpackage dh dh_dkms dh_python3 chrpath lintian; do
	command -v $t >/dev/null || die "$t missing: run make bootstrap"
done
[ -e "$build/libhpu/libhpu.so.1" ] || die "$build has no libhpu: run make all first"

# The package build sees only debian/: the sources and the build are read
# through HPU_SRC and HPU_BUILD.
work=$out/work
rm -rf "$work" && mkdir -p "$work/hpu-$ver"
cp -a "$ROOT/packaging/debian" "$work/hpu-$ver/debian"
rev=$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo "an unversioned tree")
when=$(git -C "$ROOT" log -1 --format=%cD 2>/dev/null || date -R)
dirty="."
[ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ] &&
	dirty=$'\n    (with changes not committed).'

cat > "$work/hpu-$ver/debian/changelog" <<CHANGELOG
hpu ($ver) unstable; urgency=medium

  * Packages of the hpu stack built from git commit $rev$dirty

 -- The hpu authors <hpu-devel@example.org>  $when
CHANGELOG

say "building hpu $ver from $build"
(cd "$work/hpu-$ver" &&
	HPU_SRC=$ROOT HPU_BUILD=$build HPU_VERSION=$ver \
	dpkg-buildpackage -b -uc -us) > "$work/build.log" 2>&1 ||
	{ tail -n 40 "$work/build.log"; die "dpkg-buildpackage failed (log: $work/build.log)"; }

changes=$(ls "$work"/*.changes)
say "lintian (overrides: packaging/debian/*.lintian-overrides)"
# One run: infos are shown, only errors and warnings set the exit status.
rc=0
report=$(lintian --fail-on error,warning --display-info --tag-display-limit 0 "$changes" 2>&1) || rc=$?
grep -v '^running with root privileges' <<< "$report" || true
[ $rc = 0 ] || die "lintian found errors or warnings (above)"
rm -f "$out"/*.deb
mv "$work"/*.deb "$out"/
ls -1 "$out"/*.deb | sed 's/^/build-deb: made /'

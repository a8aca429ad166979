#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# make install, make uninstall and make dkms-source (Documentation/install.md).
#
#   hpu-install.py install --build DIR [--prefix P] [--destdir D]
#                          [--only PARTS | --without PARTS] [--no-manifest]
#   hpu-install.py uninstall [--prefix P] [--destdir D]
#
# PARTS is a comma-separated list of:
#   runtime   libhpu.so.1                                  (CMake component)
#   dev       headers, libhpu.so, hpu.pc, CMake package     (CMake component)
#   tools     hpu-smi, hpu-fwpack, hpu-as, TPC kernel binaries, man pages
#   firmware  /lib/firmware/hpu/hpu-h1-fw.bin               (CMake component)
#   python    the hpu_torch package (if the build has it)   (CMake component)
#   demo      hpu-train and its man page                    (CMake component)
#   udev      70-hpu.rules
#   rdma      the rdma-core provider and /etc/libibverbs.d/hpu.driver
#   dkms      the driver's source and dkms.conf in /usr/src/hpu-<version>/
#
# Every part is first installed into a temporary staging tree (the CMake
# components with `cmake --install --component`), then copied into DESTDIR:
# each file replaced by a rename, so a running program keeps its old copy.
# Nothing is copied unless every destination directory can be written or
# created. Files get mode 0644 (0755 if executable) and created directories
# 0755 whatever the umask. The files copied and the directories created are
# written to PREFIX/share/hpu/install-manifest, also when the install fails
# half-way, so that uninstall can remove exactly those (and the directories
# once empty). Installing again removes what the previous install of the
# same parts put there and this one does not (an upgrade leaves no stale
# files). The build directory is only read.
#
# Copyright (c) 2026 The hpu authors

import argparse
import filecmp
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
CMAKE_PARTS = ("runtime", "dev", "tools", "firmware", "python", "demo")
PARTS = CMAKE_PARTS + ("udev", "rdma", "dkms")
MANIFEST = "share/hpu/install-manifest"
UDEV_RULES = "70-hpu.rules"
# libibverbs appends -rdmav<private ABI>.so to a provider's name
# (tools/rdma-provider/build.sh builds for ABI 34).
PROVIDER = "libhpu-rdmav34.so"


def die(msg):
    print(f"hpu-install: error: {msg}", file=sys.stderr)
    sys.exit(1)


def say(msg):
    print(f"hpu-install: {msg}")


def files(n):
    return f"{n} file" if n == 1 else f"{n} files"


VERSION_OVERRIDE = None


def version():
    if VERSION_OVERRIDE:
        return VERSION_OVERRIDE
    with open(os.path.join(ROOT, "VERSION"), encoding="utf-8") as f:
        v = f.readline().strip()
    if not v:
        die(f"{ROOT}/VERSION is empty")
    return v


def output(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        return None
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else None


def multiarch():
    m = output(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"]) or output(["gcc", "-print-multiarch"])
    if not m:
        die("cannot tell the multiarch triplet (dpkg-architecture, gcc -print-multiarch)")
    return m


def udev_rules_dir(prefix):
    """Under /usr (the distribution's layout) udev's own directory, under
    another prefix /etc's."""
    if prefix != "/usr":
        return "/etc/udev/rules.d"
    return (output(["pkg-config", "--variable=udevdir", "udev"]) or "/lib/udev") + "/rules.d"


def provider_dir(prefix):
    """Debian's libibverbs loads "driver NAME" from its own directory; a
    provider elsewhere is named by its absolute path in the .driver file."""
    if prefix == "/usr":
        return f"/usr/lib/{multiarch()}/libibverbs", "hpu"
    d = f"{prefix}/lib/libibverbs"
    return d, f"{d}/{PROVIDER.split('-rdmav')[0]}"


def python_site(prefix):
    """Debian's python3 reads lib/python3/dist-packages under /usr only;
    under another prefix it reads lib/python3.X/dist-packages."""
    if prefix == "/usr":
        return None
    v = output(["/usr/bin/python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
    return f"lib/python{v}/dist-packages" if v else None


def put(src, dst):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(src, dst)
    os.chmod(dst, 0o644)


def write(path, text):
    """Writes a file of the script's own, mode 0644 whatever the umask."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, 0o644)


def build_libdir(build):
    try:
        with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8") as f:
            for line in f:
                if line.startswith("CMAKE_INSTALL_LIBDIR:"):
                    return line.split("=", 1)[1].strip()
    except FileNotFoundError:
        pass
    return None


def check_libdir(build):
    """Under /usr, Debian keeps libraries in /usr/lib/<triplet>. The library
    directory of the install rules, of hpu.pc and of the CMake package and
    the RPATHs of the tools are fixed when CMake configures the build;
    cmake --install can change the prefix only. So a build configured with
    another LIBDIR is refused rather than installed half in the wrong place."""
    want = f"lib/{multiarch()}"
    have = build_libdir(build)
    if have != want:
        die(f"PREFIX=/usr needs a build whose CMAKE_INSTALL_LIBDIR is {want} (Debian's "
            f"multiarch directory), but {build} has {have or 'none'}; reconfigure it: "
            f"cmake -DCMAKE_INSTALL_LIBDIR={want} {build}, then make install again")


def stage_cmake(build, prefix, part, stage):
    env = dict(os.environ, DESTDIR=stage)
    r = subprocess.run(["cmake", "--install", build, "--prefix", prefix, "--component", part],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       check=False)
    # cmake --install lists what it installed in the build directory; the
    # staging tree is the list here, so the build is left as it was.
    manifest = os.path.join(build, f"install_manifest_{part}.txt")
    if os.path.exists(manifest):
        os.unlink(manifest)
    if r.returncode != 0:
        die(f"cmake --install --component {part} failed:\n{r.stdout}")
    site = python_site(prefix)
    old = os.path.join(stage + prefix, "lib/python3/dist-packages")
    if part == "python" and site and os.path.isdir(old):
        new = os.path.join(stage + prefix, site)
        os.makedirs(os.path.dirname(new), exist_ok=True)
        os.rename(old, new)
        for d in (os.path.dirname(old), os.path.dirname(os.path.dirname(old))):
            if not os.listdir(d):
                os.rmdir(d)


def stage_udev(prefix, stage):
    put(os.path.join(ROOT, "packaging/udev", UDEV_RULES),
        stage + os.path.join(udev_rules_dir(prefix), UDEV_RULES))


def stage_rdma(build, prefix, stage):
    out = os.path.join(build, "rdma-provider")
    so = output(["bash", os.path.join(ROOT, "tools/rdma-provider/build.sh"), "--out", out,
                 "--print-path"])
    if not so or not os.path.isfile(so):
        die(f"the rdma-core provider in {out} is not built or not current: run make "
            "rdma-provider, or install without it (make install INSTALL_WITHOUT=rdma)")
    d, name = provider_dir(prefix)
    put(so, stage + f"{d}/{PROVIDER}")
    write(stage + "/etc/libibverbs.d/hpu.driver", f"driver {name}\n")


DKMS_GLOBS = ("kernel/*.c", "kernel/*.h", "include/hw/*.h", "include/uapi/drm/*.h",
              "include/uapi/rdma/*.h")


def dkms_sources():
    """The driver's sources as dkms.conf builds them: kernel/ (Kbuild's
    sources; kernel/tests/ is test-only) and the headers it includes. In a
    git checkout only tracked files (a scratch file in kernel/ stays out);
    otherwise (an exported tree) what the patterns match."""
    names = ["kernel/Kbuild", "kernel/Makefile", "LICENSES/GPL-2.0-only.txt", "LICENSES/MIT.txt"]
    tracked = None
    if os.path.exists(os.path.join(ROOT, ".git")):
        r = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--", *DKMS_GLOBS],
                           capture_output=True, text=True, check=False)
        if r.returncode == 0:
            # (a file deleted but not yet committed is not shipped)
            tracked = sorted(p for p in r.stdout.split("\0")
                             if p and os.path.isfile(os.path.join(ROOT, p)))
    if tracked is not None:
        # ls-files' globs match across "/": keep kernel/tests/ out.
        return names + [p for p in tracked if not p.startswith("kernel/") or p.count("/") == 1]
    for pat in DKMS_GLOBS:
        for p in sorted(glob.glob(os.path.join(ROOT, pat))):
            if not p.endswith(".mod.c"):  # Kbuild's output in a built tree
                names.append(os.path.relpath(p, ROOT))
    return names


def stage_dkms(stage):
    v = version()
    top = stage + f"/usr/src/hpu-{v}"
    for rel in dkms_sources():
        put(os.path.join(ROOT, rel), os.path.join(top, rel))
    with open(os.path.join(ROOT, "packaging/dkms/dkms.conf.in"), encoding="utf-8") as f:
        write(os.path.join(top, "dkms.conf"), f.read().replace("@VERSION@", v))


def walk(tree):
    """(directories, files) of a staged tree, as absolute target paths;
    symbolic links count as files."""
    dirs, found = [], []
    for top, dnames, fnames in os.walk(tree):
        rel = "/" + os.path.relpath(top, tree) if top != tree else "/"
        for d in sorted(dnames):
            p = os.path.join(top, d)
            (found if os.path.islink(p) else dirs).append(os.path.normpath(os.path.join(rel, d)))
        for n in sorted(fnames):
            found.append(os.path.normpath(os.path.join(rel, n)))
    return dirs, found


def read_manifest(path):
    entries = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                kind, part, p = line.rstrip("\n").split("\t", 2)
                entries.append((kind, part, p))
    except FileNotFoundError:
        return None
    return entries


def replace(src, dst):
    """Copies src over dst by a rename (a running program keeps its copy)."""
    tmp = dst + ".hpu-install-tmp"
    if os.path.lexists(tmp):
        os.unlink(tmp)
    if os.path.islink(src):
        os.symlink(os.readlink(src), tmp)
    else:
        shutil.copy2(src, tmp)
        # Readable by all whatever the umask the staged copy was made under.
        os.chmod(tmp, 0o755 if os.stat(src).st_mode & 0o111 else 0o644)
    if os.path.isdir(dst) and not os.path.islink(dst):
        os.unlink(tmp)
        die(f"{dst} is a directory, cannot install a file there")
    os.replace(tmp, dst)


def remove_empty_dirs(destdir, dirs):
    """rmdir each directory once empty, deepest first; returns those left."""
    left = []
    for d in sorted(set(dirs), key=lambda p: (-p.count("/"), p)):
        full = destdir + d
        if os.path.isdir(full) and not os.listdir(full):
            os.rmdir(full)
        elif os.path.isdir(full):
            left.append(d)
    return left


def unwritable(destdir, dirs):
    """The directories of dirs (target paths) that can be neither written nor
    created: for each, its nearest existing ancestor must be a writable
    directory."""
    bad = set()
    for d in set(dirs):
        p = destdir + d
        while not os.path.lexists(p):
            p = os.path.dirname(p)
        if not os.path.isdir(p) or not os.access(p, os.W_OK | os.X_OK):
            bad.add(p)
    return sorted(bad)


def makedirs(destdir, d, part, new):
    """Creates d and its missing parents, mode 0755 whatever the umask; each
    is recorded in new for the manifest."""
    missing = []
    while not os.path.isdir(destdir + d):
        if d == "/":  # DESTDIR itself is new: not listed, uninstall keeps it
            os.makedirs(destdir)
            os.chmod(destdir, 0o755)
            break
        missing.append(d)
        d = os.path.dirname(d)
    for m in reversed(missing):
        os.mkdir(destdir + m)
        os.chmod(destdir + m, 0o755)
        new.append(("d", part, m))


def write_manifest(destdir, prefix, entries):
    mpath = destdir + os.path.join(prefix, MANIFEST)
    makedirs(destdir, os.path.dirname(os.path.join(prefix, MANIFEST)), "manifest", entries)
    write(mpath + ".tmp", "".join("\t".join(e) + "\n"
                                  for e in sorted(set(entries), key=lambda e: (e[2], e[0]))))
    os.replace(mpath + ".tmp", mpath)


def dkms_changed(destdir, old, tree):
    """The versions whose /usr/src/hpu-<v>/ this install changes (a file
    added, replaced by different content, or gone): dkms keeps the modules
    it built from the old content until that version is removed."""
    def version_of(p):
        m = re.match(r"/usr/src/hpu-([^/]+)/", p)
        return m.group(1) if m else None
    staged = walk(tree)[1]
    changed = set()
    for f in staged:
        dst = destdir + f
        if not os.path.isfile(dst) or not filecmp.cmp(tree + f, dst, shallow=False):
            changed.add(version_of(f))
    for k, part, p in old:
        if k == "f" and part == "dkms" and p not in staged:
            changed.add(version_of(p))
    return sorted(v for v in changed if v)


def install(a):
    parts = select_parts(a.only, a.without)
    build = os.path.realpath(a.build)
    cmake = [p for p in parts if p in CMAKE_PARTS]
    if cmake and not os.path.isfile(os.path.join(build, "cmake_install.cmake")):
        die(f"{build} is not a configured build directory: run make first")
    if a.prefix == "/usr" and any(p in ("runtime", "dev", "python", "tools", "demo") for p in cmake):
        check_libdir(build)
    stage = tempfile.mkdtemp(prefix="hpu-install-")
    try:
        install_staged(a, parts, build, stage)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def install_staged(a, parts, build, stage):
    cmake = [p for p in parts if p in CMAKE_PARTS]
    if cmake:
        # An install() rule without a component would escape the parts.
        stray = os.path.join(stage, "Unspecified")
        stage_cmake(build, a.prefix, "Unspecified", stray)
        if os.path.isdir(stray) and walk(stray)[1]:
            die("install() rules without a COMPONENT install: " + ", ".join(walk(stray)[1]))
        shutil.rmtree(stray, ignore_errors=True)
    for part in parts:
        tree = os.path.join(stage, part)
        os.makedirs(tree)
        if part in CMAKE_PARTS:
            stage_cmake(build, a.prefix, part, tree)
        elif part == "udev":
            stage_udev(a.prefix, tree)
        elif part == "rdma":
            stage_rdma(build, a.prefix, tree)
        elif part == "dkms":
            stage_dkms(tree)

    destdir = a.destdir.rstrip("/")
    mpath = destdir + os.path.join(a.prefix, MANIFEST)
    old = [] if a.no_manifest else (read_manifest(mpath) or [])
    # Every directory a file goes into (and the manifest's) must be writable
    # or creatable before anything is copied.
    targets = [os.path.dirname(f) for part in parts for f in walk(os.path.join(stage, part))[1]]
    if not a.no_manifest:
        targets.append(os.path.dirname(os.path.join(a.prefix, MANIFEST)))
    bad = unwritable(destdir, targets)
    if bad:
        die("nothing installed: cannot write or create files in " + ", ".join(bad) +
            " (install as root, or choose PREFIX or DESTDIR)")
    if "dkms" in parts and not destdir:
        # Same version, new sources (a rebuild of an unchanged VERSION): dkms
        # would go on using the modules it built from the old ones.
        for v in dkms_changed(destdir, old, os.path.join(stage, "dkms")):
            dkms_remove(v)

    new = []
    owner = {}
    done = False
    try:
        for part in parts:
            tree = os.path.join(stage, part)
            dirs, staged = walk(tree)
            for d in dirs:
                makedirs(destdir, d, part, new)
            for f in staged:
                if f in owner:
                    die(f"{f} is installed by both {owner[f]} and {part}")
                owner[f] = part
                replace(tree + f, destdir + f)
                new.append(("f", part, f))
        done = True
    finally:
        if not done and not a.no_manifest:
            # What is there now: the previous install's files and what this
            # one copied, so that make uninstall removes them all.
            print("hpu-install: error: the install stopped half-way; "
                  f"{mpath} lists what is installed (make uninstall removes it)",
                  file=sys.stderr)
            write_manifest(destdir, a.prefix, old + new)

    # What the previous install of these parts put there and this one did not.
    stale = [p for k, part, p in old if k == "f" and part in parts and p not in owner]
    if not destdir:
        for p in stale:
            # A new version's DKMS tree replaced an older one: dkms forgets
            # the old version (and its built modules) before its source goes.
            m = re.fullmatch(r"/usr/src/hpu-([^/]+)/dkms\.conf", p)
            if m:
                dkms_remove(m.group(1))
    for p in stale:
        if os.path.lexists(destdir + p):
            os.unlink(destdir + p)
    kept = [e for e in old if e[0] == "f" and e[1] not in parts and e[2] not in owner]
    olddirs = {p: part for k, part, p in old if k == "d"}
    newdirs = {p for k, _, p in new if k == "d"}
    left = set(remove_empty_dirs(destdir, [p for p in olddirs if p not in newdirs]))
    new += [("d", olddirs[p], p) for p in olddirs if p in left]
    new += kept
    if stale:
        say(f"removed {files(len(stale))} of the previous install")

    if not a.no_manifest:
        write_manifest(destdir, a.prefix, new)
    say(f"installed {files(len(owner))} ({', '.join(parts)}) into {destdir or '/'}")
    if not destdir:
        after_change(parts)
        if "dkms" in parts:
            say(f"now build and load the driver: dkms install hpu/{version()} && modprobe hpu")


def after_change(parts):
    """On the live system (no DESTDIR): refresh ld.so's cache and udev's rules."""
    if "runtime" in parts and shutil.which("ldconfig"):
        subprocess.run(["ldconfig"], check=False)
    if "udev" in parts and shutil.which("udevadm") and os.path.exists("/run/udev/control"):
        subprocess.run(["udevadm", "control", "--reload-rules"], check=False)
        subprocess.run(["udevadm", "trigger", "--action=change", "--subsystem-match=accel"],
                       check=False)


def dkms_remove(v):
    """Unregisters hpu/v from dkms (removing the modules it built), if known."""
    if shutil.which("dkms") and output(["dkms", "status", "-m", "hpu", "-v", v]):
        say(f"dkms remove -m hpu -v {v} --all")
        subprocess.run(["dkms", "remove", "-m", "hpu", "-v", v, "--all"], check=False)


def uninstall(a):
    destdir = a.destdir.rstrip("/")
    mpath = destdir + os.path.join(a.prefix, MANIFEST)
    entries = read_manifest(mpath)
    if entries is None:
        die(f"no {mpath}: nothing was installed there by make install "
            f"(PREFIX={a.prefix}, DESTDIR={a.destdir or 'empty'})")
    parts = {part for _, part, _ in entries}
    if not destdir:
        # Modules dkms built from the source removed below would be orphaned.
        for _, _, p in entries:
            m = re.fullmatch(r"/usr/src/hpu-([^/]+)/dkms\.conf", p)
            if m:
                dkms_remove(m.group(1))
    n = 0
    for kind, _, p in entries:
        if kind == "f" and os.path.lexists(destdir + p):
            os.unlink(destdir + p)
            n += 1
    os.unlink(mpath)
    left = remove_empty_dirs(destdir, [p for k, _, p in entries if k == "d"])
    say(f"removed {files(n)} from {destdir or '/'}")
    for d in left:
        say(f"kept {destdir + d}: it holds files make install did not put there")
    if not destdir:
        after_change(parts)


def select_parts(only, without):
    def parse(s):
        names = [p for p in (s or "").replace(" ", ",").split(",") if p]
        bad = [p for p in names if p not in PARTS]
        if bad:
            die(f"unknown part(s) {', '.join(bad)}; parts: {', '.join(PARTS)}")
        return names
    if only and without:
        die("--only and --without exclude each other")
    if only:
        return [p for p in PARTS if p in parse(only)]
    return [p for p in PARTS if p not in parse(without)]


def main():
    ap = argparse.ArgumentParser(description="Install or remove the hpu stack.")
    ap.add_argument("action", choices=["install", "uninstall"])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--prefix", default="/usr/local")
    ap.add_argument("--destdir", default="")
    ap.add_argument("--only", help="comma-separated parts: " + ", ".join(PARTS))
    ap.add_argument("--without", help="comma-separated parts to leave out")
    ap.add_argument("--version", dest="pkg_version",
                    help="the package version (default: the top-level VERSION file; "
                    "make deb passes its DEB_VERSION)")
    ap.add_argument("--no-manifest", action="store_true",
                    help="write no manifest (for a package build: make deb)")
    a = ap.parse_args()
    if a.pkg_version is not None:
        if not re.fullmatch(r"[0-9][A-Za-z0-9.+~]*", a.pkg_version):
            die(f"--version {a.pkg_version!r}: a version starts with a digit and has "
                "only letters, digits and . + ~")
        global VERSION_OVERRIDE  # pylint: disable=global-statement
        VERSION_OVERRIDE = a.pkg_version
    a.prefix = os.path.normpath(a.prefix)
    if not a.prefix.startswith("/"):
        die(f"PREFIX must be absolute, not {a.prefix}")
    if a.destdir and not a.destdir.startswith("/"):
        a.destdir = os.path.abspath(a.destdir)
    try:
        if a.action == "install":
            install(a)
        else:
            uninstall(a)
    except OSError as e:  # e.g. no permission to write under PREFIX: run as root
        die(str(e))


if __name__ == "__main__":
    main()

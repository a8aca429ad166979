#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Checks that keep the documentation and the licence files from drifting:
#  - the file table of Documentation/driver/hpu.md names exactly the .c and
#    .h files of kernel/ (the top level; the KUnit suites in kernel/tests/
#    are listed there too if present), and that of
#    Documentation/hw/device-model.md exactly the files of emu/;
#  - every SPDX-License-Identifier in the tree names a licence whose text
#    is in LICENSES/ (LICENSES/<id>.txt).
# A file table is a Markdown table whose first column holds file names in
# backquotes, e.g. "| `hpu_drv.c`, `hpu_drv.h` | ... |".  Files are those
# git tracks (build products do not count).
#
# Usage: check-docs.py   (exit status 0 when everything matches)
#
# Copyright (c) 2026 The hpu authors

import os
import re
import subprocess
import sys

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))

# (document, directory, prefix the table writes before names, tracked files
# that need no line: build glue)
TABLES = [
    ("Documentation/driver/hpu.md", "kernel", "", {"Kbuild", "Makefile"}),
    ("Documentation/hw/device-model.md", "emu", "emu/", {"meson.build", "Kconfig"}),
]

SPDX = re.compile(r"SPDX-License-Identifier:\s*([A-Za-z0-9.+-]+(?:\s+(?:OR|AND|WITH)\s+[A-Za-z0-9.+-]+)*)")
NAME = re.compile(r"`([^`]+)`")


def tracked(path=None):
    cmd = ["git", "-C", ROOT, "ls-files", "-z"]
    if path:
        cmd += ["--", path]
    out = subprocess.run(cmd, check=True, capture_output=True).stdout
    return [p for p in out.decode().split("\0") if p]


def table_names(doc, prefix, present):
    """File names in the first column of the document's tables, relative to
    the directory (whose tracked files are present), with the line they are
    on."""
    names = {}
    with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.startswith("|"):
                continue
            cells = line.split("|")
            if len(cells) < 3:
                continue
            for n in NAME.findall(cells[1]):
                n = n.strip()
                if prefix and not n.startswith(prefix):
                    continue
                n = n[len(prefix):]
                # Only names that look like files of this directory.
                if "/" in n and not n.startswith("tests/"):
                    continue
                # A name without a dot is a file only if it is one.
                if not re.fullmatch(r"[A-Za-z0-9_./-]+", n) or "." not in n and n not in present:
                    continue
                names.setdefault(n, lineno)
    return names


def check_table(doc, directory, prefix, glue):
    present = {p[len(directory) + 1:] for p in tracked(directory)}
    files = set()
    for rel in present:
        if os.path.basename(rel) in glue and "/" not in rel:
            continue
        if directory == "kernel" and not re.search(r"\.[ch]$", rel):
            continue
        files.add(rel)
    listed = table_names(doc, prefix, present)
    errors = []
    for f in sorted(files - set(listed)):
        errors.append(f"{doc}: {directory}/{f} is not in the file table")
    for n in sorted(set(listed) - present):
        errors.append(f"{doc}:{listed[n]}: {prefix}{n} is listed but {directory}/{n} does not exist")
    return errors


def check_licences():
    have = {os.path.splitext(n)[0] for n in os.listdir(os.path.join(ROOT, "LICENSES"))}
    errors = []
    for p in tracked():
        if p.startswith("LICENSES/"):
            continue
        full = os.path.join(ROOT, p)
        try:
            with open(full, encoding="utf-8", errors="replace") as f:
                head = f.read(2048)
        except (IsADirectoryError, FileNotFoundError):
            continue
        m = SPDX.search(head)
        if not m:
            continue
        for ident in re.split(r"\s+(?:OR|AND|WITH)\s+", m.group(1).strip()):
            if ident not in have:
                errors.append(f"{p}: SPDX identifier {ident} has no LICENSES/{ident}.txt")
    return errors


def main():
    errors = []
    for doc, directory, prefix, glue in TABLES:
        errors += check_table(doc, directory, prefix, glue)
    errors += check_licences()
    for e in errors:
        print(f"check-docs: {e}")
    if errors:
        print(f"check-docs: {len(errors)} problems")
        return 1
    print("check-docs: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Checks that keep the documentation and the licence files from drifting:
#  - the file table of Documentation/driver/hpu.md names exactly the .c and
#    .h files of kernel/ (the top level; the KUnit suites in kernel/tests/
#    are listed there too if present), and that of
#    Documentation/hw/device-model.md exactly the files of emu/;
#  - every SPDX-License-Identifier in the tree names a licence whose text
#    is in LICENSES/ (LICENSES/<id>.txt);
#  - the PyTorch getting-started pair (tools/hpu-train/getting_started_cpu.py
#    and getting_started_hpu.py) differs by exactly the lines the guide's
#    first python block in Documentation/pytorch.md shows: every line of that
#    block naming hpu (import hpu_torch, the mark_step import, the device
#    "hpu", mark_step()) added to the HPU file, the device line's "cpu" form
#    removed, mark_step() right after optimizer.step(), nothing else.
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


GUIDE = "Documentation/pytorch.md"
GS_CPU, GS_HPU = "tools/hpu-train/getting_started_cpu.py", "tools/hpu-train/getting_started_hpu.py"


def guide_hpu_lines(doc=GUIDE):
    """The lines of the guide's first python block that name hpu or
    mark_step (whitespace-normalised)."""
    with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
        m = re.search(r"^```python\n(.*?)^```", f.read(), re.M | re.S)
    if not m:
        return None
    return [" ".join(ln.split()) for ln in m.group(1).splitlines() if "hpu" in ln or "mark_step" in ln]


def check_getting_started(cpu=GS_CPU, hpu=GS_HPU, doc=GUIDE):
    import difflib
    want = guide_hpu_lines(doc)
    if not want:
        return [f"{doc}: no python block with the HPU lines"]
    try:
        with open(os.path.join(ROOT, cpu), encoding="utf-8") as f:
            a = f.read().splitlines()
        with open(os.path.join(ROOT, hpu), encoding="utf-8") as f:
            b = f.read().splitlines()
    except FileNotFoundError as e:
        return [f"getting-started pair: {e}"]
    norm = lambda ln: " ".join(ln.split())  # noqa: E731
    added, removed = [], []
    for ln in difflib.ndiff(a, b):
        if ln.startswith("+ "):
            added.append(norm(ln[2:]))
        elif ln.startswith("- "):
            removed.append(norm(ln[2:]))
    errors = []
    cpu_forms = [w.replace('"hpu"', '"cpu"') for w in want if '"hpu"' in w]
    for r in removed:
        if r not in cpu_forms:
            errors.append(f"{cpu}: line {r!r} is not in {hpu} (only the device line may differ)")
    for x in added:
        if x not in want:
            errors.append(f"{hpu}: line {x!r} is not one of the guide's HPU lines ({doc})")
    for w in want:
        if w not in added:
            errors.append(f"{hpu}: the guide's line {w!r} is missing (or already in {cpu})")
    for i, ln in enumerate(b):
        if norm(ln).startswith("mark_step()") and (i == 0 or norm(b[i - 1]) != "optimizer.step()"):
            errors.append(f"{hpu}:{i + 1}: mark_step() does not follow optimizer.step()")
    return errors


def main():
    errors = []
    for doc, directory, prefix, glue in TABLES:
        errors += check_table(doc, directory, prefix, glue)
    errors += check_licences()
    errors += check_getting_started()
    for e in errors:
        print(f"check-docs: {e}")
    if errors:
        print(f"check-docs: {len(errors)} problems")
        return 1
    print("check-docs: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())

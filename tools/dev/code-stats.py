#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# The longest functions and the largest files of each layer (kernel/, emu/,
# libhpu/, tools/, tests/), for reviews of the tree's shape:
#   tools/dev/code-stats.py [--rev REV] [--top N]
# A function is a body whose "{" and "}" stand alone in column 0 (kernel,
# QEMU and libhpu style); its length counts the lines from its signature's
# first line to the closing brace. --rev reads the files of a commit.
#
# Copyright (c) 2026 The hpu authors

import argparse
import re
import subprocess

LAYERS = ["kernel", "emu", "libhpu", "tools", "tests"]
EXTS = (".c", ".h", ".cpp", ".hpp", ".cc")
NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_:~]*)\s*\(")


def git(*args):
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def files(rev, layer):
    out = git("ls-tree", "-r", "--name-only", rev, layer) if rev else git("ls-files", layer)
    return [f for f in out.split("\n") if f.endswith(EXTS)]


def text(rev, path):
    if rev:
        return git("show", f"{rev}:{path}")
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def functions(path, lines):
    out = []
    i = 0
    while i < len(lines):
        if lines[i] != "{":
            i += 1
            continue
        # the signature: back to the line after a blank, ';', '}' or comment end
        s = i - 1
        while s > 0 and lines[s - 1].strip() and not lines[s - 1].rstrip().endswith((";", "}", "*/", "{")) \
                and not lines[s - 1].startswith(("#", "//")):
            s -= 1
        sig = " ".join(lines[s:i])
        m = None
        for m in NAME.finditer(sig.split("(")[0] + "("):
            pass
        e = i + 1
        while e < len(lines) and not re.match(r"^}[;,]?\s*$", lines[e]):
            e += 1
        if m and "(" in sig:
            out.append((e - s + 1, m.group(1), path))
        i = e + 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rev", default=None)
    ap.add_argument("--top", type=int, default=10)
    a = ap.parse_args()
    for layer in LAYERS:
        funcs, sizes = [], []
        for path in files(a.rev, layer):
            lines = text(a.rev, path).split("\n")
            sizes.append((len(lines) - 1, path))
            funcs += functions(path, lines)
        funcs.sort(reverse=True)
        sizes.sort(reverse=True)
        print(f"## {layer}/: {len(sizes)} files, {sum(s for s, _ in sizes)} lines, {len(funcs)} functions")
        print("longest functions: " + "; ".join(f"{n} {name} ({p.split('/')[-1]})" for n, name, p in funcs[:a.top]))
        print("largest files: " + "; ".join(f"{p} {n}" for n, p in sizes[:a.top]))
        print()


if __name__ == "__main__":
    main()

#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# Check include/hw/hpu_regs.h against the hardware spec in
# Documentation/hw/registers.md: every register the spec lists must be in the
# header at the same offset and every register in the header must be in the
# spec; the PCI identity, error bits, NIC interrupt causes and fixed reset
# values must agree.
#
# Copyright (c) 2026 The hpu authors

import os
import re
import sys

REPO = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
SPECS = [os.path.join(REPO, "Documentation/hw", f)
         for f in ("registers.md", "memory-and-queues.md", "errors-and-reset.md",
                   "firmware-and-telemetry.md", "nic.md", "roce.md")]
HDR = os.path.join(REPO, "include/hw/hpu_regs.h")

errors = []
regs = set()


def err(msg):
    errors.append(msg)


def header_defines():
    """Numeric and one-parameter macros; regs holds the names whose comment
    gives an access type (the registers, as opposed to fields and values)."""
    plain, func = {}, {}
    global regs
    with open(HDR) as f:
        for line in f:
            m = re.match(r"#define\s+(\w+)\(n\)\s+(.*?)\s*(/\*.*)?$", line)
            if m:
                func[m.group(1)] = m.group(2)
                if re.search(r"/\* (RO|RW|WO|RW1C)\b", line):
                    regs.add(m.group(1))
                continue
            m = re.match(r"#define\s+(\w+)\s+(0x[0-9a-fA-F]+|\d+)\b", line)
            if m:
                plain[m.group(1)] = int(m.group(2), 0)
                if re.search(r"/\* (RO|RW|WO|RW1C)\b", line):
                    regs.add(m.group(1))
    return plain, func


def spec_tables():
    """Yield each markdown table as (prefix, header cells, list of row cells).

    A table's register names get the prefix of the last "<!-- prefix: X -->"
    comment before it in its file (HPU_REG_ by default)."""
    for spec in SPECS:
        with open(spec) as f:
            lines = f.read().splitlines()
        prefix = "HPU_REG_"
        i = 0
        while i < len(lines):
            m = re.match(r"<!-- prefix: (\w+) -->", lines[i])
            if m:
                prefix = m.group(1)
            if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"\|[-| ]+\|$", lines[i + 1]):
                head = [c.strip().lower() for c in lines[i].strip("|").split("|")]
                rows = []
                i += 2
                while i < len(lines) and lines[i].startswith("|"):
                    rows.append([c.strip() for c in lines[i].strip("|").split("|")])
                    i += 1
                yield prefix, head, rows
            else:
                i += 1


def reg_offset(prefix, name, plain, func):
    key = prefix + name
    if key in plain:
        return plain[key]
    m = re.fullmatch(r"([A-Z_]+?)(\d+)", name)
    if not m and key in func:
        m = re.fullmatch(r"(.*)()", name)
    if m and prefix + m.group(1) in func:
        expr = func[prefix + m.group(1)].replace("(n)", f"({int(m.group(2) or 0)})")
        if not re.fullmatch(r"[0-9a-fx+*() ]+", expr):
            err(f"cannot evaluate HPU_REG_{m.group(1)}(n) = {expr}")
            return None
        return eval(expr)  # arithmetic only, checked above
    return None


def main():
    plain, func = header_defines()
    seen = set()
    for prefix, head, rows in spec_tables():
        if head[:3] == ["offset", "name", "access"]:
            for r in rows:
                off, name, acc, reset = int(r[0], 16), r[1], r[2], r[3]
                base = re.sub(r"\d+$", "", name)
                seen.add(prefix + (base if prefix + base in func else name))
                got = reg_offset(prefix, name, plain, func)
                if got is None:
                    err(f"spec register {name} (0x{off:04x}) is missing from hpu_regs.h")
                elif got != off:
                    err(f"{name}: spec offset 0x{off:04x}, header 0x{got:04x}")
                if acc not in ("RO", "RW", "WO", "RW1C"):
                    err(f"{name}: unknown access type {acc}")
            continue
        if head[:2] == ["bit", "name"]:
            for r in rows:
                key = "HPU_ERROR_" + r[1]
                if plain.get(key) != 1 << int(r[0]):
                    err(f"ERROR bit {r[1]}: spec bit {r[0]}, header {key}={plain.get(key)}")
            continue
        if head[:2] == ["bit", "cause"]:
            for r in rows:
                key = "HPU_NIC_IRQ_" + r[1]
                if plain.get(key) != 1 << int(r[0]):
                    err(f"NIC cause {r[1]}: spec bit {r[0]}, header {key}={plain.get(key)}")
            continue
        if head[:2] == ["item", "value"]:
            want = {"vendor id": "HPU_PCI_VENDOR_ID", "device id": "HPU_PCI_DEVICE_ID",
                    "class code": "HPU_PCI_CLASS", "revision": "HPU_PCI_REVISION"}
            for r in rows:
                if r[0] in want:
                    v = int(re.search(r"0x[0-9a-fA-F]+", r[1]).group(0), 16)
                    if plain.get(want[r[0]]) != v:
                        err(f"PCI {r[0]}: spec 0x{v:x}, header {plain.get(want[r[0]])}")
                if r[0] == "BAR0":
                    m = re.search(r"(\d+) MiB", r[1])
                    if not m or plain.get("HPU_BAR_REGS_SIZE") != int(m.group(1)) << 20:
                        err(f"BAR0 size: spec {r[1]}, header {plain.get('HPU_BAR_REGS_SIZE')}")
                if r[0] == "MSI-X":
                    v = int(r[1].split()[0])
                    if plain.get("HPU_MSIX_VECTORS") != v:
                        err(f"MSI-X vectors: spec {v}, header {plain.get('HPU_MSIX_VECTORS')}")
    for key in sorted(regs):
        if key not in seen:
            err(f"register {key} is in hpu_regs.h but not in the spec")
    fixed = {"MAGIC": "HPU_MAGIC_VALUE", "SPEC_VERSION": "HPU_SPEC_VERSION_VALUE",
             "MSIX_VECTORS": "HPU_MSIX_VECTORS"}
    for _, head, rows in spec_tables():
        if head[:4] == ["offset", "name", "access", "reset"]:
            for r in rows:
                if r[1] in fixed and int(r[3], 16) != plain.get(fixed[r[1]]):
                    err(f"{r[1]} reset value: spec {r[3]}, header {fixed[r[1]]}")
    if errors:
        for e in errors:
            print(f"check-regs: {e}", file=sys.stderr)
        print(f"check-regs: {len(errors)} mismatch(es) between Documentation/hw "
              f"and {os.path.relpath(HDR, REPO)}", file=sys.stderr)
        return 1
    print(f"check-regs: {os.path.relpath(HDR, REPO)} matches the spec ({len(seen)} registers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

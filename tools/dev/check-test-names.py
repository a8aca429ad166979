#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# Catch2 test names that CTest can register one by one: catch_discover_tests
# passes the names through a CMake list, where an unbalanced '[' or ']'
# stops the split at ';' and folds every later name of that binary into one
# test that Catch2 cannot find. Reads each TEST_CASE's name (adjacent string
# literals joined) under tests/ and fails on unbalanced brackets.
#
# Copyright (c) 2026 The hpu authors
import pathlib
import re
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
CASE = re.compile(r'\b(?:TEST_CASE|SCENARIO)\s*\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)')
LIT = re.compile(r'"((?:[^"\\]|\\.)*)"')

bad = 0
count = 0
for path in sorted((REPO / "tests").rglob("*.cpp")):
    text = path.read_text(errors="replace")
    for m in CASE.finditer(text):
        count += 1
        name = "".join(LIT.findall(m.group(1)))
        depth = 0
        for ch in name:
            depth += ch == "["
            depth -= ch == "]"
            if depth < 0:
                break
        if depth != 0:
            line = text.count("\n", 0, m.start()) + 1
            print(f"{path.relative_to(REPO)}:{line}: unbalanced '[' or ']' in test name: {name}")
            bad += 1
print(f"{count} Catch2 test names read, {bad} with unbalanced brackets")
sys.exit(1 if bad or count == 0 else 0)

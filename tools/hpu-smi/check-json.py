#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# Validates hpu-smi --json output against tools/hpu-smi/hpu-smi.schema.json
# (JSON Schema draft 2020-12) with python3-jsonschema.
# Usage: check-json.py FILE|-   (exit 0 valid, 1 invalid, 2 no validator)
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("check-json: python3-jsonschema is not installed", file=sys.stderr)
    sys.exit(2)

here = os.path.dirname(os.path.realpath(__file__))
with open(os.path.join(here, "hpu-smi.schema.json")) as f:
    schema = json.load(f)
jsonschema.Draft202012Validator.check_schema(schema)
src = sys.stdin if len(sys.argv) < 2 or sys.argv[1] == "-" else open(sys.argv[1])
try:
    doc = json.load(src)
except json.JSONDecodeError as e:
    print(f"check-json: not JSON: {e}", file=sys.stderr)
    sys.exit(1)
errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
for e in errors:
    print(f"check-json: {'/'.join(str(p) for p in e.path) or '(root)'}: {e.message}", file=sys.stderr)
sys.exit(1 if errors else 0)

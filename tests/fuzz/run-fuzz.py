#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# make fuzz: boot a guest with the two HPUs of make test (VM_HPUS of
# tests/run-tests.py) and run tests/fuzz/guest-fuzz.sh in it: hpu-fuzz in
# rounds with fresh seeds, 10^7 calls by default (time-limited). Prints the
# calls per second and the merged per-call table of outcomes (how many
# distinct error paths each ioctl took), then "N passed, N failed".
#   --calls N     calls in all (default 10^7)
#   --time SEC    time budget of the fuzzing in the guest (default 7200: 10^7 calls
#               at the plain guest's 1700-1800 calls/s take about 95 minutes)
#   --flags "..." extra hpu-fuzz options (e.g. --no-dmabuf-mmap)
#   --round-calls N  calls per round (one seed each; default 10^6)
#
# Copyright (c) 2026 The hpu authors

import argparse
import importlib.util
import os
import subprocess
import sys
import time

REPO = os.path.realpath(os.path.join(os.path.dirname(__file__), "../.."))


def vm_hpus():
    spec = importlib.util.spec_from_file_location("run_tests", os.path.join(REPO, "tests/run-tests.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.VM_HPUS


def table(path):
    counts = {}
    order = []
    rounds = []
    total = None
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if parts[0] == "#calls":
                rounds.append((int(parts[1]), float(parts[2])))
            elif parts[0] == "#total":
                total = (int(parts[1]), int(parts[2]), int(parts[3]))
            elif len(parts) == 3:
                name, outcome, n = parts[0], parts[1], int(parts[2])
                if name not in counts:
                    counts[name] = {}
                    order.append(name)
                counts[name][outcome] = counts[name].get(outcome, 0) + n
    print(f"\n{'call':26} {'calls':>11} {'ok':>11}  error paths (errno: count)")
    pairs = 0
    for name in order:
        c = counts[name]
        errs = sorted(((n, o) for o, n in c.items() if o != "ok"), reverse=True)
        pairs += len(c)
        print(f"{name:26} {sum(c.values()):11} {c.get('ok', 0):11}  [{len(errs)}] "
              + ", ".join(f"{o}: {n}" for n, o in errs))
    calls = sum(r[0] for r in rounds)
    secs = sum(r[1] for r in rounds)
    rate = calls / secs if secs else 0
    print(f"\nmake fuzz: {len(rounds)} rounds, {calls} calls in {secs:.0f} s of fuzzing: "
          f"{rate:.0f} calls/s in the guest; {pairs} distinct (call, outcome) pairs")
    if total:
        print(f"(guest loop: {total[0]} calls, {total[1]} s wall, {total[2]} rounds)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--calls", type=int, default=10_000_000)
    ap.add_argument("--time", type=int, default=7200)
    ap.add_argument("--flags", default="")
    ap.add_argument("--round-calls", type=int, default=1_000_000)
    a = ap.parse_args()
    build = os.path.join(REPO, a.build)
    logdir = os.path.join(build, "vm-fuzz")
    os.makedirs(logdir, exist_ok=True)
    for f in os.listdir(logdir):
        if f.startswith("fuzz-") or f == "results.txt":
            os.unlink(os.path.join(logdir, f))
    cmd = ["tools/dev/vm/hpu-vm", "--timeout", str(a.time + 600), "--mem", "3G", "--log", logdir,
           "--env", f"HPU_BUILD={build}", "--env", f"HPU_FUZZ_CALLS={a.calls}",
           "--env", f"HPU_FUZZ_TIME={a.time}", "--env", f"HPU_FUZZ_ROUND_CALLS={a.round_calls}"]
    if a.flags:
        cmd += ["--env", f"HPU_FUZZ_FLAGS={a.flags}"]
    for d in vm_hpus():
        props = (f"hbm-size={d['hbm'] >> 20}M,serial={d['serial']},nic-ports={d['nics']},"
                 f"uuid={d['uuid']}")
        cmd += ["--hpu", props + ("," + d["props"] if d.get("props") else "")]
    cmd += ["--", "tests/fuzz/guest-fuzz.sh"]
    t0 = time.monotonic()
    r = subprocess.run(cmd, cwd=REPO)
    print(f"(make fuzz: guest took {time.monotonic() - t0:.0f} s, hpu-vm exit {r.returncode}, logs in {logdir})")
    results = []
    if r.returncode == 125:
        results.append(("fuzz/guest finished with a clean kernel log", False,
                        f"hpu-vm exit 125 (oops, WARN, BUG, hang or time limit): {logdir}/dmesg.txt"))
    else:
        results.append(("fuzz/guest finished with a clean kernel log", True, ""))
    try:
        with open(os.path.join(logdir, "results.txt")) as f:
            for line in f:
                word, _, rest = line.strip().partition(" ")
                name, _, why = rest.partition(": ")
                if word in ("PASS", "FAIL"):
                    results.append((name, word == "PASS", why))
    except FileNotFoundError:
        results.append(("fuzz/results written", False, "no results.txt"))
    stats = os.path.join(logdir, "fuzz-stats.txt")
    if os.path.exists(stats):
        table(stats)
    print()
    for name, ok, why in results:
        print(f"{'PASS' if ok else 'FAIL'} {name}" + (f": {why}" if not ok and why else ""))
    npass = sum(1 for r in results if r[1])
    print(f"{npass} passed, {len(results) - npass} failed")
    return 0 if npass == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# summarize: join the two guests' halves of the interop run
# (tests/vm/interop/interop-guest.sh wrote them) into one PASS/FAIL line
# per step, and the figures of both pairs with their ratios.
#
#   summarize.py LOGDIR
#
# Reads LOGDIR/a/ix-results.txt and LOGDIR/b/ix-results.txt (PLAN, STEP,
# PASS, FAIL, INFO lines) with each step's output LOGDIR/<guest>/<key>.<role>.txt,
# and LOGDIR/host-results.txt (the host's own checks). Writes
# LOGDIR/results.txt (every PASS/FAIL line) and LOGDIR/figures.txt, prints
# both, exits 1 when anything failed.
#
# A step passes when every guest that planned it ran its side of it and
# that side exited 0 (a server killed because it outlived its client
# counts as failed). A planned step without a result is a failure, never
# a skip.
#
# Copyright (c) 2026 The hpu authors

import os
import re
import sys

GUESTS = ("a", "b")
SIDE = {"hpu": {"a": "hpu", "b": "rxe"}, "rxe": {"a": "rxeA", "b": "rxeB"}}
RC_WHY = {124: "time limit", 254: "no server", 255: "server never ready", 143: "killed"}


def read_lines(path):
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return None


ERR = re.compile(r"fail|unable|couldn't|cannot|error|refused|mismatch|invalid|timed? ?out", re.I)


def reason(path, n=2):
    """The lines of a tool's output that say what went wrong: its error
    messages if it printed any, else its last lines."""
    lines = [ln.strip() for ln in (read_lines(path) or [])
             if ln.strip() and not ln.startswith("# ") and not set(ln.strip()) <= set("-*")]
    errs = [ln for ln in lines if ERR.search(ln)]
    pick = errs[:n] if errs else lines[-n:]
    return " | ".join(pick) if pick else "no output"


def perf_row(lines, first):
    """perftest's result row whose first field is `first` (the message size)."""
    for ln in lines:
        f = ln.split()
        if len(f) >= 5 and f[0] == first and re.fullmatch(r"[0-9.]+", f[2]):
            return f
    return None


def figures_of(tool, lines):
    """(label, value, unit, higher-is-better) of one client output."""
    out = []
    if tool.endswith("_bw"):
        row = next((perf_row(lines, s) for s in ("65536", "4096", "2")
                    if perf_row(lines, s)), None)
        if row:
            out.append((f"{tool} {row[0]} B average", float(row[3]), "MB/s", True))
    elif tool.endswith("_lat"):
        row = perf_row(lines, "2")
        if row:
            out.append((f"{tool} 2 B typical", float(row[4]), "us", False))
            out.append((f"{tool} 2 B average", float(row[5]), "us", False))
    elif tool.endswith("_pingpong"):
        for ln in lines:
            m = re.search(r"(\d+) iters in ([0-9.]+) seconds = ([0-9.]+) usec/iter", ln)
            if m:
                out.append((f"{tool} per iteration", float(m.group(3)), "us", False))
    elif tool == "tcp":
        for ln in lines:
            m = re.match(r"OK (\d+) ([0-9.]+) ([0-9.]+)", ln)
            if m:
                out.append(("tcp 1 MiB", float(m.group(3)), "MB/s", True))
    elif tool == "ping":
        for ln in lines:
            m = re.search(r"= ([0-9.]+)/([0-9.]+)/([0-9.]+)/", ln)
            if m:
                out.append(("ping average", float(m.group(2)), "ms", False))
    return out


def main():
    log = sys.argv[1]
    results = []          # (word, name, why)
    plans = {}            # key -> (pair, server role, name, {guests})
    steps = {}            # (key, guest) -> (role, rc, secs, file)
    infos = []
    for g in GUESTS:
        lines = read_lines(os.path.join(log, g, "ix-results.txt"))
        if lines is None:
            results.append(("FAIL", f"interop/guest {g.upper()} results",
                            f"no {g}/ix-results.txt (the guest did not start its script)"))
            continue
        for ln in lines:
            w = ln.split(" ")
            if w[0] == "PLAN" and len(w) >= 5:
                pair, key, srole, name = w[1], w[2], w[3], " ".join(w[4:])
                plans.setdefault(key, [pair, srole, name, set()])[3].add(g)
            elif w[0] == "STEP" and len(w) >= 8:
                steps[(w[2], g)] = (w[3], int(w[4]), float(w[5]), w[6])
            elif w[0] in ("PASS", "FAIL"):
                name, _, why = " ".join(w[1:]).partition(": ")
                results.append((w[0], name, why))
            elif w[0] == "INFO":
                infos.append(f"{g.upper()}: {' '.join(w[1:])}")
    host = read_lines(os.path.join(log, "host-results.txt")) or []

    def keyorder(k):
        pair, n = k.split(".")
        return (0 if pair == "rxe" else 1, int(n))

    times = []
    figs = {}  # (pair, generic name) -> [(label, value, unit, higher)]
    for key in sorted(plans, key=keyorder):
        pair, srole, name, who = plans[key]
        label = f"interop/{pair}/{name}"
        bad = []
        secs = 0.0
        for g in sorted(who):
            st = steps.get((key, g))
            side = f"{SIDE.get(pair, {}).get(g, g)} ({g.upper()})"
            if st is None:
                bad.append(f"{side}: never ran its side")
                continue
            role, rc, s, fname = st
            secs = max(secs, s)
            if rc != 0:
                what = RC_WHY.get(rc, "")
                bad.append(f"{side} {role} exit {rc}{' (' + what + ')' if what else ''}: "
                           f"{reason(os.path.join(log, g, fname))}")
        if bad:
            results.append(("FAIL", label, "; ".join(bad)))
            continue
        results.append(("PASS", label, ""))
        times.append(f"# {secs:6.1f} s  {pair}/{name}")
        tool = name.split()[0]
        client = "a" if srole == "b" else "b"
        # ping and tcp: the figure is on the side that prints it
        src = client
        if tool == "tcp":
            src = srole
        st = steps.get((key, src))
        if st is None:
            continue
        generic = f"{name.split()[0]} {'A->B' if srole == 'b' else 'B->A'}"
        f = figures_of(tool, read_lines(os.path.join(log, src, st[3])) or [])
        if f:
            figs[(pair, generic)] = f

    for ln in host:
        w = ln.split(" ", 1)
        if w[0] in ("PASS", "FAIL") and len(w) == 2:
            name, _, why = w[1].partition(": ")
            results.append((w[0], name, why))

    with open(os.path.join(log, "results.txt"), "w") as f:
        for word, name, why in results:
            line = f"{word} {name}" + (f": {why}" if why and word == "FAIL" else "")
            f.write(line + "\n")
            print(line)

    # Figures: each pair's, and hpu / rxe where both exist (A->B: A is the
    # client; for hpu A is the HPU, for rxe A is guest A's rxe).
    fl = [f"# interop figures ({log}); A->B: guest A is the client (the requester; for",
          "# ib_read_* the data flows B->A). hpu: A is the HPU, B rxe; rxe: rxe on both.",
          "# ratio = hpu / rxe: above 1 is better for MB/s, below 1 for us and ms.",
          f"{'step':44s} {'hpu<->rxe':>12s} {'rxe<->rxe':>12s} {'ratio':>7s}"]
    generic = []
    for (pair, gname) in figs:
        if gname not in generic:
            generic.append(gname)
    for gname in generic:
        h = {lab: (v, u) for lab, v, u, _ in figs.get(("hpu", gname), [])}
        r = {lab: (v, u) for lab, v, u, _ in figs.get(("rxe", gname), [])}
        for lab in list(dict.fromkeys(list(r) + list(h))):
            dirn = gname.split()[1]
            unit = (h.get(lab) or r.get(lab))[1]
            hv = f"{h[lab][0]:.2f}" if lab in h else "-"
            rv = f"{r[lab][0]:.2f}" if lab in r else "-"
            ratio = f"{h[lab][0] / r[lab][0]:.2f}" if lab in h and lab in r and r[lab][0] else "-"
            fl.append(f"{lab + ' ' + dirn + ' (' + unit + ')':44s} {hv:>12s} {rv:>12s} {ratio:>7s}")
    fl += ["", "# wall time of each passed step (the longer side)"] + times
    fl += [""] + [f"# {i}" for i in infos]
    with open(os.path.join(log, "figures.txt"), "w") as f:
        f.write("\n".join(fl) + "\n")
    print("---- figures")
    print("\n".join(fl))
    npass = sum(1 for r in results if r[0] == "PASS")
    nfail = sum(1 for r in results if r[0] == "FAIL")
    print(f"{npass} passed, {nfail} failed")
    return 1 if nfail or npass == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# make bench: measure, and print each figure as a ratio against a baseline
# measured in the same run. Nothing here passes or fails on a time; the exit
# status is 0 unless a benchmark failed to run.
#
#   DMA bandwidth (64 MiB, host->HBM, HBM->host, HBM->HBM, in the guest
#   through libhpu)             vs  native memcpy bandwidth on the host
#   NOP job latency p50/p99     vs  4 KiB O_DIRECT read from QEMU's NVMe, p50/p99
#   NOP jobs/s at depth 64      vs  NVMe 4 KiB read IOPS at depth 64
#   hpu-smi -q over 8 HPUs      vs  reading the same sysfs and hwmon files
#                                   (hpu-bench-sysfs-floor), per run
#
# One guest (one HPU, one NVMe drive backed by a temporary file) runs every
# guest-side figure; the host memcpy runs just before and just after it.
#
# Copyright (c) 2026 The hpu authors

import argparse
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))


def parse(text):
    vals, errors = {}, []
    for line in text.splitlines():
        if line.startswith("BENCH "):
            k, _, v = line[6:].partition("=")
            try:
                vals[k.strip()] = float(v)
            except ValueError:
                errors.append(f"unparsable line: {line}")
        elif line.startswith("ERROR "):
            errors.append(line[6:])
    return vals, errors


def host_memcpy(build):
    exe = os.path.join(REPO, build, "tests", "bench", "hpu-bench-memcpy")
    r = subprocess.run([exe, "64", "15"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if r.returncode != 0:
        return {}, [f"hpu-bench-memcpy exit {r.returncode}: {r.stdout.strip()}"]
    return parse(r.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--qemu", help="QEMU binary for tools/dev/vm/hpu-vm (default: its own)")
    ap.add_argument("--only-smi", action="store_true", help="only the hpu-smi benchmark")
    a = ap.parse_args()
    if a.only_smi:
        rows, errors = smi_bench(a.build, a.timeout, a.qemu)
        print_smi(rows)
        for e in errors:
            print(f"  error: {e}")
        return 1 if errors else 0
    build = a.build
    errors = []

    before, e = host_memcpy(build)
    errors += e

    logdir = os.path.join(REPO, build, "bench")
    os.makedirs(logdir, exist_ok=True)
    bench_txt = os.path.join(logdir, "bench.txt")
    if os.path.exists(bench_txt):
        os.unlink(bench_txt)
    with tempfile.TemporaryDirectory(prefix="hpu-bench-") as tmp:
        # The NVMe drive: 256 MiB, real data (not a sparse file).
        disk = os.path.join(tmp, "nvme.img")
        with open(disk, "wb") as f:
            chunk = os.urandom(1 << 20)
            for _ in range(256):
                f.write(chunk)
        cmd = ["tools/dev/vm/hpu-vm", "--timeout", str(a.timeout), "--log", logdir, "--mem", "2G",
               "--env", f"HPU_BUILD={os.path.join(REPO, build)}",
               "--hpu", "hbm-size=2G,serial=HPU-BENCH",
               "--qemu-arg=-drive", f"--qemu-arg=file={disk},if=none,id=nvm,format=raw",
               "--qemu-arg=-device", "--qemu-arg=nvme,serial=bench,drive=nvm",
               "--", "tests/bench/guest-bench.sh"]
        if a.qemu:
            cmd[1:1] = ["--qemu", a.qemu]
        t0 = time.monotonic()
        r = subprocess.run(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        took = time.monotonic() - t0
    if r.returncode != 0:
        errors.append(f"hpu-vm exit {r.returncode} (logs in {logdir})")
        print("\n".join(r.stdout.rstrip().splitlines()[-30:]))
    guest = {}
    try:
        with open(bench_txt) as f:
            guest, e = parse(f.read())
            errors += e
    except FileNotFoundError:
        errors.append(f"the guest wrote no {bench_txt}")

    after, e = host_memcpy(build)
    errors += e
    memcpy = max(before.get("memcpy_gbps", 0.0), after.get("memcpy_gbps", 0.0))

    rows = []  # (figure, value, unit, baseline name, baseline value, ratio text)

    def ratio(x, y, fmt="{:.3f}"):
        return fmt.format(x / y) if x and y else "n/a"

    for key, label in (("dma_h2d_gbps", "DMA host->HBM 64 MiB"),
                       ("dma_d2h_gbps", "DMA HBM->host 64 MiB"),
                       ("dma_d2d_gbps", "DMA HBM->HBM 64 MiB")):
        v = guest.get(key)
        rows.append((label, v, "GB/s", "host memcpy 64 MiB", memcpy, "GB/s", ratio(v, memcpy)))
    for key, nkey, label in (("nop_lat_p50_us", "nvme_lat_p50_us", "NOP job latency p50"),
                             ("nop_lat_p99_us", "nvme_lat_p99_us", "NOP job latency p99")):
        v, b = guest.get(key), guest.get(nkey)
        rows.append((label, v, "us", "NVMe 4 KiB read " + label[-3:], b, "us", ratio(v, b)))
    v, b = guest.get("nop_qd64_jobs_per_s"), guest.get("nvme_qd64_iops")
    rows.append(("NOP jobs/s, depth 64", v, "/s", "NVMe 4 KiB IOPS, depth 64", b, "/s",
                 ratio(v, b)))

    def num(x):
        if x is None:
            return "-"
        return f"{x:.3g}" if x < 1000 else f"{x:,.0f}"

    print(f"\nhpu benchmarks (guest under QEMU TCG, {took:.0f} s; host memcpy median "
          f"{before.get('memcpy_gbps', 0):.2f} GB/s before, {after.get('memcpy_gbps', 0):.2f} "
          f"after)\n")
    w = [22, 10, 27, 10, 7]
    print(f"{'figure':<{w[0]}} {'value':>{w[1]}}       {'baseline':<{w[2]}} {'value':>{w[3]}}       "
          f"{'ratio':>{w[4]}}")
    print("-" * (sum(w) + 16))
    for label, v, unit, bname, bv, bunit, rt in rows:
        print(f"{label:<{w[0]}} {num(v):>{w[1]}} {unit:<5}  {bname:<{w[2]}} {num(bv):>{w[3]}} "
              f"{bunit:<5}  {rt:>{w[4]}}")
    print("""
How to read the ratios:
  DMA rows: the device model's DMA engines copy with native code inside QEMU,
    so native memcpy on the host (the better of the runs before and after the
    guest) is the physical limit of the model; a ratio near 1 means the model
    adds little on top of the copy itself. Above 1 is possible: a DMA engine
    that maps guest memory may avoid a copy the baseline makes.
  Latency rows: time from submit to fence signalled for one NOP job, against
    the same guest's time for one 4 KiB O_DIRECT read from QEMU's NVMe drive
    (a peer queue-based PCIe device on the same emulated platform). Below 1:
    the HPU job path is quicker than an NVMe read.
  Throughput row: NOP jobs completed per second with 64 in flight on one
    queue, against NVMe 4 KiB reads per second with 64 in flight. Above 1:
    the HPU path sustains more operations per second.
  Guest code runs under TCG (20-50x slower than native) on both sides of the
  latency and throughput ratios, so they compare the two drivers' software
  paths on equal terms; absolute microseconds are not those of real silicon.""")
    smi_rows, e = smi_bench(build, a.timeout, a.qemu)
    errors += e
    print_smi(smi_rows)
    if errors:
        print("\nErrors:")
        for e in errors:
            print(f"  {e}")
        return 1
    return 0


def smi_bench(build, timeout, qemu):
    """hpu-smi -q over eight HPUs against the floor of reading the same
    sysfs and hwmon files (tests/bench/guest-smi-bench.sh), in one guest."""
    logdir = os.path.join(REPO, build, "bench-smi")
    os.makedirs(logdir, exist_ok=True)
    res = os.path.join(logdir, "bench-smi.txt")
    if os.path.exists(res):
        os.unlink(res)
    cmd = ["tools/dev/vm/hpu-vm", "--timeout", str(timeout), "--log", logdir, "--mem", "2G",
           "--hpus", "8", "--env", f"HPU_BUILD={os.path.join(REPO, build)}"]
    if qemu:
        cmd += ["--qemu", qemu]
    cmd += ["--", "tests/bench/guest-smi-bench.sh"]
    r = subprocess.run(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    errors = []
    if r.returncode != 0:
        errors.append(f"hpu-smi bench: hpu-vm exit {r.returncode} (logs in {logdir})")
        print("\n".join(r.stdout.rstrip().splitlines()[-30:]))
    try:
        with open(res) as f:
            vals, e = parse(f.read())
            errors += e
    except FileNotFoundError:
        vals = {}
        errors.append(f"the guest wrote no {res}")
    return vals, errors


def print_smi(v):
    smi, floor = v.get("smi_q_us"), v.get("sysfs_floor_us")
    ratio = f"{smi / floor:.2f}" if smi and floor else "n/a"
    print(f"\nhpu-smi -q over {int(v.get('smi_devices', 0))} HPUs: {smi or 0:.0f} us per run; "
          f"floor (the same sysfs and hwmon files read by a plain C++ loop, one process per run): "
          f"{floor or 0:.0f} us; ratio {ratio} (aim: at most 2; {int(v.get('smi_runs', 0))} runs each)")


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# make bench: measure, and print each figure as a ratio against a baseline
# measured in the same run. Nothing here passes or fails on a time, with
# one exception, the PyTorch backend's requirement (torch_errors()): lazy
# mode not slower than eager beyond noise (LAZY_NOISE), and no op run on the
# CPU by the fallback in a model's step. Otherwise the exit status is 0
# unless a benchmark failed to run.
#
#   DMA bandwidth (64 MiB, host->HBM, HBM->host, HBM->HBM, in the guest
#   through libhpu)             vs  native memcpy bandwidth on the host
#   NOP job latency p50/p99     vs  4 KiB O_DIRECT read from QEMU's NVMe, p50/p99
#   NOP jobs/s at depth 64      vs  NVMe 4 KiB read IOPS at depth 64
#   hpu-smi -q over 8 HPUs      vs  reading the same sysfs and hwmon files
#                                   (hpu-bench-sysfs-floor), per run
# RDMA (issue 13; a guest of its own, tests/bench/guest-rdma-bench.sh):
#   perftest ib_write_bw 64 KiB and ib_send_lat 2 B between the HPU's ports 1
#   and 2 (one in-QEMU hub)     vs  the same between two rxe devices on two
#                                   virtio-net NICs (a hub of their own)
# Compute (issue 11; libhpu's 1.5 API, operands in HBM, each result checked
# once against the host; hpu-bench-compute in the guest, hpu-bench-host-compute
# on the host):
#   MME sgemm 1024^3 GFLOP/s, one MME and both at once
#                               vs  OpenBLAS cblas_sgemm, 1 thread and all threads
#   MME GEMM 1024^3, BF16 in, FP32 out
#                               vs  BF16 widened to FP32, then cblas_sgemm (Debian's
#                                   OpenBLAS 0.3.21 does not export cblas_sbgemm)
#   TPC add_f32 over 64 MiB tensors, 3 x 64 MiB moved per launch, GB/s
#                               vs  host memcpy counted the same way (read + write)
#   TPC adamw_f32 step over 10M parameters, ms
#                               vs  the same update in a C++ loop, 1 thread
# PyTorch (issue 12; tests/bench/torch_bench.py in the same guest):
#   a training step of the seed's model, an MLP and a CNN, eager and lazy
#                               vs  the same step on the guest's CPU, and
#                                   lazy vs eager
#
# One guest (one HPU, one NVMe drive backed by a temporary file) runs every
# guest-side figure; the host baselines run just before and just after it,
# and the better of the two runs counts.
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


def host_bench(build, name, *args):
    exe = os.path.join(REPO, build, "tests", "bench", name)
    r = subprocess.run([exe, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        return {}, [f"{name} exit {r.returncode}: {r.stdout.strip()}"]
    return parse(r.stdout)


def host_baselines(build):
    vals, errors = host_bench(build, "hpu-bench-memcpy", "64", "15")
    more, e = host_bench(build, "hpu-bench-host-compute")
    vals.update(more)
    errors += e
    # The training demo's CPU reference, one epoch of each model.
    for m in ("linear", "mlp"):
        r = subprocess.run([os.path.join(REPO, build, "tools", "hpu-train", "hpu-train"), "--device", "cpu",
                            "--model", m, "--epochs", "1", "--bench"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        more, e = parse(r.stdout)
        vals.update(more)
        errors += e if r.returncode == 0 else e + [f"hpu-train --device cpu --model {m}: exit {r.returncode}"]
    return vals, errors


def best(before, after):
    """Each host figure's better run: the shorter time (*_ms), else the higher rate."""
    out = {}
    for k in before.keys() | after.keys():
        v = [d[k] for d in (before, after) if k in d]
        out[k] = min(v) if k.endswith("_ms") else max(v)
    return out


def ratio(x, y):
    return f"{x / y:.3f}" if x and y else "n/a"


def num(x):
    if x is None:
        return "-"
    return f"{x:.3g}" if x < 1000 else f"{x:,.0f}"


def print_table(rows):
    """rows: (figure, value, unit, baseline, value, unit, ratio[, aim])."""
    heads = ("figure", "value", "", "baseline", "value", "", "ratio", "aim")
    cells = [(r[0], num(r[1]), r[2], r[3], num(r[4]), r[5], r[6], *r[7:]) for r in rows]
    n = max(len(c) for c in cells)
    cells.insert(0, heads[:n])
    w = [max(len(c[i]) for c in cells) for i in range(n)]

    def line(c):
        return "  ".join(c[i].rjust(w[i]) if i in (1, 4, 6) else c[i].ljust(w[i])
                         for i in range(n)).rstrip()
    print(line(cells[0]))
    print("-" * max(len(line(c)) for c in cells))
    for c in cells[1:]:
        print(line(c))


def print_compute(guest, host):
    """The compute figures (hpu-bench-compute) against their host baselines."""
    g, h = guest.get, host.get
    n = int(h("host_blas_threads", 0))
    allt = f"{n} threads" if n else "all threads"
    sgemm, bf16 = g("mme_sgemm_gflops"), g("mme_bf16gemm_gflops")
    add, memcpy2 = g("tpc_add_gbps"), 2 * h("memcpy_gbps", 0.0)
    adam, adam_host = g("tpc_adamw_step_ms"), h("host_adamw_step_ms")
    f = "GFLOP/s"
    rows = [
        ("MME sgemm 1024^3", sgemm, f, "OpenBLAS sgemm, 1 thread", h("host_sgemm_1t_gflops"), f,
         ratio(sgemm, h("host_sgemm_1t_gflops")), ">= 0.8"),
        ("MME sgemm 1024^3", sgemm, f, f"OpenBLAS sgemm, {allt}", h("host_sgemm_mt_gflops"), f,
         ratio(sgemm, h("host_sgemm_mt_gflops")), ">= 0.8"),
        ("sgemm on both MMEs", g("mme2_sgemm_gflops"), f, f"OpenBLAS sgemm, {allt}",
         h("host_sgemm_mt_gflops"), f, ratio(g("mme2_sgemm_gflops"), h("host_sgemm_mt_gflops")), "-"),
        ("MME BF16 GEMM 1024^3", bf16, f, "BF16->FP32 + sgemm, 1 thread", h("host_bf16gemm_1t_gflops"),
         f, ratio(bf16, h("host_bf16gemm_1t_gflops")), "-"),
        ("MME BF16 GEMM 1024^3", bf16, f, f"BF16->FP32 + sgemm, {allt}", h("host_bf16gemm_mt_gflops"),
         f, ratio(bf16, h("host_bf16gemm_mt_gflops")), "-"),
        ("TPC add_f32 3x64 MiB", add, "GB/s", "host memcpy, read + write", memcpy2, "GB/s",
         ratio(add, memcpy2), ">= 0.5"),
        ("TPC AdamW step, 10M", adam, "ms", "C++ AdamW loop, 1 thread", adam_host, "ms",
         ratio(adam_host, adam), "-"),
    ]
    for m in ("linear", "mlp"):
        cpu = h(f"train_{m}_cpu_epoch_s")
        for mode in ("eager", "lazy"):
            s = g(f"train_{m}_hpu_{mode}_epoch_s")
            rows.append((f"hpu-train {m}, {mode}", s, "s/epoch", "the same on the host CPU", cpu,
                         "s/epoch", ratio(cpu, s), "-"))
    print("\nCompute (libhpu 1.5, operands in HBM, every result checked once; "
          "ratio: HPU speed / baseline speed)\n")
    print_table(rows)
    print("""
How to read the compute ratios (above 1: the device model is faster than the
host baseline; each figure is the median of 5 runs after a warm-up, 15 for
the GEMMs, on the HPU from submit to fence signalled):
  GEMM rows: the MMEs multiply with OpenBLAS inside QEMU, one host thread per
    product (the device property mme-threads=1, the default), and the two
    MMEs' products take turns under one lock: cblas_sgemm on the host with 1
    thread is their ceiling, and both MMEs at once cannot beat one. The
    all-threads rows say what the host CPU itself does. Eager GEMMs
    (hpu_queue_gemm), one per job. BF16: Debian's OpenBLAS 0.3.21 declares
    cblas_sbgemm but does not export it, so the baseline widens both BF16
    operands to FP32 (timed) and calls cblas_sgemm, as the model does.
  add_f32: a and b read, c written, 3 x 64 MiB per launch over its time,
    against host memcpy counted the same way (64 MiB read and 64 MiB written
    per copy: twice the memcpy figure of the table above). The TPC cluster is
    an interpreter of TPC code on 8 host threads.
  AdamW: one adamw_f32 launch over w, g, m, v (10M FP32 each); ratio = host
    ms / HPU ms. The host loop is libhpu/kernels/ref's update (the one the
    kernel matches bit for bit) built with the project's flags (-O2, no
    -march), on 1 thread.
  hpu-train: one epoch of the training demo (Documentation/training.md),
    60,000 images in batches of 128; ratio = CPU s / HPU s. The HPU run is
    driven by the guest's emulated CPU (TCG): every step's submissions and
    waits cost guest kernel time that real hardware's host would not pay;
    the CPU reference runs natively (OpenBLAS sgemm, all threads).""")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--timeout", type=int, default=1500)
    ap.add_argument("--qemu", help="QEMU binary for tools/dev/vm/hpu-vm (default: its own)")
    ap.add_argument("--only-smi", action="store_true", help="only the hpu-smi benchmark")
    ap.add_argument("--only-rdma", action="store_true", help="only the RDMA benchmark")
    ap.add_argument("--only-mpi", action="store_true", help="only the MPI allreduce benchmark")
    a = ap.parse_args()
    if a.only_smi or a.only_rdma or a.only_mpi:
        bench, show = (smi_bench, print_smi) if a.only_smi else \
            (rdma_bench, print_rdma) if a.only_rdma else (mpi_bench, print_mpi)
        rows, errors = bench(a.build, a.timeout, a.qemu)
        show(rows)
        for e in errors:
            print(f"  error: {e}")
        return 1 if errors else 0
    build = a.build
    errors = []

    before, e = host_baselines(build)
    errors += e

    logdir = os.path.join(REPO, build, "bench")
    os.makedirs(logdir, exist_ok=True)
    bench_txt = os.path.join(logdir, "bench.txt")
    if os.path.exists(bench_txt):
        os.unlink(bench_txt)
    with tempfile.TemporaryDirectory(prefix="hpu-bench-") as tmp:
        # The NVMe drive: 256 MiB, real data (not a sparse file). 2 GiB of guest
        # RAM and HBM hold the largest figures (DMA: 3 x 64 MiB; compute: 192
        # MiB of staging in the guest, at most 192 MiB of HBM at a time).
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

    after, e = host_baselines(build)
    errors += e
    host = best(before, after)
    memcpy = host.get("memcpy_gbps", 0.0)
    stream = host.get("stream_gbps", 0.0)

    rows = []  # (figure, value, unit, baseline name, baseline value, unit, ratio text, aim)
    dma = (("dma_h2d_gbps", "DMA host->HBM 64 MiB"),
           ("dma_d2h_gbps", "DMA HBM->host 64 MiB"),
           ("dma_d2d_gbps", "DMA HBM->HBM 64 MiB"))
    for key, label in dma:
        v = guest.get(key)
        rows.append((label, v, "GB/s", "host memcpy 64 MiB", memcpy, "GB/s", ratio(v, memcpy), ">= 0.9"))
    for key, label in dma:
        v = guest.get(key)
        rows.append((label, v, "GB/s", "host streaming copy 64 MiB", stream, "GB/s", ratio(v, stream), "-"))
    # hpu_queue_copy_split(): the same HBM->HBM copy on 4 engines, against
    # one, and against memcpy on every host core at once.
    v, b = guest.get("dma_d2d_split4_gbps"), guest.get("dma_d2d_gbps")
    rows.append(("DMA HBM->HBM 64 MiB on 4 engines", v, "GB/s", "the same on one engine", b, "GB/s",
                 ratio(v, b), "-"))
    allc, cores = host.get("memcpy_all_gbps"), host.get("host_cores")
    where = f"on {cores:.0f} CPUs" if cores else "on every CPU"
    rows.append(("DMA HBM->HBM 64 MiB on 4 engines", v, "GB/s", f"host memcpy {where}", allc, "GB/s",
                 ratio(v, allc), "-"))
    # Jobs: libhpu's default path (user queues where the device has them)
    # and, prefixed kpath_, the kernel path (HPU_USER_QUEUES=0).
    for pre, path in (("", "user queue"), ("kpath_", "kernel path")):
        for key, nkey, label, aim in (
                ("nop_lat_p50_us", "nvme_lat_p50_us", "NOP job latency p50", "<= 0.5"),
                ("nop_lat_p99_us", "nvme_lat_p99_us", "NOP job latency p99", "<= 1"),
                ("copy4k_lat_p50_us", "nvme_lat_p50_us", "4 KiB host->HBM copy p50", "-"),
                ("copy4k_lat_p99_us", "nvme_lat_p99_us", "4 KiB host->HBM copy p99", "-")):
            v, b = guest.get(pre + key), guest.get(nkey)
            rows.append((f"{label} ({path})", v, "us", "NVMe 4 KiB read " + label[-3:], b, "us",
                         ratio(v, b), aim if not pre else "-"))
        v, b = guest.get(pre + "nop_qd64_jobs_per_s"), guest.get("nvme_qd64_iops")
        rows.append((f"NOP jobs/s, depth 64 ({path})", v, "/s", "NVMe 4 KiB IOPS, depth 64", b, "/s",
                     ratio(v, b), ">= 2" if not pre else "-"))
        v = guest.get(pre + "nop_qd64_4proc_jobs_per_s")
        rows.append((f"NOP jobs/s, 4 processes x depth 64 ({path})", v, "/s",
                     "NVMe 4 KiB IOPS, depth 64", b, "/s", ratio(v, b), "-"))

    print(f"\nhpu benchmarks (guest under QEMU TCG, {took:.0f} s; host memcpy median "
          f"{before.get('memcpy_gbps', 0):.2f} GB/s before, {after.get('memcpy_gbps', 0):.2f} "
          f"after; streaming copy {before.get('stream_gbps', 0):.2f} before, "
          f"{after.get('stream_gbps', 0):.2f} after)\n")
    print_table(rows)
    print("""
How to read the ratios:
  DMA rows: the device model's DMA engines copy with native code inside QEMU,
    so a native copy on the host (the better of the runs before and after the
    guest, between 64 MiB buffers in huge pages as QEMU's are) is the
    physical limit of the model. The model maps guest RAM and writes with
    non-temporal stores, as a DMA engine's writes go to memory rather than
    into a CPU's cache; glibc's memcpy streams only above a threshold set by
    the last-level cache's size, so where memory bandwidth is the limit the
    model can beat memcpy (above 1), and the rows against the host's own
    streaming copy show how close it comes to that limit. The 4-engine row
    sets one copy split over four engines against memcpy on every host core
    at once (QEMU's engine threads share those cores with the vCPUs).
  Latency rows: time from submit to fence signalled for one NOP job (or one
    4 KiB host->HBM copy), against
    the same guest's time for one 4 KiB O_DIRECT read from QEMU's NVMe drive
    (a peer queue-based PCIe device on the same emulated platform). Below 1:
    the HPU job path is quicker than an NVMe read.
  Throughput rows: NOP jobs completed per second with 64 in flight on one
    queue (and summed over four processes, each with its own context and
    queue, started together), against NVMe 4 KiB reads per second with 64 in
    flight. Above 1: the HPU path sustains more operations per second.
  "(user queue)" rows are libhpu's default path (a descriptor and a doorbell
    store, no system call); "(kernel path)" the same program with
    HPU_USER_QUEUES=0 (DRM_IOCTL_HPU_SUBMIT). aim: issue 14's targets.
  Guest code runs under TCG (20-50x slower than native) on both sides of the
  latency and throughput ratios, so they compare the two drivers' software
  paths on equal terms; absolute microseconds are not those of real silicon.""")
    print_compute(guest, host)
    errors += print_torch(guest)
    rdma_rows, e = rdma_bench(build, a.timeout, a.qemu)
    errors += e
    print_rdma(rdma_rows)
    smi_rows, e = smi_bench(build, a.timeout, a.qemu)
    errors += e
    print_smi(smi_rows)
    mpi_rows, e = mpi_bench(build, a.timeout, a.qemu)
    errors += e
    print_mpi(mpi_rows)
    if errors:
        print("\nErrors:")
        for e in errors:
            print(f"  {e}")
        return 1
    return 0


# Lazy mode may measure this much slower than eager before it counts as
# slower. The step times are medians of 8 steps under TCG on a shared
# host, eager's and lazy's measured one after the other, and the CNN's
# true ratio is about 1 (convolution kernels that lazy mode does not
# shorten): swings of 10% between the two runs are noise. A lazy mode
# that lost its point (a flush per op, a graph rebuilt every step) is
# slower by far more than 20%.
LAZY_NOISE = 0.2
TORCH_MODELS = (("linear", "seed's model, SGD"), ("mlp", "MLP, AdamW"), ("cnn", "CNN, SGD"))


def torch_errors(guest):
    """What the PyTorch figures break of the backend's requirements: a lazy
    step slower than eager's (eager/lazy below 1 - LAZY_NOISE), a model
    that ran ops on the CPU (torch_*_fallbacks not 0)."""
    errors = []
    for m, _ in TORCH_MODELS:
        eager, lazy = guest.get(f"torch_{m}_eager_step_ms"), guest.get(f"torch_{m}_lazy_step_ms")
        if eager and lazy and eager / lazy < 1 - LAZY_NOISE:
            errors.append(f"torch {m}: lazy mode is slower than eager ({lazy:g} ms/step against {eager:g}, "
                          f"eager/lazy {eager / lazy:.3f} < {1 - LAZY_NOISE:g})")
    for k, v in sorted(guest.items()):
        if k.startswith("torch_") and k.endswith("_fallbacks") and v != 0:
            errors.append(f"{k[6:-10]}: {v:g} op(s) per step run on the CPU by the fallback (torch_bench.py)")
    return errors


def print_torch(guest):
    """The PyTorch backend's step times (tests/bench/torch_bench.py); returns torch_errors()."""
    g = guest.get
    rows = []
    for m, what in TORCH_MODELS:
        cpu, eager, lazy = g(f"torch_{m}_cpu_step_ms"), g(f"torch_{m}_eager_step_ms"), g(f"torch_{m}_lazy_step_ms")
        rows.append((f"torch {m} ({what}) eager", eager, "ms/step", "the guest's CPU", cpu, "ms/step",
                     ratio(cpu, eager), "-"))
        rows.append((f"torch {m} ({what}) lazy", lazy, "ms/step", "the guest's CPU", cpu, "ms/step",
                     ratio(cpu, lazy), "-"))
        rows.append((f"torch {m} ({what}) lazy", lazy, "ms/step", "eager on the HPU", eager, "ms/step",
                     ratio(eager, lazy), ">= 1"))
    print("\nPyTorch (hpu_torch: one training step of batch 128, median; ratio: baseline ms / HPU ms)\n")
    print_table(rows)
    fb = {k[6:-10]: v for k, v in guest.items() if k.startswith("torch_") and k.endswith("_fallbacks")}
    print("\nOps run on the CPU by the fallback, per step: " +
          (", ".join(f"{k} {v:g}" for k, v in sorted(fb.items())) if fb else "no figures"))
    print("""
How to read the PyTorch rows: each step copies the batch to the device, runs
zero_grad, forward, loss, backward and the optimizer, mark_step() in lazy mode,
and waits with loss.item(), as the getting-started script does. The baseline
is PyTorch's own CPU backend in the same guest, so both sides pay TCG's
emulated CPU for Python and PyTorch's dispatcher; the HPU side's kernels run
natively inside the device model. Lazy mode must not be slower than eager
(aim >= 1: eager ms / lazy ms; below %g it is an error, as is any fallback)."""
          % (1 - LAZY_NOISE))
    return torch_errors(guest)


def guest_bench(build, timeout, qemu, name, script, res_name, args):
    """Boot one guest (tools/dev/vm/hpu-vm with @args) running @script and
    read the "BENCH"/"ERROR" lines it leaves in @res_name of its log
    directory build/@name: (values, errors)."""
    logdir = os.path.join(REPO, build, name)
    os.makedirs(logdir, exist_ok=True)
    res = os.path.join(logdir, res_name)
    if os.path.exists(res):
        os.unlink(res)
    cmd = ["tools/dev/vm/hpu-vm", "--timeout", str(timeout), "--log", logdir, "--mem", "2G",
           "--env", f"HPU_BUILD={os.path.join(REPO, build)}"] + args
    if qemu:
        cmd += ["--qemu", qemu]
    cmd += ["--", script]
    r = subprocess.run(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    errors = []
    if r.returncode != 0:
        errors.append(f"{name}: hpu-vm exit {r.returncode} (logs in {logdir})")
        print("\n".join(r.stdout.rstrip().splitlines()[-30:]))
    try:
        with open(res) as f:
            vals, e = parse(f.read())
            errors += e
    except FileNotFoundError:
        vals = {}
        errors.append(f"the guest wrote no {res}")
    return vals, errors


def smi_bench(build, timeout, qemu):
    """hpu-smi -q over eight HPUs against the floor of reading the same
    sysfs and hwmon files (tests/bench/guest-smi-bench.sh), in one guest."""
    return guest_bench(build, timeout, qemu, "bench-smi", "tests/bench/guest-smi-bench.sh",
                       "bench-smi.txt", ["--hpus", "8"])


# The RDMA bench's virtio-net NICs (rxe's).
RDMA_BENCH_MACS = ("52:54:00:48:51:01", "52:54:00:48:51:02")


def rdma_bench(build, timeout, qemu):
    """perftest between the HPU's ports 1 and 2 against the same between two
    rxe devices, one guest (tests/bench/guest-rdma-bench.sh): the HPU's two
    ports on one in-QEMU hub, the two virtio-net NICs on another."""
    args = ["--env", f"RXE_MAC_A={RDMA_BENCH_MACS[0]}", "--env", f"RXE_MAC_B={RDMA_BENCH_MACS[1]}",
            "--hpu", "hbm-size=1G,serial=HPU-BENCH-NIC,nic-ports=2,port0=hpun0,port1=hpun1"]
    for nd in ("hpun0,hubid=1", "hpun1,hubid=1", "rxen0,hubid=2", "rxen1,hubid=2"):
        args += ["--qemu-arg=-netdev", f"--qemu-arg=hubport,id={nd}"]
    for i, mac in enumerate(RDMA_BENCH_MACS):
        args += ["--qemu-arg=-device", f"--qemu-arg=virtio-net-pci,netdev=rxen{i},mac={mac},romfile="]
    return guest_bench(build, timeout, qemu, "bench-rdma", "tests/bench/guest-rdma-bench.sh",
                       "rdma-bench.txt", args)


def print_rdma(v):
    khz = v.get("tsc_khz")
    for side in ("hpu", "rxe"):
        c = v.get(f"{side}_send_lat_cycles")
        v[f"{side}_send_lat_us"] = c * 1000.0 / khz if c and khz else None
    rows = [("ib_write_bw 64 KiB", v.get("hpu_write_bw_mbs"), "MB/s", "rxe, same guest",
             v.get("rxe_write_bw_mbs"), "MB/s", ratio(v.get("hpu_write_bw_mbs"), v.get("rxe_write_bw_mbs"))),
            ("ib_send_lat 2 B typical", v.get("hpu_send_lat_us"), "us", "rxe, same guest",
             v.get("rxe_send_lat_us"), "us", ratio(v.get("hpu_send_lat_us"), v.get("rxe_send_lat_us")))]
    print("\nRDMA (perftest, Debian's, unchanged: HPU ports 1 -> 2 through the hpu provider, "
          "against rxe0 -> rxe1)\n")
    print_table(rows)
    print("""
How to read the RDMA rows: both pairs run in one guest, each on an in-QEMU
hub of its own, with the same perftest options and iterations. The HPU's
transport runs in the device model (native code in QEMU), rxe's in the
guest kernel (under TCG), so the ratio says how much faster the HPU path is
than the software RoCE a host without the NIC would use, on this platform.
Bandwidth: above 1, the HPU is faster; latency: below 1, the HPU is faster.
Latencies are perftest's typical round trip / 2 in the guest's TSC cycles
(-C), shown in microseconds at the guest kernel's TSC frequency; the ratio
is of the cycles, so it does not depend on that frequency.""")


# The MPI row: one size, the two cases the issue compares.
MPI_BENCH_BYTES = 64 << 20


def mpi_bench(build, timeout, qemu):
    """An Open MPI + UCX allreduce of 64 MiB across two HPU guests
    (tests/vm/mpi/run-mpi.sh): buffers in HBM over the HPUs' RoCE ports,
    against host buffers over rxe on virtio-net, in the same boot."""
    logdir = os.path.join(REPO, build, "bench-mpi")
    cmd = ["bash", "tests/vm/mpi/run-mpi.sh", "--log", logdir, "--cases", "hpu:hbm rxe:host",
           "--sizes", f"{MPI_BENCH_BYTES}:{MPI_BENCH_BYTES}", "--iters", "2",
           "--limit", str(timeout)]
    env = dict(os.environ, HPU_BUILD=os.path.join(REPO, build))
    if qemu:
        env["HPU_QEMU"] = qemu
    r = subprocess.run(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    errors = []
    if r.returncode != 0:
        errors.append(f"run-mpi.sh exit {r.returncode} (logs in {logdir})")
        print("\n".join(r.stdout.rstrip().splitlines()[-20:]))
    v = {}
    try:
        with open(os.path.join(logdir, "figures.txt")) as f:
            for line in f:
                w = dict(x.split("=", 1) for x in line.split()[2:] if "=" in x)
                if line.startswith("FIGURE allreduce") and int(w.get("bytes", 0)) == MPI_BENCH_BYTES:
                    v[f"{w['dev']}_{w['mem']}_busbw"] = float(w["busbw_MBps"])
                    v[f"{w['dev']}_{w['mem']}_us"] = float(w["avg_us"])
    except (FileNotFoundError, ValueError, KeyError) as e:
        errors.append(f"no MPI figures ({e})")
    return v, errors


def print_mpi(v):
    hbm, rxe = v.get("hpu_hbm_busbw"), v.get("rxe_host_busbw")
    print(f"\nMPI allreduce of {MPI_BENCH_BYTES >> 20} MiB across two guests (Open MPI 4.1 + UCX "
          "1.13, Debian's, unchanged; 2 timed iterations after a warm-up)\n")
    print_table([("HBM buffers over the HPUs' RoCE, bus bandwidth", hbm, "MB/s",
                  "host buffers over rxe", rxe, "MB/s", ratio(hbm, rxe))])
    print("""
How to read the MPI row: Open MPI reduces on the CPU, so the HBM buffers
are read and written by the guest's CPU through the HPU's BAR (uncached
MMIO under TCG), and sent by the HPU's RoCE engine from HBM; rxe's buffers
are plain guest RAM sent by the guest kernel's soft RoCE. Above 1, the HPU
path moves the allreduce faster. Bus bandwidth is 2 (n - 1) / n times the
algorithm bandwidth (n = 2 ranks: equal).""")


def print_smi(v):
    smi, floor = v.get("smi_q_us"), v.get("sysfs_floor_us")
    ratio = f"{smi / floor:.2f}" if smi and floor else "n/a"
    print(f"\nhpu-smi -q over {int(v.get('smi_devices', 0))} HPUs: {smi or 0:.0f} us per run; "
          f"floor (the same sysfs and hwmon files read by a plain C++ loop, one process per run): "
          f"{floor or 0:.0f} us; ratio {ratio} (aim: at most 2; {int(v.get('smi_runs', 0))} runs each)")


if __name__ == "__main__":
    sys.exit(main())

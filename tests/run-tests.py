#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# make test: run every check and test suite and print one line per test,
# then "N passed, N failed".
#   1. static checks: register header against the spec, uapi padding (pahole),
#      documentation file tables and licence texts (tools/dev/check-docs.py),
#      kernel style (checkpatch --strict) and sparse, the device model's
#      QEMU checkpatch and names (tools/dev/check-emu.sh), clang-tidy
#   2. host unit tests (Catch2 through CTest), plain and under ASan+UBSan; the
#      rdma-core provider's loading into Debian's libibverbs; make install and
#      make uninstall into a scratch root (tests/install/test-install.sh)
#   3. VM integration tests: a guest with two HPUs runs tests/vm/guest-suite.sh,
#      then a second guest runs it again with QEMU's intel-iommu in strict
#      mode (test names vm-iommu/...); both with three NIC ports wired
#      (nic_wiring(): the NIC tests, tests/vm/nic/)
#   4. the interop run: two guests, the HPU's RoCE v2 against Linux rxe in
#      the other guest (tests/vm/interop/; make test-interop also runs rxe
#      against rxe beside it, the baseline of its figures)
#   5. the MPI run (also alone: make test-mpi): Open MPI with UCX across
#      two HPU guests, an allreduce of HBM buffers (tests/vm/mpi/)
#
# Copyright (c) 2026 The hpu authors

import argparse
import os
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

REPO = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))

# The devices the VM tests boot with, and what the guest must see of them.
VM_HPUS = [
    {"serial": "HPU-TEST-A", "hbm": 2 << 30, "nics": 10,
     "uuid": "6870752d-7465-7374-2d41-000000000001"},
    # An anti-rollback fuse of 1.0.0 (the development image's version): the
    # firmware tests boot it an older image, refused TOO_OLD. Spec version
    # 7's 64 MiB BAR4 (hbm-bar=64M): its HBM is not mapped into processes
    # (test_uapi_mem.cpp, [hbm-mmap]).
    {"serial": "HPU-TEST-B", "hbm": 4 << 30, "nics": 4, "props": "fw-min-version=0x010000,hbm-bar=64M",
     "uuid": "6870752d-7465-7374-2d42-000000000002"},
]

# Kernel log lines the VM suite provokes on purpose that hpu-vm's checks
# (oops, WARN, BUG, lockups, hung tasks...) would otherwise fail. Each one
# exact message; never a whole class such as "WARNING". The driver's fault
# and reset reports (tests/vm/expected-kernel-messages.txt, checked in the
# guest) match none of hpu-vm's patterns, so this list is empty.
VM_ALLOW = []

# Reports of the debug kernel (make test-debug) let through with their call
# trace: the two known Linux 6.12 bugs the fault-injection sweep reaches
# outside hpu.ko (msix_capability_init() unmaps the MSI-X table a second
# time when an allocation of its setup fails: iounmap(NULL) warns;
# register_irq_proc() ignores a /proc/irq/<n>/ file it failed to make and
# unregister_irq_proc() warns when it removes it). tests/vm/fault-probe.py
# tells them from any other report by their call traces.
# Each with the function its call trace must name and, for the second, its
# message (the line before): tools/dev/vm/hpu-vm --allow-report.
DEBUG_ALLOW_REPORTS = [
    r"WARNING: CPU: \d+ PID: \d+ at arch/x86/mm/ioremap\.c:\d+ iounmap\+@@__pci_enable_msix_range",
    r"WARNING: CPU: \d+ PID: \d+ at fs/proc/generic\.c:\d+ remove_proc_entry\+@@unregister_irq_proc"
    r"@@\] name '(smp_affinity|affinity_hint|smp_affinity_list|node|effective_affinity|effective_affinity_list"
    r"|spurious)'$",
]

# The in-guest Catch2 groups of tests/vm/guest-suite.sh, one JUnit file each.
VM_GROUPS = ("", "-uapi-mem", "-dma", "-isolation", "-errors", "-timeouts", "-recovery",
             "-telemetry", "-smi", "-firmware", "-security", "-uq", "-hard-reset", "-compute", "-train")

# Groups of the plain boot only (not vm-iommu, not vm-debug): the PyTorch
# backend's tests (tests/vm/torch/test_torch.py).
VM_PLAIN_GROUPS = ("-torch",)

# The NIC wiring of the VM boots (tests/vm/nic/nic-tests.sh): ports 0 and 1
# of the first HPU joined to each other, its port 2 to a virtio-net NIC,
# and two more virtio-net NICs joined to each other (the baseline of the
# figures); each wire a pair of QEMU dgram back ends on the host's loopback,
# except ports 0 and 1: a QEMU hub (lossless, in the QEMU process) with a
# third, passive virtio-net NIC (NIC_TAP_MAC) on which the RDMA tools test
# (tests/vm/rdma/verbs-tools.sh) captures the RoCE frames, which never reach
# the ports' own netdevs.
NIC_VIRTIO_MACS = ("52:54:00:48:50:01", "52:54:00:48:50:02", "52:54:00:48:50:03")
NIC_TAP_MAC = "52:54:00:48:50:ff"

results = []


def record(name, ok, detail=""):
    results.append((name, ok, detail))
    line = f"{'PASS' if ok else 'FAIL'} {name}"
    if not ok and detail:
        line += f": {detail}"
    print(line, flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, **kw)


def tail(text, n=15):
    return "\n".join(text.rstrip().splitlines()[-n:])


def static_checks(build):
    checks = [
        ("check/register header matches the spec", ["python3", "tools/dev/check-regs.py"]),
        ("check/uapi header has no implicit padding", ["bash", "tools/dev/check-uapi-padding.sh"]),
        ("check/rdma provider ABI header has no implicit padding",
         ["bash", "tools/dev/check-uapi-padding.sh", os.path.join(REPO, "include/uapi/rdma/hpu-abi.h")]),
        ("check/Catch2 test names register with CTest", ["python3", "tools/dev/check-test-names.py"]),
        ("check/documentation file tables and licence texts", ["python3", "tools/dev/check-docs.py"]),
        ("check/kernel checkpatch --strict and sparse", ["bash", "tools/dev/check-kernel.sh"]),
        ("check/device model QEMU checkpatch and names", ["bash", "tools/dev/check-emu.sh"]),
        ("check/clang-tidy", ["bash", "tools/dev/check-tidy.sh", build]),
    ]
    for name, cmd in checks:
        r = run(cmd)
        if r.returncode != 0:
            print(tail(r.stdout, 30))
        record(name, r.returncode == 0, f"exit {r.returncode}")


def junit_cases(path, prefix):
    """Record each <testcase> of a JUnit file (Catch2 or CTest flavour)."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, FileNotFoundError) as e:
        record(f"{prefix}/results readable", False, str(e))
        return
    n = 0
    for tc in root.iter("testcase"):
        n += 1
        name = tc.get("name", "?")
        cls = tc.get("classname", "")
        full = f"{prefix}/{name}" if not cls or cls in name or cls.endswith(".global") \
            else f"{prefix}/{cls}/{name}"
        bad = tc.find("failure") if tc.find("failure") is not None else tc.find("error")
        status = tc.get("status", "run")
        if bad is not None:
            msg = (bad.get("message") or bad.text or "").strip().splitlines()
            record(full, False, msg[0] if msg else "failed")
        elif status in ("notrun", "disabled") or tc.find("skipped") is not None:
            record(full, False, "did not run")
        else:
            record(full, True)
    if n == 0:
        record(f"{prefix}/ran at least one test", False, "no test cases in " + path)


def host_unit(build, label):
    junit = os.path.join(REPO, build, "ctest-junit.xml")
    if os.path.exists(junit):
        os.unlink(junit)
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    r = run(["ctest", "--test-dir", build, "--output-junit", junit, "-j2",
             "--timeout", "120"], env=env)
    if r.returncode != 0:
        print(tail(r.stdout, 40))
    junit_cases(junit, label)


def free_udp_ports(n):
    """n UDP ports of 127.0.0.1 that nothing uses now (QEMU binds them)."""
    socks = []
    for _ in range(n):
        so = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        so.bind(("127.0.0.1", 0))
        socks.append(so)
    ports = [so.getsockname()[1] for so in socks]
    for so in socks:
        so.close()
    return ports


def nic_wiring():
    """QEMU arguments of the NIC wires and the first HPU's port properties."""
    p = free_udp_ports(6)

    def wire(a, b, pa, pb):
        return [f"dgram,id={a},local.type=inet,local.host=127.0.0.1,local.port={pa},"
                f"remote.type=inet,remote.host=127.0.0.1,remote.port={pb}",
                f"dgram,id={b},local.type=inet,local.host=127.0.0.1,local.port={pb},"
                f"remote.type=inet,remote.host=127.0.0.1,remote.port={pa}"]
    netdevs = [f"hubport,id={n},hubid=1" for n in ("hpun0", "hpun1", "vtap")] + \
        wire("hpun2", "vnet0", p[2], p[3]) + wire("vnet1", "vnet2", p[4], p[5])
    args = []
    for nd in netdevs:
        args += ["--qemu-arg=-netdev", f"--qemu-arg={nd}"]
    for i, mac in enumerate(NIC_VIRTIO_MACS):
        args += ["--qemu-arg=-device",
                 f"--qemu-arg=virtio-net-pci,netdev=vnet{i},mac={mac},romfile="]
    args += ["--qemu-arg=-device",
             f"--qemu-arg=virtio-net-pci,netdev=vtap,mac={NIC_TAP_MAC},romfile="]
    return args, "port0=hpun0,port1=hpun1,port2=hpun2"


def rdma_host(build):
    """The verbs provider (tools/rdma-provider) loads into Debian's libibverbs
    and claims hpu devices by name: tests/vm/rdma/provider-load.sh, on the
    host, against a fake sysfs (no kernel RDMA device needed)."""
    prov = os.path.join(REPO, build, "rdma-provider", "lib", "libhpu")
    record_script(["bash", "tests/vm/rdma/provider-load.sh", prov], "rdma/provider-load.sh ran")


def install_host(build):
    """make install into a scratch DESTDIR with PREFIX=/usr, the installed
    files, programs built against them with pkg-config and find_package(hpu),
    the DKMS tree, a second install and make uninstall
    (tests/install/test-install.sh, Documentation/install.md)."""
    record_script(["bash", "tests/install/test-install.sh", build], "install/test-install.sh ran")


def record_script(cmd, ran):
    """Record the "PASS name" / "FAIL name: why" lines a script prints; a
    failure named ran when it fails without printing any."""
    r = run(cmd)
    n = 0
    for line in r.stdout.splitlines():
        word, _, rest = line.partition(" ")
        name, _, why = rest.partition(": ")
        if word in ("PASS", "FAIL"):
            n += 1
            record(name, word == "PASS", why)
    if r.returncode != 0 and n == 0:
        record(ran, False, tail(r.stdout, 3))


def record_file(path, prefix=None):
    """Record the "PASS name" and "FAIL name: why" lines of a results file
    (names vm/... renamed prefix/... when a prefix is given); how many, or
    None when there is no such file."""
    n = 0
    try:
        with open(path) as f:
            for line in f:
                word, _, rest = line.strip().partition(" ")
                name, _, why = rest.partition(": ")
                if word in ("PASS", "FAIL"):
                    if prefix and name.startswith("vm/"):
                        name = prefix + name[2:]
                    record(name, word == "PASS", why)
                    n += 1
    except FileNotFoundError:
        return None
    return n


def two_guest_run(build, prefix, what, script, args=()):
    """A run of two guests (tests/vm/<prefix>/<script> with args): its
    PASS/FAIL lines (names <prefix>/...) from build/<prefix>/results.txt,
    its figures from build/<prefix>/figures.txt."""
    logdir = os.path.join(REPO, build, prefix)
    t0 = time.monotonic()
    r = run(["bash", f"tests/vm/{prefix}/{script}", "--log", logdir, *args],
            env=dict(os.environ, HPU_BUILD=os.path.join(REPO, build)))
    print(f"({what} run took {time.monotonic() - t0:.0f} s)")
    n = record_file(os.path.join(logdir, "results.txt"))
    if not n:
        record(f"{prefix}/{script} wrote its results", False,
               f"exit {r.returncode}: {tail(r.stdout, 5)}")
    elif r.returncode != 0 and not any(not ok for name, ok, _ in results
                                       if name.startswith(prefix + "/")):
        record(f"{prefix}/{script} exit status", False, f"exit {r.returncode}")
    try:
        with open(os.path.join(logdir, "figures.txt")) as f:
            print(f"{what} figures:\n" + f.read().rstrip())
    except FileNotFoundError:
        pass


def interop_tests(build):
    """Two guests on emulated wires (tests/vm/interop/run-interop.sh): the
    HPU's RoCE v2 against Linux rxe in another guest; every step a
    PASS/FAIL line (names interop/...), the wire checked with tshark and
    icrc-check.py. The rxe-against-rxe pair (the baseline of the figures)
    is left to make test-interop: rxe's own retry of a partly acknowledged
    SEND fails its ib_send_bw now and then (Documentation/rdma.md), a step
    the HPU takes no part in."""
    two_guest_run(build, "interop", "interop", "run-interop.sh", ("--pairs", "hpu"))


def mpi_tests(build):
    """Open MPI with UCX across two HPU guests (tests/vm/mpi/run-mpi.sh): an
    allreduce of HBM buffers and of host buffers over the HPUs' RoCE, and of
    host buffers over rxe; every size a PASS/FAIL line (names mpi/...).
    Figures in build/mpi/figures.txt."""
    two_guest_run(build, "mpi", "MPI", "run-mpi.sh")


def vm_tests(build, iommu=False, kernel=None, ko=None):
    """One guest boot running tests/vm/guest-suite.sh; names prefixed vm/ or
    (with intel-iommu, strict) vm-iommu/, or vm-debug/ on a given kernel
    (make test-debug) with the module built for it."""
    prefix = "vm-debug" if kernel else "vm-iommu" if iommu else "vm"
    logdir = os.path.join(REPO, build, "vm-test-" + prefix[3:] if kernel or iommu else "vm-test")
    os.makedirs(logdir, exist_ok=True)
    for f in os.listdir(logdir):
        if f in ("results.txt", "recovery.txt", "nic-figures.txt", "rdma-figures.txt") or (f.startswith("hpu-vm-tests") and f.endswith(".xml")):
            os.unlink(os.path.join(logdir, f))
    expect = ";".join(f"{d['serial']}:{d['hbm']}:{d['nics']}:{d['uuid']}" for d in VM_HPUS)
    # 3 GiB of guest memory: the DMA tests move 1 GiB through a host buffer.
    # The plain boot also runs the PyTorch backend's tests (importing torch
    # in the guest takes 20 s idle, several minutes on a loaded host).
    limit = "900" if iommu or kernel else "1800"
    cmd = ["tools/dev/vm/hpu-vm", "--timeout", limit, "--mem", "3G", "--log", logdir,
           "--env", f"HPU_EXPECT={expect}", "--env", f"HPU_BUILD={os.path.join(REPO, build)}"]
    if iommu:
        cmd += ["--iommu"]
    if kernel:
        # KASAN and lockdep make everything several times slower.
        # no5lvl: with 5-level paging (-cpu max has LA57) the KASAN kernel
        # reported a wild access in an interrupt taken during early boot
        # (identify_cpu, before any module), ahead of its shadow of the
        # direct map; 4-level paging is what the debug build is for.
        cmd += ["--kernel", kernel, "--env", f"HPU_KO={ko}", "--env", "HPU_TIME_SCALE=4",
                "--timeout", "9000", "--append", "no5lvl"]
        for r in DEBUG_ALLOW_REPORTS:
            cmd += ["--allow-report", r]
    for a in VM_ALLOW:
        cmd += ["--allow", a]
    nic_args, nic_props = nic_wiring()
    cmd += nic_args
    for i, d in enumerate(VM_HPUS):
        props = (f"hbm-size={d['hbm'] >> 20}M,serial={d['serial']},nic-ports={d['nics']},"
                 f"uuid={d['uuid']}")
        if i == 0:
            props += "," + nic_props
        cmd += ["--hpu", props + ("," + d["props"] if d.get("props") else "")]
    cmd += ["--", "tests/vm/guest-suite.sh"]
    t0 = time.monotonic()
    r = run(cmd)
    print(tail(r.stdout, 60))
    print(f"({prefix} suite took {time.monotonic() - t0:.0f} s)")
    for fname, what in (("recovery.txt", "recovery times"), ("nic-figures.txt", "NIC figures"),
                        ("rdma-figures.txt", "RDMA figures (perftest, ports 1 and 2)")):
        try:
            with open(os.path.join(logdir, fname)) as f:
                print(f"{prefix}: {what} measured in the guest:")
                print(f.read().rstrip())
        except FileNotFoundError:
            pass
    record(f"{prefix}/guest finished with a clean kernel log", r.returncode != 125,
           f"hpu-vm exit {r.returncode}, logs in {logdir}")
    if record_file(os.path.join(logdir, "results.txt"), prefix) is None:
        record(f"{prefix}/suite results written", False, "no results.txt")
    # One JUnit file per group of in-guest tests (see tests/vm/guest-suite.sh);
    # the PyTorch backend's tests run in the plain boot only.
    groups = VM_GROUPS if iommu or kernel else VM_GROUPS + VM_PLAIN_GROUPS
    for group in groups:
        junit_cases(os.path.join(logdir, f"hpu-vm-tests{group}.xml"), f"{prefix}/hpu-vm-tests")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--build-san", default="build-san")
    ap.add_argument("--only", choices=["static", "unit", "install", "vm", "vm-iommu", "interop", "mpi"],
                    action="append")
    ap.add_argument("--debug-kernel", metavar="VERSION",
                    help="run only the VM suite, on this kernel (make test-debug)")
    ap.add_argument("--ko", help="with --debug-kernel: the hpu.ko built for it")
    a = ap.parse_args()
    if a.debug_kernel:
        t0 = time.monotonic()
        vm_tests(a.build, kernel=a.debug_kernel, ko=a.ko)
        npass = sum(1 for r in results if r[1])
        print(f"\n(make test-debug took {time.monotonic() - t0:.0f} s)")
        print(f"{npass} passed, {len(results) - npass} failed")
        return 1 if len(results) > npass else 0
    only = set(a.only or ["static", "unit", "install", "vm", "vm-iommu", "interop", "mpi"])
    t0 = time.monotonic()
    if "static" in only:
        static_checks(a.build)
    if "unit" in only:
        host_unit(a.build, "unit")
        if a.build_san and os.path.isdir(os.path.join(REPO, a.build_san)):
            host_unit(a.build_san, "unit-asan-ubsan")
        else:
            record("unit-asan-ubsan/build present", False, f"no {a.build_san}")
        rdma_host(a.build)
    if "install" in only:
        install_host(a.build)
    if "vm" in only:
        vm_tests(a.build)
    if "vm-iommu" in only:
        vm_tests(a.build, iommu=True)
    if "interop" in only:
        interop_tests(a.build)
    if "mpi" in only:
        mpi_tests(a.build)
    npass = sum(1 for r in results if r[1])
    nfail = len(results) - npass
    if nfail:
        print("\nFailed:")
        for name, ok, why in results:
            if not ok:
                print(f"  {name}: {why}")
    print(f"\n(make test took {time.monotonic() - t0:.0f} s)")
    print(f"{npass} passed, {nfail} failed")
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Issue 9, device model (spec version 5), through QEMU's qtest protocol with
# the HPU behind a PCIe root port with native hot-plug, configuration space
# through MMCONFIG:
#
# - FLR: BCR_FLR resets the function as a power-on reset and reads back 0;
#   a LIN_DMA running when it comes stops: no completion record, nothing
#   written after it (checked once a new job on the same engine completed).
# - FLR never waits with the BQL dropped (the review of issue 9's fixes):
#   with a DMA of the device in flight the configuration write returns at
#   once and the function stays in reset (Device Status Transactions
#   Pending, BAR reads all ones, writes dropped) until that DMA is done.
#   The DMA is a LIN_DMA into the device's own BAR4 window, so each of its
#   MMIO accesses needs the BQL: sent in one batch, the FLR and the reads
#   after it run in one go on the main loop, and the DMA cannot finish in
#   between.
# - A device write that re-enters QEMU and unplugs the device: an MSI-X
#   message (raised on the vCPU) and a WRITE_VALUE packet (written by the
#   engine's own thread) aimed at the root port's slot control, powering the
#   slot off.  QEMU must neither abort nor hang; the device is gone.
#
# Usage: qtest_hpu_sec.py [QEMU]   (default: tools/dev/build-qemu.sh --print-path)
# Exit status 0 pass, 1 fail, 77 skip (QEMU not built).
#
# Copyright (c) 2026 The hpu authors

import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, HERE)
import qtest_hpu as base  # noqa: E402

R = base.R
check = base.check
le = base.le
cqe = base.cqe

MMCFG = 0xB0000000          # q35 PCIEXBAR, enabled by the test
RP = (0, 2, 0)              # the root port
DEV = (1, 0, 0)             # the HPU behind it
BAR0 = 0xC0000000
BAR2 = 0xC1000000       # above BAR0 (16 MiB, spec version 7)
BAR4 = 0xD0000000          # 256 MiB of HBM: a 256 MiB BAR4 (spec version 8)
HOST = 1 << 63
MS = 1000000


class QTest(base.QTest):
    """base.QTest with the HPU behind a root port, config space by MMCONFIG."""

    def __init__(self, qemu, log):
        self.err = tempfile.TemporaryFile(mode="w+")
        self.p = subprocess.Popen(
            [qemu, *base.FW, "-machine", "q35", "-accel", "qtest", "-qtest", "stdio",
             "-nodefaults", "-display", "none", "-m", "256M",
             "-d", "guest_errors", "-D", log,
             # native PCIe hot-plug on the root port's slot
             "-global", "ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off",
             "-device", "pcie-root-port,id=rp,bus=pcie.0,addr=02.0,chassis=1,slot=1",
             "-device", "hpu,bus=rp,hbm-size=256M"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
            text=True, bufsize=1)
        self.enable_mmcfg()

    def enable_mmcfg(self):
        """MMCONFIG at 0xb0000000, 256 buses (MCH PCIEXBAR through 0xcf8)."""
        self.cmd("outl 0xcf8 0x80000060")
        self.cmd(f"outl 0xcfc {MMCFG | 1:#x}")
        self.cmd("outl 0xcf8 0x80000064")
        self.cmd("outl 0xcfc 0")

    def batch(self, lines):
        """Send @lines in one write (QEMU handles them in one go, without
        returning to its main loop) and return their values."""
        self.p.stdin.write("".join(line + "\n" for line in lines))
        out = []
        while len(out) < len(lines):
            resp = self.p.stdout.readline()
            if not resp:
                raise RuntimeError("QEMU exited: " + self.stderr_tail())
            if resp.startswith("FAIL"):
                raise RuntimeError(f"batch: {resp.strip()}")
            if resp.startswith("OK"):
                words = resp.split()
                out.append(int(words[1], 0) if len(words) > 1 else None)
        return out

    def alive(self):
        return self.p.poll() is None

    def stderr_tail(self):
        """What QEMU said besides the qtest protocol log."""
        self.err.seek(0)
        lines = [ln for ln in self.err.read().splitlines() if not ln.startswith("[")]
        return "; ".join(lines)[-500:]

    @staticmethod
    def cfg_at(bdf, reg):
        b, d, f = bdf
        return MMCFG + (b << 20) + (d << 15) + (f << 12) + reg

    def cfg_rd(self, bdf, reg, size=4):
        op = {1: "readb", 2: "readw", 4: "readl"}[size]
        return self.cmd(f"{op} {self.cfg_at(bdf, reg):#x}")

    def cfg_wr(self, bdf, reg, val, size=4):
        op = {1: "writeb", 2: "writew", 4: "writel"}[size]
        self.cmd(f"{op} {self.cfg_at(bdf, reg):#x} {val:#x}")

    def cap(self, bdf, cap_id):
        pos = self.cfg_rd(bdf, 0x34, 1)
        while pos:
            if self.cfg_rd(bdf, pos, 1) == cap_id:
                return pos
            pos = self.cfg_rd(bdf, pos + 1, 1)
        return 0

    def setup_bridge(self):
        self.cfg_wr(RP, 0x18, 0x00010100)          # primary 0, secondary 1, subordinate 1
        self.cfg_wr(RP, 0x20, 0xDFF0C000)          # memory window 0xc0000000-0xdfffffff
        # 64-bit prefetchable window 64 GiB - 96 GiB: where qtest_hpu's
        # program_bars() puts BAR4 (the hot-plug fuzzer uses it)
        self.cfg_wr(RP, 0x24, 0xFFF10001)
        self.cfg_wr(RP, 0x28, 0x10)
        self.cfg_wr(RP, 0x2C, 0x17)
        self.cfg_wr(RP, 0x04, 0x6, 2)              # memory + bus master

    def setup_dev(self):
        self.cfg_wr(DEV, 0x10, BAR0)
        self.cfg_wr(DEV, 0x14, 0)
        self.cfg_wr(DEV, 0x18, BAR2)
        self.cfg_wr(DEV, 0x1C, 0)
        self.cfg_wr(DEV, 0x20, BAR4)
        self.cfg_wr(DEV, 0x24, 0)
        self.cfg_wr(DEV, 0x04, 0x6, 2)


def poll(what, cond, tries=5000):
    for _ in range(tries):
        if cond():
            return True
        time.sleep(0.001)
    check(False, what)
    return False


def stream(q, e, s, ring, cq):
    qs = 0x10000 + 0x1000 * e + 0x100 * s
    q.wr(qs + 0x00, ring)
    q.wr(qs + 0x04, 0)
    q.wr(qs + 0x08, 16)
    q.wr(qs + 0x14, cq)
    q.wr(qs + 0x18, 0)
    q.wr(qs + 0x1C, 16)
    q.wr(qs + 0x24, 1)                          # ENABLE
    return qs


def flr(qemu, log):
    """FLR is the spec's power-on reset and stops a running LIN_DMA."""
    q = QTest(qemu, log)
    try:
        q.setup_bridge()
        q.setup_dev()
        check(q.cfg_rd(DEV, 0) == R["HPU_PCI_DEVICE_ID"] << 16 | R["HPU_PCI_VENDOR_ID"],
              "flr: the HPU is at 01:00.0 behind the root port")
        pcie = q.cap(DEV, 0x10)
        check(q.cfg_rd(DEV, pcie + 4) & (1 << 28) != 0, "flr: DEVCAP advertises FLR")
        q.cmd(f"clock_step {10 * MS}")          # ROM_INIT over

        # A 64 MiB host -> host copy waiting on SOB 7, released just before
        # the FLR, so the FLR finds it before, in or (rarely) after the copy.
        RING, CQ, CB, SRC, DST = 0x100000, 0x101000, 0x102000, 0x1000000, 0x5000000
        N = 64 << 20
        cb = (le((0x04, 4), (7, 4), (1, 4), (0, 4)) +                       # WAIT SOB 7 >= 1
              le((0x01, 4), (0, 4), (HOST | SRC, 8), (HOST | DST, 8), (N, 8)))
        q.mem_write(CB, cb)
        q.mem_write(SRC, b"\x5a" * 4096)
        q.mem_write(SRC + N - 4096, b"\xa5" * 4096)
        q.mem_write(RING, le((HOST | CB, 8), (len(cb), 4), (0, 2), (0, 2), (0x42, 8), (0, 8)))
        qs = stream(q, 0, 0, RING, CQ)
        q.wr(qs + 0x0C, 1)
        poll("flr: the job waits on SOB 7", lambda: q.rd(qs + 0x28) == 2)
        q.wr(R["HPU_REG_SCRATCH"], 0x1234)
        q.wr(0x20000 + 4 * 7, 1)                # release the WAIT
        devctl = q.cfg_rd(DEV, pcie + 8, 2)
        q.cfg_wr(DEV, pcie + 8, devctl | 0x8000, 2)     # Initiate FLR
        check(q.cfg_rd(DEV, pcie + 8, 2) & 0x8000 == 0, "flr: BCR_FLR reads back 0")
        check(q.cfg_rd(DEV, 0x10) & ~0xF == 0, "flr: BAR0 reset by the FLR")
        # The piece of the copy in flight may still be landing: the FLR is
        # done once Transactions Pending clears (a driver waits for that).
        poll("flr: Transactions Pending clears",
             lambda: q.cfg_rd(DEV, pcie + 10, 2) & 0x20 == 0)
        after = q.mem_read(DST + N - 4096, 16)
        first = q.mem_read(DST, 16)
        q.setup_dev()
        check(q.rd(R["HPU_REG_SCRATCH"]) == 0, "flr: SCRATCH back to its reset value")
        check(q.rd(R["HPU_REG_CPU_STATUS"]) == R["HPU_CPU_ROM_INIT"],
              "flr: the boot ROM starts again (ROM_INIT)")
        check(q.rd(qs + 0x24) == 0 and q.rd(qs + 0x20) == 0, "flr: stream registers reset")
        check(q.rd(0x20000 + 4 * 7) == 0, "flr: sync objects reset")
        # A new job on the same engine: once it completed, the engine thread
        # is past the old job's step.
        RING2, CQ2, CB2 = 0x110000, 0x111000, 0x112000
        q.mem_write(CB2, le((0x02, 4), (0xF1F1, 4), (HOST | 0x113000, 8)))
        q.mem_write(RING2, le((HOST | CB2, 8), (16, 4), (0, 2), (0, 2), (0x43, 8), (0, 8)))
        qs = stream(q, 0, 0, RING2, CQ2)
        q.wr(qs + 0x0C, 1)
        if poll("flr: a job after the FLR completes", lambda: q.rd(qs + 0x20) == 1):
            check(q.mem_read(CQ2, 16) == cqe(0x43, 0, 0, 0, 0), "flr: its record is OK")
        check(q.mem_read(CQ, 16) == bytes(16), "flr: no completion record of the old job")
        check(q.mem_read(DST + N - 4096, 16) == after and q.mem_read(DST, 16) == first,
              "flr: the old LIN_DMA wrote nothing after the FLR")
        check(q.mem_read(DST + N - 4096, 16) != b"\xa5" * 16,
              "flr: the old LIN_DMA did not run to its end")
    finally:
        q.close()


def flr_in_flight(qemu, log):
    """An FLR with a DMA of the device in flight returns at once; the
    function stays in reset until that DMA is done, then works."""
    q = QTest(qemu, log)
    try:
        q.setup_bridge()
        q.setup_dev()
        pcie = q.cap(DEV, 0x10)
        devctl_at = q.cfg_at(DEV, pcie + 8)
        devsta_at = q.cfg_at(DEV, pcie + 10)
        q.cmd(f"clock_step {10 * MS}")          # ROM_INIT over
        RING, CQ, CB, SRC = 0x100000, 0x101000, 0x102000, 0x1000000
        N = 16 << 20
        q.mem_write(SRC, b"\x5a" * 4096)
        seen = None
        # An FLR that lands between two 1 MiB pieces finds nothing in
        # flight and is done at once: try again (three misses in a row
        # would be a gap hit each time).
        for attempt in range(3):
            cb = le((0x01, 4), (0, 4), (HOST | SRC, 8), (HOST | BAR4, 8), (N, 8))
            q.mem_write(CB, cb)
            q.mem_write(RING, le((HOST | CB, 8), (len(cb), 4), (0, 2), (0, 2),
                                 (0x50 + attempt, 8), (0, 8)))
            q.mem_write(CQ, bytes(16))
            qs = stream(q, 0, 0, RING, CQ)
            q.wr(qs + 0x0C, 1)
            if not poll("flr-in-flight: the LIN_DMA into BAR4 runs",
                        lambda: q.cmd(f"readl {BAR4:#x}") == 0x5A5A5A5A):
                break
            devctl = q.cfg_rd(DEV, pcie + 8, 2)
            _, devsta, _, _, _, magic, win, _, scratch = q.batch([
                f"writew {devctl_at:#x} {devctl | 0x8000:#x}",  # Initiate FLR
                f"readw {devsta_at:#x}",
                f"writel {q.cfg_at(DEV, 0x10):#x} {BAR0:#x}",
                f"writel {q.cfg_at(DEV, 0x20):#x} {BAR4:#x}",
                f"writew {q.cfg_at(DEV, 0x04):#x} 0x6",
                f"readl {BAR0 + R['HPU_REG_MAGIC']:#x}",
                f"readl {BAR4 + 0x1000:#x}",
                f"writel {BAR0 + R['HPU_REG_SCRATCH']:#x} 0x77",
                f"readl {BAR0 + R['HPU_REG_SCRATCH']:#x}"])
            if devsta & 0x20:
                seen = (magic, win, scratch)
                break
            q.setup_dev()
        check(seen is not None,
              "flr-in-flight: the FLR returned with the DMA in flight "
              "(Device Status: Transactions Pending)")
        if seen:
            magic, win, scratch = seen
            check(magic == 0xFFFFFFFF, f"flr-in-flight: BAR0 reads all ones in reset ({magic:#x})")
            check(win == 0xFFFFFFFF, f"flr-in-flight: BAR4 reads all ones in reset ({win:#x})")
            check(scratch == 0xFFFFFFFF, "flr-in-flight: a write in reset does not show")
        poll("flr-in-flight: the reset is done once the DMA is (Transactions Pending clears)",
             lambda: q.cfg_rd(DEV, pcie + 10, 2) & 0x20 == 0)
        check(q.rd(R["HPU_REG_MAGIC"]) == R["HPU_MAGIC_VALUE"], "flr-in-flight: BAR0 answers again")
        check(q.rd(R["HPU_REG_SCRATCH"]) == 0, "flr-in-flight: the write in reset was dropped")
        check(q.rd(R["HPU_REG_CPU_STATUS"]) == R["HPU_CPU_ROM_INIT"],
              "flr-in-flight: the boot ROM starts again")
        check(q.rd(qs + 0x24) == 0, "flr-in-flight: stream registers reset")
        check(q.mem_read(CQ, 16) == bytes(16), "flr-in-flight: no completion record")
        check(q.cmd(f"readl {BAR4 + N - 4096:#x}") != 0x5A5A5A5A,
              "flr-in-flight: the LIN_DMA did not run to its end")
        check(q.rd(R["HPU_REG_ERROR"]) == 0, "flr-in-flight: ERROR clear")
    finally:
        q.close()


def trigger(q, how, sltctl_addr, off, rp_exp):
    """The write aimed at slot control: an MSI-X message or a WRITE_VALUE."""
    if how == "msix":
        msix = q.cap(DEV, 0x11)
        q.cmd(f"writel {BAR2 + 16 * 5:#x} {sltctl_addr:#x}")
        q.cmd(f"writel {BAR2 + 16 * 5 + 4:#x} 0")
        q.cmd(f"writel {BAR2 + 16 * 5 + 8:#x} {off:#x}")
        q.cmd(f"writel {BAR2 + 16 * 5 + 12:#x} 0")
        q.cfg_wr(DEV, msix + 2, 0x8000, 2)  # MSI-X enable
        q.wr(R["HPU_REG_IRQ_TEST"], 5)      # the message unplugs the device
    else:
        RING, CQ, CB = 0x100000, 0x101000, 0x102000
        q.mem_write(CB, le((0x02, 4), (off, 4), (HOST | sltctl_addr, 8)) +
                    le((0x00, 4), (0, 4)))
        q.mem_write(RING, le((HOST | CB, 8), (24, 4), (0, 2), (0, 2), (1, 8), (0, 8)))
        qs = stream(q, 3, 1, RING, CQ)
        q.wr(qs + 0x0C, 1)
        poll(f"{how}: the slot powers off",
             lambda: not q.alive() or
             q.cfg_rd(RP, rp_exp + 0x1A, 2) & 0x40 == 0)


def unplug_by(qemu, log, how):
    """A device write aimed at the root port's slot control powers the slot
    off: QEMU unplugs the device from inside that write and carries on."""
    q = QTest(qemu, log)
    try:
        q.setup_bridge()
        q.setup_dev()
        rp_exp = q.cap(RP, 0x10)
        sltctl_addr = q.cfg_at(RP, rp_exp + 0x18)
        sltctl = q.cfg_rd(RP, rp_exp + 0x18, 2)
        check(q.cfg_rd(RP, rp_exp + 0x1A, 2) & 0x40 != 0, f"{how}: slot occupied (PDS)")
        off = (sltctl & ~0x0700) | 0x0700       # power indicator off, power off
        try:
            trigger(q, how, sltctl_addr, off, rp_exp)
        except RuntimeError as e:               # QEMU died
            print(f"  {e}"[:300])
        alive = q.alive()
        if alive:
            try:
                gone = poll(f"{how}: the device is unplugged",
                            lambda: q.cfg_rd(DEV, 0, 4) == 0xFFFFFFFF)
                # the main loop still runs (the threads' references go in
                # bottom halves there) and QEMU still answers
                q.cmd(f"clock_step {MS}")
                check(gone and q.cfg_rd(RP, rp_exp + 0x1A, 2) & 0x40 == 0,
                      f"{how}: slot empty, device gone")
                q.cmd("writel 0x200000 0x600d")
                check(q.cmd("readl 0x200000") == 0x600D, f"{how}: QEMU keeps running")
            except RuntimeError as e:
                alive = False
                print(f"  {e}")
        check(alive, f"{how}: QEMU did not abort ({'' if alive else q.stderr_tail()})")
    finally:
        try:
            q.close()
        except (BrokenPipeError, OSError, subprocess.TimeoutExpired):
            q.p.kill()


def main():
    qemu = sys.argv[1] if len(sys.argv) > 1 else base.find_qemu()
    if not qemu:
        return 77
    log = tempfile.NamedTemporaryFile(prefix="hpu-qtest-sec-", suffix=".log", delete=False).name
    try:
        flr(qemu, log)
        flr_in_flight(qemu, log)
        unplug_by(qemu, log, "msix")
        unplug_by(qemu, log, "dma")
    finally:
        os.unlink(log)
    print(f"{'FAIL' if base.FAILS else 'PASS'}: {len(base.FAILS)} failed")
    return 1 if base.FAILS else 0


if __name__ == "__main__":
    sys.exit(main())

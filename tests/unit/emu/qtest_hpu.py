#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Check the HPU device inside the QEMU binary built by tools/dev/build-qemu.sh,
# without a guest: QEMU's qtest protocol drives PCI config space, BAR0, the
# MSI-X table and the virtual clock directly.  This covers the glue
# (emu/hpu_pci.c) that the host unit tests of hpu_core.c cannot: PCI
# identity, 64-bit BARs, the PCIe and MSI-X capabilities, MSI-X delivery and
# masking, the soft reset timer on the virtual clock, property errors and the
# guest-error log; for spec version 3, the management CPU's boot and
# heartbeat, heartbeat events, an engine hang caught by the watchdog, and a
# hard reset with hung engine threads, all on the virtual clock; for spec
# version 4, the boot ROM with a real signed image (made by the packer CLI,
# build/tools/hpu-fwpack/hpu-fwpack, with the development key): a refused
# image, a full boot read by DMA from guest RAM, the mailbox, the sensors,
# the flash, the reboot after a hard reset and the fw-* property errors.
#
# Usage: qtest_hpu.py [QEMU]   (default: tools/dev/build-qemu.sh --print-path)
# Exit status 0 pass, 1 fail, 77 skip (QEMU not built).
#
# Copyright (c) 2026 The hpu authors

import os
import re
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.realpath(__file__))
ROOT = os.path.realpath(os.path.join(HERE, "..", "..", ".."))


def regs_from_header():
    """The #defines of include/hw/hpu_regs.h that are plain numbers, and
    the refusal codes HPU_FW_ERR_* of the HPU_FW_REFUSALS table in
    include/hw/hpu_fw_image.h."""
    regs = {}
    with open(os.path.join(ROOT, "include", "hw", "hpu_regs.h")) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[0] == "#define" and "(" not in parts[1]:
                try:
                    regs[parts[1]] = int(parts[2], 0)
                except ValueError:
                    pass
    with open(os.path.join(ROOT, "include", "hw", "hpu_fw_image.h")) as f:
        for m in re.finditer(r"^\s*X\((\w+), (\d+)\)", f.read(), re.M):
            regs["HPU_FW_ERR_" + m.group(1)] = int(m.group(2))
    return regs


R = regs_from_header()
PACKER = os.path.join(ROOT, "build", "tools", "hpu-fwpack", "hpu-fwpack")
FWSRC = os.path.join(ROOT, "firmware", "hpu-h1.fwsrc")
FWKEY = os.path.join(ROOT, "firmware", "keys", "hpu-dev-ed25519.key")
FWPUB = os.path.join(ROOT, "firmware", "keys", "hpu-dev-ed25519.pub")
IMG_ADDR = 0x600000         # guest RAM where the image is put for the ROM
MS = 1000000
FW = ["-L", "/usr/share/seabios", "-L", "/usr/share/qemu"]
BAR0 = 0xC0000000
BAR2 = 0xC1000000       # above BAR0 (16 MiB, spec version 7)
BAR4 = 1 << 36             # 64-bit: aligned for any BAR4 size (up to 32 GiB, spec version 8)
MSI_TARGET = 0x00100000     # guest RAM the MSI-X messages are written to
FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


class QTest:
    def __init__(self, qemu, devargs, log):
        # QEMU logs every qtest command to stderr: a file, not a pipe nobody
        # reads (a full pipe would block QEMU).
        self.err = tempfile.TemporaryFile(mode="w+")
        self.p = subprocess.Popen(
            [qemu, *FW, "-machine", "q35", "-accel", "qtest", "-qtest", "stdio",
             "-nodefaults", "-display", "none", "-d", "guest_errors", "-D", log,
             "-device", devargs],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
            text=True, bufsize=1)

    def cmd(self, line):
        self.p.stdin.write(line + "\n")
        while True:
            resp = self.p.stdout.readline()
            if not resp:
                self.err.seek(0)
                raise RuntimeError("QEMU exited: " + self.err.read()[-2000:])
            if resp.startswith("OK") or resp.startswith("FAIL"):
                break
        if not resp.startswith("OK"):
            raise RuntimeError(f"{line}: {resp.strip()}")
        words = resp.split()
        return int(words[1], 0) if len(words) > 1 else None

    def close(self):
        self.p.stdin.close()
        self.p.terminate()      # qtest does not exit on end of input
        self.p.wait(timeout=30)
        self.err.close()

    # PCI config space of 00:01.0 through the 0xcf8/0xcfc mechanism
    def cfg_addr(self, reg):
        self.cmd(f"outl 0xcf8 {0x80000000 | (1 << 11) | (reg & 0xfc):#x}")

    def cfg_read(self, reg, size=4):
        self.cfg_addr(reg)
        port = 0xCFC + (reg & 3)
        op = {1: "inb", 2: "inw", 4: "inl"}[size]
        return self.cmd(f"{op} {port:#x}")

    def cfg_write(self, reg, val, size=4):
        self.cfg_addr(reg)
        port = 0xCFC + (reg & 3)
        op = {1: "outb", 2: "outw", 4: "outl"}[size]
        self.cmd(f"{op} {port:#x} {val:#x}")

    def rd(self, off, op="readl"):
        return self.cmd(f"{op} {BAR0 + off:#x}")

    def wr(self, off, val, op="writel"):
        self.cmd(f"{op} {BAR0 + off:#x} {val:#x}")

    def mem_write(self, addr, data):
        self.cmd(f"write {addr:#x} {len(data)} 0x{bytes(data).hex()}")

    def mem_read(self, addr, n):
        self.p.stdin.write(f"read {addr:#x} {n}\n")
        resp = self.p.stdout.readline()
        while not (resp.startswith("OK") or resp.startswith("FAIL")):
            resp = self.p.stdout.readline()
        if not resp.startswith("OK"):
            raise RuntimeError(f"read {addr:#x}: {resp.strip()}")
        return bytes.fromhex(resp.split()[1][2:])

    def find_cap(self, cap_id):
        pos = self.cfg_read(0x34, 1)
        while pos:
            if self.cfg_read(pos, 1) == cap_id:
                return pos
            pos = self.cfg_read(pos + 1, 1)
        return 0


def program_bars(q):
    """BAR0, BAR2 and BAR4 at their fixed addresses, memory space and bus
    master on."""
    q.cfg_write(0x10, BAR0)
    q.cfg_write(0x14, 0)
    q.cfg_write(0x18, BAR2)
    q.cfg_write(0x1C, 0)
    q.cfg_write(0x20, BAR4 & 0xFFFFFFFF)
    q.cfg_write(0x24, BAR4 >> 32)
    q.cfg_write(0x04, 0x6, 2)     # memory space + bus master


def hbm_window(q):
    """BAR4 reaches HBM at HBM_WIN_BASE, any size 1-8, sparse zeros."""
    check(q.cmd(f"readq {BAR4 + 0x123450:#x}") == 0, "never-written HBM reads 0")
    q.cmd(f"writeq {BAR4 + 0x1000:#x} 0x1122334455667788")
    q.cmd(f"writeb {BAR4 + 0x1003:#x} 0xab")
    check(q.cmd(f"readq {BAR4 + 0x1000:#x}") == 0x11223344AB667788, "BAR4 64/8-bit write, read back")
    check(q.cmd(f"readw {BAR4 + 0x1003:#x}") == 0x44AB, "BAR4 unaligned 16-bit read")
    # spec version 8: BAR4 covers HBM (6 GiB here: an 8 GiB BAR), one to one
    q.mem_write(BAR4 + 0x4000000, b"past-64MiB-16byt")
    check(q.mem_read(BAR4 + 0x4000000, 16) == b"past-64MiB-16byt", "BAR4 beyond its old 64 MiB")
    q.mem_write(BAR4 + (6 << 30) - 16, b"hbm-end-16bytes!")
    check(q.mem_read(BAR4 + (6 << 30) - 16, 16) == b"hbm-end-16bytes!", "BAR4 reaches the last HBM bytes")
    check(q.cmd(f"readq {BAR4 + (6 << 30):#x}") == 0 and
          q.rd(R["HPU_REG_ERROR"]) == R["HPU_ERROR_BAD_ACCESS"], "BAR4 past HBM flagged")
    q.wr(R["HPU_REG_ERROR"], R["HPU_ERROR_BAD_ACCESS"])
    # move the window up 64 MiB: offset 0x1000 of the first window is gone
    q.wr(R["HPU_REG_HBM_WIN_BASE_LO"], 0x4000000)
    check(q.cmd(f"readq {BAR4 + 0x1000:#x}") == 0, "window base moves the window")
    q.wr(R["HPU_REG_HBM_WIN_BASE_LO"], 0)
    check(q.cmd(f"readq {BAR4 + 0x1000:#x}") == 0x11223344AB667788, "HBM kept its content")
    # a window beyond HBM (6 GiB): reads 0 and flags BAD_ACCESS
    q.wr(R["HPU_REG_HBM_WIN_BASE_HI"], 2)
    check(q.cmd(f"readl {BAR4:#x}") == 0 and
          q.rd(R["HPU_REG_ERROR"]) == R["HPU_ERROR_BAD_ACCESS"], "window beyond HBM flagged")
    q.wr(R["HPU_REG_HBM_WIN_BASE_HI"], 0)
    q.wr(R["HPU_REG_ERROR"], 0xFFFFFFFF)


def pubkey():
    with open(FWPUB) as f:
        return next(l.strip() for l in f if l.strip() and not l.startswith("#"))


def pack(tmpdir, name, *extra):
    out = os.path.join(tmpdir, name)
    subprocess.run([PACKER, "--source", FWSRC, "--out", out, *extra], check=True,
                   capture_output=True)
    with open(out, "rb") as f:
        return f.read()


def settle(q, reg, busy, what, tries=2000):
    """The boot ROM's worker thread reads and verifies in real time while the
    qtest clock stands still: if its result was not ready when the timer
    fired, the timer looks again every 100 us; step until @reg leaves @busy."""
    for _ in range(tries):
        if q.rd(reg) != busy:
            return
        time.sleep(0.001)
        q.cmd("clock_step 100000")
    check(False, f"{what}: still busy")


def boot_host(q, image, expect_ok=True):
    """BOOT_CMD 1 with @image in guest RAM; returns CPU_STATUS once VERIFYING
    ends (10 ms later, or at a retry if the worker was late)."""
    q.mem_write(IMG_ADDR, image)
    q.wr(R["HPU_REG_FW_IMG_ADDR_LO"], IMG_ADDR)
    q.wr(R["HPU_REG_FW_IMG_ADDR_HI"], 0)
    q.wr(R["HPU_REG_FW_IMG_SIZE"], len(image))
    q.wr(R["HPU_REG_BOOT_CMD"], R["HPU_BOOT_HOST"])
    check(q.rd(R["HPU_REG_CPU_STATUS"]) == R["HPU_CPU_VERIFYING"], "VERIFYING after BOOT_CMD")
    q.cmd(f"clock_step {10 * MS}")
    settle(q, R["HPU_REG_CPU_STATUS"], R["HPU_CPU_VERIFYING"], "BOOT_CMD 1")
    # one read, by the worker: the host may change the image afterwards
    q.mem_write(IMG_ADDR, bytes(len(image)))
    return q.rd(R["HPU_REG_CPU_STATUS"])


def firmware(q, tmpdir, images):
    """Spec version 4: boot ROM, verification, mailbox, sensors, flash."""
    good, corrupt = images["good"], bytearray(images["good"])
    corrupt[200] ^= 1
    check(q.rd(R["HPU_REG_FW_MIN_VERSION"]) == 0x010000, "FW_MIN_VERSION from fw-min-version")
    check(q.rd(R["HPU_REG_FLASH_VERSION"]) == 0, "empty flash")
    q.wr(R["HPU_REG_IRQ_STATUS"], 0xFFFFFFFF)
    check(boot_host(q, bytes(corrupt)) == R["HPU_CPU_BOOT_FAILED"], "corrupt image: BOOT_FAILED")
    check(q.rd(R["HPU_REG_BOOT_ERROR"]) == R["HPU_FW_ERR_CORRUPT"], "BOOT_ERROR CORRUPT")
    check(q.rd(R["HPU_REG_IRQ_STATUS"]) == R["HPU_IRQ_FW_BOOT"], "IRQ_STATUS.FW_BOOT on refusal")
    q.wr(R["HPU_REG_IRQ_STATUS"], 0xFFFFFFFF)
    check(boot_host(q, images["old"]) == R["HPU_CPU_BOOT_FAILED"] and
          q.rd(R["HPU_REG_BOOT_ERROR"]) == R["HPU_FW_ERR_TOO_OLD"], "version below the fuse: TOO_OLD")
    check(boot_host(q, images["other"]) == R["HPU_CPU_BOOT_FAILED"] and
          q.rd(R["HPU_REG_BOOT_ERROR"]) == R["HPU_FW_ERR_BAD_SIGNATURE"],
          "signed with another key: BAD_SIGNATURE")
    q.wr(R["HPU_REG_IRQ_STATUS"], 0xFFFFFFFF)
    check(boot_host(q, good) == R["HPU_CPU_BOOTING"], "good image: BOOTING after 10 ms")
    check(q.rd(R["HPU_REG_BOOT_ERROR"]) == 0 and q.rd(R["HPU_REG_FW_VERSION"]) == 0x010100,
          "BOOT_ERROR 0, FW_VERSION 1.1.0")
    check(q.rd(0x4200) == 0,                     # TEMP0
          "sensors read 0 while BOOTING")
    q.cmd(f"clock_step {20 * MS}")
    check(q.rd(R["HPU_REG_CPU_STATUS"]) == R["HPU_CPU_RUNNING"], "RUNNING 20 ms later")
    check(q.rd(R["HPU_REG_IRQ_STATUS"]) == R["HPU_IRQ_FW_BOOT"], "IRQ_STATUS.FW_BOOT on RUNNING")
    build = b"".join(q.rd(0x4040 + 4 * i).to_bytes(4, "little") for i in range(8))
    check(build.rstrip(b"\0") == b"qtest 1.1.0", f"FW_BUILD ({build!r})")
    q.wr(R["HPU_REG_BOOT_CMD"], 1)
    check(q.rd(R["HPU_REG_CPU_STATUS"]) == R["HPU_CPU_RUNNING"], "BOOT_CMD while RUNNING ignored")

    # mailbox: GET_INFO, SET_LIMIT out of range, GET_CLOCK
    q.wr(R["HPU_REG_MBOX_CMD"], 0xBEEF0000 | R["HPU_MBOX_GET_INFO"])
    check(q.rd(R["HPU_REG_MBOX_STATUS"]) & 3 == R["HPU_MBOX_BUSY"], "mailbox BUSY at once")
    q.cmd("clock_step 100000")
    check(q.rd(R["HPU_REG_MBOX_STATUS"]) == 0xBEEF0000 | R["HPU_MBOX_DONE"] and
          q.rd(R["HPU_REG_MBOX_RESP0"]) == 5 and q.rd(R["HPU_REG_MBOX_RESP1"]) == 0x010100,
          "GET_INFO: 5 clock levels, fw_version")
    q.wr(R["HPU_REG_MBOX_ARG0"], R["HPU_LIMIT_POWER_CAP"])
    q.wr(R["HPU_REG_MBOX_ARG1"], 10)
    q.wr(R["HPU_REG_MBOX_CMD"], 0x00010000 | R["HPU_MBOX_SET_LIMIT"])
    q.cmd("clock_step 100000")
    check(q.rd(R["HPU_REG_MBOX_STATUS"]) == 0x00010000 | R["HPU_MBOX_BAD_ARG"] << 8 | R["HPU_MBOX_DONE"],
          "SET_LIMIT below min: BAD_ARG")
    q.wr(R["HPU_REG_MBOX_ARG0"], 4)
    q.wr(R["HPU_REG_MBOX_CMD"], R["HPU_MBOX_GET_CLOCK"])
    q.cmd("clock_step 100000")
    check(q.rd(R["HPU_REG_MBOX_RESP0"]) == 1600 and q.rd(R["HPU_REG_MBOX_RESP1"]) == 950,
          "GET_CLOCK 4: 1600 MHz, 950 mV")

    # sensors
    check(q.rd(0x4200) == 25000 and q.rd(R["HPU_REG_CLK_CUR_MHZ"]) == 1600 and
          q.rd(R["HPU_REG_CLK_MAX_MHZ"]) == 1600 and q.rd(R["HPU_REG_VOLT_CORE_MV"]) == 950 and
          q.rd(R["HPU_REG_VOLT_HBM_MV"]) == 1200 and q.rd(R["HPU_REG_CLK_HBM_MHZ"]) == 1600,
          "sensors at RUNNING: ambient, top clock")
    q.cmd(f"clock_step {100 * MS}")
    seq = q.rd(R["HPU_REG_SENSOR_SEQ"])
    check(9 <= seq <= 11, f"SENSOR_SEQ counts 10 ms periods ({seq})")
    check(q.rd(R["HPU_REG_POWER_MW"]) == 60000, "idle power 60 W")
    lo = q.rd(R["HPU_REG_ENERGY_LO"])
    check(abs(lo - seq * 600000) <= 600000 and q.rd(R["HPU_REG_ENERGY_HI"]) == 0,
          f"energy accumulates ({lo} uJ)")
    check(q.rd(0x4200) > 25000, "die temperature rises toward the idle equilibrium")
    q.wr(0x4200, 0)
    check(q.rd(R["HPU_REG_ERROR"]) == R["HPU_ERROR_BAD_ACCESS"], "sensor registers are read-only")
    q.wr(R["HPU_REG_ERROR"], 0xFFFFFFFF)

    # flash: write the good image, it survives the hard reset of the next test
    q.mem_write(IMG_ADDR, good)
    q.wr(R["HPU_REG_FLASH_CMD"], R["HPU_FLASH_WRITE"])
    check(q.rd(R["HPU_REG_FLASH_STATUS"]) == R["HPU_FLASH_BUSY"], "FLASH_STATUS BUSY")
    q.cmd(f"clock_step {50 * MS}")
    settle(q, R["HPU_REG_FLASH_STATUS"], R["HPU_FLASH_BUSY"], "FLASH_CMD 1")
    check(q.rd(R["HPU_REG_FLASH_STATUS"]) == R["HPU_FLASH_DONE"] and
          q.rd(R["HPU_REG_FLASH_ERROR"]) == 0 and q.rd(R["HPU_REG_FLASH_VERSION"]) == 0x010100,
          "flash write DONE, FLASH_VERSION 1.1.0")
    q.wr(R["HPU_REG_IRQ_STATUS"], 0xFFFFFFFF)


def le(*fields):
    """Pack (value, size) pairs little-endian."""
    return b"".join(v.to_bytes(n, "little") for v, n in fields)


def cqe(seq, status, offset, engine, stream):
    """A completion record (spec version 5: 24-bit offset, engine, stream)."""
    return le((seq, 8), (status, 4), (offset | engine << 24 | stream << 28, 4))


def dma_jobs(q, msix_entry):
    """DMA jobs end to end through the engine threads and guest RAM."""
    HOST = 1 << 63
    RING, CQ, CB, SRC, DST, EQ = 0x200000, 0x201000, 0x202000, 0x300000, 0x380000, 0x203000
    WB = 0x204000                           # spec version 9: the write-back record
    E, S = 1, 2
    qs = 0x10000 + 0x1000 * E + 0x100 * S

    def qr(off):
        return q.rd(qs + off)

    def qw(off, val):
        q.wr(qs + off, val)

    def poll(what, cond, tries=2000):
        for _ in range(tries):
            if cond():
                return True
        check(False, what)
        return False

    def wb():
        """The write-back record: done, busy_ns, cq_pi, status, err_status, err_where."""
        b = q.mem_read(WB, 32)
        return (int.from_bytes(b[0:8], "little"), int.from_bytes(b[8:16], "little"),
                *(int.from_bytes(b[o:o + 4], "little") for o in (16, 20, 24, 28)))

    n = 5000 + 3
    data = bytes((i * 7 + 3) & 0xFF for i in range(n))
    q.mem_write(SRC, data)
    cb = (le((0x01, 4), (0, 4), (HOST | SRC, 8), (0x2001, 8), (n, 8)) +      # host -> HBM
          le((0x01, 4), (0, 4), (0x2001, 8), (0x800003, 8), (n, 8)) +        # HBM -> HBM
          le((0x01, 4), (0, 4), (0x800003, 8), (HOST | DST, 8), (n, 8)) +    # HBM -> host
          le((0x01, 4), (1, 4), (0x0807060504030201, 8), (HOST | DST + 0x2000, 8), (13, 8)) +
          le((0x02, 4), (0xC0FFEE, 4), (HOST | DST + 0x3000, 8)) +           # WRITE_VALUE
          le((0x03, 4), (40, 4), (7, 4), (0, 4)))                             # SOB 40 = 7
    q.mem_write(CB, cb)
    q.mem_write(RING, le((HOST | CB, 8), (len(cb), 4), (0, 2), (0, 2), (0xABCD, 8), (0, 8)))
    # MSI-X vector 2 + E into guest RAM
    q.cmd(f"writel {msix_entry(2 + E):#x} {MSI_TARGET + 16:#x}")
    q.cmd(f"writel {msix_entry(2 + E) + 4:#x} 0")
    q.cmd(f"writel {msix_entry(2 + E) + 8:#x} 0xcafe0003")
    q.cmd(f"writel {msix_entry(2 + E) + 12:#x} 0")
    q.cmd(f"writel {msix_entry(1):#x} {MSI_TARGET + 20:#x}")
    q.cmd(f"writel {msix_entry(1) + 8:#x} 0xcafe0001")
    q.cmd(f"writel {msix_entry(1) + 12:#x} 0")

    qw(0x00, RING)
    qw(0x08, 16)
    qw(0x14, CQ)
    qw(0x1C, 16)
    qw(R["HPU_QS_WB_LO"], WB)
    qw(0x24, 3)                             # ENABLE | IRQ_EN
    check(qr(0x28) == 1, "stream enabled and idle")
    qw(0x0C, 1)                             # doorbell
    if poll("DMA job completes (CQ_PI 1)", lambda: qr(0x20) == 1):
        rec = q.mem_read(CQ, 16)
        check(rec == cqe(0xABCD, 0, 0, E, S),
              f"completion record seq/OK/engine/stream ({rec.hex()})")
        check(qr(0x10) == 1, "CI 1")
        check(q.mem_read(DST, n) == data, f"LIN_DMA host->HBM->HBM->host {n} bytes")
        check(q.mem_read(DST + 0x2000, 16) == bytes([1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 0, 0, 0]),
              "MEMSET pattern")
        check(q.cmd(f"readl {DST + 0x3000:#x}") == 0xC0FFEE, "WRITE_VALUE")
        check(q.rd(0x20000 + 4 * 40) == 7, "SOB_UPDATE")
        check(q.cmd(f"readq {BAR4 + 0x800003:#x}") == int.from_bytes(data[:8], "little"),
              "BAR4 sees the data the engine wrote to HBM")
        check(poll("engine vector raised", lambda: q.cmd(f"readl {MSI_TARGET + 16:#x}") == 0xCAFE0003),
              "MSI-X vector 2+e delivered for the completion")
        # spec version 9: the record is written before the vector
        w = wb()
        check(w[0] == 1 and w[2] == 1 and w[3] == 1 and w[4] == 0 and w[5] == 0,
              f"write-back record after the job: done 1, CQ_PI 1, IDLE ({w})")
        check(qr(R["HPU_QS_DONE_LO"]) == 1 and qr(R["HPU_QS_DONE_HI"]) == 0, "DONE 1")
        check(qr(R["HPU_QS_BUSY_NS_LO"]) == w[1] & 0xFFFFFFFF, "BUSY_NS as in the record")

    # a bad packet: BAD_PACKET record, an event in the event queue, vector 1
    q.wr(R["HPU_REG_EQ_LO"], EQ)
    q.wr(R["HPU_REG_EQ_SIZE"], 4)
    q.wr(R["HPU_REG_EQ_CTRL"], 1)
    q.mem_write(CB + 0x800, le((0, 4), (0, 4), (0x99, 4), (0, 4)))
    q.mem_write(RING + 32, le((HOST | CB + 0x800, 8), (16, 4), (0, 2), (0, 2), (2, 8), (0, 8)))
    qw(0x0C, 2)
    if poll("bad packet completes", lambda: qr(0x20) == 2):
        rec = q.mem_read(CQ + 16, 16)
        check(rec == cqe(2, 2, 8, E, S), "BAD_PACKET record at offset 8")
        w = wb()
        check(w[0] == 2 and w[4] == 2 and w[5] == (8 | E << 24 | S << 28),
              f"write-back record names the failure ({w})")
        # the soft resets above leave a RESET_DONE (info 1) for the first slot
        check(poll("event posted", lambda: q.rd(R["HPU_REG_EQ_PI"]) == 2), "EQ_PI 2")
        ev = q.mem_read(EQ, 32)
        check(ev[0:4] == b"\x0c\x00\x00\xff" and int.from_bytes(ev[24:28], "little") == 1,
              f"RESET_DONE (soft) is the first event after enabling ({ev.hex()})")
        ev = q.mem_read(EQ + 32, 32)
        check(ev[0:2] == b"\x02\x00" and ev[3] == E and
              int.from_bytes(ev[16:24], "little") == HOST | (CB + 0x800) and
              int.from_bytes(ev[24:28], "little") == 8, f"BAD_PACKET event ({ev.hex()})")
        check(poll("EQ vector", lambda: q.cmd(f"readl {MSI_TARGET + 20:#x}") == 0xCAFE0001),
              "MSI-X vector 1 delivered for the event")

    # a WAIT that never holds, then a soft reset: ABORTED, stream disabled
    q.mem_write(CB + 0x900, le((0x04, 4), (41, 4), (1, 4), (0, 4)))
    q.mem_write(RING + 64, le((HOST | CB + 0x900, 8), (16, 4), (0, 2), (0, 2), (3, 8), (0, 8)))
    qw(0x0C, 3)
    poll("stream waits", lambda: qr(0x28) == 2)
    check(qr(0x28) == 2, "STATUS.WAITING")
    q.wr(R["HPU_REG_SOFT_RESET"], R["HPU_SOFT_RESET_KEY"])
    for _ in range(100):
        q.cmd("clock_step 100000")
        if q.rd(R["HPU_REG_STATUS"]) == R["HPU_STATUS_READY"]:
            break
    check(q.rd(R["HPU_REG_STATUS"]) == R["HPU_STATUS_READY"], "soft reset with a waiting job completes")
    rec = q.mem_read(CQ + 32, 16)
    check(rec == cqe(3, 6, 0, E, S), f"ABORTED record ({rec.hex()})")
    w = wb()
    check(w[0] == 3 and w[2] == 3 and w[4] == 6,
          f"the soft reset's stop wrote the write-back record ({w})")
    check(qr(R["HPU_QS_WB_LO"]) == 0 and qr(R["HPU_QS_DONE_LO"]) == 0, "WB and DONE reset")
    check(qr(0x24) == 0 and qr(0x28) == 1 and q.rd(0x20000 + 4 * 40) == 0,
          "stream disabled and SOBs cleared by soft reset")
    q.wr(R["HPU_REG_IRQ_STATUS"], 0xFFFFFFFF)


def mme_job(q, msix_entry):
    """Spec version 6: GEMMs on MME0 and MME1 (engines 9, 10) at once,
    through their engine threads and the OpenBLAS linked into QEMU,
    operands in guest RAM; vectors 11 and 12; a TPC_LAUNCH refused
    BAD_LAUNCH on the TPC engine (8)."""
    HOST = 1 << 63
    M, N, K = 160, 144, 300
    a = [[(i + 2 * k) % 5 - 2 for k in range(K)] for i in range(M)]
    b = [[(3 * k + j) % 7 - 3 for j in range(N)] for k in range(K)]
    bias = [j % 3 - 1 for j in range(N)]
    f32 = lambda rows: struct.pack(f"<{sum(len(r) for r in rows)}f", *[v for r in rows for v in r])
    ab = [sum(a[i][k] * b[k][j] for k in range(K)) for i in range(M) for j in range(N)]
    want = {9: [float(v) for v in ab],
            10: [max(0.0, float(v + bias[j % N])) for j, v in enumerate(ab)]}
    jobs = {}
    for e in (9, 10):
        base = 0x800000 + (e - 9) * 0x200000
        RING, CQ, CB, DESC, A, B, D, BIAS = (base, base + 0x1000, base + 0x2000, base + 0x3000,
                                             base + 0x10000, base + 0x40000, base + 0x80000,
                                             base + 0x100000)
        q.mem_write(A, f32(a))
        q.mem_write(B, f32(b))
        q.mem_write(BIAS, f32([bias]))
        flags = 0x40 | 1 << 8 if e == 10 else 0         # MME1: BIAS and ReLU
        desc = le((flags, 4), (0, 4), (M, 4), (N, 4), (K, 4), (1, 4), (HOST | A, 8),
                  (HOST | B, 8), (0, 8), (HOST | D, 8), (HOST | BIAS, 8), (K, 4), (N, 4),
                  (0, 4), (N, 4), (0, 8), (0, 8), (0, 8), (0, 8), (0x3f800000, 4), (0, 4),
                  (0, 8))
        q.mem_write(DESC, desc)
        cb = le((0x07, 4), (0, 4), (HOST | DESC, 8))
        q.mem_write(CB, cb)
        q.mem_write(RING, le((HOST | CB, 8), (len(cb), 4), (0, 2), (0, 2), (0x6E00 + e, 8), (0, 8)))
        q.cmd(f"writel {msix_entry(2 + e):#x} {MSI_TARGET + 4 * (e - 3):#x}")
        q.cmd(f"writel {msix_entry(2 + e) + 4:#x} 0")
        q.cmd(f"writel {msix_entry(2 + e) + 8:#x} {0xcafe0000 + 2 + e:#x}")
        q.cmd(f"writel {msix_entry(2 + e) + 12:#x} 0")
        qs = 0x10000 + 0x1000 * e
        q.wr(qs + 0x00, RING)
        q.wr(qs + 0x08, 16)
        q.wr(qs + 0x14, CQ)
        q.wr(qs + 0x1C, 16)
        q.wr(qs + 0x24, 3)
        jobs[e] = (qs, CQ, D)
    for e in (9, 10):
        q.wr(jobs[e][0] + 0x0C, 1)          # both doorbells, then wait
    for e in (9, 10):
        qs, CQ, D = jobs[e]
        for _ in range(20000):
            if q.rd(qs + 0x20) == 1:
                break
        done = q.rd(qs + 0x20) == 1
        check(done, f"MME{e - 9} GEMM completes (CQ_PI 1)")
        if not done:
            continue
        rec = q.mem_read(CQ, 16)
        check(rec == cqe(0x6E00 + e, 0, 0, e, 0), f"MME{e - 9} completion record ({rec.hex()})")
        got = list(struct.unpack(f"<{M * N}f", q.mem_read(D, 4 * M * N)))
        check(got == want[e], f"MME{e - 9}: D = A x B" + (" + bias, ReLU" if e == 10 else "") +
              ", exact for small integers")
        target, msg = MSI_TARGET + 4 * (e - 3), 0xCAFE0000 + 2 + e
        for _ in range(2000):
            if q.cmd(f"readl {target:#x}") == msg:
                break
        check(q.cmd(f"readl {target:#x}") == msg, f"MSI-X vector {2 + e} for MME{e - 9}")
    RING, CQ, CB, DESC = 0x500000, 0x501000, 0x502000, 0x503000
    # TPC_LAUNCH on engine 8: a descriptor of zeros is refused (DESC_MAGIC)
    qs = 0x10000 + 0x1000 * R["HPU_ENGINE_TPC"]
    q.mem_write(CB + 0x100, le((0x06, 4), (0, 4), (HOST | DESC, 8)))
    q.mem_write(RING + 0x800, le((HOST | CB + 0x100, 8), (16, 4), (0, 2), (0, 2), (8, 8), (0, 8)))
    q.wr(qs + 0x00, RING + 0x800)
    q.wr(qs + 0x08, 16)
    q.wr(qs + 0x14, CQ + 0x800)
    q.wr(qs + 0x1C, 16)
    q.wr(qs + 0x24, 1)
    q.wr(qs + 0x0C, 1)
    for _ in range(2000):
        if q.rd(qs + 0x20) == 1:
            break
    check(q.mem_read(CQ + 0x800, 16) == cqe(8, R["HPU_CQ_BAD_LAUNCH"], 0, 8, 0),
          "TPC_LAUNCH completes BAD_LAUNCH on engine 8")
    # a kernel of one bundle ("halt") over 100000 members: the cores on
    # their threads, the packet OK
    BIN, LD = 0x504000, 0x505000
    hdr = le((0x43505448, 4), (1, 2), (128, 2), (192, 4), (0, 4), (128, 4), (64, 4), (1, 4),
             (0, 4), (0, 1), (0, 1), (1, 1), (0, 1))
    hdr += bytes(80 - len(hdr)) + b"q" + bytes(47)
    halt = bytes(16) + le((0x22, 8), (0, 8)) + bytes(32)
    q.mem_write(BIN, hdr + halt)
    q.mem_write(LD, le((0x4C505448, 4), (0, 4), (HOST | BIN, 8), (192, 4), (0, 4),
                       (100000, 4), (1, 4), (1, 4), (1, 4), (1, 4)) + bytes(192 - 44))
    q.mem_write(CB + 0x200, le((0x06, 4), (0, 4), (HOST | LD, 8)))
    q.mem_write(RING + 0x820, le((HOST | CB + 0x200, 8), (16, 4), (0, 2), (0, 2), (9, 8),
                                 (0, 8)))
    q.wr(qs + 0x0C, 2)
    for _ in range(20000):
        if q.rd(qs + 0x20) == 2:
            break
    check(q.mem_read(CQ + 0x810, 16) == cqe(9, 0, 0, 8, 0),
          f"TPC_LAUNCH of a halt kernel completes OK ({q.mem_read(CQ + 0x810, 16).hex()})")


def errors_and_reset(q, msix_entry):
    """Spec version 3 on the virtual clock: CPU, heartbeat, watchdog, hard reset."""
    HOST = 1 << 63
    MS = 1000000
    RING, CQ, CB, EQ = 0x400000, 0x401000, 0x402000, 0x403000
    E = 3
    qs = 0x10000 + 0x1000 * E

    def poll(what, cond, tries=2000):
        for _ in range(tries):
            if cond():
                return True
        check(False, what)
        return False

    # firmware() booted the CPU
    check(q.rd(R["HPU_REG_CPU_STATUS"]) == R["HPU_CPU_RUNNING"], "CPU_STATUS RUNNING")
    q.wr(R["HPU_REG_HB_REQ"], 0x1234)
    check(q.rd(R["HPU_REG_HB_ACK"]) == 0, "heartbeat not answered in the MMIO write")
    q.cmd(f"clock_step {1 * MS}")
    check(q.rd(R["HPU_REG_HB_ACK"]) == 0x1234, "heartbeat answered within 1 ms")

    # heartbeat events
    q.wr(R["HPU_REG_EQ_CTRL"], 0)
    q.wr(R["HPU_REG_EQ_LO"], EQ)
    q.wr(R["HPU_REG_EQ_SIZE"], 16)
    q.wr(R["HPU_REG_EQ_CTRL"], 1)           # RESET_DONE (soft) goes first
    poll("RESET_DONE entry", lambda: q.rd(R["HPU_REG_EQ_PI"]) == 1)
    q.wr(R["HPU_REG_HB_EVENT_MS"], 5)
    q.cmd(f"clock_step {5 * MS}")
    check(poll("heartbeat event", lambda: q.rd(R["HPU_REG_EQ_PI"]) == 2), "HEARTBEAT event after 5 ms")
    ev = q.mem_read(EQ + 32, 32)
    check(ev[0:4] == b"\x0b\x00\x00\xff" and int.from_bytes(ev[24:28], "little") == 1,
          f"HEARTBEAT entry, sequence 1 ({ev.hex()})")
    q.wr(R["HPU_REG_HB_EVENT_MS"], 0)

    # INJ_HANG on engine E, the watchdog catches the stream
    q.wr(R["HPU_REG_WDT_MS"], 2)
    q.wr(R["HPU_REG_INJ_HANG"], 1 << E)
    q.mem_write(CB, le((0, 4), (0, 4)))
    q.mem_write(RING, le((HOST | CB, 8), (8, 4), (0, 2), (0, 2), (0x77, 8), (0, 8)))
    q.wr(qs + 0x00, RING)
    q.wr(qs + 0x08, 16)
    q.wr(qs + 0x14, CQ)
    q.wr(qs + 0x1C, 16)
    q.wr(qs + 0x24, 1)
    q.wr(qs + 0x0C, 1)
    poll("job pending", lambda: q.rd(qs + 0x28) == 0)
    # STATUS does not show when the engine thread has fetched the
    # descriptor (the watchdog period starts there), and on a loaded host
    # the thread may fetch it only after the clock moved: step the clock
    # until the stream is hung (the exact period is a unit test's job).
    for _ in range(200):
        q.cmd(f"clock_step {1 * MS}")
        if q.rd(qs + 0x28) == R["HPU_QS_STATUS_HUNG"]:
            break
    check(q.rd(qs + 0x28) == R["HPU_QS_STATUS_HUNG"], "STATUS.HUNG after WDT_MS")
    check(poll("hang event", lambda: q.rd(R["HPU_REG_EQ_PI"]) == 3), "ENGINE_HANG event")
    ev = q.mem_read(EQ + 64, 32)
    check(ev[0:4] == bytes([4, 0, 2, E]) and
          int.from_bytes(ev[16:24], "little") == HOST | CB and ev[24] == 0,
          f"ENGINE_HANG entry: engine, command buffer, stream ({ev.hex()})")
    check(q.rd(qs + 0x20) == 0, "no completion for the hung job")

    # hard reset with the engine hung: vector 0, 10 ms, HBM lost, CPU reboots
    q.cmd(f"writeq {BAR4 + 0x100:#x} 0x5a5a5a5a5a5a5a5a")
    q.cmd(f"writel {msix_entry(0):#x} {MSI_TARGET + 24:#x}")
    q.cmd(f"writel {msix_entry(0) + 8:#x} 0xcafe0010")
    q.cmd(f"writel {msix_entry(0) + 12:#x} 0")
    q.wr(R["HPU_REG_IRQ_STATUS"], 0xFFFFFFFF)
    q.wr(R["HPU_REG_IRQ_MASK"], R["HPU_IRQ_RESET_DONE"])
    q.wr(R["HPU_REG_SCRATCH"], 0x77)
    count = q.rd(R["HPU_REG_HARD_RESET_COUNT"])
    q.wr(R["HPU_REG_HARD_RESET"], R["HPU_HARD_RESET_KEY"])
    check(q.rd(R["HPU_REG_STATUS"]) == R["HPU_STATUS_HARD_RESET_BUSY"], "hard reset busy")
    check(q.rd(R["HPU_REG_CPU_STATUS"]) == R["HPU_CPU_OFF"], "CPU off during the hard reset")
    q.cmd(f"clock_step {5 * MS}")
    check(q.rd(R["HPU_REG_STATUS"]) == R["HPU_STATUS_HARD_RESET_BUSY"], "still busy at 5 ms")
    q.cmd(f"clock_step {5 * MS}")
    # After the 10 ms the device's worker thread clears HBM in host time: a
    # loaded host takes longer than any fixed number of qtest round trips,
    # so wait on the wall clock (the bound only catches a reset that never
    # ends).
    end = time.monotonic() + 60
    while q.rd(R["HPU_REG_STATUS"]) != R["HPU_STATUS_READY"] and time.monotonic() < end:
        q.cmd("clock_step 100000")
        time.sleep(0.001)
    check(q.rd(R["HPU_REG_STATUS"]) == R["HPU_STATUS_READY"], "hard reset done after 10 ms")
    check(q.rd(R["HPU_REG_HARD_RESET_COUNT"]) == count + 1, "HARD_RESET_COUNT incremented")
    check(q.rd(R["HPU_REG_IRQ_STATUS"]) == R["HPU_IRQ_RESET_DONE"], "IRQ_STATUS RESET_DONE")
    check(q.cmd(f"readl {MSI_TARGET + 24:#x}") == 0xCAFE0010, "RESET_DONE delivers vector 0")
    check(q.rd(R["HPU_REG_SCRATCH"]) == 0 and q.rd(R["HPU_REG_WDT_MS"]) == 0 and
          q.rd(R["HPU_REG_EQ_CTRL"]) == 0 and q.rd(qs + 0x24) == 0 and
          q.rd(R["HPU_REG_INJ_HANG"]) == 0, "registers back to their reset values")
    check(q.rd(R["HPU_REG_IRQ_MASK"]) == R["HPU_IRQ_RESET_DONE"], "IRQ_MASK kept")
    check(q.cmd(f"readq {BAR4 + 0x100:#x}") == 0, "HBM lost")
    check(q.rd(qs + 0x20) == 0 and q.mem_read(CQ, 16) == bytes(16), "no completion record")
    check(q.rd(R["HPU_REG_CPU_STATUS"]) == R["HPU_CPU_ROM_INIT"], "boot ROM starts after the reset")
    check(q.rd(R["HPU_REG_FW_VERSION"]) == 0 and q.rd(R["HPU_REG_FLASH_VERSION"]) == 0x010100,
          "FW_VERSION cleared, the flash kept")
    q.cmd(f"clock_step {10 * MS}")
    check(q.rd(R["HPU_REG_CPU_STATUS"]) == R["HPU_CPU_WAIT_IMAGE"], "WAIT_IMAGE 10 ms later")
    q.wr(R["HPU_REG_BOOT_CMD"], R["HPU_BOOT_FLASH"])
    check(q.rd(R["HPU_REG_CPU_STATUS"]) == R["HPU_CPU_VERIFYING"], "BOOT_FLASH: VERIFYING")
    q.cmd(f"clock_step {10 * MS}")
    settle(q, R["HPU_REG_CPU_STATUS"], R["HPU_CPU_VERIFYING"], "BOOT_CMD 2")
    q.cmd(f"clock_step {20 * MS}")
    check(q.rd(R["HPU_REG_CPU_STATUS"]) == R["HPU_CPU_RUNNING"] and
          q.rd(R["HPU_REG_FW_VERSION"]) == 0x010100, "the flash image runs 30 ms later")
    q.wr(R["HPU_REG_HB_REQ"], 0x4321)
    q.cmd(f"clock_step {1 * MS}")
    check(q.rd(R["HPU_REG_HB_ACK"]) == 0x4321, "heartbeat after the hard reset")
    # the engine that was hung runs jobs again
    q.mem_write(RING, le((HOST | CB, 8), (8, 4), (0, 2), (0, 2), (0x78, 8), (0, 8)))
    q.wr(qs + 0x00, RING)
    q.wr(qs + 0x08, 16)
    q.wr(qs + 0x14, CQ)
    q.wr(qs + 0x1C, 16)
    q.wr(qs + 0x24, 1)
    q.wr(qs + 0x0C, 1)
    if poll("job after hard reset", lambda: q.rd(qs + 0x20) == 1):
        check(q.mem_read(CQ, 16) == cqe(0x78, 0, 0, E, 0),
              "the formerly hung engine completes a job")
    q.wr(R["HPU_REG_IRQ_STATUS"], 0xFFFFFFFF)


def property_errors(qemu, tmpdir):
    big = os.path.join(tmpdir, "big.bin")
    with open(big, "wb") as f:
        f.write(bytes(0x100001))
    for arg, words in [("fw-pubkey=1234", "fw-pubkey"), ("fw-pubkey=" + "g" * 64, "fw-pubkey"),
                       ("fw-min-version=0x1000000", "fw-min-version"),
                       ("fw-flash=/nonexistent/fw.bin", "fw-flash"), ("fw-flash=" + big, "fw-flash"),
("hbm-size=300M", "hbm-size"), ("hbm-size=64G", "hbm-size"),
                       ("nic-ports=11", "nic-ports"), ("hbm-bar=1G", "hbm-bar"),
                       ("serial=0123456789abcdefX", "serial"),
                       ("serial=caf\u00e9", "serial")]:
        r = subprocess.run([qemu, *FW, "-machine", "q35", "-accel", "qtest",
                            "-nodefaults", "-display", "none", "-device", "hpu," + arg],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode != 0 and words in r.stderr,
              f"-device hpu,{arg} is refused naming {words}")


def find_qemu():
    """The QEMU binary tools/dev/build-qemu.sh built, or None (and a SKIP line)."""
    r = subprocess.run([os.path.join(ROOT, "tools", "dev", "build-qemu.sh"), "--print-path"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print("SKIP: QEMU with the HPU model is not built (tools/dev/build-qemu.sh)")
        return None
    return r.stdout.strip().splitlines()[-1]


def main():
    qemu = sys.argv[1] if len(sys.argv) > 1 else find_qemu()
    if not qemu:
        return 77

    if not os.access(PACKER, os.X_OK):
        # The build makes the packer before the tests run: its absence is a
        # broken build, not a reason to skip the firmware checks.
        print("FAIL: the firmware packer is not built (build/tools/hpu-fwpack/hpu-fwpack)")
        return 1
    tmp = tempfile.TemporaryDirectory(prefix="hpu-qtest-")
    other = os.path.join(tmp.name, "other.key")
    subprocess.run([PACKER, "--gen-key", other], check=True, capture_output=True)
    images = {
        "good": pack(tmp.name, "good.bin", "--key", FWKEY, "--version", "1.1.0",
                     "--build", "qtest 1.1.0"),
        "old": pack(tmp.name, "old.bin", "--key", FWKEY, "--version", "0.9.0"),
        "other": pack(tmp.name, "other.bin", "--key", other, "--version", "1.1.0"),
    }

    log = tempfile.NamedTemporaryFile(prefix="hpu-qtest-", suffix=".log", delete=False).name
    uuid = "12345678-9abc-def0-0fed-cba987654321"
    q = QTest(qemu, f"hpu,addr=01.0,hbm-size=6G,nic-ports=3,serial=QT-1,uuid={uuid},"
              f"fw-pubkey={pubkey()},fw-min-version=0x10000", log)
    try:

        # PCI identity and BARs
        check(q.cfg_read(0x00) == R["HPU_PCI_DEVICE_ID"] << 16 | R["HPU_PCI_VENDOR_ID"],
              "vendor/device id")
        check(q.cfg_read(0x08) == R["HPU_PCI_CLASS"] << 16 | R["HPU_PCI_REVISION"],
              "class 0x1200, revision 1")
        check(q.cfg_read(0x20) & 0xF == 0xC, "BAR4 is 64-bit prefetchable memory")
        # BAR4 covers the 6 GiB of HBM: 8 GiB (spec version 8)
        for bar, size in [(0, R["HPU_BAR_REGS_SIZE"]), (2, 4096), (4, 8 << 30)]:
            reg = 0x10 + 4 * bar
            check(q.cfg_read(reg) & 0x7 == 0x4, f"BAR{bar} is 64-bit memory")
            q.cfg_write(reg, 0xFFFFFFFF)
            q.cfg_write(reg + 4, 0xFFFFFFFF)
            mask = (q.cfg_read(reg + 4) << 32) | (q.cfg_read(reg) & ~0xF)
            check((~mask & (2 ** 64 - 1)) + 1 == size, f"BAR{bar} size {size:#x}")
        program_bars(q)

        # the boot ROM: ROM_INIT for 10 ms after power-on, then WAIT_IMAGE
        st = q.rd(R["HPU_REG_CPU_STATUS"])
        check(st == R["HPU_CPU_ROM_INIT"], f"CPU_STATUS ROM_INIT ({st})")
        q.cmd(f"clock_step {10 * MS}")
        check(q.rd(R["HPU_REG_CPU_STATUS"]) == R["HPU_CPU_WAIT_IMAGE"], "WAIT_IMAGE after 10 ms")

        pcie = q.find_cap(0x10)
        check(pcie != 0, "PCI Express capability present")
        check((q.cfg_read(pcie + 2, 2) >> 4) & 0xF == 9,
              "PCIe type: root complex integrated endpoint on pcie.0")
        msix = q.find_cap(0x11)
        check(msix != 0, "MSI-X capability present")
        check(q.cfg_read(msix + 2, 2) & 0x7FF == 63, "64 MSI-X vectors")
        check(q.cfg_read(msix + 4) == 2, "MSI-X table in BAR2 at offset 0")
        check(q.cfg_read(msix + 8) == 0x800 | 2, "MSI-X PBA in BAR2 at offset 0x800")
        check(q.cfg_read(0x3D, 1) == 0, "no INTx pin")

        # identity registers
        check(q.rd(R["HPU_REG_MAGIC"]) == R["HPU_MAGIC_VALUE"], "MAGIC")
        check(q.rd(R["HPU_REG_SPEC_VERSION"]) == 10, "SPEC_VERSION 10")
        t0 = q.rd(R["HPU_REG_DEVICE_TIME_LO"]) | q.rd(R["HPU_REG_DEVICE_TIME_HI"]) << 32
        q.cmd("clock_step 1000000")
        t1 = q.rd(R["HPU_REG_DEVICE_TIME_LO"]) | q.rd(R["HPU_REG_DEVICE_TIME_HI"]) << 32
        check(t1 - t0 >= 1000000, f"DEVICE_TIME follows the virtual clock ({t0} -> {t1})")
        check(q.rd(R["HPU_REG_MSIX_VECTORS"]) == 64, "MSIX_VECTORS 64")
        check(q.rd(R["HPU_REG_HBM_SIZE_LO"]) == 0x80000000 and
              q.rd(R["HPU_REG_HBM_SIZE_HI"]) == 1, "HBM size 6 GiB")
        check(q.rd(R["HPU_REG_ENGINES"]) == 0x03020808, "ENGINES with 3 NIC ports")
        check(q.rd(0x20) == 0x312D5451 and q.rd(0x24) == 0, "SERIAL 'QT-1'")
        check(q.rd(0x30) == 0x78563412 and q.rd(0x3C) == 0x21436587, "UUID byte order")
        check(q.rd(R["HPU_REG_STATUS"]) == R["HPU_STATUS_READY"], "STATUS READY")

        # access rules through the real memory path
        q.wr(R["HPU_REG_SCRATCH"], 0xA5A55A5A)
        check(q.rd(R["HPU_REG_SCRATCH"]) == 0xA5A55A5A, "SCRATCH read-write")
        check(q.rd(R["HPU_REG_ERROR"]) == 0, "no error yet")
        check(q.rd(R["HPU_REG_MAGIC"], "readw") == 0, "16-bit read returns 0")
        check(q.rd(R["HPU_REG_ERROR"]) == R["HPU_ERROR_BAD_ACCESS"], "16-bit read flagged")
        q.wr(R["HPU_REG_ERROR"], 0xFFFFFFFF)
        q.wr(R["HPU_REG_SCRATCH"], 0x1122334455667788, "writeq")
        check(q.rd(R["HPU_REG_SCRATCH"]) == 0xA5A55A5A, "64-bit write dropped")
        q.wr(R["HPU_REG_ERROR"], 0xFFFFFFFF)
        check(q.rd(0x42) == 0 and q.rd(R["HPU_REG_ERROR"]) == 1, "unaligned read flagged")
        q.wr(R["HPU_REG_ERROR"], 0xFFFFFFFF)
        q.wr(R["HPU_REG_MAGIC"], 0)
        check(q.rd(R["HPU_REG_MAGIC"]) == R["HPU_MAGIC_VALUE"] and
              q.rd(R["HPU_REG_ERROR"]) == 1, "read-only write dropped and flagged")
        q.wr(R["HPU_REG_ERROR"], 0xFFFFFFFF)
        check(q.rd(0xFFFFC) == 0 and q.rd(R["HPU_REG_ERROR"]) == 1,
              "unmapped read at the end of BAR0 flagged")
        q.wr(R["HPU_REG_ERROR"], 0xFFFFFFFF)

        # soft reset on the virtual clock
        q.wr(R["HPU_REG_SOFT_RESET"], R["HPU_SOFT_RESET_KEY"])
        check(q.rd(R["HPU_REG_STATUS"]) == R["HPU_STATUS_RESET_BUSY"], "soft reset busy")
        q.cmd("clock_step 50000")
        check(q.rd(R["HPU_REG_STATUS"]) == R["HPU_STATUS_RESET_BUSY"], "still busy at 50 us")
        q.cmd("clock_step 50000")
        check(q.rd(R["HPU_REG_STATUS"]) == R["HPU_STATUS_READY"], "ready at 100 us")
        check(q.rd(R["HPU_REG_RESET_COUNT"]) == 1, "RESET_COUNT 1")
        check(q.rd(R["HPU_REG_SCRATCH"]) == 0, "SCRATCH cleared")
        q.wr(R["HPU_REG_IRQ_STATUS"], 0xFFFFFFFF)

        # MSI-X: vector 5 writes its message into guest RAM
        def entry(v):
            return BAR2 + 16 * v
        q.cmd(f"writel {MSI_TARGET:#x} 0")
        q.cmd(f"writel {entry(5):#x} {MSI_TARGET:#x}")
        q.cmd(f"writel {entry(5) + 4:#x} 0")
        q.cmd(f"writel {entry(5) + 8:#x} 0xcafe0005")
        q.cmd(f"writel {entry(5) + 12:#x} 0")          # unmasked
        q.wr(R["HPU_REG_IRQ_TEST"], 5)
        check(q.cmd(f"readl {MSI_TARGET:#x}") == 0, "no message while MSI-X is disabled")
        check(q.rd(R["HPU_REG_IRQ_TEST_COUNT"]) == 1, "IRQ_TEST counted without MSI-X")
        q.cfg_write(msix + 2, 0x8000, 2)                # MSI-X enable
        q.wr(R["HPU_REG_IRQ_TEST"], 5)
        check(q.cmd(f"readl {MSI_TARGET:#x}") == 0xCAFE0005, "IRQ_TEST 5 delivers vector 5")
        # masked vector: left pending, delivered on unmask
        q.cmd(f"writel {MSI_TARGET:#x} 0")
        q.cmd(f"writel {entry(5) + 12:#x} 1")
        q.wr(R["HPU_REG_IRQ_TEST"], 5)
        check(q.cmd(f"readl {MSI_TARGET:#x}") == 0, "masked vector not delivered")
        check(q.cmd(f"readl {BAR2 + 0x800:#x}") & (1 << 5) != 0, "masked vector pending in PBA")
        q.cmd(f"writel {entry(5) + 12:#x} 0")
        check(q.cmd(f"readl {MSI_TARGET:#x}") == 0xCAFE0005, "pending vector delivered on unmask")
        # RESET_DONE on vector 0 when enabled
        q.cmd(f"writel {entry(0):#x} {MSI_TARGET + 4:#x}")
        q.cmd(f"writel {entry(0) + 8:#x} 0xcafe0000")
        q.cmd(f"writel {entry(0) + 12:#x} 0")
        q.wr(R["HPU_REG_IRQ_MASK"], R["HPU_IRQ_RESET_DONE"])
        q.wr(R["HPU_REG_SOFT_RESET"], R["HPU_SOFT_RESET_KEY"])
        check(q.cmd(f"readl {MSI_TARGET + 4:#x}") == 0, "no RESET_DONE before completion")
        q.cmd("clock_step 100000")
        check(q.cmd(f"readl {MSI_TARGET + 4:#x}") == 0xCAFE0000, "RESET_DONE delivers vector 0")
        check(q.rd(R["HPU_REG_IRQ_STATUS"]) == R["HPU_IRQ_RESET_DONE"], "IRQ_STATUS RESET_DONE")
        q.wr(R["HPU_REG_IRQ_TEST"], 64)
        check(q.rd(R["HPU_REG_ERROR"]) == R["HPU_ERROR_BAD_IRQ_VECTOR"], "bad vector flagged")
        q.wr(R["HPU_REG_ERROR"], 0xFFFFFFFF)

        hbm_window(q)
        dma_jobs(q, entry)
        mme_job(q, entry)
        firmware(q, tmp.name, images)
        errors_and_reset(q, entry)
    finally:
        q.close()

    with open(log) as f:
        text = f.read()
    os.unlink(log)
    check("hpu 00:01.0: 2-byte read at BAR0+0x0" in text, "guest error logged for a 16-bit read")
    check("read-only" in text and "IRQ_TEST written with vector 64" in text,
          "guest errors logged for read-only write and bad vector")
    check("image refused CORRUPT" in text and "image refused TOO_OLD" in text and
          "image refused BAD_SIGNATURE" in text and "BOOT_CMD 1 while CPU_STATUS is RUNNING" in text,
          "boot refusals and a misplaced BOOT_CMD logged")

    # the flash content from fw-flash, booted without a host image
    q = QTest(qemu, f"hpu,addr=01.0,fw-pubkey={pubkey()},fw-flash={tmp.name}/good.bin", "/dev/null")
    try:
        q.cfg_write(0x10, BAR0)
        q.cfg_write(0x14, 0)
        q.cfg_write(0x04, 0x6, 2)
        check(q.rd(R["HPU_REG_FLASH_VERSION"]) == 0x010100, "fw-flash: FLASH_VERSION")
        q.wr(R["HPU_REG_BOOT_CMD"], R["HPU_BOOT_FLASH"])
        check(q.rd(R["HPU_REG_CPU_STATUS"]) == R["HPU_CPU_ROM_INIT"], "BOOT_CMD in ROM_INIT ignored")
        q.cmd(f"clock_step {10 * MS}")
        q.wr(R["HPU_REG_BOOT_CMD"], R["HPU_BOOT_FLASH"])
        q.cmd(f"clock_step {10 * MS}")
        settle(q, R["HPU_REG_CPU_STATUS"], R["HPU_CPU_VERIFYING"], "fw-flash BOOT_CMD 2")
        q.cmd(f"clock_step {20 * MS}")
        check(q.rd(R["HPU_REG_CPU_STATUS"]) == R["HPU_CPU_RUNNING"], "fw-flash image boots")
    finally:
        q.close()

    # hbm-bar=64M: spec version 7's BAR4, whatever HBM_SIZE
    q = QTest(qemu, "hpu,addr=01.0,hbm-size=1G,hbm-bar=64M", "/dev/null")
    try:
        q.cfg_write(0x20, 0xFFFFFFFF)
        q.cfg_write(0x24, 0xFFFFFFFF)
        mask = (q.cfg_read(0x24) << 32) | (q.cfg_read(0x20) & ~0xF)
        check((~mask & (2 ** 64 - 1)) + 1 == 64 << 20, "hbm-bar=64M: BAR4 is 64 MiB")
        program_bars(q)
        check(q.rd(R["HPU_REG_SPEC_VERSION"]) == 7, "hbm-bar=64M: SPEC_VERSION 7")
        check(q.rd(R["HPU_REG_HBM_SIZE_LO"]) == 1 << 30, "hbm-bar=64M: HBM_SIZE still 1 GiB")
        q.wr(R["HPU_REG_HBM_WIN_BASE_LO"], 0x4000000)
        q.mem_write(BAR4 + 8, b"above-64MiB-16by")
        q.wr(R["HPU_REG_HBM_WIN_BASE_LO"], 0)
        check(q.cmd(f"readq {BAR4 + 8:#x}") == 0, "hbm-bar=64M: the window base moves the window")
        q.wr(R["HPU_REG_HBM_WIN_BASE_LO"], 0x4000000)
        check(q.mem_read(BAR4 + 8, 16) == b"above-64MiB-16by", "hbm-bar=64M: HBM above 64 MiB kept")
        check(q.rd(R["HPU_REG_ERROR"]) == 0, "hbm-bar=64M: no access flagged")
    finally:
        q.close()

    property_errors(qemu, tmp.name)
    tmp.cleanup()

    print(f"{'FAIL' if FAILS else 'PASS'}: {len(FAILS)} failed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())

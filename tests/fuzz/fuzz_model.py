#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# Device-model fuzzer: drives the HPU inside the QEMU binary built by
# tools/dev/build-qemu.sh through QEMU's qtest protocol (no guest), as a hostile
# or broken guest driver would: random and plausible register writes on
# every block of BAR0 (doorbells, rings, the MMU, the event queue, sync
# objects, resets, the boot ROM, the mailbox, fault injection), descriptor
# rings, command buffers and packets in guest RAM that the engines fetch by
# DMA, page tables in HBM, MSI-X messages and DMA aimed at the device's own
# BARs (re-entrancy), PCI config writes (command register, MSI-X control,
# FLR), system resets and the virtual clock.  Spec version 7: three NIC
# ports, port 0 wired to the fuzzer's own UDP socket (-netdev dgram: it
# sends the port random frames of any length and reads what the port
# sends), ports 1 and 2 wired to each other; their registers, rings and
# descriptors in guest RAM, doorbells and set_link.
#
# With --hotplug the device sits behind a pcie-root-port with native PCIe
# hot-plug (configuration space through MMCONFIG), the DMA and MSI-X
# targets include the root port's slot control (a write that powers the
# slot off unplugs the device from inside its own access: issue 9, defect
# 10), and the fuzzer also hot-unplugs it (device_del, then the slot
# powered off as a guest would), issues FLRs while work runs, and plugs the
# device back whenever it is gone.
#
# What must hold: QEMU never exits or stops answering, whatever the guest
# does; and after a system reset the device is the spec's power-on device
# again: it boots the signed firmware image, runs a DMA job end to end
# (tests/unit/emu/qtest_hpu.py's checks) and port 1 sends a frame that
# port 2 receives.
#
# Usage: fuzz_model.py [--seed S] [--actions N] [--rounds R] [--time-limit S]
#                      [--hotplug] [--qemu PATH]
# Each round starts a fresh QEMU; round r uses seed S + r.  The same seed
# gives the same sequence of actions (the engines' threads run on their own,
# so timing may differ).  On a failure the seed, the action number and the
# last actions are printed.  Exit status 0 pass, 1 fail, 77 skip (QEMU not
# built).
#
# Copyright (c) 2026 The hpu authors

import argparse
import collections
import json
import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.realpath(__file__))
ROOT = os.path.realpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "unit", "emu"))
import qtest_hpu as qt  # noqa: E402
import qtest_hpu_sec as sec  # noqa: E402

R = qt.R
BAR0, BAR2, BAR4 = qt.BAR0, qt.BAR2, qt.BAR4
HOST = 1 << 63
# Guest RAM the fuzzer owns: rings, completion queues, command buffers,
# DMA sources and targets, MSI-X message targets.
ARENA, ARENA_SIZE = 0x200000, 0x200000
ENGINES = R["HPU_NUM_ENGINES"]    # spec version 6: DMA 0-7, TPC 8, MME 9-10
STREAMS = R["HPU_QM_STREAMS"]

# Every plain register offset of the header (HPU_REG_*, not the macros with
# arguments), plus the per-stream registers and a few sync objects.
SINGLE_REGS = sorted({v for k, v in R.items()
                      if k.startswith("HPU_REG_") and v < R["HPU_BAR_REGS_SIZE"]})
STREAM_REGS = [R["HPU_QS_" + k] for k in ("RING_LO", "RING_HI", "RING_SIZE", "PI", "CI", "CQ_LO",
                                          "CQ_HI", "CQ_SIZE", "CQ_PI", "CTRL", "STATUS",
                                          # spec version 9
                                          "WB_LO", "WB_HI", "IRQ_MOD", "DONE_LO", "DONE_HI",
                                          "BUSY_NS_LO", "BUSY_NS_HI")]
KEYS = [R["HPU_SOFT_RESET_KEY"], R["HPU_HARD_RESET_KEY"]]
HANG_S = 60
# --hotplug: the root port at 00:02.0 and the HPU behind it, as in
# qtest_hpu_sec.py (whose MMCONFIG helpers HotplugFuzzer shares)
RP, DEV = sec.RP, sec.DEV
SLOT_OFF = 0x07C0           # Slot Control: power off, both indicators off
SLTCTL_EIC = 0x0800         # Slot Control: toggle the electromechanical interlock
SLTSTA_EIS = 0x0080         # Slot Status: the interlock is engaged
NIC_PORTS = 3
NIC_REGS = list(range(0, 0x160, 4)) + [0x1000, 0x3FFC]
NIC_RING = ARENA + 0x1C0000 # the NIC rings' part of the arena (16 KiB per port)


def nic_port_base(p):
    return 0x100000 + 0x4000 * p


def free_udp_ports(n):
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


class Wire:
    """The fuzzer's end of port 0's wire, and the back ends of the three
    ports (-netdev dgram on loopback UDP)."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.setblocking(False)
        a, b, c = free_udp_ports(3)
        self.peer = ("127.0.0.1", a)
        mine = self.sock.getsockname()[1]
        self.args = []
        for nid, local, remote in (("n0", a, mine), ("n1", b, c), ("n2", c, b)):
            self.args += ["-netdev", f"dgram,id={nid},local.type=inet,local.host=127.0.0.1,"
                          f"local.port={local},remote.type=inet,remote.host=127.0.0.1,"
                          f"remote.port={remote}"]
        self.devargs = f",nic-ports={NIC_PORTS},port0=n0,port1=n1,port2=n2"

    def drain(self):
        n = 0
        while True:
            try:
                self.sock.recv(70000)
                n += 1
            except BlockingIOError:
                return n

    def close(self):
        self.sock.close()


class Fuzzer(qt.QTest):
    """A QTest with a QMP socket (system_reset) and no per-command log."""

    sltctl_addr = None      # the root port's slot control (--hotplug)

    def __init__(self, qemu, devargs, log, qmp, extra=(), wire=None):
        self.wire = wire
        self.err = tempfile.TemporaryFile(mode="w+")
        self.p = subprocess.Popen(
            [qemu, *qt.FW, "-machine", "q35", "-accel", "qtest", "-qtest", "stdio",
             "-qtest-log", "/dev/null", "-nodefaults", "-display", "none",
             "-d", "guest_errors", "-D", log, "-qmp", f"unix:{qmp},server=on,wait=off",
             *extra, "-device", devargs],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
            text=True, bufsize=1)
        self.cmd("readl 0x0")   # QEMU is up, the QMP socket exists
        self.qmp = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.qmp.connect(qmp)
        self.qmpf = self.qmp.makefile("rw")
        json.loads(self.qmpf.readline())            # greeting
        self.qmp_cmd("qmp_capabilities")

    def qmp_cmd(self, command, **args):
        req = {"execute": command}
        if args:
            req["arguments"] = args
        self.qmpf.write(json.dumps(req) + "\n")
        self.qmpf.flush()
        while True:
            line = self.qmpf.readline()
            if not line:
                raise RuntimeError(f"QMP {command}: QEMU closed the socket")
            msg = json.loads(line)
            if "return" in msg or "error" in msg:
                return msg

    def setup(self):
        """After start, an FLR or a system reset: BARs, memory, bus master."""
        qt.program_bars(self)

    def present(self):
        return True

    def close(self):
        self.qmpf.close()
        self.qmp.close()
        super().close()

    def stderr_tail(self):
        self.err.seek(0)
        return self.err.read()[-3000:]


class HotplugFuzzer(Fuzzer):
    """The HPU (id hpu0) behind a root port with native hot-plug; its
    configuration space through MMCONFIG."""

    def __init__(self, qemu, devargs, log, qmp, extra=(), wire=None):
        self.devargs = devargs
        super().__init__(
            qemu, devargs, log, qmp,
            extra=("-global", "ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off",
                   "-device", "pcie-root-port,id=rp,bus=pcie.0,addr=02.0,chassis=1,slot=1",
                   *extra), wire=wire)
        self.enable_mmcfg()
        self.rp_exp = self.find_cap_at(RP, 0x10)
        self.sltctl_addr = self.cfg_at(RP, self.rp_exp + 0x18)

    enable_mmcfg = sec.QTest.enable_mmcfg
    cfg_at = staticmethod(sec.QTest.cfg_at)
    cfg_rd = sec.QTest.cfg_rd
    cfg_wr = sec.QTest.cfg_wr
    setup_bridge = sec.QTest.setup_bridge
    find_cap_at = sec.QTest.cap

    # the device's configuration space, for Actions and qt.program_bars
    def cfg_read(self, reg, size=4):
        return self.cfg_rd(DEV, reg, size)

    def cfg_write(self, reg, val, size=4):
        self.cfg_wr(DEV, reg, val, size)

    def setup(self):
        self.enable_mmcfg()                        # a system reset clears it
        self.setup_bridge()
        qt.program_bars(self)
        # BAR4 (spec version 8: 1 GiB here) must be inside the root port's
        # windows, or the fuzzer's BAR4 actions reach nothing: checked at
        # the start, on a fresh device (later setups follow fuzzed resets,
        # injected ECC and window moves, where BAR4 may rightly read 0).
        if not getattr(self, "bar4_checked", False):
            self.bar4_checked = True
            self.cmd(f"writeq {BAR4 + 0x1000:#x} 0x5a5aa5a512345678")
            if self.cmd(f"readq {BAR4 + 0x1000:#x}") != 0x5a5aa5a512345678:
                raise RuntimeError("BAR4 does not answer behind the root port")

    def present(self):
        return self.cfg_rd(DEV, 0) != 0xFFFFFFFF

    def slot(self, val):
        sltctl = self.cfg_rd(RP, self.rp_exp + 0x18, 2)
        self.cfg_wr(RP, self.rp_exp + 0x18, (sltctl & ~0x07C0) | val, 2)

    def wait(self, cond, tries=2000):
        """Until @cond (the main loop runs between reads); False if never."""
        for _ in range(tries):
            if cond():
                return True
            self.cmd("clock_step 1000")
            time.sleep(0.001)
        return False

    def replug(self):
        """The device does not answer (unplugged by the fuzzer or by its own
        write to slot control, or only powered off): power the slot on and,
        if it is gone, plug a new one."""
        self.slot(0x01C0)                          # power on, indicators on/off
        # A slot powered off without the unplug conditions keeps its device
        # (unpowered: its configuration space reads all ones); power is back.
        if self.present():
            self.setup()
            return
        # The fuzzer's own writes to slot control may have engaged the
        # electromechanical interlock (writing EIC toggles it): a locked
        # slot takes no new device, so it is released first, as an
        # operator would before plugging a card in.
        if self.cfg_rd(RP, self.rp_exp + 0x1A, 2) & SLTSTA_EIS:
            sltctl = self.cfg_rd(RP, self.rp_exp + 0x18, 2)
            self.cfg_wr(RP, self.rp_exp + 0x18, sltctl | SLTCTL_EIC, 2)
        msg = self.qmp_cmd("device_add", **self.device_args())
        if "error" in msg:
            raise RuntimeError(f"device_add: {msg['error']}")
        if not self.wait(self.present):
            raise RuntimeError("a replugged device did not show up")
        self.setup()

    def device_args(self):
        driver, *props = self.devargs.split(",")
        args = {"driver": driver}
        for p in props:
            k, v = p.split("=", 1)
            # QMP wants numbers for the number properties
            args[k] = int(v[:-1]) << 30 if k == "hbm-size" else int(v) if k == "nic-ports" else v
        return args


def le(*fields):
    """Pack (value, size) pairs little-endian, each value cut to its size."""
    return b"".join((v & ((1 << 8 * n) - 1)).to_bytes(n, "little") for v, n in fields)


class Actions:
    """The random actions; each returns a short text for the failure log."""

    def __init__(self, q, rng, image):
        self.q = q
        self.rng = rng
        self.image = image
        self.pcie = q.find_cap(0x10)
        self.msix = q.find_cap(0x11)
        self.table = [
            (30, self.reg_write), (10, self.reg_read), (12, self.stream_setup),
            (14, self.doorbell), (14, self.write_cb), (6, self.write_ring),
            (6, self.clock), (4, self.hbm_window), (3, self.page_table),
            (3, self.msix_entry), (2, self.config), (2, self.boot),
            (1, self.reset_key), (1, self.system_reset),
            (4, self.nic_setup), (4, self.nic_desc), (6, self.nic_doorbell),
            (6, self.nic_frame), (1, self.nic_link), (10, self.nic_traffic),
        ]
        if q.sltctl_addr is not None:
            self.table += [(2, self.flr), (1, self.unplug)]
        self.weights = [w for w, _ in self.table]

    # values and addresses a confused or hostile driver would use
    def value(self):
        r = self.rng
        c = r.randrange(10)
        if c < 3:
            extra = [SLOT_OFF, SLOT_OFF | 0x3F] if self.q.sltctl_addr is not None else []
            return r.choice([0, 1, 2, 3, 0xFF, 0xFFFF, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF,
                             16, 4096, 4097, *KEYS, *extra])
        if c < 6:
            return r.randrange(1 << r.choice([4, 8, 12, 16]))
        if c < 8:
            return (ARENA + r.randrange(ARENA_SIZE)) & 0xFFFFFFFF
        return r.getrandbits(32)

    def address(self):
        """A device address: guest RAM (host bit), HBM, own BARs, junk."""
        r = self.rng
        c = r.randrange(10)
        if c < 4:
            return HOST | (ARENA + r.randrange(ARENA_SIZE))
        if c < 6:
            return r.randrange(1 << r.choice([12, 21, 30, 33, 40]))
        if c < 7:   # the device's own registers, MSI-X table, HBM window
            if self.q.sltctl_addr is not None and r.random() < 0.3:
                return HOST | self.q.sltctl_addr     # the root port's slot control
            return HOST | (r.choice([BAR0, BAR2, BAR4]) + r.randrange(0x10000))
        if c < 8:
            return HOST | r.getrandbits(52)
        return r.getrandbits(64)

    def arena(self, size=32, align=8):
        return ARENA + (self.rng.randrange(ARENA_SIZE - size) & ~(align - 1))

    def reg_offset(self):
        r = self.rng
        c = r.randrange(10)
        if c < 4:
            return r.choice(SINGLE_REGS)
        if c < 7:
            return (0x10000 + 0x1000 * r.randrange(ENGINES + 1) + 0x100 * r.randrange(STREAMS + 1)
                    + r.choice(STREAM_REGS))
        if c < 8:
            if r.random() < 0.5:       # a NIC port's register, ports past the last
                return nic_port_base(r.randrange(NIC_PORTS + 1)) + r.choice(NIC_REGS)
            return 0x20000 + 4 * r.randrange(2100)     # HPU_REG_SOB(n), past the last
        if c < 9:
            return r.randrange(R["HPU_BAR_REGS_SIZE"]) & ~3
        return r.randrange(R["HPU_BAR_REGS_SIZE"] + 16)

    def reg_write(self):
        off = self.reg_offset()
        op = self.rng.choice(["writel"] * 8 + ["writeb", "writew", "writeq"])
        val = self.value()
        if op == "writeq":
            val |= self.value() << 32
        self.q.cmd(f"{op} {BAR0 + off:#x} {val:#x}")
        return f"{op} BAR0+{off:#x} {val:#x}"

    def reg_read(self):
        off = self.reg_offset()
        op = self.rng.choice(["readl"] * 6 + ["readb", "readw", "readq"])
        self.q.cmd(f"{op} {BAR0 + off:#x}")
        return f"{op} BAR0+{off:#x}"

    def stream_base(self):
        return 0x10000 + 0x1000 * self.rng.randrange(ENGINES) + 0x100 * self.rng.randrange(STREAMS)

    def stream_setup(self):
        r = self.rng
        qs = self.stream_base()
        ring = self.arena(4096, 32)
        cq = self.arena(4096, 16)
        size = r.choice([2, 4, 16, 64, 4096, 0, 1, 3, 5000, self.value()])
        cqsize = r.choice([2, 4, 16, 64, 0, 1, 3, self.value()])
        # spec version 9: a write-back record (often none) and moderation
        wb = r.choice([0, 0, self.arena(32, 32), self.arena(32, 8)])
        irq_mod = r.choice([0, 0, 4 << 16 | 20, 2 << 16, 1, self.value()])
        for off, val in ((R["HPU_QS_RING_LO"], ring), (R["HPU_QS_RING_HI"], 0),
                         (R["HPU_QS_RING_SIZE"], size), (R["HPU_QS_CQ_LO"], cq),
                         (R["HPU_QS_CQ_HI"], 0), (R["HPU_QS_CQ_SIZE"], cqsize),
                         (R["HPU_QS_WB_LO"], wb & 0xFFFFFFFF), (R["HPU_QS_WB_HI"], wb >> 32),
                         (R["HPU_QS_IRQ_MOD"], irq_mod),
                         (R["HPU_QS_CTRL"], r.choice([3, 3, 1, 0, 2, self.value()]))):
            self.q.wr(qs + off, val)
        return f"stream {qs:#x} ring {ring:#x}/{size} cq {cq:#x}/{cqsize}"

    def doorbell(self):
        qs = self.stream_base()
        pi = self.rng.choice([1, 2, 3, 4, 16, 63, 64, self.value()])
        self.q.wr(qs + R["HPU_QS_PI"], pi)
        return f"doorbell {qs:#x} pi {pi:#x}"

    def gemm_desc(self):
        """A GEMM descriptor (Documentation/hw/mme.md) in the arena, mostly
        small and plausible, often broken; its address (sometimes junk)."""
        r = self.rng
        dim = lambda: r.choice([1, 2, 3, 17, 64, 130, 0, 65537, self.value()])
        m, n, k, batch = dim(), dim(), dim(), r.choice([1, 1, 2, 3, 0, self.value()])
        # keep a GEMM that may be valid small: every dimension in range and
        # a large product (or a large D, C, A or B) clamps all four, so the
        # fuzzer neither fills HBM's backing memory nor runs for minutes
        # (at most 64 * 64 * 64 * 4 multiply-adds, 64 KiB per operand)
        valid = all(1 <= x <= 1 << 16 for x in (m, n, k, batch))
        if valid and (m * n * k * batch > 1 << 20 or
                      max(m * n, m * k, k * n) * batch > 1 << 14):
            m, n, k, batch = min(m, 64), min(n, 64), min(k, 64), min(batch, 4)
        ld = lambda d: r.choice([d, d, d + 1, 0, self.value()])
        stride = lambda: r.choice([0, 1 << 16, 1 << 20, self.value(), r.getrandbits(64)])
        flags = r.choice([0, 1, 4, 5, 0x10, 0x20, 0x30, 0x41, 0x100, 0x200, 0x300, 0x80,
                          self.value()])
        desc = le((flags, 4), (r.choice([0, 0, 0, self.value()]), 4), (m, 4), (n, 4), (k, 4),
                  (batch, 4), (self.address(), 8), (self.address(), 8), (self.address(), 8),
                  (self.address(), 8), (self.address(), 8), (ld(k), 4), (ld(n), 4),
                  (ld(n), 4), (ld(n), 4), (stride(), 8), (stride(), 8), (stride(), 8),
                  (stride(), 8), (r.choice([0x3f800000, 0, self.value()]), 4),
                  (r.choice([0, 0x3f800000, 0x80000000, self.value()]), 4),
                  (r.choice([0, 0, self.value()]), 8))
        addr = self.arena(len(desc), 64)
        self.q.mem_write(addr, desc)
        return HOST | addr if r.random() < 0.8 else self.address()

    def packet(self):
        r = self.rng
        op = r.choice([0, 1, 1, 2, 3, 4, 5, 6, 7, 7, r.randrange(256)])
        if op in (6, 7):    # TPC_LAUNCH, MME_GEMM
            return le((op, 4), (r.choice([0, 0, 0, self.value()]), 4), (self.gemm_desc(), 8))
        hdr = op | (r.choice([0, 0, 0, 1, self.value()]) << 8 if r.random() < 0.2 else 0)
        if op == 0:
            return le((hdr, 4), (r.choice([0, 0, self.value()]), 4))
        if op == 1:
            size = r.choice([1, 8, 4096, 65536, 1 << 20, 1 << 30, self.value(), r.getrandbits(64)])
            return le((hdr, 4), (r.choice([0, 1, 0, self.value()]), 4),
                         (self.address(), 8), (self.address(), 8), (size, 8))
        if op in (2, 4, 5):
            return le((hdr, 4), (self.value(), 4), (self.address(), 8))
        if op == 3:
            return le((hdr, 4), (r.randrange(2100), 4), (self.value(), 4),
                         (r.choice([0, 1, 2, self.value()]), 4))
        return r.randbytes(r.choice([8, 16, 32]))

    def write_cb(self):
        cb = b"".join(self.packet() for _ in range(self.rng.randrange(1, 8)))
        addr = self.arena(len(cb) + 8)
        self.q.mem_write(addr, cb)
        return f"cb at {addr:#x}: {len(cb)} bytes"

    def write_ring(self):
        """Descriptors at random ring slots: a command buffer in the arena
        (or anywhere), its size, flags/ASID, sequence number, reserved."""
        r = self.rng
        n = r.randrange(1, 5)
        base = self.arena(32 * n, 32)
        data = b""
        for _ in range(n):
            cb = HOST | self.arena(256) if r.random() < 0.7 else self.address()
            size = r.choice([8, 16, 32, 48, 64, 0, 7, 1 << 20, (1 << 20) + 8, self.value()])
            data += le((cb, 8), (size, 4), (r.choice([0, 0, 1, self.value() & 0xFFFF]), 2),
                          (r.choice([0, 0, 1, 2, 63, 64, self.value() & 0xFFFF]), 2),
                          (r.getrandbits(64), 8), (r.choice([0, 0, self.value()]), 8))
        self.q.mem_write(base, data)
        return f"{n} descriptors at {base:#x}"

    def clock(self):
        ns = self.rng.choice([1000, 100000, 1000000, 10000000, 50000000])
        self.q.cmd(f"clock_step {ns}")
        return f"clock_step {ns}"

    def hbm_window(self):
        r = self.rng
        off = r.randrange(R["HPU_BAR_HBM_SIZE"] - 8)
        if r.random() < 0.5:
            self.q.cmd(f"writeq {BAR4 + off:#x} {r.getrandbits(64):#x}")
        else:
            self.q.cmd(f"readq {BAR4 + off:#x}")
        return f"BAR4+{off:#x}"

    def page_table(self):
        """A root for a random ASID and random entries under it."""
        r = self.rng
        asid = r.randrange(64)
        root = r.randrange(1 << 20) & ~0xFFF
        self.q.wr(0x1200 + 8 * asid, root | r.choice([1, 1, 0]))    # HPU_REG_MMU_ROOT_LO(asid)
        self.q.wr(0x1204 + 8 * asid, r.choice([0, 0, self.value()]))
        for _ in range(r.randrange(1, 6)):
            pte = r.choice([root | 0x3, (r.randrange(1 << 30) & ~0xFFF) | r.choice([1, 3, 5, 7, 0xB]),
                            r.getrandbits(64)])
            self.q.cmd(f"writeq {BAR4 + root + 8 * r.randrange(512):#x} {pte:#x}")
        self.q.wr(R["HPU_REG_MMU_INV"], r.choice([asid, R["HPU_MMU_INV_ALL"], self.value()]))
        return f"page table asid {asid} root {root:#x}"

    def msix_entry(self):
        r = self.rng
        v = r.randrange(33)
        target = r.choice([ARENA + r.randrange(0x1000) * 4, BAR0 + r.choice(SINGLE_REGS),
                           BAR0 + self.stream_base() + R["HPU_QS_PI"], BAR2 + 16 * r.randrange(32),
                           0xFEE00000, self.value()])
        if self.q.sltctl_addr is not None and r.random() < 0.3:
            target = self.q.sltctl_addr
        self.q.cmd(f"writel {BAR2 + 16 * v:#x} {target & 0xFFFFFFFF:#x}")
        self.q.cmd(f"writel {BAR2 + 16 * v + 4:#x} {r.choice([0, 0, 0, self.value()]):#x}")
        self.q.cmd(f"writel {BAR2 + 16 * v + 8:#x} {self.value():#x}")
        self.q.cmd(f"writel {BAR2 + 16 * v + 12:#x} {r.choice([0, 0, 1]):#x}")
        if r.random() < 0.3:
            self.q.wr(R["HPU_REG_IRQ_TEST"], v)
        return f"msix vector {v} -> {target:#x}"

    def config(self):
        r = self.rng
        c = r.randrange(6)
        if c == 0 and self.msix:
            val = r.choice([0x8000, 0xC000, 0, 0x4000])
            self.q.cfg_write(self.msix + 2, val, 2)
            return f"msix control {val:#x}"
        if c == 1 and self.pcie:
            # Device Control: bit 15 initiates a function level reset.
            val = r.choice([0x8000, 0x0000, 0x2810, self.value() & 0xFFFF])
            self.q.cfg_write(self.pcie + 8, val, 2)
            self.q.setup()
            return f"pcie devctl {val:#x}"
        if c == 2:
            val = r.choice([0x6, 0x2, 0x4, 0x0, 0x406])
            self.q.cfg_write(0x04, val, 2)
            return f"command {val:#x}"
        if c == 3:
            off = r.randrange(0x40, 0x100)
            self.q.cfg_write(off, r.getrandbits(8), 1)
            return f"config byte {off:#x}"
        self.q.setup()
        return "program BARs"

    def boot(self):
        r = self.rng
        c = r.randrange(4)
        if c == 0:
            img = self.image
        elif c == 1:
            img = self.image[:r.randrange(1, len(self.image))]
        elif c == 2:
            img = bytearray(self.image)
            img[r.randrange(len(img))] ^= 1 << r.randrange(8)
            img = bytes(img)
        else:
            img = r.randbytes(r.randrange(1, 4096))
        self.q.mem_write(qt.IMG_ADDR, img)
        self.q.wr(R["HPU_REG_FW_IMG_ADDR_LO"], r.choice([qt.IMG_ADDR, self.value()]))
        self.q.wr(R["HPU_REG_FW_IMG_ADDR_HI"], r.choice([0, 0, 0, self.value()]))
        self.q.wr(R["HPU_REG_FW_IMG_SIZE"], r.choice([len(img), len(img), self.value()]))
        cmd = r.choice([R["HPU_BOOT_HOST"], R["HPU_BOOT_FLASH"], self.value()])
        self.q.wr(R["HPU_REG_BOOT_CMD"], cmd)
        if r.random() < 0.3:
            self.q.wr(R["HPU_REG_FLASH_CMD"], R["HPU_FLASH_WRITE"])
        return f"boot cmd {cmd:#x} image {len(img)} bytes"

    def reset_key(self):
        reg = self.rng.choice([R["HPU_REG_SOFT_RESET"], R["HPU_REG_HARD_RESET"]])
        key = self.rng.choice(KEYS)
        self.q.wr(reg, key)
        return f"reset {reg:#x} key {key:#x}"

    def system_reset(self):
        self.q.qmp_cmd("system_reset")
        self.q.cmd("clock_step 1000")
        self.q.setup()
        return "system_reset"

    def flr(self):
        """--hotplug: an FLR while the engines may be busy; the BARs come
        back at once (the reset may still be waiting for DMA in flight)."""
        devctl = self.q.cfg_read(self.pcie + 8, 2)
        self.q.cfg_write(self.pcie + 8, devctl | 0x8000, 2)
        self.q.setup()
        return "flr"

    def unplug(self):
        """--hotplug: device_del and the guest's slot power-off, in either
        order or alone (the slot powered off with no request, the request
        with the power left on), maybe with an FLR in between."""
        q, r = self.q, self.rng
        c = r.randrange(4)
        if c in (0, 1, 3):
            msg = q.qmp_cmd("device_del", id="hpu0")
            what = f"device_del {'error' if 'error' in msg else 'ok'}"
        else:
            what = "no request"
        if c == 3 and self.pcie:
            q.cfg_write(self.pcie + 8, 0x8000, 2)
            what += ", flr"
        if c != 1:
            q.slot(SLOT_OFF)
            what += ", slot power off"
        return what

    # Spec version 7: NIC ports
    def nic_port(self):
        return self.rng.randrange(NIC_PORTS + 1) if self.rng.random() < 0.1 else \
            self.rng.randrange(NIC_PORTS)

    def nic_setup(self):
        """A port's rings in the arena (mostly sane), MTU, enable bits."""
        r = self.rng
        p = self.nic_port()
        base = nic_port_base(p)
        ring = NIC_RING + 0x4000 * (p % NIC_PORTS)
        q = self.q
        q.wr(base + R["HPU_NIC_CTRL"], 0)
        if r.random() < 0.3:
            q.wr(base + R["HPU_NIC_MTU"], r.choice([68, 1500, 9216, 67, 9217, self.value()]))
        for lo, off in ((R["HPU_NIC_TX_BASE_LO"], 0), (R["HPU_NIC_RX_BASE_LO"], 0x2000)):
            addr = HOST | (ring + off) if r.random() < 0.85 else self.address()
            q.wr(base + lo, addr & 0xFFFFFFFF)
            q.wr(base + lo + 4, addr >> 32)
            q.wr(base + lo + 8, r.choice([16, 64, 256, 0, 8, 17, 8192, self.value()]))
        q.wr(base + R["HPU_NIC_IRQ_MASK"], r.choice([0, 0x1F, self.value()]))
        q.wr(base + R["HPU_NIC_CTRL"], r.choice([3, 3, 7, 1, 2, self.value()]))
        if r.random() < 0.2:
            q.wr(base + R["HPU_NIC_INJ_CTRL"], r.choice([0, 1, 0x100, 0x10000, 0x1000000,
                                                         self.value()]))
        return f"nic {p} setup ring {ring:#x}"

    def nic_desc(self):
        """Transmit or receive descriptors at random slots of a port's rings,
        their buffers in the arena, HBM or anywhere."""
        r = self.rng
        p = r.randrange(NIC_PORTS)
        rx = r.random() < 0.5
        base = NIC_RING + 0x4000 * p + (0x2000 if rx else 0)
        data = b""
        n = r.randrange(1, 9)
        first = r.randrange(256 - n)
        for i in range(n):
            buf = HOST | self.arena(16384) if r.random() < 0.7 else self.address()
            if rx:
                data += le((buf, 8), (r.choice([2048, 16383, 64, 63, 16384, self.value()]), 2),
                           (self.value(), 2), (self.value(), 2), (r.choice([0, 0, self.value()]), 2))
            else:
                length = r.choice([60, 64, 1514, 1518, 9000, 13, 0, 16383, 16384, self.value()])
                flags = r.choice([1, 1, 0, 0x81, self.value()]) if i == n - 1 else r.choice([0, 0, 1, 2])
                data += le((buf, 8), (length, 2), (flags, 1), (self.value(), 1),
                           (r.choice([0, 0, 0, self.value()]), 4))
        if not rx and r.random() < 0.5:    # a frame to port 2's (or any) address
            dst = r.choice([bytes.fromhex("024850654322"), r.randbytes(6)])
            self.q.mem_write(self.arena(16384), dst + r.randbytes(r.randrange(8, 200)))
        self.q.mem_write(base + 16 * first, data)
        return f"nic {p} {'rx' if rx else 'tx'} descriptors {first}+{n}"

    def nic_doorbell(self):
        r = self.rng
        p = self.nic_port()
        reg = r.choice([R["HPU_NIC_TX_PI"], R["HPU_NIC_RX_PI"]])
        ci = self.q.rd(nic_port_base(p) + reg + 4)
        pi = r.choice([ci + 1, ci + r.randrange(1, 17), ci + 300, self.value()]) & 0xFFFFFFFF
        self.q.wr(nic_port_base(p) + reg, pi)
        if self.q.wire:
            self.q.wire.drain()
        return f"nic {p} doorbell {reg:#x} pi {pi}"

    def nic_frame(self):
        """A frame from the wire into port 0: any length (but 0, which
        QEMU's dgram back end takes for the end of the connection), often to
        the port's address, its broadcast or a multicast one."""
        r = self.rng
        if not self.q.wire:
            return "no wire"
        n = r.choice([1, 13, 14, 59, 60, 64, 1514, 1518, 1519, 9234, 9235, 16384, 65000,
                      r.randrange(1, 20000)])
        f = bytearray(r.randbytes(n))
        dst = r.choice([None, b"\xff" * 6, b"\x01\x00\x5e\x00\x00\x01",
                        bytes.fromhex("024850654320")])
        if dst and n >= 6:
            f[:6] = dst
        try:
            self.q.wire.sock.sendto(bytes(f), self.q.wire.peer)
        except OSError:
            pass
        self.q.wire.drain()
        return f"nic frame {n} bytes"

    def nic_traffic(self):
        """Mostly well-formed traffic: a port's rings enabled if they are
        not, frames posted (1 to 3 buffers) and received buffers posted, a
        frame from the wire."""
        r, q = self.rng, self.q
        p = r.randrange(NIC_PORTS)
        base = nic_port_base(p)
        ring = NIC_RING + 0x4000 * p
        if q.rd(base + R["HPU_NIC_CTRL"]) & 3 != 3:
            q.wr(base + R["HPU_NIC_CTRL"], 0)
            for lo, off in ((R["HPU_NIC_TX_BASE_LO"], 0), (R["HPU_NIC_RX_BASE_LO"], 0x2000)):
                q.wr(base + lo, ring + off)
                q.wr(base + lo + 4, HOST >> 32)
                q.wr(base + lo + 8, 256)
            q.wr(base + R["HPU_NIC_CTRL"], r.choice([3, 7]))
        what = f"nic {p} traffic"
        # transmit: to port 2's address mostly (ports 1 and 2 are wired)
        ci = q.rd(base + R["HPU_NIC_TX_CI"])
        pi = q.rd(base + R["HPU_NIC_TX_PI"])
        if pi - ci < 200:
            n = r.randrange(1, 4)
            f = bytes.fromhex(r.choice(["024850654322", "024850654321", "ffffffffffff"])) + \
                r.randbytes(r.choice([50, 100, 1500, 1504, r.randrange(1, 3000)]))
            buf = self.arena(len(f) + 8)
            q.mem_write(buf, f)
            cut = sorted(r.sample(range(1, len(f)), n - 1)) if len(f) > n else []
            edges = [0, *cut, len(f)]
            data = b""
            for i in range(len(edges) - 1):
                data += le((HOST | (buf + edges[i]), 8), (edges[i + 1] - edges[i], 2),
                           (1 if i == len(edges) - 2 else 0, 1), (0, 1), (0, 4))
            for i in range(0, len(data), 16):
                slot = (pi + i // 16) % 256
                q.mem_write(ring + 16 * slot, data[i:i + 16])
            q.wr(base + R["HPU_NIC_TX_PI"], pi + len(data) // 16)
            what += f", tx {len(f)} bytes in {len(edges) - 1}"
        # receive: post a few buffers
        rci = q.rd(base + R["HPU_NIC_RX_CI"])
        rpi = q.rd(base + R["HPU_NIC_RX_PI"])
        if rpi - rci < 200:
            k = r.randrange(1, 5)
            for i in range(k):
                q.mem_write(ring + 0x2000 + 16 * ((rpi + i) % 256),
                            le((HOST | self.arena(9300, 64), 8), (r.choice([2048, 9300, 100]), 2),
                               (0, 2), (0, 2), (0, 2)))
            q.wr(base + R["HPU_NIC_RX_PI"], rpi + k)
        if p == 0 and q.wire:
            self.nic_frame()
        return what

    def nic_link(self):
        nid = self.rng.choice(["n0", "n1", "n2"])
        up = self.rng.random() < 0.6
        self.q.qmp_cmd("set_link", name=nid, up=up)
        return f"set_link {nid} {up}"

    def run_one(self):
        if not self.q.present():
            self.current = "replug"
            self.q.replug()
            return "replug"
        fn = self.rng.choices(self.table, weights=self.weights)[0][1]
        self.current = fn.__name__
        return fn()



def smoke(q, image):
    """After a system reset the device is the power-on device: it boots the
    good image and runs a DMA job end to end."""
    if not q.present():
        q.replug()
    q.qmp_cmd("system_reset")
    q.cmd("clock_step 1000")
    q.setup()
    # A reset that found a DMA transfer in flight keeps the function in
    # reset (BAR reads all ones) until the transfer's worker thread has
    # finished, in real time (hpu_pci.c): wait for it as a driver does,
    # without moving the virtual clock (the ROM's 10 ms start at the exit).
    magic = q.rd(R["HPU_REG_MAGIC"])
    for _ in range(5000):
        if magic != 0xFFFFFFFF:
            break
        time.sleep(0.001)
        magic = q.rd(R["HPU_REG_MAGIC"])
    qt.check(magic == R["HPU_MAGIC_VALUE"], f"MAGIC after the fuzz and a system reset ({magic:#x})")
    st = q.rd(R["HPU_REG_CPU_STATUS"])
    qt.check(st == R["HPU_CPU_ROM_INIT"], f"CPU_STATUS ROM_INIT after a system reset ({st})")
    q.cmd(f"clock_step {10 * qt.MS}")
    qt.boot_host(q, image)
    q.cmd(f"clock_step {30 * qt.MS}")
    qt.settle(q, R["HPU_REG_CPU_STATUS"], R["HPU_CPU_BOOTING"], "firmware boot")
    st = q.rd(R["HPU_REG_CPU_STATUS"])
    qt.check(st == R["HPU_CPU_RUNNING"], f"firmware runs after the fuzz and a system reset ({st})")
    # One job on engine 0 stream 0: host -> HBM -> host and a write-value,
    # in an arena cleared of what the fuzzer left there.
    ring, cq, cb, src, dst = ARENA, ARENA + 0x1000, ARENA + 0x2000, ARENA + 0x10000, ARENA + 0x20000
    q.mem_write(ARENA, bytes(0x30000))
    data = bytes((i * 13 + 5) & 0xFF for i in range(4099))
    q.mem_write(src, data)
    q.mem_write(cb, le((0x01, 4), (0, 4), (HOST | src, 8), (0x1000, 8), (len(data), 8)) +
                le((0x01, 4), (0, 4), (0x1000, 8), (HOST | dst, 8), (len(data), 8)) +
                le((0x02, 4), (0x5EED, 4), (HOST | dst + 0x2000, 8)))
    q.mem_write(ring, le((HOST | cb, 8), (80, 4), (0, 2), (0, 2), (0x77, 8), (0, 8)))
    qs = 0x10000
    for off, val in ((R["HPU_QS_RING_LO"], ring), (R["HPU_QS_RING_HI"], 0),
                     (R["HPU_QS_RING_SIZE"], 16), (R["HPU_QS_CQ_LO"], cq), (R["HPU_QS_CQ_HI"], 0),
                     (R["HPU_QS_CQ_SIZE"], 16), (R["HPU_QS_CTRL"], R["HPU_QS_CTRL_ENABLE"]),
                     (R["HPU_QS_PI"], 1)):
        q.wr(qs + off, val)
    for _ in range(2000):
        if q.rd(qs + R["HPU_QS_CQ_PI"]) == 1:
            break
        time.sleep(0.001)
    rec = q.mem_read(cq, 16)
    qt.check(rec == le((0x77, 8), (0, 4), (0, 2), (0, 1), (0, 1)),
             f"a DMA job completes OK after the fuzz and a system reset ({rec.hex()})")
    qt.check(q.mem_read(dst, len(data)) == data and
             q.cmd(f"readl {dst + 0x2000:#x}") == 0x5EED, "its data arrived")
    if q.wire:
        nic_smoke(q)


def nic_smoke(q):
    """Port 1 sends a frame, port 2 receives it (links up again)."""
    for nid in ("n0", "n1", "n2"):
        q.qmp_cmd("set_link", name=nid, up=True)
    txr, rxr, txb, rxb = ARENA + 0x3000, ARENA + 0x3400, ARENA + 0x4000, ARENA + 0x8000
    b1, b2 = nic_port_base(1), nic_port_base(2)
    for base, lo, ring, ctrl in ((b1, R["HPU_NIC_TX_BASE_LO"], txr, 1),
                                 (b2, R["HPU_NIC_RX_BASE_LO"], rxr, 2)):
        q.wr(base + lo, ring)
        q.wr(base + lo + 4, HOST >> 32)
        q.wr(base + lo + 8, 16)
        q.wr(base + R["HPU_NIC_CTRL"], ctrl)
    mac2 = struct.pack("<IH", q.rd(b2 + R["HPU_NIC_MAC_LO"]), q.rd(b2 + R["HPU_NIC_MAC_HI"]))
    f = mac2 + bytes([2, 0, 0, 0, 0, 9, 8, 0]) + bytes(range(200))
    q.mem_write(rxr, le((HOST | rxb, 8), (2048, 2), (0, 2), (0, 2), (0, 2)))
    q.wr(b2 + R["HPU_NIC_RX_PI"], 1)
    q.mem_write(txb, f)
    q.mem_write(txr, le((HOST | txb, 8), (len(f), 2), (1, 1), (0, 1), (0, 4)))
    q.wr(b1 + R["HPU_NIC_TX_PI"], 1)
    for _ in range(3000):
        if q.rd(b2 + R["HPU_NIC_RX_CI"]) == 1:
            break
        time.sleep(0.001)
    qt.check(q.mem_read(rxb, len(f)) == f and q.mem_read(rxr + 10, 3) == bytes([len(f), 0, 1]),
             "port 1 sends a frame that port 2 receives after the fuzz and a system reset")


def fuzz_round(qemu, seed, actions, deadline, image, stats, hotplug=False):
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="hpu-fuzz-")
    log = os.path.join(tmp, "guest-errors.log")
    qmp = os.path.join(tmp, "qmp.sock")
    wire = Wire()
    # uuid: port 2's MAC is 02:48:50:65:43:22, which nic_desc aims frames at
    ports = wire.devargs + ",uuid=12345678-9abc-def0-0fed-cba987654321"
    if hotplug:
        q = HotplugFuzzer(qemu, "hpu,bus=rp,id=hpu0,hbm-size=1G,serial=FUZZ,"
                          f"fw-pubkey={qt.pubkey()}" + ports, log, qmp, wire.args, wire)
    else:
        q = Fuzzer(qemu, f"hpu,addr=01.0,hbm-size=1G,serial=FUZZ,fw-pubkey={qt.pubkey()}" + ports,
                   log, qmp, wire.args, wire)
    last = collections.deque(maxlen=40)
    done = 0
    ok = True
    # A QEMU that stops answering (a deadlock in the model) is a failure too:
    # a watchdog kills it when no action finished for HANG_S seconds.
    progress = [time.monotonic()]
    hung = threading.Event()
    stop = threading.Event()

    def watchdog():
        while not stop.wait(1.0):
            if time.monotonic() - progress[0] > HANG_S:
                hung.set()
                # Where every thread of the hung QEMU waits, for the report.
                if shutil.which("gdb"):
                    bt = subprocess.run(["gdb", "-batch", "-p", str(q.p.pid), "-ex",
                                         "thread apply all bt 15"], capture_output=True,
                                        text=True, timeout=120, check=False)
                    print("QEMU threads when it stopped answering:\n" +
                          "\n".join(l for l in bt.stdout.splitlines() if l.startswith(("#", "Thread"))))
                q.p.kill()
                return
    threading.Thread(target=watchdog, daemon=True).start()
    try:
        q.setup()
        a = Actions(q, rng, image)
        a.current = "start"
        while done < actions and time.monotonic() < deadline:
            what = a.run_one()
            if what == "replug":
                stats["replugs"] += 1
            last.append(f"{done}: " + what)
            done += 1
            progress[0] = time.monotonic()
        before = len(qt.FAILS)
        smoke(q, image)
        ok = len(qt.FAILS) == before
        if not ok:
            print(f"FAIL seed {seed}: the device does not work after the fuzz and a system reset")
    except (RuntimeError, OSError, ValueError) as e:
        ok = False
        why = str(e)
        if hung.is_set():
            why = f"QEMU stopped answering for {HANG_S} s in action {a.current}"
        print(f"FAIL seed {seed} after {done} actions: {why}")
        print("last actions:\n  " + "\n  ".join(last))
        q.p.poll()
        print(f"QEMU exit status {q.p.returncode}; stderr:\n" + q.stderr_tail())
    finally:
        stop.set()
        wire.close()
        try:
            q.close()
        except (OSError, subprocess.TimeoutExpired):
            q.p.kill()
    rc = q.p.returncode
    # terminate() gives -15; anything else (an abort, a crash) is a failure
    if ok and rc not in (0, -15):
        ok = False
        print(f"FAIL seed {seed}: QEMU exited with {rc}")
    with open(log, errors="replace") as f:
        stats["guest errors logged"] += sum(1 for _ in f)
    for name in os.listdir(tmp):
        os.unlink(os.path.join(tmp, name))
    os.rmdir(tmp)
    stats["actions"] += done
    return ok


def main():
    ap = argparse.ArgumentParser(description="fuzz the HPU device model through qtest")
    ap.add_argument("--seed", type=int, default=None, help="first seed (default: random)")
    ap.add_argument("--actions", type=int, default=4000, help="actions per round")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--time-limit", type=float, default=0, help="seconds, 0: none")
    ap.add_argument("--hotplug", action="store_true",
                    help="behind a root port with native hot-plug; unplug, replug, FLR")
    ap.add_argument("--qemu")
    a = ap.parse_args()
    qemu = a.qemu or qt.find_qemu()
    if not qemu:
        return 77
    if not os.access(qt.PACKER, os.X_OK):
        print("FAIL: the firmware packer is not built (build/tools/hpu-fwpack/hpu-fwpack)")
        return 1
    seed = a.seed if a.seed is not None else random.SystemRandom().getrandbits(31)
    with tempfile.TemporaryDirectory(prefix="hpu-fuzz-img-") as d:
        image = qt.pack(d, "good.bin", "--key", qt.FWKEY)
    t0 = time.monotonic()
    deadline = t0 + a.time_limit if a.time_limit else float("inf")
    stats = collections.Counter()
    failed = 0
    rounds = 0
    for r in range(a.rounds):
        if time.monotonic() > deadline:
            break
        rounds += 1
        if not fuzz_round(qemu, seed + r, a.actions, deadline, image, stats, a.hotplug):
            failed += 1
    took = time.monotonic() - t0
    print(f"model fuzz{' (hotplug)' if a.hotplug else ''}: {stats['replugs']} replugs, seeds {seed}..{seed + rounds - 1}, {rounds} rounds, "
          f"{stats['actions']} actions in {took:.1f} s ({stats['actions'] / max(took, 1e-9):.0f}/s), "
          f"{stats['guest errors logged']} guest errors logged, {failed} rounds failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# The NIC ports of spec version 7 (Documentation/hw/nic.md) inside the QEMU
# binary built by tools/dev/build-qemu.sh, through QEMU's qtest protocol (no
# guest): the glue of emu/hpu_pci.c that the host unit tests cannot reach.
# One HPU with three ports: ports 0 and 1 wired to each other by two
# `-netdev dgram` back ends on loopback UDP, port 2 wired to this script's
# own UDP socket (it reads what the port sends and sends it hostile
# frames).  Checked: the link of attached and unattached ports, a frame
# sent by port 0 (transmit bottom half, pci_dma_*, qemu_send_packet) and
# received by port 1 (receive callback) with its MSI-X vector 16 + 1, a
# short frame padded to 60 bytes on the wire, frames held in the back end's
# queue while no receive descriptor is posted (RX_NOBUF) and delivered once
# RX_PI moves, runts and oversized datagrams counted, the filter, set_link
# over QMP (LINK, LINK_CHANGES, the LINK cause, LINK_DOWN completions),
# a system reset purging held frames, and the property errors (a port at
# or above nic-ports, a netdev used twice).
#
# Usage: qtest_hpu_nic.py [QEMU]   (default: tools/dev/build-qemu.sh --print-path)
# Exit status 0 pass, 1 fail, 77 skip (QEMU not built).
#
# Copyright (c) 2026 The hpu authors

import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time

import qtest_hpu as qt

R = qt.R
check = qt.check
HOST = 1 << 63
MSI_TARGET = 0x00100000
TXR = 0x300000              # guest RAM: rings, buffers
RXR = 0x301000
TXB = 0x302000
RXB = 0x310000
UUID = "12345678-9abc-def0-0fed-cba987654321"


def P(p, reg):
    """BAR0 offset of port @p's register HPU_NIC_@reg."""
    return 0x100000 + 0x4000 * p + R["HPU_NIC_" + reg]


def free_udp_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def dgram(nid, local, remote):
    return ["-netdev", f"dgram,id={nid},local.type=inet,local.host=127.0.0.1,"
            f"local.port={local},remote.type=inet,remote.host=127.0.0.1,remote.port={remote}"]


class NicQTest(qt.QTest):
    """A QTest with extra arguments (back ends) and a QMP socket."""

    def __init__(self, qemu, devargs, log, extra, qmp):
        self.err = tempfile.TemporaryFile(mode="w+")
        self.p = subprocess.Popen(
            [qemu, *qt.FW, "-machine", "q35", "-accel", "qtest", "-qtest", "stdio",
             "-nodefaults", "-display", "none", "-d", "guest_errors", "-D", log,
             "-qmp", f"unix:{qmp},server=on,wait=off", *extra, "-device", devargs],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
            text=True, bufsize=1)
        self.cmd("readl 0x0")
        self.qmp = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.qmp.connect(qmp)
        self.qmpf = self.qmp.makefile("rw")
        json.loads(self.qmpf.readline())
        self.qmp_cmd("qmp_capabilities")

    def qmp_cmd(self, command, **args):
        req = {"execute": command}
        if args:
            req["arguments"] = args
        self.qmpf.write(json.dumps(req) + "\n")
        self.qmpf.flush()
        while True:
            msg = json.loads(self.qmpf.readline())
            if "return" in msg or "error" in msg:
                return msg

    def close(self):
        self.qmpf.close()
        self.qmp.close()
        super().close()


def wait_for(q, cond, what, tries=300):
    """Frames cross loopback UDP in real time: poll, letting QEMU's main
    loop run between commands."""
    for _ in range(tries):
        if cond():
            return True
        time.sleep(0.01)
    check(False, what + " (timed out)")
    return False


def rx_ring(q, p, n, first=0, size=2048):
    """Port @p's receive ring at RXR + 0x1000 * p: post @n buffers."""
    base = RXR + 0x400 * p
    for i in range(first, first + n):
        q.mem_write(base + 16 * (i % 16),
                    struct.pack("<QHHBBH", HOST | (RXB + 0x10000 * p + size * (i % 16)),
                                size, 0, 0, 0, 0))
    q.wr(P(p, "RX_PI"), first + n)


def setup(q):
    qt.program_bars(q)
    for p in range(3):
        q.wr(P(p, "TX_BASE_LO"), TXR + 0x400 * p)
        q.wr(P(p, "TX_BASE_HI"), HOST >> 32)
        q.wr(P(p, "TX_SIZE"), 16)
        q.wr(P(p, "RX_BASE_LO"), RXR + 0x400 * p)
        q.wr(P(p, "RX_BASE_HI"), HOST >> 32)
        q.wr(P(p, "RX_SIZE"), 16)
        q.wr(P(p, "CTRL"), R["HPU_NIC_CTRL_TX_EN"] | R["HPU_NIC_CTRL_RX_EN"])
        check(q.rd(P(p, "CTRL")) == 3, f"port {p} rings enabled")
        q.wr(P(p, "IRQ_STATUS"), 0xFFFFFFFF)


def send(q, p, frame, slot):
    buf = TXB + 0x4000 * p + 0x800 * (slot % 8)
    q.mem_write(buf, frame)
    q.mem_write(TXR + 0x400 * p + 16 * (slot % 16),
                struct.pack("<QHBBI", HOST | buf, len(frame), R["HPU_NIC_TXD_EOP"], 0, 0))
    q.wr(P(p, "TX_PI"), slot + 1)


def mac(q, p):
    return struct.pack("<IH", q.rd(P(p, "MAC_LO")), q.rd(P(p, "MAC_HI")))


def frame(dst, n, seed=0):
    return dst + bytes([2, 0, 0, 0, 0, 1, 8, 0]) + bytes((seed + i) & 0xFF for i in range(n - 14))


def rxd(q, p, i):
    raw = q.mem_read(RXR + 0x400 * p + 16 * (i % 16), 16)
    _, size, length, status, flags, _ = struct.unpack("<QHHBBH", raw)
    return length, status, flags


def counter(q, p, name):
    lo = q.rd(P(p, name + "_LO"))
    return lo | q.rd(P(p, name + "_HI")) << 32


def ports_0_and_1(q):
    """Port 0 sends to port 1 over the two dgram back ends."""
    for p in range(3):
        check(q.rd(P(p, "LINK_STATUS")) == 3, f"port {p}: LINK_STATUS attached and up")
        check(q.rd(P(p, "LINK_CHANGES")) == 0, f"port {p}: LINK_CHANGES 0")
    check(q.rd(P(1, "PERM_MAC_LO")) == 0x65504802 and q.rd(P(1, "PERM_MAC_HI")) == 0x2143,
          "port 1's permanent MAC 02:48:50:65:43:21 from the uuid")
    # MSI-X on, vector 17 (port 1) into guest RAM
    msix = q.find_cap(0x11)
    q.cfg_write(msix + 2, 0x8000, 2)
    entry = qt.BAR2 + 16 * 17       # HPU_VEC_NIC(1)
    q.cmd(f"writel {entry:#x} {MSI_TARGET:#x}")
    q.cmd(f"writel {entry + 4:#x} 0")
    q.cmd(f"writel {entry + 8:#x} 0xcafe0011")
    q.cmd(f"writel {entry + 12:#x} 0")
    q.cmd(f"writel {MSI_TARGET:#x} 0")
    q.wr(P(1, "IRQ_MASK"), R["HPU_NIC_IRQ_RX"])

    rx_ring(q, 1, 1)
    f = frame(mac(q, 1), 700, 3)
    send(q, 0, f, 0)
    check(q.rd(P(0, "TX_PI")) == 1, "TX_PI written")
    wait_for(q, lambda: q.rd(P(1, "RX_CI")) == 1, "port 1 received the frame")
    check(q.rd(P(0, "TX_CI")) == 1, "port 0: TX_CI 1")
    check(q.mem_read(TXR + 11, 1)[0] == 1, "port 0: descriptor DONE, OK")
    check(rxd(q, 1, 0) == (700, 1, 0), "port 1: descriptor 700 bytes, DONE, OK")
    check(q.mem_read(RXB + 0x10000, 700) == f, "port 1: the frame's bytes")
    check(counter(q, 0, "TX_FRAMES") == 1 and counter(q, 0, "TX_BYTES") == 700,
          "port 0: TX_FRAMES, TX_BYTES")
    check(counter(q, 1, "RX_FRAMES") == 1 and counter(q, 1, "RX_BYTES") == 700,
          "port 1: RX_FRAMES, RX_BYTES")
    check(q.cmd(f"readl {MSI_TARGET:#x}") == 0xCAFE0011, "port 1's vector 17 delivered")

    # no descriptor: held in the back end's queue, then delivered
    q.wr(P(1, "IRQ_MASK"), 0)
    frames = [frame(mac(q, 1), 100 + k, k) for k in range(3)]
    for k, g in enumerate(frames):
        send(q, 0, g, 1 + k)
    wait_for(q, lambda: q.rd(P(0, "TX_CI")) == 4, "port 0 sent three frames")
    wait_for(q, lambda: counter(q, 1, "RX_NOBUF") >= 1, "port 1 counted RX_NOBUF")
    time.sleep(0.1)
    check(q.rd(P(1, "RX_CI")) == 1, "nothing written without descriptors")
    check(q.rd(P(1, "IRQ_STATUS")) & R["HPU_NIC_IRQ_RX_NOBUF"] != 0, "the RX_NOBUF cause")
    rx_ring(q, 1, 3, first=1)
    wait_for(q, lambda: q.rd(P(1, "RX_CI")) == 4, "held frames delivered once RX_PI moved")
    for k, g in enumerate(frames):
        check(rxd(q, 1, 1 + k)[0] == len(g) and
              q.mem_read(RXB + 0x10000 + 2048 * (1 + k), len(g)) == g,
              f"held frame {k} delivered in order")


def port_2(q, sock, peer):
    """Port 2 against this script: padding on the wire, hostile frames."""
    q.wr(P(2, "IRQ_STATUS"), 0xFFFFFFFF)
    send(q, 2, frame(b"\x02\x11\x22\x33\x44\x55", 20, 9), 0)
    sock.settimeout(5)
    try:
        data, _ = sock.recvfrom(70000)
    except socket.timeout:
        data = b""
    check(len(data) == 60 and data[:20] == frame(b"\x02\x11\x22\x33\x44\x55", 20, 9) and
          data[20:] == bytes(40), "a 20-byte frame is padded to 60 bytes on the wire")
    rx_ring(q, 2, 2)        # the two good frames take them all
    # (not an empty datagram: QEMU's dgram back end takes it for the end
    # of the connection and stops reading)
    for junk in (b"\x01", bytes(13), os.urandom(1519), os.urandom(60000)):
        sock.sendto(junk, peer)
    sock.sendto(frame(b"\x02\x11\x22\x33\x44\x55", 100), peer)      # filtered
    good = frame(mac(q, 2), 1518, 7)
    sock.sendto(good, peer)
    sock.sendto(frame(b"\xff" * 6, 64), peer)
    wait_for(q, lambda: q.rd(P(2, "RX_CI")) == 2, "port 2 took two good frames")
    check(q.mem_read(RXB + 0x20000, 1518) == good, "port 2: the 1518-byte frame")
    check(rxd(q, 2, 1)[2] == R["HPU_NIC_RXD_BROADCAST"], "port 2: broadcast flag")
    errors = counter(q, 2, "RX_ERRORS")
    check(errors == 4, f"port 2: runts and oversized frames in RX_ERRORS ({errors})")
    check(counter(q, 2, "RX_FILTERED") == 1, "port 2: RX_FILTERED")
    check(counter(q, 2, "RX_MCAST") == 1, "port 2: RX_MCAST")


def link_and_reset(q, sock, peer):
    q.wr(P(1, "IRQ_STATUS"), 0xFFFFFFFF)
    r = q.qmp_cmd("set_link", name="n1", up=False)
    check("return" in r, "set_link n1 off")
    check(q.rd(P(1, "LINK_STATUS")) == R["HPU_NIC_LINK_STATUS_ATTACHED"], "port 1: LINK_STATUS attached, down")
    check(q.rd(P(1, "LINK_CHANGES")) == 1, "port 1: LINK_CHANGES 1")
    check(q.rd(P(1, "IRQ_STATUS")) == R["HPU_NIC_IRQ_LINK"], "port 1: the LINK cause")
    q.wr(P(1, "TX_PI"), 0)          # nothing: TX_PI == TX_CI
    send(q, 1, frame(mac(q, 0), 64), 0)
    wait_for(q, lambda: q.rd(P(1, "TX_CI")) == 1, "port 1 completed a frame while down")
    check(q.mem_read(TXR + 0x400 + 11, 1)[0] == 1 | R["HPU_NIC_DESC_LINK_DOWN"] << 1,
          "port 1: LINK_DOWN status")
    check(counter(q, 1, "TX_DROPS") == 1, "port 1: TX_DROPS 1")
    q.qmp_cmd("set_link", name="n1", up=True)
    check(q.rd(P(1, "LINK_STATUS")) == 3 and q.rd(P(1, "LINK_CHANGES")) == 2, "port 1: up again")

    # a frame held by port 2 for want of descriptors is gone after a reset
    sock.sendto(frame(mac(q, 2), 100), peer)
    wait_for(q, lambda: counter(q, 2, "RX_NOBUF") == 1, "port 2 holds a frame")
    q.qmp_cmd("system_reset")
    setup(q)
    check(counter(q, 2, "RX_NOBUF") == 0 and q.rd(P(2, "LINK_CHANGES")) == 0,
          "port 2's counters reset")
    check(q.rd(P(2, "IRQ_STATUS")) == 0, "IRQ_STATUS cleared by setup")
    rx_ring(q, 2, 4)
    time.sleep(0.2)
    check(q.rd(P(2, "RX_CI")) == 0, "the held frame was dropped by the reset")
    good = frame(mac(q, 2), 80, 1)
    sock.sendto(good, peer)
    wait_for(q, lambda: q.rd(P(2, "RX_CI")) == 1, "port 2 receives after the reset")
    check(q.mem_read(RXB + 0x20000, 80) == good, "port 2: the frame after the reset")


def property_errors(qemu):
    a, b = free_udp_ports(2)
    for devargs, words in [("hpu,nic-ports=2,port2=n0", "port2"),
                           ("hpu,nic-ports=0,port0=n0", "port0"),
                           ("hpu,port0=n0,port1=n0", "in use"),
                           ("hpu,port0=nothere", "nothere")]:
        r = subprocess.run([qemu, *qt.FW, "-machine", "q35", "-accel", "qtest",
                            "-nodefaults", "-display", "none", *dgram("n0", a, b),
                            "-device", devargs],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode != 0 and words in r.stderr,
              f"-device {devargs} is refused naming {words}")


def main():
    qemu = sys.argv[1] if len(sys.argv) > 1 else qt.find_qemu()
    if not qemu:
        return 77
    tmp = tempfile.TemporaryDirectory(prefix="hpu-qtest-nic-")
    log = os.path.join(tmp.name, "qemu.log")
    a, b, c = free_udp_ports(3)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    mine = sock.getsockname()[1]
    extra = [*dgram("n0", a, b), *dgram("n1", b, a), *dgram("n2", c, mine)]
    q = NicQTest(qemu, f"hpu,id=hpu0,addr=01.0,nic-ports=3,uuid={UUID},"
                 "port0=n0,port1=n1,port2=n2", log, extra, os.path.join(tmp.name, "qmp"))
    try:
        setup(q)
        ports_0_and_1(q)
        port_2(q, sock, ("127.0.0.1", c))
        link_and_reset(q, sock, ("127.0.0.1", c))
    finally:
        q.close()
        sock.close()
    with open(log) as f:
        text = f.read()
    check("NIC2" not in text or "BAD_DESC" not in text, "no descriptor error logged")
    property_errors(qemu)
    print(f"PASS: {len(qt.FAILS)} failed" if not qt.FAILS else f"FAIL: {len(qt.FAILS)} failed")
    return 1 if qt.FAILS else 0


if __name__ == "__main__":
    sys.exit(main())

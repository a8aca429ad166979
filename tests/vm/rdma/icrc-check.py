#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# icrc-check: recompute the ICRC of every RoCE v2 frame in a capture and
# compare it with the one on the wire.
#
#   icrc-check.py [--verbose] [--strict] [--self-test] [--expect-roce] FILE.pcap
#
# RoCE v2 (InfiniBand Architecture Annex A17) carries the InfiniBand
# transport in UDP to port 4791: Ethernet / IPv4 or IPv6 / UDP / BTH /
# extension headers / payload / pad / ICRC. The ICRC is a CRC-32 (the
# Ethernet polynomial, reflected) over
#   8 bytes of 0xff (the masked LRH of native InfiniBand), then
#   the IP header with its variant fields set to all ones (IPv4: type of
#   service, TTL, header checksum; IPv6: traffic class, flow label, hop
#   limit), the UDP header with its checksum set to all ones, the BTH with
#   its reserved byte 4 set to all ones, and everything after the BTH up to
#   the ICRC,
# starting from all ones, inverted at the end and stored least significant
# byte first. Linux rxe (drivers/infiniband/sw/rxe/rxe_icrc.c) starts its
# crc32_le from 0xdebb20e3, the register after the eight 0xff bytes: the same
# value. zlib.crc32 is that CRC (all-ones start, final inversion), so the
# ICRC is zlib.crc32(ff*8 + masked) packed little endian.
#
# Reads pcap files (QEMU's filter-dump writes them) and pcapng files
# (tshark's and editcap's default) with Ethernet frames, VLAN tags allowed. Frames cut short by the
# capture's snap length are reported and count as failures. Also counts,
# as notes (failures with --strict), what Linux rxe would drop or that
# differs from rxe's own frames: BTH transport version != 0, P_Key !=
# 0xffff, a non-zero UDP checksum, IPv4 without DF.
# --self-test: on the first good RoCE frame over IPv4 and over IPv6, checks that the recomputation
# notices a flipped bit in the payload and in the BTH, and does not notice
# changes to masked fields (TTL, UDP checksum, BTH byte 4).
# --expect-roce: fail when the capture holds no RoCE v2 frame.
# Exit status 0 when every ICRC matches (and the self-test passed).
#
# Copyright (c) 2026 The hpu authors

import argparse
import collections
import struct
import sys
import zlib

ROCE_PORT = 4791
ETH_IP4, ETH_IP6, ETH_VLAN, ETH_QINQ = 0x0800, 0x86DD, 0x8100, 0x88A8

# BTH opcodes (IBA table 38): transport in the top 3 bits.
TRANSPORT = {0: "RC", 1: "UC", 2: "RD", 3: "UD", 4: "CNP", 5: "XRC"}
OPS = {
    0x00: "SEND_FIRST", 0x01: "SEND_MIDDLE", 0x02: "SEND_LAST", 0x03: "SEND_LAST_IMM",
    0x04: "SEND_ONLY", 0x05: "SEND_ONLY_IMM", 0x06: "RDMA_WRITE_FIRST",
    0x07: "RDMA_WRITE_MIDDLE", 0x08: "RDMA_WRITE_LAST", 0x09: "RDMA_WRITE_LAST_IMM",
    0x0A: "RDMA_WRITE_ONLY", 0x0B: "RDMA_WRITE_ONLY_IMM", 0x0C: "RDMA_READ_REQUEST",
    0x0D: "RDMA_READ_RESPONSE_FIRST", 0x0E: "RDMA_READ_RESPONSE_MIDDLE",
    0x0F: "RDMA_READ_RESPONSE_LAST", 0x10: "RDMA_READ_RESPONSE_ONLY", 0x11: "ACKNOWLEDGE",
    0x12: "ATOMIC_ACKNOWLEDGE", 0x13: "COMPARE_SWAP", 0x14: "FETCH_ADD",
    0x16: "SEND_LAST_INV", 0x17: "SEND_ONLY_INV",
}


def opcode_name(op):
    if op == 0x81:
        return "CNP"
    return f"{TRANSPORT.get(op >> 5, hex(op >> 5))}_{OPS.get(op & 0x1F, hex(op & 0x1F))}"


def pcap_frames(path):
    """Yield (number, captured bytes) of each frame of a pcap or pcapng file."""
    with open(path, "rb") as f:
        head = f.read(4)
        f.seek(0)
        if head == b"\x0a\x0d\x0d\x0a":
            yield from pcapng_frames(f, path)
        else:
            yield from classic_frames(f, path)


def classic_frames(f, path):
    hdr = f.read(24)
    if len(hdr) < 24:
        raise ValueError(f"{path}: not a pcap file (too short)")
    magic = hdr[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        end = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        end = ">"
    else:
        raise ValueError(f"{path}: neither pcap nor pcapng")
    linktype = struct.unpack(end + "I", hdr[20:24])[0]
    if linktype != 1:
        raise ValueError(f"{path}: link type {linktype}, expected 1 (Ethernet)")
    rec = struct.Struct(end + "IIII")
    n = 0
    while True:
        h = f.read(16)
        if len(h) < 16:
            return
        incl = rec.unpack(h)[2]
        data = f.read(incl)
        if len(data) < incl:
            raise ValueError(f"{path}: frame {n + 1} cut off at the end of the file")
        n += 1
        yield n, data


def pcapng_frames(f, path):
    """Enhanced and simple packet blocks of Ethernet interfaces."""
    end = "<"
    links = []
    n = 0
    while True:
        h = f.read(8)
        if len(h) < 8:
            return
        btype = struct.unpack(end + "I", h[:4])[0]
        if btype == 0x0A0D0D0A:  # section header: its byte order mark decides
            bom = f.read(4)
            end = "<" if bom == b"\x4d\x3c\x2b\x1a" else ">"
            blen = struct.unpack(end + "I", h[4:8])[0]
            f.seek(blen - 12, 1)
            links = []
            continue
        blen = struct.unpack(end + "I", h[4:8])[0]
        if blen < 12:
            raise ValueError(f"{path}: bad pcapng block length {blen}")
        body = f.read(blen - 8)
        if len(body) < blen - 8:
            raise ValueError(f"{path}: pcapng block cut off at the end of the file")
        if btype == 1:  # interface description
            links.append(struct.unpack(end + "H", body[:2])[0])
        elif btype in (6, 3):  # enhanced / simple packet
            if btype == 6:
                ifid, _, _, incl = struct.unpack(end + "IIII", body[:16])
                data = body[20:20 + incl]
            else:
                ifid, incl = 0, struct.unpack(end + "I", body[:4])[0]
                data = body[4:4 + min(incl, blen - 16)]
            n += 1
            if ifid < len(links) and links[ifid] != 1:
                continue  # not Ethernet
            yield n, data


class Frame:
    """The RoCE v2 parts of one Ethernet frame, or None from parse()."""

    __slots__ = ("ip_off", "ip_ver", "ip_hlen", "ip_end", "udp_off", "bth_off", "truncated")


def parse(data):
    off = 12
    if len(data) < 14:
        return None
    etype = struct.unpack_from("!H", data, off)[0]
    off += 2
    while etype in (ETH_VLAN, ETH_QINQ):
        if len(data) < off + 4:
            return None
        etype = struct.unpack_from("!H", data, off + 2)[0]
        off += 4
    fr = Frame()
    fr.ip_off = off
    if etype == ETH_IP4:
        if len(data) < off + 20:
            return None
        fr.ip_ver = 4
        fr.ip_hlen = (data[off] & 0x0F) * 4
        if data[off + 9] != 17 or fr.ip_hlen < 20:
            return None
        if struct.unpack_from("!H", data, off + 6)[0] & 0x3FFF:
            return None  # a fragment: RoCE frames are never fragmented
        total = struct.unpack_from("!H", data, off + 2)[0]
    elif etype == ETH_IP6:
        if len(data) < off + 40:
            return None
        fr.ip_ver = 6
        fr.ip_hlen = 40
        if data[off + 6] != 17:  # extension headers: not RoCE v2 as rxe sends it
            return None
        total = 40 + struct.unpack_from("!H", data, off + 4)[0]
    else:
        return None
    fr.udp_off = off + fr.ip_hlen
    if len(data) < fr.udp_off + 8:
        return None
    if struct.unpack_from("!H", data, fr.udp_off + 2)[0] != ROCE_PORT:
        return None
    fr.bth_off = fr.udp_off + 8
    fr.ip_end = off + total  # beyond it: Ethernet padding to 60 bytes
    fr.truncated = len(data) < fr.ip_end
    return fr


def icrc_of(data, fr):
    """(ICRC computed, ICRC on the wire) of a frame parse() accepted."""
    pkt = bytearray(data[fr.ip_off:fr.ip_end])
    udp = fr.udp_off - fr.ip_off
    bth = fr.bth_off - fr.ip_off
    if fr.ip_ver == 4:
        pkt[1] = 0xFF                 # type of service
        pkt[8] = 0xFF                 # TTL
        pkt[10:12] = b"\xff\xff"      # header checksum
    else:
        pkt[0] |= 0x0F                # traffic class, high nibble
        pkt[1:4] = b"\xff\xff\xff"    # traffic class low nibble, flow label
        pkt[7] = 0xFF                 # hop limit
    pkt[udp + 6:udp + 8] = b"\xff\xff"  # UDP checksum
    pkt[bth + 4] = 0xFF               # BTH reserved byte (resv8a)
    covered = bytes(pkt[:-4])
    wire = struct.unpack("<I", bytes(pkt[-4:]))[0]
    return zlib.crc32(b"\xff" * 8 + covered), wire


def self_test(data, fr):
    """Problems found when checking the checker on a good frame."""
    problems = []
    good, wire = icrc_of(data, fr)
    if good != wire:
        return ["the frame chosen for the self-test does not match to begin with"]
    ip = fr.ip_off
    covered = [("a payload byte", fr.ip_end - 5), ("the BTH opcode", fr.bth_off),
               ("the BTH destination QP", fr.bth_off + 7), ("the IP source address",
               ip + (12 if fr.ip_ver == 4 else 8)), ("the UDP source port", fr.udp_off)]
    masked = [("the UDP checksum", fr.udp_off + 6), ("the BTH reserved byte 4", fr.bth_off + 4)]
    if fr.ip_ver == 4:
        masked += [("the IPv4 TTL", ip + 8), ("the IPv4 TOS", ip + 1),
                   ("the IPv4 header checksum", ip + 10)]
    else:
        masked += [("the IPv6 hop limit", ip + 7), ("the IPv6 flow label", ip + 3)]
    for what, pos in covered:
        bad = bytearray(data)
        bad[pos] ^= 0x01
        c, w = icrc_of(bytes(bad), fr)
        if c == w:
            problems.append(f"a flipped bit in {what} went unnoticed")
    for what, pos in masked:
        bad = bytearray(data)
        bad[pos] ^= 0x5A
        c, w = icrc_of(bytes(bad), fr)
        if c != w:
            problems.append(f"a change to {what} (masked) changed the ICRC")
    return problems


def main():
    ap = argparse.ArgumentParser(description="Recompute and verify every RoCE v2 ICRC "
                                             "in a pcap capture.")
    ap.add_argument("pcap")
    ap.add_argument("--verbose", "-v", action="store_true", help="list every bad frame")
    ap.add_argument("--strict", action="store_true",
                    help="count the notes (transport version, P_Key, UDP checksum, DF) "
                         "as failures")
    ap.add_argument("--self-test", action="store_true",
                    help="check the checker on the first RoCE frame")
    ap.add_argument("--expect-roce", action="store_true",
                    help="fail when there is no RoCE v2 frame")
    a = ap.parse_args()

    frames = roce = good = ip6 = 0
    bad, truncated = [], []
    ops = collections.Counter()
    notes = collections.Counter()
    first = {}  # IP version -> the first frame with a correct ICRC
    try:
        for num, data in pcap_frames(a.pcap):
            frames += 1
            fr = parse(data)
            if fr is None:
                continue
            roce += 1
            ip6 += fr.ip_ver == 6
            if fr.truncated or fr.ip_end - fr.bth_off < 12 + 4:
                truncated.append(num)
                continue
            op = data[fr.bth_off]
            ops[opcode_name(op)] += 1
            b1 = data[fr.bth_off + 1]
            if b1 & 0x0F:
                notes["BTH transport version != 0"] += 1
            if struct.unpack_from("!H", data, fr.bth_off + 2)[0] != 0xFFFF:
                notes["P_Key != 0xffff"] += 1
            if struct.unpack_from("!H", data, fr.udp_off + 6)[0] != 0:
                notes["UDP checksum != 0"] += 1
            if fr.ip_ver == 4 and not data[fr.ip_off + 6] & 0x40:
                notes["IPv4 without DF"] += 1
            computed, wire = icrc_of(data, fr)
            if computed == wire:
                good += 1
                first.setdefault(fr.ip_ver, (data, fr))
            else:
                bad.append((num, opcode_name(op), computed, wire))
    except (OSError, ValueError) as e:
        print(f"icrc-check: {e}", file=sys.stderr)
        return 2

    failed = bool(bad or truncated)
    print(f"icrc-check: {good} of {roce} RoCE v2 frames have a correct ICRC "
          f"({len(bad)} wrong, {len(truncated)} truncated; {ip6} over IPv6; "
          f"{frames} frames in the capture)")
    for name, n in sorted(ops.items(), key=lambda x: -x[1]):
        print(f"  {n:9d}  {name}")
    for what, n in sorted(notes.items()):
        print(f"  note: {n} frames with {what}")
    if notes and a.strict:
        failed = True
    shown = bad if a.verbose else bad[:10]
    for num, name, computed, wire in shown:
        print(f"  frame {num}: {name}: ICRC on the wire {wire:08x}, computed {computed:08x}")
    if len(shown) < len(bad):
        print(f"  ... {len(bad) - len(shown)} more (--verbose)")
    if truncated:
        print(f"  truncated frames (capture snap length?): {truncated[:10]}"
              f"{' ...' if len(truncated) > 10 else ''}")
    if a.expect_roce and roce == 0:
        print("icrc-check: no RoCE v2 frame (UDP port 4791) in the capture")
        failed = True
    if a.self_test:
        if not first:
            print("icrc-check: self-test: no frame with a correct ICRC to test on")
            failed = True
        problems = []
        for ver in sorted(first):
            problems += [f"IPv{ver}: {p}" for p in self_test(*first[ver])]
        for p in problems:
            print(f"icrc-check: self-test: {p}")
        if problems:
            failed = True
        elif first:
            print(f"icrc-check: self-test passed on an "
                  f"{' and an '.join(f'IPv{v}' for v in sorted(first))} frame (flipped "
                  "covered bits detected, masked fields ignored)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

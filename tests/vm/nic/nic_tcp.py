#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# TCP bulk transfer checked byte for byte, for the NIC tests in the guest
# (tests/vm/nic/nic-tests.sh). The stream is a pseudo-random 1 MiB block,
# rotated by a different amount for each MiB, so that a lost, repeated or
# reordered segment shows as a mismatch at its offset.
#
#   nic_tcp.py serve PORT BYTES SEED [TIMEOUT]   receive one connection
#   nic_tcp.py send HOST PORT BYTES SEED [TIMEOUT]
#   nic_tcp.py raw IFACE DST_MAC COUNT           send COUNT broadcast-free
#                                                test frames to DST_MAC
#
# serve prints "OK <bytes> <seconds> <MB/s>" and exits 0 when exactly BYTES
# arrived intact; send prints the same for what it sent. Anything else
# prints "FAIL ..." and exits 1.
#
# Copyright (c) 2026 The hpu authors

import random
import socket
import sys
import time

BLOCK = 1 << 20


class Pattern:
    def __init__(self, seed):
        self.base = random.Random(seed).randbytes(BLOCK)

    def block(self, i):
        r = (i * 4099) % BLOCK
        return self.base[r:] + self.base[:r]


def serve(port, nbytes, seed, timeout):
    pat = Pattern(seed)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(1)
    ls.settimeout(timeout)
    try:
        conn, _ = ls.accept()
    except socket.timeout:
        print("FAIL no connection within %d s" % timeout)
        return 1
    conn.settimeout(timeout)
    got = 0
    blk_i, blk = 0, pat.block(0)
    buf = bytearray(256 * 1024)
    t0 = time.monotonic()
    while True:
        try:
            n = conn.recv_into(buf)
        except socket.timeout:
            print("FAIL stalled after %d of %d bytes" % (got, nbytes))
            return 1
        if n == 0:
            break
        data = memoryview(buf)[:n]
        off = 0
        while off < n:
            pos = got % BLOCK
            take = min(n - off, BLOCK - pos)
            if got + take > nbytes or data[off:off + take] != blk[pos:pos + take]:
                print("FAIL mismatch in the %d bytes at offset %d" % (take, got))
                return 1
            got += take
            off += take
            if got % BLOCK == 0:
                blk_i += 1
                blk = pat.block(blk_i)
    dt = time.monotonic() - t0
    if got != nbytes:
        print("FAIL %d of %d bytes arrived" % (got, nbytes))
        return 1
    print("OK %d %.2f %.2f" % (got, dt, got / dt / 1e6 if dt else 0))
    return 0


def send(host, port, nbytes, seed, timeout):
    pat = Pattern(seed)
    deadline = time.monotonic() + timeout
    while True:
        try:
            s = socket.create_connection((host, port), timeout=5)
            break
        except OSError as e:
            if time.monotonic() > deadline:
                print("FAIL cannot connect: %s" % e)
                return 1
            time.sleep(0.2)
    s.settimeout(timeout)
    sent = 0
    t0 = time.monotonic()
    i = 0
    try:
        while sent < nbytes:
            blk = pat.block(i)
            take = min(BLOCK, nbytes - sent)
            s.sendall(blk[:take])
            sent += take
            i += 1
        s.shutdown(socket.SHUT_WR)
        # The peer closes once it has everything.
        while s.recv(4096):
            pass
    except OSError as e:
        print("FAIL after %d bytes: %s" % (sent, e))
        return 1
    dt = time.monotonic() - t0
    print("OK %d %.2f %.2f" % (sent, dt, sent / dt / 1e6 if dt else 0))
    return 0


def raw(iface, dst, count):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    src = s.getsockname()[4]
    frame = bytes.fromhex(dst.replace(":", "")) + src + b"\x88\xb5" + b"hpu-test" * 8
    for _ in range(count):
        s.send(frame)
    print("OK %d" % count)
    return 0


def main(argv):
    if len(argv) >= 4 and argv[0] == "serve":
        return serve(int(argv[1]), int(argv[2]), int(argv[3]),
                     int(argv[4]) if len(argv) > 4 else 120)
    if len(argv) >= 5 and argv[0] == "send":
        return send(argv[1], int(argv[2]), int(argv[3]), int(argv[4]),
                    int(argv[5]) if len(argv) > 5 else 120)
    if len(argv) == 4 and argv[0] == "raw":
        return raw(argv[1], argv[2], int(argv[3]))
    print(__doc__ if __doc__ else "usage: see the header", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

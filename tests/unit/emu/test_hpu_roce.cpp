// SPDX-License-Identifier: MIT
//
// Host unit tests of the RoCE v2 engine (spec version 7 part 2,
// Documentation/hw/roce.md): command validation, RC and UD transport
// between two ports wired back to back, loss and recovery, errors, resets.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/generators/catch_generators_range.hpp>

#include <fstream>
#include <string>

#include "hpu_roce_rig.hpp"

extern "C" {
#include "hpu_roce.h"   // HPU_ROCE_FRAME_MAX, hpum_roce_rx_steer()
}

using namespace hpu_test;

namespace {

Bytes pattern(size_t n, uint32_t seed) { return pattern_bytes(n, seed); }

Bytes host_bytes(RoceRig &r, uint64_t bus, size_t n)
{
    return Bytes(r.hp(bus), r.hp(bus) + n);
}

} // namespace

TEST_CASE("RoCE: RC SEND arrives in the receive buffer and completes both sides",
          "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair();
    auto src = r.make_mr(4096), dst = r.make_mr(4096);
    Bytes data = pattern(700, 1);

    r.hwrite(src.bus, data.data(), data.size());
    r.post_recv(p.b, 0xb0b, { { dst.va, 4096, dst.key } });
    r.post_send(p.a, HPU_ROCE_WR_SEND, 0xa0a, { { src.va, 700, src.key } });
    r.pump();

    Cqe32 s = r.poll1(p.ca), v = r.poll1(p.cb);
    CHECK(s.wr_id == 0xa0au);
    CHECK(s.status == HPU_ROCE_WC_SUCCESS);
    CHECK(s.op == HPU_ROCE_WC_SEND);
    CHECK(s.qpn == 10u);
    CHECK(v.wr_id == 0xb0bu);
    CHECK(v.status == HPU_ROCE_WC_SUCCESS);
    CHECK(v.op == HPU_ROCE_WC_RECV);
    CHECK(v.len == 700u);
    CHECK(v.qpn == 20u);
    CHECK(host_bytes(r, dst.bus, 700) == data);
    Cqe32 none{};
    CHECK_FALSE(r.poll(p.ca, none));
    CHECK_FALSE(r.poll(p.cb, none));
    // One SEND_ONLY with AckReq, one ACK back.
    REQUIRE(r.wire.size() == 2);
    CHECK(r.wire[0].op() == OP_SEND_ONLY);
    CHECK(r.wire[0].ackreq());
    CHECK(r.wire[0].psn() == 0x100u);
    CHECK(r.wire[0].dqpn() == 20u);
    CHECK(r.wire[1].op() == OP_ACK);
    CHECK(r.wire[1].psn() == 0x100u);
    CHECK(r.counter(0, HPU_ROCE_CNT_TX_PKTS) == 1);
    CHECK(r.counter(1, HPU_ROCE_CNT_RX_PKTS) == 1);
    CHECK(r.env.errors.empty());
}

TEST_CASE("RoCE: a zero-length RC SEND over IPv4 (a 58-byte frame) crosses the wire",
          "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair();
    auto dst = r.make_mr(4096);

    r.post_recv(p.b, 0xb1, { { dst.va, 4096, dst.key } });
    r.post_send(p.a, HPU_ROCE_WR_SEND, 0xa1, {});
    r.pump();
    REQUIRE(!r.wire.empty());
    CHECK(r.wire[0].op() == OP_SEND_ONLY);
    CHECK(r.wire[0].f.size() == 58u);
    Cqe32 s = r.poll1(p.ca), v = r.poll1(p.cb);
    CHECK(s.status == HPU_ROCE_WC_SUCCESS);
    CHECK(v.wr_id == 0xb1u);
    CHECK(v.status == HPU_ROCE_WC_SUCCESS);
    CHECK(v.len == 0u);
}

TEST_CASE("RoCE: SEND with immediate and RDMA WRITE with immediate", "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair();
    auto src = r.make_mr(8192), dst = r.make_mr(8192);
    Bytes data = pattern(3000, 2);

    r.hwrite(src.bus, data.data(), data.size());
    r.post_recv(p.b, 1, { { dst.va, 8192, dst.key } });
    r.post_recv(p.b, 2, { { dst.va, 8, dst.key } });
    r.post_send(p.a, HPU_ROCE_WR_SEND_WITH_IMM, 11, { { src.va, 100, src.key } },
                0, 0, 0x44332211u);
    r.post_send(p.a, HPU_ROCE_WR_RDMA_WRITE_WITH_IMM, 12,
                { { src.va, 3000, src.key } }, dst.va + 4096, dst.key, 0x88776655u);
    r.pump();

    Cqe32 a = r.poll1(p.cb), b = r.poll1(p.cb);
    CHECK(a.wr_id == 1u);
    CHECK(a.op == HPU_ROCE_WC_RECV);
    CHECK((a.flags & HPU_ROCE_CQE_WITH_IMM) != 0);
    CHECK(get32(a.imm) == 0x44332211u);
    CHECK(a.len == 100u);
    CHECK(b.wr_id == 2u);
    CHECK(b.op == HPU_ROCE_WC_RECV_RDMA_WITH_IMM);
    CHECK(get32(b.imm) == 0x88776655u);
    CHECK(b.len == 3000u);
    CHECK(host_bytes(r, dst.bus + 4096, 3000) == data);
    CHECK(r.poll1(p.ca).wr_id == 11u);
    CHECK(r.poll1(p.ca).op == HPU_ROCE_WC_RDMA_WRITE);
}

TEST_CASE("RoCE: RDMA WRITE and READ move data without receive WQEs", "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair();
    auto local = r.make_mr(16384), remote = r.make_mr(16384);
    Bytes w = pattern(5000, 3), rd = pattern(6000, 4);

    r.hwrite(local.bus, w.data(), w.size());
    r.hwrite(remote.bus + 8192, rd.data(), rd.size());
    r.post_send(p.a, HPU_ROCE_WR_RDMA_WRITE, 21, { { local.va, 5000, local.key } },
                remote.va, remote.key);
    r.post_send(p.a, HPU_ROCE_WR_RDMA_READ, 22, { { local.va + 8192, 6000, local.key } },
                remote.va + 8192, remote.key);
    r.pump();

    Cqe32 a = r.poll1(p.ca), b = r.poll1(p.ca);
    CHECK(a.wr_id == 21u);
    CHECK(a.status == HPU_ROCE_WC_SUCCESS);
    CHECK(b.wr_id == 22u);
    CHECK(b.op == HPU_ROCE_WC_RDMA_READ);
    CHECK(b.status == HPU_ROCE_WC_SUCCESS);
    CHECK(b.len == 6000u);
    CHECK(host_bytes(r, remote.bus, 5000) == w);
    CHECK(host_bytes(r, local.bus + 8192, 6000) == rd);
    Cqe32 none{};
    CHECK_FALSE(r.poll(p.cb, none));
    CHECK(r.count_ops(OP_READ_REQ, 0) == 1);
}

TEST_CASE("RoCE: a burst beyond the engine's receive queue waits at the port, none is lost",
          "[emu][roce]")
{
    // Four 64 KiB READs answered at once: 256 response packets reach port 0
    // in one go, four times the engine's queue (ib_read_bw does this).
    RoceRig r;
    auto p = r.pair(3);
    const uint32_t n = 4, len = 65536;
    auto local = r.make_mr(n * len), remote = r.make_mr(n * len);
    Bytes rd = pattern(n * len, 9);

    r.hwrite(remote.bus, rd.data(), rd.size());
    for (uint32_t i = 0; i < n; i++) {
        r.post_send(p.a, HPU_ROCE_WR_RDMA_READ, 100 + i,
                    { { local.va + i * len, len, local.key } }, remote.va + i * len,
                    remote.key);
    }
    r.pump();

    for (uint32_t i = 0; i < n; i++) {
        Cqe32 e = r.poll1(p.ca);
        CHECK(e.wr_id == 100u + i);
        CHECK(e.status == HPU_ROCE_WC_SUCCESS);
        CHECK(e.len == len);
    }
    CHECK(host_bytes(r, local.bus, n * len) == rd);
    CHECK(r.count_ops(OP_READ_REQ, 0) == n);
    CHECK(r.counter(0, HPU_ROCE_CNT_RX_DROPPED) == 0);
    CHECK(r.counter(0, HPU_ROCE_CNT_RX_PKTS) == n * len / 1024);
    CHECK(r.counter(0, HPU_ROCE_CNT_RETRANSMITS) == 0);
    CHECK(r.env.errors.empty());
}

TEST_CASE("RoCE: ACKs that open the requester's window send the rest of the queue",
          "[emu][roce]")
{
    // Four 64 KiB WRITEs behind one doorbell each, posted before the engine
    // runs: 256 packets, twice the 128 that may be unacknowledged. Only
    // the ACKs can start the second half (ib_write_bw does this).
    RoceRig r;
    auto p = r.pair(3);
    const uint32_t n = 4, len = 65536;
    auto local = r.make_mr(n * len), remote = r.make_mr(n * len);
    Bytes w = pattern(n * len, 10);

    r.hwrite(local.bus, w.data(), w.size());
    for (uint32_t i = 0; i < n; i++) {
        r.post_send(p.a, HPU_ROCE_WR_RDMA_WRITE, 200 + i,
                    { { local.va + i * len, len, local.key } }, remote.va + i * len,
                    remote.key);
    }
    r.pump();

    for (uint32_t i = 0; i < n; i++) {
        Cqe32 e = r.poll1(p.ca);
        CHECK(e.wr_id == 200u + i);
        CHECK(e.status == HPU_ROCE_WC_SUCCESS);
    }
    CHECK(host_bytes(r, remote.bus, n * len) == w);
    CHECK(r.counter(0, HPU_ROCE_CNT_TX_PKTS) == n * len / 1024);
    CHECK(r.counter(0, HPU_ROCE_CNT_RETRANSMITS) == 0);
    CHECK(r.counter(0, HPU_ROCE_CNT_ACK_TIMEOUTS) == 0);
}

TEST_CASE("RoCE: multi-packet messages are cut at the path MTU", "[emu][roce]")
{
    const uint8_t mtu = GENERATE(uint8_t{1}, uint8_t{3}, uint8_t{5});
    const uint32_t bytes = 128u << mtu;
    RoceRig r;
    auto p = r.pair(mtu);
    auto src = r.make_mr(65536), dst = r.make_mr(65536);
    Bytes data = pattern(5 * bytes + 7, 5);

    CAPTURE(mtu);
    r.hwrite(src.bus, data.data(), data.size());
    r.post_recv(p.b, 1, { { dst.va, 65536, dst.key } });
    r.post_send(p.a, HPU_ROCE_WR_SEND, 2,
                { { src.va, static_cast<uint32_t>(data.size()), src.key } });
    r.pump();
    CHECK(r.poll1(p.cb).len == data.size());
    CHECK(host_bytes(r, dst.bus, data.size()) == data);
    CHECK(r.poll1(p.ca).status == HPU_ROCE_WC_SUCCESS);
    std::vector<Pkt> req;
    for (auto &k : r.wire) {
        if (k.port == 0) {
            req.push_back(k);
        }
    }
    REQUIRE(req.size() == 6);
    CHECK(req[0].op() == OP_SEND_FIRST);
    CHECK(req[1].op() == OP_SEND_MIDDLE);
    CHECK(req[5].op() == OP_SEND_LAST);
    for (size_t i = 0; i < 5; i++) {
        size_t hdr = req[i].bth() + 12;
        CHECK(req[i].f.size() - hdr - 4 == bytes);      // exactly the MTU
        CHECK(req[i].psn() == 0x100u + i);
    }
}

TEST_CASE("RoCE: the responder acknowledges only AckReq packets (every 16th and the last)",
          "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair(1);             // 256-byte packets
    auto src = r.make_mr(65536), dst = r.make_mr(65536);

    r.post_recv(p.b, 1, { { dst.va, 65536, dst.key } });
    r.post_send(p.a, HPU_ROCE_WR_SEND, 2, { { src.va, 40 * 256, src.key } });
    r.pump();
    CHECK(r.poll1(p.ca).status == HPU_ROCE_WC_SUCCESS);
    size_t ackreq = 0;
    for (auto &k : r.wire) {
        if (k.port == 0 && k.ackreq()) {
            ackreq++;
            CHECK(((k.psn() - 0x100 + 1) % 16 == 0 || k.psn() == 0x100u + 39));
        }
    }
    CHECK(ackreq == 3);
    CHECK(r.count_ops(OP_ACK, 1) == 3);
}

TEST_CASE("RoCE: UD SEND delivers the payload after a 40-byte GRH", "[emu][roce]")
{
    const bool v6 = GENERATE(false, true);
    RoceRig r;
    auto ca = r.make_cq(1), cb = r.make_cq(2);
    if (v6) {
        r.set_gid(0, 1, RoceRig::ip6(0));
        r.set_gid(1, 1, RoceRig::ip6(1));
    }
    auto a = r.make_qp(30, 0, 1, HPU_ROCE_QPT_UD), b = r.make_qp(40, 1, 2, HPU_ROCE_QPT_UD);
    for (auto *q : { &a, &b }) {
        Bytes d(256);
        d[HPU_ROCE_QP_PORT] = q == &a ? 0 : 1;
        put32(&d[HPU_ROCE_QP_QKEY], 0x1234);
        REQUIRE(r.modify(q->n, HPU_ROCE_QPS_INIT, HPU_ROCE_QPM_PORT | HPU_ROCE_QPM_QKEY, d) == 0);
        REQUIRE(r.modify(q->n, HPU_ROCE_QPS_RTR, 0) == 0);
        REQUIRE(r.modify(q->n, HPU_ROCE_QPS_RTS, HPU_ROCE_QPM_SQ_PSN) == 0);
    }
    auto src = r.make_mr(4096), dst = r.make_mr(4096);
    Bytes data = pattern(500, 6);
    r.hwrite(src.bus, data.data(), data.size());
    r.post_recv(b, 7, { { dst.va, 4096, dst.key } });
    uint8_t av[32] = {};
    Bytes m = r.mac(1), g = v6 ? RoceRig::ip6(1) : RoceRig::ip4(1);
    std::memcpy(av, m.data(), 6);
    av[HPU_ROCE_AV_SGID_INDEX] = v6 ? 1 : 0;
    av[HPU_ROCE_AV_HOP_LIMIT] = 64;
    std::memcpy(av + HPU_ROCE_AV_DGID, g.data(), 16);
    r.post_send(a, HPU_ROCE_WR_SEND, 8, { { src.va, 500, src.key } }, 0, 0, 0,
                HPU_ROCE_WQE_SIGNALED, av, 0x1234, 40);
    r.pump();
    Cqe32 e = r.poll1(cb);
    CHECK(e.wr_id == 7u);
    CHECK(e.len == 540u);
    CHECK((e.flags & HPU_ROCE_CQE_GRH) != 0);
    CHECK(e.src_qpn == 30u);
    CHECK(host_bytes(r, dst.bus + 40, 500) == data);
    REQUIRE(!r.wire.empty());
    CHECK(r.wire[0].op() == OP_UD_SEND_ONLY);
    if (v6) {
        CHECK(r.hp(dst.bus)[0] >> 4 == 6);
    } else {
        CHECK(r.hp(dst.bus)[20] == 0x45);
    }
    CHECK(r.poll1(ca).wr_id == 8u);
    // A wrong Q_Key is dropped and counted.
    r.post_recv(b, 9, { { dst.va, 4096, dst.key } });
    r.post_send(a, HPU_ROCE_WR_SEND, 10, { { src.va, 10, src.key } }, 0, 0, 0,
                HPU_ROCE_WQE_SIGNALED, av, 0x9999, 40);
    r.pump();
    Cqe32 none{};
    CHECK_FALSE(r.poll(cb, none));
    CHECK(r.counter(1, HPU_ROCE_CNT_RX_DROPPED) == 1);
}

TEST_CASE("RoCE: a UD SEND to the port's own MAC loops back inside the port, never on the wire",
          "[emu][roce]")
{
    RoceRig r;
    auto ca = r.make_cq(1), cc = r.make_cq(3);
    auto a = r.make_qp(30, 0, 1, HPU_ROCE_QPT_UD), c = r.make_qp(50, 0, 3, HPU_ROCE_QPT_UD);
    for (auto *q : { &a, &c }) {
        Bytes d(256);
        d[HPU_ROCE_QP_PORT] = 0;
        put32(&d[HPU_ROCE_QP_QKEY], 0x1234);
        REQUIRE(r.modify(q->n, HPU_ROCE_QPS_INIT, HPU_ROCE_QPM_PORT | HPU_ROCE_QPM_QKEY, d) == 0);
        REQUIRE(r.modify(q->n, HPU_ROCE_QPS_RTR, 0) == 0);
        REQUIRE(r.modify(q->n, HPU_ROCE_QPS_RTS, HPU_ROCE_QPM_SQ_PSN) == 0);
    }
    auto src = r.make_mr(4096), dst = r.make_mr(4096);
    Bytes data = pattern(300, 9);
    r.hwrite(src.bus, data.data(), data.size());
    r.post_recv(c, 11, { { dst.va, 4096, dst.key } });
    uint8_t av[32] = {};
    Bytes m = r.mac(0), g = RoceRig::ip4(0);
    std::memcpy(av, m.data(), 6);
    av[HPU_ROCE_AV_HOP_LIMIT] = 64;
    std::memcpy(av + HPU_ROCE_AV_DGID, g.data(), 16);
    r.post_send(a, HPU_ROCE_WR_SEND, 12, { { src.va, 300, src.key } }, 0, 0, 0,
                HPU_ROCE_WQE_SIGNALED, av, 0x1234, 50);
    r.pump();
    Cqe32 e = r.poll1(cc);
    CHECK(e.wr_id == 11u);
    CHECK(e.len == 340u);
    CHECK(e.src_qpn == 30u);
    CHECK(host_bytes(r, dst.bus + 40, 300) == data);
    CHECK(r.poll1(ca).wr_id == 12u);
    CHECK(r.wire.empty());
}

TEST_CASE("RoCE: every emitted frame carries the ICRC an independent CRC computes",
          "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair(1);
    auto src = r.make_mr(8192), dst = r.make_mr(8192);

    r.post_recv(p.b, 1, { { dst.va, 8192, dst.key } });
    r.post_send(p.a, HPU_ROCE_WR_SEND, 2, { { src.va, 1001, src.key } });
    r.post_send(p.a, HPU_ROCE_WR_RDMA_READ, 3, { { src.va, 700, src.key } },
                dst.va, dst.key);
    r.pump();
    REQUIRE(r.wire.size() > 6);
    for (auto &k : r.wire) {
        CHECK(k.icrc() == ref_icrc(k.f));
        CHECK(k.f[12] == 0x08);
        CHECK((k.f[14 + 6] & 0x40) != 0);       // DF
        CHECK(k.f[14 + 20 + 2] == 0x12);        // UDP 4791
        CHECK(k.f[14 + 20 + 3] == 0xb7);
    }
}

TEST_CASE("RoCE: a frame with a bad ICRC is dropped and counted", "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair();
    auto src = r.make_mr(4096), dst = r.make_mr(4096);

    r.post_recv(p.b, 1, { { dst.va, 4096, dst.key } });
    r.loop = false;
    r.post_send(p.a, HPU_ROCE_WR_SEND, 2, { { src.va, 64, src.key } });
    r.pump();
    REQUIRE(r.wire.size() == 1);
    Bytes f = r.wire[0].f;
    f[f.size() - 10] ^= 1;                      // a payload bit
    r.inject(1, f);
    r.pump();
    CHECK(r.counter(1, HPU_ROCE_CNT_RX_ICRC_ERR) == 1);
    CHECK(r.counter(1, HPU_ROCE_CNT_RX_PKTS) == 0);
    Cqe32 none{};
    CHECK_FALSE(r.poll(p.cb, none));
    // The good frame is taken.
    r.inject(1, r.wire[0].f);
    r.pump();
    CHECK(r.poll1(p.cb).len == 64u);
}

TEST_CASE("RoCE: a lost data packet draws a sequence NAK and go-back-N recovers",
          "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair(1);
    auto src = r.make_mr(65536), dst = r.make_mr(65536);
    Bytes data = pattern(10 * 256, 7);
    bool dropped = false;

    r.hwrite(src.bus, data.data(), data.size());
    r.drop = [&](const Pkt &k) {
        if (!dropped && k.port == 0 && k.psn() == 0x103) {
            dropped = true;
            return true;
        }
        return false;
    };
    r.post_recv(p.b, 1, { { dst.va, 65536, dst.key } });
    r.post_send(p.a, HPU_ROCE_WR_SEND, 2, { { src.va, 2560, src.key } });
    r.pump();
    CHECK(dropped);
    CHECK(r.counter(1, HPU_ROCE_CNT_SEQ_NAK_SENT) == 1);
    CHECK(r.counter(0, HPU_ROCE_CNT_SEQ_NAK_RCVD) == 1);
    CHECK(r.counter(0, HPU_ROCE_CNT_RETRANSMITS) >= 1);
    CHECK(r.poll1(p.ca).status == HPU_ROCE_WC_SUCCESS);
    CHECK(r.poll1(p.cb).len == 2560u);
    CHECK(host_bytes(r, dst.bus, 2560) == data);
}

TEST_CASE("RoCE: a lost ACK is recovered by the local ACK timeout", "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair(3, 10);
    auto src = r.make_mr(4096), dst = r.make_mr(4096);
    int acks = 0;

    r.drop = [&](const Pkt &k) { return k.op() == OP_ACK && acks++ == 0; };
    r.post_recv(p.b, 1, { { dst.va, 4096, dst.key } });
    r.post_send(p.a, HPU_ROCE_WR_SEND, 2, { { src.va, 100, src.key } });
    r.pump();
    Cqe32 none{};
    CHECK_FALSE(r.poll(p.ca, none));
    CHECK(r.poll1(p.cb).len == 100u);
    r.wait(4096ull << 10);
    CHECK(r.counter(0, HPU_ROCE_CNT_ACK_TIMEOUTS) == 1);
    CHECK(r.counter(1, HPU_ROCE_CNT_DUP_REQUESTS) == 1);
    CHECK(r.poll1(p.ca).status == HPU_ROCE_WC_SUCCESS);
    CHECK_FALSE(r.poll(p.cb, none));           // delivered once
}

TEST_CASE("RoCE: no receive WQE draws an RNR NAK; the retry succeeds once one is posted",
          "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair();
    auto src = r.make_mr(4096), dst = r.make_mr(4096);

    r.post_send(p.a, HPU_ROCE_WR_SEND, 2, { { src.va, 100, src.key } });
    r.pump();
    CHECK(r.counter(1, HPU_ROCE_CNT_RNR_NAK_SENT) == 1);
    CHECK(r.counter(0, HPU_ROCE_CNT_RNR_NAK_RCVD) == 1);
    r.post_recv(p.b, 1, { { dst.va, 4096, dst.key } });
    r.wait(20000);                              // min RNR timer 1: 10 us
    CHECK(r.poll1(p.cb).len == 100u);
    CHECK(r.poll1(p.ca).status == HPU_ROCE_WC_SUCCESS);
}

TEST_CASE("RoCE: RNR retries exhaust into RNR_RETRY_EXC_ERR", "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair(3, 14, 7, 2);
    auto src = r.make_mr(4096);

    r.setup_roce_eq();
    r.post_send(p.a, HPU_ROCE_WR_SEND, 2, { { src.va, 100, src.key } });
    r.post_send(p.a, HPU_ROCE_WR_SEND, 3, { { src.va, 100, src.key } });
    r.pump();
    for (int i = 0; i < 4; i++) {
        r.wait(20000);
    }
    CHECK(r.counter(0, HPU_ROCE_CNT_RNR_NAK_RCVD) == 3);
    Cqe32 e = r.poll1(p.ca);
    CHECK(e.wr_id == 2u);
    CHECK(e.status == HPU_ROCE_WC_RNR_RETRY_EXC_ERR);
    Cqe32 f = r.poll1(p.ca);
    CHECK(f.wr_id == 3u);
    CHECK(f.status == HPU_ROCE_WC_WR_FLUSH_ERR);
    CHECK(r.qp_state(10) == HPU_ROCE_QPS_ERR);
    auto ev = r.events();
    REQUIRE(!ev.empty());
    CHECK(ev[0].type == HPU_ROCE_EV_QP_FATAL);
    CHECK(ev[0].obj == 10u);
    CHECK(ev[0].cause == HPU_ROCE_CAUSE_RNR_RETRY_EXC);
}

TEST_CASE("RoCE: retries exhaust into RETRY_EXC_ERR when the peer never answers",
          "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair(3, 8, 2);
    auto src = r.make_mr(4096);

    r.drop = [](const Pkt &) { return true; };
    r.post_send(p.a, HPU_ROCE_WR_SEND, 2, { { src.va, 100, src.key } });
    r.pump();
    for (int i = 0; i < 3; i++) {
        Cqe32 none{};
        CHECK_FALSE(r.poll(p.ca, none));
        r.wait(4096ull << 8);
    }
    CHECK(r.counter(0, HPU_ROCE_CNT_ACK_TIMEOUTS) == 3);
    CHECK(r.count_ops(OP_SEND_ONLY, 0) == 3);   // first try and two retries
    Cqe32 e = r.poll1(p.ca);
    CHECK(e.status == HPU_ROCE_WC_RETRY_EXC_ERR);
    CHECK(r.qp_state(10) == HPU_ROCE_QPS_ERR);
    CHECK(r.query(HPU_ROCE_TYPE_QP, 10)[HPU_ROCE_QP_Q_CAUSE] == HPU_ROCE_CAUSE_RETRY_EXC);
}

TEST_CASE("RoCE: a WRITE outside the remote MR is NAKed: REM_ACCESS_ERR, both QPs in ERR",
          "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair();
    auto local = r.make_mr(4096), remote = r.make_mr(4096);

    r.post_send(p.a, HPU_ROCE_WR_RDMA_WRITE, 2, { { local.va, 100, local.key } },
                remote.va + 4090, remote.key);
    r.pump();
    CHECK(r.poll1(p.ca).status == HPU_ROCE_WC_REM_ACCESS_ERR);
    CHECK(r.counter(1, HPU_ROCE_CNT_REM_ACCESS_ERR) == 1);
    CHECK(r.qp_state(10) == HPU_ROCE_QPS_ERR);
    CHECK(r.qp_state(20) == HPU_ROCE_QPS_ERR);
}

TEST_CASE("RoCE: a local SGE with a bad key completes LOC_PROT_ERR", "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair();
    auto local = r.make_mr(4096);

    r.post_send(p.a, HPU_ROCE_WR_SEND, 2, { { local.va, 100, local.key ^ 1 } });
    r.pump();
    CHECK(r.poll1(p.ca).status == HPU_ROCE_WC_LOC_PROT_ERR);
    CHECK(r.qp_state(10) == HPU_ROCE_QPS_ERR);
    CHECK(r.wire.empty());
}

TEST_CASE("RoCE: a full CQ overflows: CQ_ERROR event, the QP goes to ERR", "[emu][roce]")
{
    RoceRig r;
    r.setup_roce_eq();
    r.make_cq(1);
    auto cb = r.make_cq(2, 2);
    auto a = r.make_qp(10, 0, 1), b = r.make_qp(20, 1, 2);
    r.connect_rc(a, 0, 20, 3);
    r.connect_rc(b, 1, 10, 3);
    auto src = r.make_mr(4096), dst = r.make_mr(4096);

    for (int i = 0; i < 3; i++) {
        r.post_recv(b, 100 + i, { { dst.va, 4096, dst.key } });
        r.post_send(a, HPU_ROCE_WR_SEND, i, { { src.va, 8, src.key } });
    }
    r.pump();
    CHECK(r.query(HPU_ROCE_TYPE_CQ, 2)[HPU_ROCE_CQ_Q_ERROR] == 1);
    CHECK(r.qp_state(20) == HPU_ROCE_QPS_ERR);
    bool cq_err = false;
    for (auto &e : r.events()) {
        cq_err |= e.type == HPU_ROCE_EV_CQ_ERROR && e.obj == 2 &&
                  e.cause == HPU_ROCE_CAUSE_OVERFLOW;
    }
    CHECK(cq_err);
    CHECK(r.poll1(cb).wr_id == 100u);
    CHECK(r.poll1(cb).wr_id == 101u);
    Cqe32 none{};
    CHECK_FALSE(r.poll(cb, none));              // nothing more is written
}

TEST_CASE("RoCE: a QP moved to ERR flushes its posted WQEs in order", "[emu][roce]")
{
    RoceRig r;
    auto c = r.make_cq(1);
    auto q = r.make_qp(10, 0, 1);
    auto m = r.make_mr(4096);

    r.post_recv(q, 1, { { m.va, 64, m.key } });
    r.post_recv(q, 2, { { m.va, 64, m.key } });
    Bytes d(256);
    d[HPU_ROCE_QP_PORT] = 0;
    REQUIRE(r.modify(10, HPU_ROCE_QPS_INIT, HPU_ROCE_QPM_PORT, d) == 0);
    r.post_send(q, HPU_ROCE_WR_SEND, 3, { { m.va, 64, m.key } }, 0, 0, 0, 0);
    REQUIRE(r.modify(10, HPU_ROCE_QPS_ERR, 0) == 0);
    r.pump();
    Cqe32 e = r.poll1(c);
    CHECK(e.wr_id == 3u);
    CHECK(e.status == HPU_ROCE_WC_WR_FLUSH_ERR);
    CHECK(r.poll1(c).wr_id == 1u);
    CHECK(r.poll1(c).wr_id == 2u);
    // Posted later: flushed at the doorbell.
    r.post_send(q, HPU_ROCE_WR_SEND, 4, { { m.va, 64, m.key } });
    r.pump();
    CHECK(r.poll1(c).wr_id == 4u);
}

TEST_CASE("RoCE: every send CQE names its WQE's index, unsignaled WQEs before it counted",
          "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair();
    auto local = r.make_mr(4096), remote = r.make_mr(4096);

    // Two unsignaled WRITEs that succeed, a signaled one, then two
    // unsignaled and one whose remote range is bad: REM_ACCESS_ERR.
    r.post_send(p.a, HPU_ROCE_WR_RDMA_WRITE, 1, { { local.va, 8, local.key } },
                remote.va, remote.key, 0, 0);
    r.post_send(p.a, HPU_ROCE_WR_RDMA_WRITE, 2, { { local.va, 8, local.key } },
                remote.va, remote.key, 0, 0);
    r.post_recv(p.b, 9, { { remote.va, 64, remote.key } });
    r.post_send(p.a, HPU_ROCE_WR_SEND, 3, { { local.va, 8, local.key } });
    r.pump();
    Cqe32 e = r.poll1(p.cb);                    // receives carry no index
    CHECK(e.wr_id == 9u);
    CHECK((e.flags & HPU_ROCE_CQE_WQE_IDX) == 0);
    CHECK(e.wqe_idx == 0);
    e = r.poll1(p.ca);
    CHECK(e.wr_id == 3u);
    CHECK((e.flags & HPU_ROCE_CQE_WQE_IDX) != 0);
    CHECK(e.wqe_idx == 2);
    r.post_send(p.a, HPU_ROCE_WR_RDMA_WRITE, 4, { { local.va, 8, local.key } },
                remote.va, remote.key, 0, 0);
    r.post_send(p.a, HPU_ROCE_WR_RDMA_WRITE, 5, { { local.va, 8, local.key } },
                remote.va, remote.key, 0, 0);
    r.post_send(p.a, HPU_ROCE_WR_RDMA_WRITE, 6, { { local.va, 100, local.key } },
                remote.va + 4090, remote.key, 0, 0);
    r.post_send(p.a, HPU_ROCE_WR_SEND, 7, { { local.va, 8, local.key } }, 0, 0, 0, 0);
    r.pump();
    e = r.poll1(p.ca);
    CHECK(e.wr_id == 6u);
    CHECK(e.status == HPU_ROCE_WC_REM_ACCESS_ERR);
    CHECK((e.flags & HPU_ROCE_CQE_WQE_IDX) != 0);
    CHECK(e.wqe_idx == 5);                      // 3 and 4 done before it, no CQE
    e = r.poll1(p.ca);                          // the flush of the unsignaled SEND
    CHECK(e.wr_id == 7u);
    CHECK(e.status == HPU_ROCE_WC_WR_FLUSH_ERR);
    CHECK(e.wqe_idx == 6);
}

TEST_CASE("RoCE: doorbells of another page, of missing objects or with reserved bits are refused",
          "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair();
    auto src = r.make_mr(4096);
    const uint32_t bad = GENERATE(0u, 1u, 2u, 3u);

    r.post_recv(p.b, 1, { { src.va, 64, src.key } });
    Bytes w(256);
    w[HPU_ROCE_WQE_FLAGS] = HPU_ROCE_WQE_SIGNALED;
    w[HPU_ROCE_WQE_NUM_SGE] = 1;
    put64(&w[64], src.va);
    put32(&w[72], 8);
    put32(&w[76], src.key);
    r.hwrite(p.a.sq, w.data(), w.size());
    uint8_t pi[4];
    put32(pi, 1);
    r.hwrite(p.a.dbr, pi, 4);
    uint64_t db = bad == 0 ? HPU_ROCE_DB_PAGE(RoceRig::PAGE + 1) + HPU_ROCE_DB_SQ_DB
                           : HPU_ROCE_DB_PAGE(RoceRig::PAGE) + HPU_ROCE_DB_SQ_DB;
    uint32_t val = bad == 1 ? 11u : bad == 2 ? (10u | 0x01000000u) : 10u;
    if (bad == 3) {
        r.cwr(HPU_ROCE_CTRL, 0);                // engine off: objects gone too
    }
    r.wr(db, val);
    r.pump();
    CHECK(r.crd(HPU_ROCE_DB_REFUSED_LO) == 1u);
    CHECK(r.wire.empty());
    if (bad != 3) {
        Cqe32 none{};
        CHECK_FALSE(r.poll(p.ca, none));
        // The owner's own doorbell goes.
        r.wr(HPU_ROCE_DB_PAGE(RoceRig::PAGE) + HPU_ROCE_DB_SQ_DB, 10);
        r.pump();
        CHECK(r.poll1(p.ca).status == HPU_ROCE_WC_SUCCESS);
    }
}

TEST_CASE("RoCE: an MMU fault on the send ring moves the QP to ERR with QP_FATAL",
          "[emu][roce]")
{
    RoceRig r;
    r.setup_roce_eq();
    r.setup_eq();
    auto c = r.make_cq(1);
    RoceRig::Qp q;
    q.n = 10;
    q.cq = 1;
    Bytes d = r.qp_image(q, 0);
    // ASID 1 has no page table: every access of the QP faults.
    put16(&d[HPU_ROCE_QP_ASID], 1);
    put64(&d[HPU_ROCE_QP_SQ_ADDR], 0x200000);
    put64(&d[HPU_ROCE_QP_RQ_ADDR], 0x300000);
    put64(&d[HPU_ROCE_QP_DBR_ADDR], 0x400000);
    put32(&d[HPU_ROCE_QP_SEND_CQ], 3);
    put32(&d[HPU_ROCE_QP_RECV_CQ], 3);
    Bytes cimg = r.cq_image(c, 16);
    put16(&cimg[HPU_ROCE_CQ_ASID], 1);
    REQUIRE(r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_CQ, 3, cimg) == 0);
    REQUIRE(r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_QP, 10, d) == 0);
    r.connect_rc(q, 0, 20, 3);
    r.wr(HPU_ROCE_DB_PAGE(RoceRig::PAGE) + HPU_ROCE_DB_SQ_DB, 10);
    r.pump();
    CHECK(r.qp_state(10) == HPU_ROCE_QPS_ERR);
    auto ev = r.events();
    REQUIRE(!ev.empty());
    CHECK(ev[0].type == HPU_ROCE_EV_QP_FATAL);
    CHECK(ev[0].cause == HPU_ROCE_CAUSE_MMU_FAULT);
    CHECK(r.rd(HPU_REG_FAULT_COUNT) >= 1u);
    CHECK(r.eqe(0).id == HPU_EVENT_MMU_FAULT);
    CHECK(r.eqe(0).asid == 1u);
    CHECK(r.wire.empty());
}

TEST_CASE("RoCE: a reset mid-transfer destroys every object and nothing is written after",
          "[emu][roce]")
{
    const int kind = GENERATE(0, 1, 2);     // soft, hard, power-on
    RoceRig r;
    auto p = r.pair(1);
    auto src = r.make_mr(65536), dst = r.make_mr(65536);

    CAPTURE(kind);
    r.post_recv(p.b, 1, { { dst.va, 65536, dst.key } });
    r.loop = false;
    r.post_send(p.a, HPU_ROCE_WR_SEND, 2, { { src.va, 200 * 256, src.key } });
    r.pump();
    REQUIRE(r.wire.size() == 128);              // the window is full
    if (kind == 0) {
        r.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    } else if (kind == 1) {
        r.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
    } else {
        hpum_core_reset(&r.core);
    }
    Bytes before(r.env.host.begin(), r.env.host.end());
    size_t sent = r.wire.size();
    r.loop = true;
    for (size_t i = 0; i < 10; i++) {
        r.inject(1, r.wire[i].f);
    }
    r.wait(kind == 1 ? HPU_HARD_RESET_NS + 2 * HPU_SOFT_RESET_NS : 2 * HPU_SOFT_RESET_NS);
    r.wait(4096ull << 20);                      // beyond any QP timer
    CHECK(Bytes(r.env.host.begin(), r.env.host.end()) == before);
    CHECK(r.wire.size() == sent);               // nothing more on the wire
    CHECK(r.crd(HPU_ROCE_CTRL) == 0u);
    CHECK(r.rd(HPU_ROCE_PORT_BASE(0) + HPU_ROCE_PORT_CTRL) == 0u);
    CHECK(r.rd(HPU_ROCE_PORT_BASE(0) + HPU_ROCE_PORT_GID(0) +
               HPU_ROCE_PORT_GID_VALID_OFF) == 0u);
    CHECK(r.counter(0, HPU_ROCE_CNT_TX_PKTS) == 0u);
    r.cwr(HPU_ROCE_CTRL, HPU_ROCE_CTRL_ENABLE);
    CHECK(r.cmd(HPU_ROCE_OP_QUERY, HPU_ROCE_TYPE_QP, 10, Bytes(256)) ==
          HPU_ROCE_RES_BAD_INDEX);
    CHECK(r.cmd(HPU_ROCE_OP_QUERY, HPU_ROCE_TYPE_CQ, 1, Bytes(256)) ==
          HPU_ROCE_RES_BAD_INDEX);
    CHECK(r.cmd(HPU_ROCE_OP_QUERY, HPU_ROCE_TYPE_MR, 1, Bytes(256)) ==
          HPU_ROCE_RES_BAD_INDEX);
}

// Command validation: each rejected input its own case.

namespace {

struct CmdRig : RoceRig {
    Cq cq;
    CmdRig() { cq = make_cq(1); }
    Bytes qp_img()
    {
        Qp q;
        q.cq = 1;
        return qp_image(q, 0);
    }
    Bytes mr_img(uint32_t idx)
    {
        Bytes d(256);
        put32(&d[HPU_ROCE_MR_KEY], idx << 8 | 1);
        put32(&d[HPU_ROCE_MR_ACCESS], 7);
        put64(&d[HPU_ROCE_MR_VA], 0x1000);
        put64(&d[HPU_ROCE_MR_LENGTH], 0x1000);
        return d;
    }
};

} // namespace

TEST_CASE("RoCE commands: a good image of each type is accepted and queried back",
          "[emu][roce][cmd]")
{
    CmdRig r;
    Bytes q = r.qp_img(), m = r.mr_img(3);
    REQUIRE(r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_QP, 2, q) == HPU_ROCE_RES_OK);
    REQUIRE(r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_MR, 3, m) == HPU_ROCE_RES_OK);
    Bytes qq = r.query(HPU_ROCE_TYPE_QP, 2);
    CHECK(Bytes(qq.begin() + 8, qq.begin() + 56) == Bytes(q.begin() + 8, q.begin() + 56));
    CHECK(r.query(HPU_ROCE_TYPE_MR, 3) == m);
    CHECK(r.crd(HPU_ROCE_CMD_DONE) == 5u);      // CQ, QP, MR, two queries
    CHECK(r.cmd(HPU_ROCE_OP_DESTROY, HPU_ROCE_TYPE_QP, 2, Bytes(256)) == 0);
    CHECK(r.cmd(HPU_ROCE_OP_DESTROY, HPU_ROCE_TYPE_CQ, 1, Bytes(256)) == 0);
    CHECK(r.env.errors.empty());
}

TEST_CASE("RoCE commands: BAD_OP for unknown opcodes and types, high bits, CQ and MR MODIFY, engine off",
          "[emu][roce][cmd]")
{
    CmdRig r;
    const int which = GENERATE(Catch::Generators::range(0, 7));
    uint32_t op = HPU_ROCE_OP_QUERY, type = HPU_ROCE_TYPE_CQ, idx = 1;
    CAPTURE(which);
    switch (which) {
    case 0: op = 0; break;
    case 1: op = 5; break;
    case 2: type = 0; break;
    case 3: type = 5; break;
    case 4: op = HPU_ROCE_OP_MODIFY; break;
    case 5: op = HPU_ROCE_OP_MODIFY; type = HPU_ROCE_TYPE_MR; break;
    case 6: r.cwr(HPU_ROCE_CTRL, 0); r.cwr(HPU_ROCE_CTRL, 1); idx = 1; break;
    }
    if (which == 6) {
        // The CQ is gone with the disable; the engine on again: BAD_INDEX,
        // while off: BAD_OP.
        CHECK(r.cmd(op, type, idx, Bytes(256)) == HPU_ROCE_RES_BAD_INDEX);
        r.cwr(HPU_ROCE_CTRL, 0);
    }
    CHECK(r.cmd(op, type, idx, Bytes(256)) == HPU_ROCE_RES_BAD_OP);
    CHECK_FALSE(r.env.errors.empty());
}

TEST_CASE("RoCE commands: CMD bits 31:16 set is BAD_OP", "[emu][roce][cmd]")
{
    CmdRig r;
    r.cwr(HPU_ROCE_CMD_INDEX, 1);
    r.cwr(HPU_ROCE_CMD, HPU_ROCE_OP_QUERY | HPU_ROCE_TYPE_CQ << 8 | 0x10000);
    r.pump();
    CHECK(r.crd(HPU_ROCE_CMD_STATUS) == HPU_ROCE_RES_BAD_OP << 8);
}

TEST_CASE("RoCE commands: BAD_INDEX for out of range, QPN 0 and 1, free and used indexes",
          "[emu][roce][cmd]")
{
    CmdRig r;
    const int which = GENERATE(Catch::Generators::range(0, 8));
    CAPTURE(which);
    Bytes q = r.qp_img();
    int res = -1;
    switch (which) {
    case 0: res = r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_QP, 4096, q); break;
    case 1: res = r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_QP, 0, q); break;
    case 2: res = r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_QP, 1, q); break;
    case 3: res = r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_CQ, 4096, Bytes(256)); break;
    case 4: res = r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_SRQ, 1024, Bytes(256)); break;
    case 5: res = r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_MR, 65536, Bytes(256)); break;
    case 6: res = r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_CQ, 1, Bytes(256)); break;
    case 7: res = r.cmd(HPU_ROCE_OP_DESTROY, HPU_ROCE_TYPE_QP, 5, Bytes(256)); break;
    }
    CHECK(res == HPU_ROCE_RES_BAD_INDEX);
}

TEST_CASE("RoCE commands: BAD_STATE for transitions the state machine refuses and objects in use",
          "[emu][roce][cmd]")
{
    CmdRig r;
    const int which = GENERATE(Catch::Generators::range(0, 5));
    CAPTURE(which);
    REQUIRE(r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_QP, 2, r.qp_img()) == 0);
    Bytes d(256);
    int res = -1;
    switch (which) {
    case 0: res = r.modify(2, HPU_ROCE_QPS_RTR, 0, d); break;        // RESET -> RTR
    case 1: res = r.modify(2, HPU_ROCE_QPS_SQD, 0, d); break;
    case 2: res = r.modify(2, HPU_ROCE_QPS_SQE, 0, d); break;
    case 3: res = r.modify(2, 7, 0, d); break;
    case 4: res = r.cmd(HPU_ROCE_OP_DESTROY, HPU_ROCE_TYPE_CQ, 1, d); break;
    }
    CHECK(res == HPU_ROCE_RES_BAD_STATE);
    CHECK(r.qp_state(2) == HPU_ROCE_QPS_RESET);
}

TEST_CASE("RoCE commands: BAD_IMAGE for each broken QP field", "[emu][roce][cmd]")
{
    CmdRig r;
    const int which = GENERATE(Catch::Generators::range(0, 14));
    CAPTURE(which);
    Bytes d = r.qp_img();
    switch (which) {
    case 0: d[HPU_ROCE_QP_STATE] = HPU_ROCE_QPS_INIT; break;
    case 1: d[HPU_ROCE_QP_TYPE] = 3; break;                    // UC
    case 2: d[HPU_ROCE_QP_PORT] = 10; break;
    case 3: put16(&d[HPU_ROCE_QP_ASID], 64); break;
    case 4: put16(&d[HPU_ROCE_QP_DB_PAGE], 2048); break;
    case 5: put32(&d[HPU_ROCE_QP_SEND_CQ], 9); break;          // no such CQ
    case 6: d[HPU_ROCE_QP_SQ_LOG_STRIDE] = 5; break;
    case 7: put64(&d[HPU_ROCE_QP_SQ_ADDR], get64(&d[HPU_ROCE_QP_SQ_ADDR]) + 8); break;
    case 8: put32(&d[HPU_ROCE_QP_ACCESS], 8); break;            // REMOTE_ATOMIC
    case 9: d[HPU_ROCE_QP_RETRY_CNT] = 8; break;
    case 10: d[120] = 1; break;                                 // reserved
    case 11: put32(&d[HPU_ROCE_QP_MASK], 1); break;
    case 12: put32(&d[HPU_ROCE_QP_SRQ], 1); break;              // no such SRQ
    case 13: put32(&d[HPU_ROCE_QP_SQ_PSN], 1u << 24); break;
    }
    CHECK(r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_QP, 2, d) == HPU_ROCE_RES_BAD_IMAGE);
    CHECK(r.cmd(HPU_ROCE_OP_QUERY, HPU_ROCE_TYPE_QP, 2, Bytes(256)) == HPU_ROCE_RES_BAD_INDEX);
}

TEST_CASE("RoCE commands: BAD_IMAGE for MODIFY masks: a required bit missing, a bit not allowed",
          "[emu][roce][cmd]")
{
    CmdRig r;
    const int which = GENERATE(Catch::Generators::range(0, 4));
    CAPTURE(which);
    REQUIRE(r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_QP, 2, r.qp_img()) == 0);
    Bytes d(256);
    int res = -1;
    switch (which) {
    case 0: res = r.modify(2, HPU_ROCE_QPS_INIT, 0, d); break;                 // no PORT
    case 1: res = r.modify(2, HPU_ROCE_QPS_INIT, HPU_ROCE_QPM_PORT |
                           HPU_ROCE_QPM_SQ_PSN, d); break;                     // not allowed
    case 2: res = r.modify(2, HPU_ROCE_QPS_INIT, HPU_ROCE_QPM_PORT | (1u << 14), d); break;
    case 3:
        REQUIRE(r.modify(2, HPU_ROCE_QPS_INIT, HPU_ROCE_QPM_PORT, d) == 0);
        res = r.modify(2, HPU_ROCE_QPS_RTR, HPU_ROCE_QPM_AV, d);              // RC needs more
        break;
    }
    CHECK(res == HPU_ROCE_RES_BAD_IMAGE);
}

TEST_CASE("RoCE commands: BAD_IMAGE for each broken CQ, SRQ and MR field", "[emu][roce][cmd]")
{
    CmdRig r;
    const int which = GENERATE(Catch::Generators::range(0, 10));
    CAPTURE(which);
    Bytes c = r.cq_image(r.cq, 16), m = r.mr_img(3), s(256);
    s[HPU_ROCE_SRQ_LOG_ENTRIES] = 4;
    s[HPU_ROCE_SRQ_LOG_STRIDE] = 5;
    put64(&s[HPU_ROCE_SRQ_RING_ADDR], host_addr(r.halloc(512, 64)));
    put64(&s[HPU_ROCE_SRQ_DBR_ADDR], host_addr(r.halloc(8, 8)));
    REQUIRE(r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_SRQ, 0, s) == 0);
    uint32_t type = HPU_ROCE_TYPE_CQ, idx = 2;
    Bytes *img = &c;
    switch (which) {
    case 0: c[HPU_ROCE_CQ_LOG_ENTRIES] = 0; break;
    case 1: c[HPU_ROCE_CQ_LOG_ENTRIES] = 17; break;
    case 2: put64(&c[HPU_ROCE_CQ_RING_ADDR], get64(&c[HPU_ROCE_CQ_RING_ADDR]) + 16); break;
    case 3: c[40] = 1; break;
    case 4: type = HPU_ROCE_TYPE_MR; img = &m; idx = 4; break;          // key index != 4
    case 5: type = HPU_ROCE_TYPE_MR; img = &m; idx = 3; put32(&m[HPU_ROCE_MR_ACCESS], 8); break;
    case 6: type = HPU_ROCE_TYPE_MR; img = &m; idx = 3; put32(&m[HPU_ROCE_MR_ACCESS], 2); break;
    case 7: type = HPU_ROCE_TYPE_MR; img = &m; idx = 3; put64(&m[HPU_ROCE_MR_LENGTH], 0); break;
    case 8: type = HPU_ROCE_TYPE_SRQ; idx = 1; s[HPU_ROCE_SRQ_LOG_STRIDE] = 11; img = &s; break;
    case 9:
        s = Bytes(256);
        put32(&s[HPU_ROCE_SRQ_LIMIT], 17);                   // above 16 entries
        CHECK(r.cmd(HPU_ROCE_OP_MODIFY, HPU_ROCE_TYPE_SRQ, 0, s) == HPU_ROCE_RES_BAD_IMAGE);
        put32(&s[HPU_ROCE_SRQ_LIMIT], 4);
        s[HPU_ROCE_SRQ_LOG_ENTRIES] = 4;                     // not the limit
        CHECK(r.cmd(HPU_ROCE_OP_MODIFY, HPU_ROCE_TYPE_SRQ, 0, s) == HPU_ROCE_RES_BAD_IMAGE);
        return;
    }
    CHECK(r.cmd(HPU_ROCE_OP_CREATE, type, idx, *img) == HPU_ROCE_RES_BAD_IMAGE);
}

TEST_CASE("RoCE commands: run on the worker; writes while BUSY are dropped", "[emu][roce][cmd]")
{
    CmdRig r;
    r.cwr(HPU_ROCE_CMD_INDEX, 1);
    r.cwr(HPU_ROCE_CMD, HPU_ROCE_OP_QUERY | HPU_ROCE_TYPE_CQ << 8);
    CHECK(r.crd(HPU_ROCE_CMD_STATUS) == HPU_ROCE_CMD_BUSY);     // not in the write
    size_t errs = r.env.errors.size();
    r.cwr(HPU_ROCE_CMD_INDEX, 7);
    r.cwr(HPU_ROCE_CMD_DATA(0), 0xdead);
    r.cwr(HPU_ROCE_CMD, HPU_ROCE_OP_DESTROY | HPU_ROCE_TYPE_CQ << 8);
    CHECK(r.env.errors.size() == errs + 3);
    CHECK(r.crd(HPU_ROCE_CMD_INDEX) == 1u);
    r.pump();
    CHECK(r.crd(HPU_ROCE_CMD_STATUS) == 0u);
    CHECK(r.crd(HPU_ROCE_CMD_DATA(HPU_ROCE_CQ_LOG_ENTRIES / 4)) != 0u);
    CHECK(r.query(HPU_ROCE_TYPE_CQ, 1)[HPU_ROCE_CQ_LOG_ENTRIES] == 6);  // not destroyed
}

TEST_CASE("RoCE: an SRQ feeds receives, publishes its consumer index and fires its limit once",
          "[emu][roce]")
{
    RoceRig r;
    r.setup_roce_eq();
    auto ca = r.make_cq(1), cb = r.make_cq(2);
    Bytes s(256);
    uint64_t ring = r.halloc(16 * 64, 64), dbr = r.halloc(8, 8);
    s[HPU_ROCE_SRQ_LOG_ENTRIES] = 4;
    s[HPU_ROCE_SRQ_LOG_STRIDE] = 6;
    put32(&s[HPU_ROCE_SRQ_PD], 1);
    put16(&s[HPU_ROCE_SRQ_DB_PAGE], RoceRig::PAGE);
    put32(&s[HPU_ROCE_SRQ_LIMIT], 2);
    put64(&s[HPU_ROCE_SRQ_RING_ADDR], host_addr(ring));
    put64(&s[HPU_ROCE_SRQ_DBR_ADDR], host_addr(dbr));
    REQUIRE(r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_SRQ, 0, s) == 0);
    RoceRig::Qp a, b;
    a.n = 10; a.cq = 1;
    b.n = 20; b.cq = 2; b.srq = 1;
    REQUIRE(r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_QP, 10, r.qp_image(a, 0)) == 0);
    REQUIRE(r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_QP, 20, r.qp_image(b, 1)) == 0);
    r.connect_rc(a, 0, 20, 3);
    r.connect_rc(b, 1, 10, 3);
    auto src = r.make_mr(4096), dst = r.make_mr(4096);
    for (uint32_t i = 0; i < 4; i++) {
        Bytes w(64);
        put64(&w[0], 500 + i);
        w[8] = 1;
        put64(&w[16], dst.va + 64 * i);
        put32(&w[24], 64);
        put32(&w[28], dst.key);
        r.hwrite(ring + 64 * i, w.data(), w.size());
    }
    uint8_t pi[4];
    put32(pi, 4);
    r.hwrite(dbr, pi, 4);
    for (int i = 0; i < 3; i++) {
        r.post_send(a, HPU_ROCE_WR_SEND, i, { { src.va, 16, src.key } });
    }
    r.pump();
    for (uint32_t i = 0; i < 3; i++) {
        CHECK(r.poll1(cb).wr_id == 500 + i);
        CHECK(r.poll1(ca).status == HPU_ROCE_WC_SUCCESS);
    }
    CHECK(r.hrd32(dbr + 4) == 3u);
    size_t limits = 0;
    for (auto &e : r.events()) {
        limits += e.type == HPU_ROCE_EV_SRQ_LIMIT && e.obj == 0;
    }
    CHECK(limits == 1);                         // 4 - 3 = 1 < 2, then disarmed
    CHECK(r.query(HPU_ROCE_TYPE_SRQ, 0)[HPU_ROCE_SRQ_LIMIT] == 0);
    CHECK(r.cmd(HPU_ROCE_OP_DESTROY, HPU_ROCE_TYPE_SRQ, 0, Bytes(256)) ==
          HPU_ROCE_RES_BAD_STATE);
}

TEST_CASE("RoCE: CQ_ARM raises one CQ_COMPLETION, at once if a completion is unconsumed",
          "[emu][roce]")
{
    RoceRig r;
    r.setup_roce_eq();
    auto p = r.pair();
    auto src = r.make_mr(4096), dst = r.make_mr(4096);
    const uint64_t arm = HPU_ROCE_DB_PAGE(RoceRig::PAGE) + HPU_ROCE_DB_CQ_ARM;

    r.wr(arm, 2);
    r.pump();
    CHECK(r.events().empty());
    r.env.vectors.clear();
    r.post_recv(p.b, 1, { { dst.va, 64, dst.key } });
    r.post_recv(p.b, 2, { { dst.va, 64, dst.key } });
    r.post_send(p.a, HPU_ROCE_WR_SEND, 3, { { src.va, 8, src.key } });
    r.post_send(p.a, HPU_ROCE_WR_SEND, 4, { { src.va, 8, src.key } });
    r.pump();
    auto ev = r.events();
    REQUIRE(ev.size() == 1);                    // once per arm
    CHECK(ev[0].type == HPU_ROCE_EV_CQ_COMPLETION);
    CHECK(ev[0].obj == 2u);
    CHECK(std::count(r.env.vectors.begin(), r.env.vectors.end(), HPU_VEC_ROCE) == 1);
    // Two written, none consumed: arming again raises it at once.
    r.wr(arm, 2);
    r.pump();
    ev = r.events();
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].type == HPU_ROCE_EV_CQ_COMPLETION);
    // Consumed: no event until the next completion.
    r.poll1(p.cb);
    r.poll1(p.cb);
    r.wr(arm, 2);
    r.pump();
    CHECK(r.events().empty());
    CHECK(r.query(HPU_ROCE_TYPE_CQ, 2)[HPU_ROCE_CQ_Q_ARM] == HPU_ROCE_CQ_ARM_NEXT);
}

TEST_CASE("RoCE: a port whose link is down discards frames and its QP's retries exhaust",
          "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair(3, 8, 1);
    auto src = r.make_mr(4096);

    r.set_link(0, HPU_NIC_LINK_STATUS_ATTACHED);
    r.post_send(p.a, HPU_ROCE_WR_SEND, 2, { { src.va, 100, src.key } });
    r.pump();
    CHECK(r.wire.empty());
    CHECK(r.counter(0, HPU_ROCE_CNT_TX_DISCARDS) == 1);
    r.wait(4096ull << 8);
    r.wait(4096ull << 8);
    CHECK(r.counter(0, HPU_ROCE_CNT_TX_DISCARDS) == 2);
    CHECK(r.poll1(p.ca).status == HPU_ROCE_WC_RETRY_EXC_ERR);
}

TEST_CASE("RoCE: mutated and truncated frames from the wire never break the engine",
          "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair(1);
    auto src = r.make_mr(65536, 7), dst = r.make_mr(65536, 7);

    for (int i = 0; i < 8; i++) {
        r.post_recv(p.b, i, { { dst.va, 65536, dst.key } });
    }
    r.loop = false;
    r.post_send(p.a, HPU_ROCE_WR_SEND, 1, { { src.va, 600, src.key } });
    r.post_send(p.a, HPU_ROCE_WR_RDMA_WRITE, 2, { { src.va, 600, src.key } },
                dst.va, dst.key);
    r.post_send(p.a, HPU_ROCE_WR_RDMA_READ, 3, { { src.va, 600, src.key } },
                dst.va, dst.key);
    r.pump();
    std::vector<Bytes> seeds;
    for (auto &k : r.wire) {
        seeds.push_back(k.f);
    }
    REQUIRE(seeds.size() >= 5);
    uint32_t x = 12345;
    auto rnd = [&x]() { x = x * 1103515245u + 12345u; return x >> 8; };
    for (int i = 0; i < 3000; i++) {
        Bytes f = seeds[rnd() % seeds.size()];
        // The UDP ports stay (else the frame takes the Ethernet path,
        // whose ring has no buffers: the port would hold it).
        size_t l4 = 14 + 20 + 4;
        int flips = 1 + static_cast<int>(rnd() % 4);
        for (int k = 0; k < flips; k++) {
            size_t at = l4 + rnd() % (f.size() - l4);
            f[at] = static_cast<uint8_t>(rnd());
        }
        if (rnd() % 4 == 0) {
            f.resize(62 + rnd() % (f.size() - 62));
        }
        if (f.size() > 14 + 20 + 8 + 12 + 4 && rnd() % 2) {
            put32(f.data() + f.size() - 4, ref_icrc(f));       // passes the ICRC
        }
        r.inject(1, f);
        r.inject(0, f);
        r.pump();
    }
    CHECK(r.counter(1, HPU_ROCE_CNT_RX_ICRC_ERR) > 0);
    CHECK(r.counter(1, HPU_ROCE_CNT_RX_MALFORMED) + r.counter(1, HPU_ROCE_CNT_RX_UNKNOWN_QP) +
          r.counter(1, HPU_ROCE_CNT_RX_DROPPED) > 0);
    // The engine still works: a fresh pair on other QPNs talks.
    r.loop = true;
    r.drop = nullptr;
    auto c = r.make_cq(5), d = r.make_cq(6);
    auto a = r.make_qp(100, 0, 5), b = r.make_qp(200, 1, 6);
    r.connect_rc(a, 0, 200, 3);
    r.connect_rc(b, 1, 100, 3);
    r.post_recv(b, 9, { { dst.va, 64, dst.key } });
    r.post_send(a, HPU_ROCE_WR_SEND, 10, { { src.va, 64, src.key } });
    r.pump();
    CHECK(r.poll1(d).wr_id == 9u);
    CHECK(r.poll1(c).status == HPU_ROCE_WC_SUCCESS);
}

TEST_CASE("RoCE: a FENCE send waits for the RDMA READ before it", "[emu][roce]")
{
    const bool fence = GENERATE(false, true);
    RoceRig r;
    auto p = r.pair();
    auto local = r.make_mr(8192), remote = r.make_mr(8192);

    CAPTURE(fence);
    r.post_recv(p.b, 1, { { remote.va + 4096, 64, remote.key } });
    r.post_send(p.a, HPU_ROCE_WR_RDMA_READ, 2, { { local.va, 512, local.key } },
                remote.va, remote.key);
    r.post_send(p.a, HPU_ROCE_WR_SEND, 3, { { local.va + 4096, 8, local.key } }, 0, 0, 0,
                static_cast<uint8_t>(HPU_ROCE_WQE_SIGNALED |
                                     (fence ? HPU_ROCE_WQE_FENCE : 0)));
    r.pump();
    size_t send_at = 0, resp_at = 0;
    for (size_t i = 0; i < r.wire.size(); i++) {
        if (r.wire[i].op() == OP_SEND_ONLY) {
            send_at = i;
        }
        if (r.wire[i].op() == OP_READ_RESP_ONLY) {
            resp_at = i;
        }
    }
    REQUIRE(send_at > 0);
    REQUIRE(resp_at > 0);
    CHECK((send_at > resp_at) == fence);
    CHECK(r.poll1(p.ca).wr_id == 2u);
    CHECK(r.poll1(p.ca).wr_id == 3u);
}

TEST_CASE("RoCE: port events on vector 32; a full or disabled event ring drops and counts",
          "[emu][roce]")
{
    RoceRig r;
    // The rig enabled both ports with the ring disabled: two events lost.
    CHECK(r.crd(HPU_ROCE_EQ_DROPPED) == 2u);
    r.setup_roce_eq(16);
    r.env.vectors.clear();
    r.set_link(0, HPU_NIC_LINK_STATUS_ATTACHED);
    r.set_link(0, (HPU_NIC_LINK_STATUS_ATTACHED | HPU_NIC_LINK_STATUS_UP));
    r.wr(HPU_ROCE_PORT_BASE(1) + HPU_ROCE_PORT_CTRL, 0);
    auto ev = r.events();
    REQUIRE(ev.size() == 3);
    CHECK(ev[0].type == HPU_ROCE_EV_PORT_DOWN);
    CHECK(ev[0].port == 0u);
    CHECK(ev[1].type == HPU_ROCE_EV_PORT_ACTIVE);
    CHECK(ev[2].type == HPU_ROCE_EV_PORT_DOWN);
    CHECK(ev[2].obj == 1u);
    CHECK(std::count(r.env.vectors.begin(), r.env.vectors.end(), HPU_VEC_ROCE) == 3);
    for (int i = 0; i < 10; i++) {                  // 20 events, 16 slots
        r.set_link(0, HPU_NIC_LINK_STATUS_ATTACHED);
        r.set_link(0, (HPU_NIC_LINK_STATUS_ATTACHED | HPU_NIC_LINK_STATUS_UP));
    }
    CHECK(r.crd(HPU_ROCE_EQ_PI) - r.crd(HPU_ROCE_EQ_CI) == 16u);
    CHECK(r.crd(HPU_ROCE_EQ_DROPPED) == 6u);
    // EQ_CI beyond EQ_PI is refused.
    r.cwr(HPU_ROCE_EQ_CI, r.crd(HPU_ROCE_EQ_PI) + 1);
    CHECK(r.crd(HPU_ROCE_EQ_CI) == 3u);
}

// Bounded work per worker run, and the defects of the 2026 review.

namespace {

// UD QPs 30 (port 0) and 40 (port 1) in RTS with Q_Key 0x1234, CQs 1 and 2.
struct UdPair {
    RoceRig::Cq ca, cb;
    RoceRig::Qp a, b;
    uint8_t av[32] = {};
};

UdPair ud_pair(RoceRig &r)
{
    UdPair u;
    u.ca = r.make_cq(1);
    u.cb = r.make_cq(2);
    u.a = r.make_qp(30, 0, 1, HPU_ROCE_QPT_UD);
    u.b = r.make_qp(40, 1, 2, HPU_ROCE_QPT_UD);
    for (auto *q : { &u.a, &u.b }) {
        Bytes d(256);
        d[HPU_ROCE_QP_PORT] = q == &u.a ? 0 : 1;
        put32(&d[HPU_ROCE_QP_QKEY], 0x1234);
        REQUIRE(r.modify(q->n, HPU_ROCE_QPS_INIT, HPU_ROCE_QPM_PORT | HPU_ROCE_QPM_QKEY, d) == 0);
        REQUIRE(r.modify(q->n, HPU_ROCE_QPS_RTR, 0) == 0);
        REQUIRE(r.modify(q->n, HPU_ROCE_QPS_RTS, HPU_ROCE_QPM_SQ_PSN) == 0);
    }
    Bytes m = r.mac(1), g = RoceRig::ip4(1);
    std::memcpy(u.av, m.data(), 6);
    u.av[HPU_ROCE_AV_HOP_LIMIT] = 64;
    std::memcpy(u.av + HPU_ROCE_AV_DGID, g.data(), 16);
    return u;
}

// @f with its PSN set to @psn and its ICRC made good again.
Bytes with_psn(const Pkt &k, uint32_t psn)
{
    Pkt c = k;
    size_t b = c.bth() + 9;
    c.f[b] = static_cast<uint8_t>(psn >> 16);
    c.f[b + 1] = static_cast<uint8_t>(psn >> 8);
    c.f[b + 2] = static_cast<uint8_t>(psn);
    put32(c.f.data() + c.f.size() - 4, ref_icrc(c.f));
    return c.f;
}

} // namespace

TEST_CASE("RoCE: a 64 MiB READ at MTU 256 runs across many worker runs; a command meanwhile "
          "completes within two runs", "[emu][roce]")
{
    RoceRig r;
    const uint32_t len = 64u << 20;
    r.env.host.resize(HOST_SIZE + 2 * len);    // room for both buffers
    auto p = r.pair(1);
    auto local = r.make_mr(len), remote = r.make_mr(len);
    Bytes data(len);
    for (uint32_t i = 0; i < len; i++) {
        data[i] = static_cast<uint8_t>(i * 7 + (i >> 9) + (i >> 17));
    }
    r.hwrite(remote.bus, data.data(), len);
    r.record = false;
    r.post_send(p.a, HPU_ROCE_WR_RDMA_READ, 1, { { local.va, len, local.key } },
                remote.va, remote.key);
    for (int i = 0; i < 50; i++) {
        REQUIRE(r.step());
    }
    Cqe32 none{};
    CHECK_FALSE(r.poll(p.ca, none));            // still going
    r.cwr(HPU_ROCE_CMD_INDEX, 1);
    r.cwr(HPU_ROCE_CMD, HPU_ROCE_OP_QUERY | HPU_ROCE_TYPE_CQ << HPU_ROCE_CMD_TYPE_SHIFT);
    unsigned int at = r.runs;
    while ((r.crd(HPU_ROCE_CMD_STATUS) & HPU_ROCE_CMD_BUSY) && r.runs - at < 10) {
        r.step();
    }
    CHECK(r.runs - at <= 2);
    CHECK(r.crd(HPU_ROCE_CMD_STATUS) == 0u);
    CHECK_FALSE(r.poll(p.ca, none));
    r.pump(1000000);
    Cqe32 e = r.poll1(p.ca);
    CHECK(e.wr_id == 1u);
    CHECK(e.status == HPU_ROCE_WC_SUCCESS);
    CHECK(e.len == len);
    CHECK(std::memcmp(r.hp(local.bus), data.data(), len) == 0);
    CHECK(r.runs > 1000);
    CHECK(r.counter(0, HPU_ROCE_CNT_RX_DROPPED) == 0);
    CHECK(r.counter(1, HPU_ROCE_CNT_TX_PKTS) == (len >> 8));
}

TEST_CASE("RoCE: destroying the MR of a READ being answered stops its responses at once",
          "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair(1);
    const uint32_t len = 1u << 20;
    auto local = r.make_mr(len), remote = r.make_mr(len);
    r.post_send(p.a, HPU_ROCE_WR_RDMA_READ, 1, { { local.va, len, local.key } },
                remote.va, remote.key);
    for (int i = 0; i < 10; i++) {
        REQUIRE(r.step());
    }
    r.cwr(HPU_ROCE_CMD_INDEX, remote.key >> 8);
    r.cwr(HPU_ROCE_CMD, HPU_ROCE_OP_DESTROY | HPU_ROCE_TYPE_MR << HPU_ROCE_CMD_TYPE_SHIFT);
    size_t seen = r.wire.size();
    REQUIRE(r.step());
    CHECK(r.crd(HPU_ROCE_CMD_STATUS) == 0u);   // done in that run
    r.pump();
    size_t later = 0, naks = 0;
    for (size_t i = seen; i < r.wire.size(); i++) {
        later += r.wire[i].port == 1 && r.wire[i].op() >= 0x0d && r.wire[i].op() <= 0x10;
        naks += r.wire[i].port == 1 && r.wire[i].op() == OP_ACK &&
                r.wire[i].syndrome() == 0x62;
    }
    CHECK(later == 0);
    CHECK(naks == 1);
    CHECK(r.poll1(p.ca).status == HPU_ROCE_WC_REM_ACCESS_ERR);
    CHECK(r.qp_state(20) == HPU_ROCE_QPS_ERR);
}

TEST_CASE("RoCE: WRITE packets after the target MR is destroyed are NAKed and write nothing",
          "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair(1);
    auto local = r.make_mr(4096), remote = r.make_mr(4096);
    Bytes data = pattern(1024, 21);

    r.hwrite(local.bus, data.data(), data.size());
    r.loop = false;
    r.post_send(p.a, HPU_ROCE_WR_RDMA_WRITE, 1, { { local.va, 1024, local.key } },
                remote.va, remote.key);
    r.pump();
    REQUIRE(r.wire.size() == 4);
    std::vector<Pkt> pk = r.wire;
    r.inject(1, pk[0].f);
    r.pump();
    CHECK(host_bytes(r, remote.bus, 256) == Bytes(data.begin(), data.begin() + 256));
    Bytes rest = host_bytes(r, remote.bus + 256, 768);
    REQUIRE(r.cmd(HPU_ROCE_OP_DESTROY, HPU_ROCE_TYPE_MR, remote.key >> 8, Bytes(256)) == 0);
    for (size_t i = 1; i < 4; i++) {
        r.inject(1, pk[i].f);
    }
    r.pump();
    CHECK(host_bytes(r, remote.bus + 256, 768) == rest);
    CHECK(r.counter(1, HPU_ROCE_CNT_REM_ACCESS_ERR) == 1);
    REQUIRE(r.wire.back().port == 1);
    CHECK(r.wire.back().op() == OP_ACK);
    CHECK(r.wire.back().syndrome() == 0x62);
    CHECK(r.wire.back().psn() == 0x101u);
    CHECK(r.qp_state(20) == HPU_ROCE_QPS_ERR);
}

TEST_CASE("RoCE: a failing WQE behind one in flight completes after it, with its own status",
          "[emu][roce]")
{
    RoceRig r;
    r.setup_roce_eq();
    auto p = r.pair();
    auto local = r.make_mr(4096);

    r.loop = false;
    r.post_send(p.a, HPU_ROCE_WR_RDMA_WRITE, 1, { { local.va, 100, local.key } },
                local.va + 2048, local.key);
    r.pump();
    r.post_send(p.a, HPU_ROCE_WR_SEND, 2, { { local.va, 100, local.key ^ 1 } });
    r.pump();
    Cqe32 a = r.poll1(p.ca), b = r.poll1(p.ca), none{};
    CHECK(a.wr_id == 1u);
    CHECK(a.status == HPU_ROCE_WC_WR_FLUSH_ERR);
    CHECK(a.op == HPU_ROCE_WC_RDMA_WRITE);
    CHECK(b.wr_id == 2u);
    CHECK(b.status == HPU_ROCE_WC_LOC_PROT_ERR);
    CHECK(b.op == HPU_ROCE_WC_SEND);
    CHECK_FALSE(r.poll(p.ca, none));
    r.wr(HPU_ROCE_DB_PAGE(RoceRig::PAGE) + HPU_ROCE_DB_SQ_DB, 10);
    r.pump();
    CHECK_FALSE(r.poll(p.ca, none));            // each exactly once
    CHECK(r.qp_state(10) == HPU_ROCE_QPS_ERR);
    auto ev = r.events();
    REQUIRE(!ev.empty());
    CHECK(ev[0].type == HPU_ROCE_EV_QP_FATAL);
    CHECK(ev[0].cause == HPU_ROCE_CAUSE_LOC_PROT);
}

TEST_CASE("RoCE: a lost READ response is asked again when a later ACK or response arrives",
          "[emu][roce]")
{
    const bool two_reads = GENERATE(false, true);
    RoceRig r;
    auto p = r.pair();
    auto local = r.make_mr(8192), remote = r.make_mr(8192);
    Bytes a = pattern(512, 31), b = pattern(300, 32);

    CAPTURE(two_reads);
    r.hwrite(remote.bus, a.data(), a.size());
    r.hwrite(remote.bus + 1024, b.data(), b.size());
    r.hwrite(local.bus + 4096, b.data(), b.size());
    // The responder's first frame (the first READ response) is lost.
    r.wr(HPU_NIC_PORT_BASE(1) + HPU_NIC_INJ_CTRL, 1u << HPU_NIC_INJ_DROP_TX_SHIFT);
    r.post_send(p.a, HPU_ROCE_WR_RDMA_READ, 1, { { local.va, 512, local.key } },
                remote.va, remote.key);
    if (two_reads) {
        r.post_send(p.a, HPU_ROCE_WR_RDMA_READ, 2, { { local.va + 1024, 300, local.key } },
                    remote.va + 1024, remote.key);
    } else {
        r.post_send(p.a, HPU_ROCE_WR_RDMA_WRITE, 2, { { local.va + 4096, 300, local.key } },
                    remote.va + 4096, remote.key);
    }
    r.pump();
    CHECK(r.rd(HPU_NIC_PORT_BASE(1) + HPU_NIC_INJ_DROPPED_LO) == 1u);
    Cqe32 x = r.poll1(p.ca), y = r.poll1(p.ca), none{};
    CHECK(x.wr_id == 1u);
    CHECK(x.status == HPU_ROCE_WC_SUCCESS);
    CHECK(x.len == 512u);
    CHECK(y.wr_id == 2u);
    CHECK(y.status == HPU_ROCE_WC_SUCCESS);
    CHECK_FALSE(r.poll(p.ca, none));
    CHECK(host_bytes(r, local.bus, 512) == a);
    if (two_reads) {
        CHECK(host_bytes(r, local.bus + 1024, 300) == b);
    } else {
        CHECK(host_bytes(r, remote.bus + 4096, 300) == b);
    }
    CHECK(r.count_ops(OP_READ_REQ, 0) == (two_reads ? 4u : 2u));
    CHECK(r.counter(0, HPU_ROCE_CNT_ACK_TIMEOUTS) == 0);
}

TEST_CASE("RoCE: a UD QP's send stride must hold its header and address vector",
          "[emu][roce][cmd]")
{
    const uint32_t stride = GENERATE(64u, 128u);
    RoceRig r;
    r.make_cq(1);
    RoceRig::Qp q;
    q.type = HPU_ROCE_QPT_UD;
    q.cq = 1;
    q.sq_stride = stride;
    CAPTURE(stride);
    CHECK(r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_QP, 30, r.qp_image(q, 0)) ==
          (stride == 64 ? HPU_ROCE_RES_BAD_IMAGE : HPU_ROCE_RES_OK));
}

TEST_CASE("RoCE: a receive WQE held by a multi-packet SEND is flushed when the QP enters ERR",
          "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair(1);
    auto src = r.make_mr(4096), dst = r.make_mr(4096);

    r.post_recv(p.b, 1, { { dst.va, 4096, dst.key } });
    r.post_recv(p.b, 2, { { dst.va, 4096, dst.key } });
    r.loop = false;
    r.post_send(p.a, HPU_ROCE_WR_SEND, 3, { { src.va, 600, src.key } });
    r.pump();
    REQUIRE(r.wire.size() == 3);
    r.inject(1, r.wire[0].f);
    r.pump();
    REQUIRE(r.modify(20, HPU_ROCE_QPS_ERR, 0) == 0);
    r.pump();
    Cqe32 e1 = r.poll1(p.cb), e2 = r.poll1(p.cb), none{};
    CHECK(e1.wr_id == 1u);
    CHECK(e1.status == HPU_ROCE_WC_WR_FLUSH_ERR);
    CHECK(e1.op == HPU_ROCE_WC_RECV);
    CHECK(e2.wr_id == 2u);
    CHECK(e2.status == HPU_ROCE_WC_WR_FLUSH_ERR);
    CHECK_FALSE(r.poll(p.cb, none));
    // Posted while in ERR: flushed at the QP's next SQ_DB.
    r.post_recv(p.b, 4, { { dst.va, 4096, dst.key } });
    r.wr(HPU_ROCE_DB_PAGE(RoceRig::PAGE) + HPU_ROCE_DB_SQ_DB, 20);
    r.pump();
    Cqe32 e3 = r.poll1(p.cb);
    CHECK(e3.wr_id == 4u);
    CHECK(e3.status == HPU_ROCE_WC_WR_FLUSH_ERR);
    CHECK(e3.op == HPU_ROCE_WC_RECV);
}

TEST_CASE("RoCE: a READ request inside a multi-packet SEND is an invalid request", "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair(1);
    auto src = r.make_mr(4096), dst = r.make_mr(4096);

    r.post_recv(p.b, 1, { { dst.va, 4096, dst.key } });
    r.loop = false;
    r.post_send(p.a, HPU_ROCE_WR_SEND, 2, { { src.va, 600, src.key } });
    r.post_send(p.a, HPU_ROCE_WR_RDMA_READ, 3, { { src.va + 1024, 64, src.key } },
                dst.va, dst.key);
    r.pump();
    REQUIRE(r.wire.size() == 4);
    REQUIRE(r.wire[3].op() == OP_READ_REQ);
    Bytes rd = with_psn(r.wire[3], 0x101);
    size_t seen = r.wire.size();
    r.inject(1, r.wire[0].f);
    r.pump();
    r.inject(1, rd);
    r.pump();
    size_t resp = 0, naks = 0;
    for (size_t i = seen; i < r.wire.size(); i++) {
        resp += r.wire[i].port == 1 && r.wire[i].op() == OP_READ_RESP_ONLY;
        naks += r.wire[i].port == 1 && r.wire[i].op() == OP_ACK &&
                r.wire[i].syndrome() == 0x61 && r.wire[i].psn() == 0x101;
    }
    CHECK(resp == 0);
    CHECK(naks == 1);
    Cqe32 e = r.poll1(p.cb);
    CHECK(e.wr_id == 1u);
    CHECK(e.status == HPU_ROCE_WC_REM_INV_REQ_ERR);
    CHECK(e.op == HPU_ROCE_WC_RECV);
    CHECK(r.qp_state(20) == HPU_ROCE_QPS_ERR);
}

TEST_CASE("RoCE: a WRITE with immediate whose target faults completes its receive WQE in error",
          "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair();
    auto src = r.make_mr(4096), dst = r.make_mr(4096);
    Bytes d(256);
    const uint32_t idx = 40;
    // An MR whose device address is beyond the host's memory.
    put32(&d[HPU_ROCE_MR_KEY], idx << 8 | 1);
    put32(&d[HPU_ROCE_MR_PD], 1);
    put32(&d[HPU_ROCE_MR_ACCESS], 7);
    put64(&d[HPU_ROCE_MR_VA], 0x5000000000ull);
    put64(&d[HPU_ROCE_MR_LENGTH], 4096);
    put64(&d[HPU_ROCE_MR_DVA], host_addr(HOST_BASE + (1ull << 40)));
    REQUIRE(r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_MR, idx, d) == 0);
    r.post_recv(p.b, 1, { { dst.va, 64, dst.key } });
    r.post_send(p.a, HPU_ROCE_WR_RDMA_WRITE_WITH_IMM, 2, { { src.va, 64, src.key } },
                0x5000000000ull, idx << 8 | 1, 0x1234);
    r.pump();
    Cqe32 e = r.poll1(p.cb);
    CHECK(e.wr_id == 1u);
    CHECK(e.status == HPU_ROCE_WC_REM_ACCESS_ERR);
    CHECK(r.poll1(p.ca).status == HPU_ROCE_WC_REM_ACCESS_ERR);
    CHECK(r.qp_state(20) == HPU_ROCE_QPS_ERR);
}

TEST_CASE("RoCE: a UD datagram longer than the receive buffer completes LOC_LEN_ERR; "
          "the QP stays in RTS", "[emu][roce]")
{
    RoceRig r;
    auto u = ud_pair(r);
    auto src = r.make_mr(4096), dst = r.make_mr(4096);

    r.post_recv(u.b, 7, { { dst.va, 100, dst.key } });
    r.post_send(u.a, HPU_ROCE_WR_SEND, 8, { { src.va, 500, src.key } }, 0, 0, 0,
                HPU_ROCE_WQE_SIGNALED, u.av, 0x1234, 40);
    r.pump();
    Cqe32 e = r.poll1(u.cb);
    CHECK(e.wr_id == 7u);
    CHECK(e.status == HPU_ROCE_WC_LOC_LEN_ERR);
    CHECK(e.op == HPU_ROCE_WC_RECV);
    CHECK(r.qp_state(40) == HPU_ROCE_QPS_RTS);
    r.post_recv(u.b, 9, { { dst.va, 4096, dst.key } });
    r.post_send(u.a, HPU_ROCE_WR_SEND, 10, { { src.va, 500, src.key } }, 0, 0, 0,
                HPU_ROCE_WQE_SIGNALED, u.av, 0x1234, 40);
    r.pump();
    Cqe32 f = r.poll1(u.cb);
    CHECK(f.wr_id == 9u);
    CHECK(f.status == HPU_ROCE_WC_SUCCESS);
    CHECK(f.len == 540u);
}

TEST_CASE("RoCE: a message longer than 2^30 bytes completes LOC_LEN_ERR", "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair(1);
    Bytes d(256);
    const uint32_t idx = 40;
    uint64_t buf = r.halloc(4096, 64);
    put32(&d[HPU_ROCE_MR_KEY], idx << 8 | 1);
    put32(&d[HPU_ROCE_MR_PD], 1);
    put32(&d[HPU_ROCE_MR_ACCESS], 7);
    put64(&d[HPU_ROCE_MR_VA], 0x5000000000ull);
    put64(&d[HPU_ROCE_MR_LENGTH], 1ull << 32);
    put64(&d[HPU_ROCE_MR_DVA], host_addr(buf));
    REQUIRE(r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_MR, idx, d) == 0);
    r.loop = false;
    r.post_send(p.a, HPU_ROCE_WR_SEND, 1,
                { { 0x5000000000ull, (1u << 30) + 1, idx << 8 | 1 } });
    r.pump();
    Cqe32 e = r.poll1(p.ca);
    CHECK(e.wr_id == 1u);
    CHECK(e.status == HPU_ROCE_WC_LOC_LEN_ERR);
    CHECK(r.wire.empty());
    CHECK(r.qp_state(10) == HPU_ROCE_QPS_ERR);
}

TEST_CASE("RoCE: the trace event hpu_roce_cqe prints each argument under its own name",
          "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair();
    auto src = r.make_mr(4096), dst = r.make_mr(4096);

    r.post_recv(p.b, 1, { { dst.va, 4096, dst.key } });
    r.post_recv(p.b, 2, { { dst.va, 4096, dst.key } });
    r.post_send(p.a, HPU_ROCE_WR_SEND, 3, { { src.va, 100, src.key } });
    r.post_send(p.a, HPU_ROCE_WR_SEND, 4, { { src.va, 100, src.key } });
    r.pump();
    // The last CQE: the second SEND's (after the last ACK), CQ 1, QP 10,
    // status 0, ring entry 1.
    REQUIRE(r.poll1(p.cb).wr_id == 1u);
    REQUIRE(r.poll1(p.cb).wr_id == 2u);
    REQUIRE(r.poll1(p.ca).wr_id == 3u);
    REQUIRE(r.poll1(p.ca).wr_id == 4u);
    const uint64_t *a = r.env.trace_args[HPU_TRACE_ROCE_CQE];

    // QEMU prints the format of emu/trace-events with the call's arguments
    // in the prototype's order: each value must follow its own word.
    std::ifstream in(HPU_EMU_DIR "/trace-events");
    std::string line, fmt;
    while (std::getline(in, line)) {
        if (line.rfind("hpu_roce_cqe(", 0) == 0) {
            size_t q = line.find('"');
            fmt = line.substr(q + 1, line.rfind('"') - q - 1);
        }
    }
    REQUIRE_FALSE(fmt.empty());
    std::string out;
    unsigned int k = 0;
    for (size_t i = 0; i < fmt.size(); i++) {
        if (fmt.compare(i, 2, "%u") == 0 && k < 4) {
            out += std::to_string(a[k++]);
            i++;
        } else {
            out += fmt[i];
        }
    }
    CHECK(k == 4);
    CHECK(out == "ROCE CQ 1 QP 10 status 0 entry 1");
}

TEST_CASE("RoCE: a frame longer than a pool buffer is taken at its own size and freed; "
          "the port drops one longer than its MTU allows", "[emu][roce]")
{
    RoceRig r;
    auto p = r.pair();
    auto src = r.make_mr(4096), dst = r.make_mr(4096);
    Bytes data = pattern(700, 9);
    r.hwrite(src.bus, data.data(), data.size());

    // A SEND_ONLY to QP 20, kept off the wire.
    r.loop = false;
    r.post_send(p.a, HPU_ROCE_WR_SEND, 1, { { src.va, 700, src.key } });
    r.pump();
    REQUIRE(r.wire.size() == 1);
    REQUIRE(r.wire[0].op() == OP_SEND_ONLY);
    r.loop = true;
    // Padded past HPU_ROCE_FRAME_MAX (the IP length still ends the packet).
    Bytes big = r.wire[0].f;
    big.resize(HPU_ROCE_FRAME_MAX + 100, 0);

    // From the wire it is longer than any MTU lets in: the port drops and
    // counts it, the engine never sees it.
    const uint32_t errs = HPU_NIC_PORT_BASE(1) + HPU_NIC_CNT_LO(HPU_NIC_CNT_RX_ERRORS);
    const uint32_t before = r.rd(errs);
    CHECK(r.inject(1, big));
    r.pump();
    CHECK(r.rd(errs) == before + 1);
    CHECK(r.counter(1, HPU_ROCE_CNT_RX_PKTS) == 0);

    // Steered to the engine as the port would hand it: queued in a buffer of
    // its own size (not the pool's), received, and freed (ASan's leak check).
    r.post_recv(p.b, 0xb, { { dst.va, 4096, dst.key } });
    r.core.ops->lock(r.core.opaque);
    const int got = hpum_roce_rx_steer(&r.core, 1, big.data(), big.size());
    r.core.ops->unlock(r.core.opaque);
    CHECK(got == HPU_ROCE_RX_TAKEN);
    r.pump();
    Cqe32 v = r.poll1(p.cb);
    CHECK(v.wr_id == 0xbu);
    CHECK(v.status == HPU_ROCE_WC_SUCCESS);
    CHECK(v.len == 700u);
    CHECK(host_bytes(r, dst.bus, 700) == data);
    CHECK(r.counter(1, HPU_ROCE_CNT_RX_PKTS) == 1);
    CHECK(r.poll1(p.ca).status == HPU_ROCE_WC_SUCCESS);  // the ACK came back
    CHECK(r.env.errors.empty());
}

TEST_CASE("RoCE: QPs spread over the words of the QP bitmap all make progress, "
          "round robin", "[emu][roce]")
{
    RoceRig r;
    const std::vector<uint32_t> an = { 5, 64, 130, 4095 };     // port 0
    const std::vector<uint32_t> bn = { 63, 65, 2048, 4094 };   // port 1, their peers
    const uint32_t len = 96 * 1024;     // 96 packets at MTU 1024: beyond a run's budget
    auto ca = r.make_cq(1);
    r.make_cq(2);                       // the responders' (WRITEs complete nothing there)
    std::vector<RoceRig::Qp> a, b;
    for (size_t i = 0; i < an.size(); i++) {
        a.push_back(r.make_qp(an[i], 0, 1));
        b.push_back(r.make_qp(bn[i], 1, 2));
    }
    for (size_t i = 0; i < an.size(); i++) {
        r.connect_rc(a[i], 0, bn[i], 3);
        r.connect_rc(b[i], 1, an[i], 3);
    }
    auto local = r.make_mr(len), remote = r.make_mr(an.size() * len);
    Bytes data = pattern(len, 6);
    r.hwrite(local.bus, data.data(), len);
    r.wire.clear();
    for (size_t i = 0; i < an.size(); i++) {
        r.post_send(a[i], HPU_ROCE_WR_RDMA_WRITE, 100 + i, { { local.va, len, local.key } },
                    remote.va + i * len, remote.key);
    }
    r.pump();

    // Every WRITE completed and landed.
    std::vector<uint64_t> ids;
    for (size_t i = 0; i < an.size(); i++) {
        Cqe32 e = r.poll1(ca);
        CHECK(e.status == HPU_ROCE_WC_SUCCESS);
        ids.push_back(e.wr_id);
        CHECK(host_bytes(r, remote.bus + i * len, len) == data);
    }
    std::sort(ids.begin(), ids.end());
    CHECK(ids == std::vector<uint64_t>{ 100, 101, 102, 103 });
    // Round robin: each QP sent its first packet before any sent its last
    // (none waited for another's whole message).
    size_t first_last = r.wire.size();
    std::vector<size_t> first(an.size(), r.wire.size());
    std::vector<size_t> last(an.size(), 0);
    for (size_t k = 0; k < r.wire.size(); k++) {
        const Pkt &pk = r.wire[k];
        if (pk.port != 0 || pk.op() == OP_ACK) {
            continue;
        }
        for (size_t i = 0; i < bn.size(); i++) {
            if (pk.dqpn() == bn[i]) {
                first[i] = std::min(first[i], k);
                last[i] = k;
            }
        }
    }
    for (size_t i = 0; i < an.size(); i++) {
        INFO("QP " << an[i]);
        REQUIRE(first[i] < r.wire.size());
        first_last = std::min(first_last, last[i]);
    }
    for (size_t i = 0; i < an.size(); i++) {
        INFO("QP " << an[i]);
        CHECK(first[i] < first_last);
    }
    CHECK(r.env.errors.empty());
}

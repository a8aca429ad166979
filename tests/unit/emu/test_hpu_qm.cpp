// SPDX-License-Identifier: MIT
//
// Unit tests of the queue managers, DMA engines, packets, sync objects and
// the event queue (emu/hpu_qm.c) against
// Documentation/hw/memory-and-queues.md.  Engines are stepped
// synchronously.
//
// Copyright (c) 2026 The hpu authors

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <algorithm>

#include "hpu_rig.hpp"

using namespace hpu_test;

TEST_CASE("LIN_DMA host -> HBM -> HBM -> host, byte for byte", "[emu][dma]")
{
    Rig r;
    const uint64_t n = GENERATE(1ULL, 7ULL, 4097ULL, MiB + 13, 3 * MiB + 4095);
    const uint64_t soff = GENERATE(0ULL, 5ULL);
    auto data = pattern_bytes(n, static_cast<uint32_t>(n));
    uint64_t src = r.halloc(n + 64, PG) + soff;
    uint64_t dst = r.halloc(n + 64, PG) + 3;
    r.hwrite(src, data.data(), n);

    Cb cb;
    cb.lin_dma(host_addr(src), 20 * MiB + 1, n)
      .lin_dma(20 * MiB + 1, 60 * MiB + 4093, n)
      .lin_dma(60 * MiB + 4093, host_addr(dst), n);
    Cqe e = r.run_cb(cb);
    CHECK(e.status == HPU_CQ_OK);
    CHECK(e.offset == 0);
    CHECK(std::memcmp(r.hp(dst), data.data(), n) == 0);
    CHECK((r.bread(60 * MiB + 4093, n) == data));
    CHECK(r.hp(dst)[-1] == 0);
    CHECK(r.hp(dst)[n] == 0);
    CHECK(r.env.errors.empty());
}

TEST_CASE("LIN_DMA in a user context over scattered host pages", "[emu][dma]")
{
    Rig r;
    const unsigned int A = 9;
    const uint64_t n = 5 * PG + 123;
    auto data = pattern_bytes(n, 3);
    uint64_t sbus = r.halloc(n, PG), dbus = r.halloc(n + 2 * PG, PG) + 77;
    r.hwrite(sbus, data.data(), n);
    uint64_t sva = r.map_host(A, sbus, n, false);
    uint64_t dva = r.map_host(A, dbus, n);
    uint64_t hva = r.map_hbm(A, 40 * MiB, 4 * MiB);

    Cb cb;
    cb.lin_dma(sva, hva + 2 * MiB - 1000, n)
      .lin_dma(hva + 2 * MiB - 1000, hva + 17, n)
      .lin_dma(hva + 17, dva, n);
    CHECK(r.run_cb(cb, A).status == HPU_CQ_OK);
    CHECK(std::memcmp(r.hp(dbus), data.data(), n) == 0);
}

TEST_CASE("LIN_DMA MEMSET writes the 64-bit pattern", "[emu][dma]")
{
    Rig r;
    const uint64_t pat = 0x0807060504030201ULL;
    const uint64_t n = GENERATE(1ULL, 13ULL, MiB + 3);
    uint64_t dst = r.halloc(n + 16, PG) + 5;

    Cb cb;
    cb.memset(pat, host_addr(dst), n).memset(pat, 8 * MiB + 3, n);
    CHECK(r.run_cb(cb).status == HPU_CQ_OK);
    auto hbm = r.bread(8 * MiB + 3, n);
    for (uint64_t i = 0; i < n; i++) {
        if (r.hp(dst)[i] != static_cast<uint8_t>(i % 8 + 1) ||
            hbm[i] != static_cast<uint8_t>(i % 8 + 1)) {
            FAIL("byte " << i);
        }
    }
    CHECK(r.hp(dst)[n] == 0);
    CHECK(r.hp(dst)[-1] == 0);
}

TEST_CASE("LIN_DMA with overlapping ranges copies as through a temporary",
          "[emu][dma]")
{
    Rig r;
    const uint64_t n = 3 * MiB + 5;
    const int64_t delta = GENERATE(int64_t{1000}, int64_t{-1000},
                                   int64_t{MiB + 1}, -int64_t{MiB + 1}, 0);
    auto data = pattern_bytes(n + 2 * MiB + 2, 11);
    const uint64_t base = 16 * MiB;
    r.bwrite(base, data.data(), data.size());

    uint64_t src = base + MiB + 1, dst = src + delta;
    CHECK(r.run_cb(Cb().lin_dma(src, dst, n)).status == HPU_CQ_OK);
    std::vector<uint8_t> want = data;
    std::memmove(want.data() + (dst - base), data.data() + (src - base), n);
    CHECK((r.bread(base, data.size()) == want));

    // the same in host memory
    uint64_t hb = r.halloc(data.size(), PG);
    r.hwrite(hb, data.data(), data.size());
    uint64_t hs = hb + MiB + 1;
    CHECK(r.run_cb(Cb().lin_dma(host_addr(hs), host_addr(hs + delta), n))
              .status == HPU_CQ_OK);
    CHECK(std::memcmp(r.hp(hb), want.data(), want.size()) == 0);
}

TEST_CASE("WRITE_VALUE writes 32 bits to host or HBM", "[emu][packet]")
{
    Rig r;
    uint64_t h = r.halloc(16);

    Cb cb;
    cb.write_value(host_addr(h + 4), 0xcafef00d).write_value(100, 0x12345678);
    CHECK(r.run_cb(cb).status == HPU_CQ_OK);
    CHECK(r.hrd32(h + 4) == 0xcafef00du);
    CHECK(r.hrd32(h) == 0u);
    CHECK(r.hrd32(h + 8) == 0u);
    CHECK(r.bread64(96) == 0x1234567800000000ULL);
}

TEST_CASE("A submission passes the doorbell, fetch, packet and completion "
          "trace points", "[emu][trace]")
{
    Rig r;
    uint64_t h = r.halloc(16);
    unsigned int before[HPU_TRACE_COUNT];

    std::copy(std::begin(r.env.traces), std::end(r.env.traces), before);
    Cb cb;
    cb.write_value(host_addr(h), 1).nop();
    CHECK(r.run_cb(cb).status == HPU_CQ_OK);
    CHECK(r.env.traces[HPU_TRACE_DOORBELL] > before[HPU_TRACE_DOORBELL]);
    CHECK(r.env.traces[HPU_TRACE_DESC_FETCH] ==
          before[HPU_TRACE_DESC_FETCH] + 1);
    CHECK(r.env.traces[HPU_TRACE_PACKET] == before[HPU_TRACE_PACKET] + 2);
    CHECK(r.env.traces[HPU_TRACE_COMPLETION] ==
          before[HPU_TRACE_COMPLETION] + 1);
    CHECK(r.env.traces[HPU_TRACE_MMU_FAULT] == before[HPU_TRACE_MMU_FAULT]);
}

TEST_CASE("SOB_UPDATE and WAIT: one stream releases another", "[emu][sync]")
{
    Rig r;
    uint64_t h = r.halloc(16);
    const unsigned int A = GENERATE(0u, 4u);
    const uint32_t dev_sob = A ? 32 * A + 7 : 7;

    r.setup_stream(2, 0);
    r.setup_stream(2, 1);
    uint64_t hva = A ? r.map_host(A, h, 16) : host_addr(h);
    r.submit(2, 0, Cb().wait(7, 3, HPU_WAIT_GE).write_value(hva, 1), A);
    r.run();
    CHECK(r.status(2, 0) == HPU_QS_STATUS_WAITING);
    CHECK(r.cq_pi(2, 0) == 0u);
    // the other stream runs while this one waits
    r.submit(2, 1, Cb().sob_update(7, 2, HPU_SOB_OP_SET), A);
    r.run();
    CHECK(r.cq_pi(2, 1) == 1u);
    CHECK(r.rd(HPU_REG_SOB(dev_sob)) == 2u);
    CHECK(r.status(2, 0) == HPU_QS_STATUS_WAITING);
    CHECK(r.hrd32(h) == 0u);
    r.env.kicks[2] = 0;
    r.submit(2, 1, Cb().sob_update(7, 1, HPU_SOB_OP_ADD), A);
    CHECK(r.env.kicks[2] == 1u);            // doorbell
    r.run();
    CHECK(r.env.kicks[2] >= 2u);            // the SOB change woke the engine
    CHECK(r.rd(HPU_REG_SOB(dev_sob)) == 3u);
    CHECK(r.cq_pi(2, 0) == 1u);
    CHECK(r.cqe(2, 0, 0).status == HPU_CQ_OK);
    CHECK(r.status(2, 0) == HPU_QS_STATUS_IDLE);
    CHECK(r.hrd32(h) == 1u);
}

TEST_CASE("WAIT EQ, ADD wrapping, and the host releasing a WAIT", "[emu][sync]")
{
    Rig r;

    r.wr(HPU_REG_SOB(100), 0xffffffffu);
    CHECK(r.run_cb(Cb().sob_update(100, 2, HPU_SOB_OP_ADD)).status == HPU_CQ_OK);
    CHECK(r.rd(HPU_REG_SOB(100)) == 1u);
    r.setup_stream(1, 3);
    r.submit(1, 3, Cb().wait(100, 5, HPU_WAIT_EQ));
    r.run();
    r.wr(HPU_REG_SOB(100), 6);
    r.run();
    CHECK(r.status(1, 3) == HPU_QS_STATUS_WAITING);
    r.wr(HPU_REG_SOB(100), 5);
    r.run();
    CHECK(r.cq_pi(1, 3) == 1u);
    CHECK(r.cqe(1, 3, 0).status == HPU_CQ_OK);
}

TEST_CASE("WREG is privileged", "[emu][packet]")
{
    Rig r;
    r.setup_eq();

    CHECK(r.run_cb(Cb().wreg(HPU_REG_SCRATCH, 0x5a5a)).status == HPU_CQ_OK);
    CHECK(r.rd(HPU_REG_SCRATCH) == 0x5a5au);
    Cb cb;
    cb.nop().wreg(HPU_REG_SCRATCH, 1);
    Cqe e = r.run_cb(cb, 3);
    CHECK(e.status == HPU_CQ_PRIV);
    CHECK(e.offset == 8);
    CHECK(r.rd(HPU_REG_SCRATCH) == 0x5a5au);
    REQUIRE(r.rd(HPU_REG_EQ_PI) == 1u);
    CHECK(r.eqe(0).id == HPU_EVENT_PRIV);
    CHECK(r.eqe(0).asid == 3);
    CHECK(r.eqe(0).info == 8u);
}

TEST_CASE("BAD_PACKET cases", "[emu][packet]")
{
    Rig r;
    r.setup_eq();
    unsigned int asid = 0;
    Cb cb;
    cb.sob_update(9, 1, HPU_SOB_OP_SET);      // takes effect before the failure

    SECTION("unknown opcode") { cb.raw(0x06, 0); }
    SECTION("header bits 31:8") { cb.raw(HPU_PKT_NOP | 0x100, 0); }
    SECTION("runs past cb_size") { cb.raw(HPU_PKT_LIN_DMA, 0); }
    SECTION("NOP reserved") { cb.nop(1); }
    SECTION("LIN_DMA flags") { cb.lin_dma(0, 0, 8, 2); }
    SECTION("LIN_DMA size 0") { cb.lin_dma(0, 8, 0); }
    SECTION("LIN_DMA size above 4 GiB") { cb.lin_dma(0, 8, (1ULL << 32) + 1); }
    SECTION("LIN_DMA wraps") { cb.lin_dma(0, ~0ULL - 4, 16); }
    SECTION("WRITE_VALUE unaligned") { cb.write_value(2, 1); }
    SECTION("SOB out of range, kernel") { cb.sob_update(2048, 1, 0); }
    SECTION("SOB out of range, user") {
        asid = 2;
        cb.clear();
        cb.sob_update(9, 1, 0);
        cb.wait(32, 1, 0);
    }
    SECTION("SOB_UPDATE op") { cb.sob_update(1, 1, 2); }
    SECTION("WAIT cond") { cb.wait(1, 1, 3); }  // 2 is GE_WRAP (version 9)
    SECTION("WREG offset") { cb.wreg(HPU_BAR_REGS_SIZE, 1); }
    SECTION("WREG reserved") { cb.wreg(HPU_REG_SCRATCH, 1, 1); }

    uint32_t sob = asid ? 32 * asid + 9 : 9;
    Cqe e = r.run_cb(cb, asid);
    CHECK(e.status == HPU_CQ_BAD_PACKET);
    CHECK(e.offset == 16);
    CHECK(r.rd(HPU_REG_SOB(sob)) == 1u);
    REQUIRE(r.rd(HPU_REG_EQ_PI) == 1u);
    CHECK(r.eqe(0).id == HPU_EVENT_BAD_PACKET);
    CHECK(r.eqe(0).info == 16u);
    CHECK(r.env.errors.size() == 1);
}

TEST_CASE("BAD_DESC: malformed descriptors do not run", "[emu][desc]")
{
    Rig r;
    r.setup_stream(0, 0);
    uint64_t cb = r.place_cb(Cb().sob_update(1, 1, 0), 0);

    r.put_desc(0, 0, cb + 4, 16, 0, 1);             // unaligned
    r.put_desc(0, 0, cb, 12, 0, 2);                 // size not multiple of 8
    r.put_desc(0, 0, cb, 0, 0, 3);                  // empty
    r.put_desc(0, 0, cb, HPU_CB_MAX_SIZE + 8, 0, 4);
    r.put_desc(0, 0, cb, 16, 0, 5, 1);              // flags
    r.put_desc(0, 0, cb, 16, 0, 6, 0, 1);           // reserved
    r.put_desc(0, 0, cb, 16, 0, 7);                 // good
    r.ring(0, 0);
    r.run();
    REQUIRE(r.cq_pi(0, 0) == 7u);
    for (uint32_t i = 0; i < 6; i++) {
        CHECK(r.cqe(0, 0, i).status == HPU_CQ_BAD_DESC);
        CHECK(r.cqe(0, 0, i).seq == i + 1);
    }
    CHECK(r.cqe(0, 0, 6).status == HPU_CQ_OK);
    CHECK(r.rd(HPU_REG_SOB(1)) == 1u);
    CHECK(r.rd(r.qreg(0, 0, HPU_QS_CI)) == 7u);
}

TEST_CASE("BUS_ERROR: unreachable host memory and HBM beyond its size",
          "[emu][dma]")
{
    Rig r;

    CHECK(r.run_cb(Cb().write_value(host_addr(0x100), 1)).status ==
          HPU_CQ_BUS_ERROR);
    CHECK(r.run_cb(Cb().write_value(256 * MiB, 1)).status == HPU_CQ_BUS_ERROR);
    CHECK(r.run_cb(Cb().lin_dma(256 * MiB - 8, 0, 16)).status ==
          HPU_CQ_BUS_ERROR);
    // a descriptor in unreachable memory
    r.wr(r.qreg(0, 0, HPU_QS_CTRL), 0);
    r.wr(r.qreg(0, 0, HPU_QS_RING_LO), 0x40);
    r.wr(r.qreg(0, 0, HPU_QS_CTRL), HPU_QS_CTRL_ENABLE);
    r.wr(r.qreg(0, 0, HPU_QS_PI), 1);
    r.run();
    CHECK(r.cqe(0, 0, 0).status == HPU_CQ_BUS_ERROR);
    CHECK(r.rd(HPU_REG_FAULT_COUNT) == 0u);
}

TEST_CASE("a bad configuration halts the stream", "[emu][qm]")
{
    Rig r;
    r.setup_stream(4, 2);
    r.wr(r.qreg(4, 2, HPU_QS_CTRL), 0);
    uint32_t reg = 0, val = 0;

    SECTION("ring 0") { reg = HPU_QS_RING_LO; val = 0; }
    SECTION("ring unaligned") { reg = HPU_QS_RING_LO; val = 0x10000020; }
    SECTION("ring size 3") { reg = HPU_QS_RING_SIZE; val = 3; }
    SECTION("ring size 8192") { reg = HPU_QS_RING_SIZE; val = 8192; }
    SECTION("cq unaligned") { reg = HPU_QS_CQ_LO; val = 0x10000008; }
    SECTION("cq size 1") { reg = HPU_QS_CQ_SIZE; val = 1; }
    r.wr(HPU_REG_QM_STREAM(4, 2) + reg, val);
    r.wr(r.qreg(4, 2, HPU_QS_CTRL), HPU_QS_CTRL_ENABLE);
    CHECK(r.status(4, 2) == (HPU_QS_STATUS_HALTED | HPU_QS_STATUS_IDLE));
    CHECK(r.env.errors.size() == 1);
    r.wr(r.qreg(4, 2, HPU_QS_PI), 1);
    CHECK_FALSE(hpum_core_engine_step(&r.core, 4));
    r.wr(r.qreg(4, 2, HPU_QS_CTRL), 0);
    CHECK(r.status(4, 2) == HPU_QS_STATUS_IDLE);
}

TEST_CASE("queue registers", "[emu][qm]")
{
    Rig r;
    r.setup_stream(7, 3, 4);

    // ring registers are frozen while enabled
    r.wr(r.qreg(7, 3, HPU_QS_RING_SIZE), 8);
    CHECK(r.rd(r.qreg(7, 3, HPU_QS_RING_SIZE)) == 4u);
    CHECK(r.env.errors.size() == 1);
    // read-only ones
    for (uint32_t reg : { HPU_QS_CI, HPU_QS_CQ_PI, HPU_QS_STATUS }) {
        r.wr(HPU_REG_ERROR, ~0u);
        r.wr(r.qreg(7, 3, reg), 5);
        CHECK(r.error() == HPU_ERROR_BAD_ACCESS);
    }
    // a doorbell more than RING_SIZE ahead is ignored
    r.wr(r.qreg(7, 3, HPU_QS_PI), 5);
    CHECK(r.rd(r.qreg(7, 3, HPU_QS_PI)) == 0u);
    CHECK(r.status(7, 3) == HPU_QS_STATUS_IDLE);
    CHECK(r.rd(r.qreg(7, 3, HPU_QS_CTRL)) ==
          (HPU_QS_CTRL_ENABLE | HPU_QS_CTRL_IRQ_EN));
    r.wr(r.qreg(7, 3, HPU_QS_CTRL), ~0u);
    CHECK(r.rd(r.qreg(7, 3, HPU_QS_CTRL)) ==
          (HPU_QS_CTRL_ENABLE | HPU_QS_CTRL_IRQ_EN));
}

TEST_CASE("completion records, CQ_PI, CI and the engine vector", "[emu][qm]")
{
    Rig r;
    const bool irq = GENERATE(true, false);
    r.setup_stream(5, 1, 2, irq);

    for (uint32_t i = 0; i < 5; i++) {
        r.submit(5, 1, Cb().nop(), 0, 100 + i);
        r.run();
        CHECK(r.cq_pi(5, 1) == i + 1);
        CHECK(r.rd(r.qreg(5, 1, HPU_QS_CI)) == i + 1);
        Cqe e = r.cqe(5, 1, i);               // ring of 2: wraps
        CHECK(e.seq == 100 + i);
        CHECK(e.status == HPU_CQ_OK);
        CHECK(e.engine == 5);
        CHECK(e.stream == 1);
    }
    if (irq) {
        CHECK(r.env.vectors == std::vector<unsigned int>(5, HPU_VEC_DMA(5)));
    } else {
        CHECK(r.env.vectors.empty());
    }
}

TEST_CASE("streams of an engine take turns at packet boundaries", "[emu][qm]")
{
    Rig r;
    r.setup_stream(0, 0);
    r.setup_stream(0, 1);
    uint64_t h = r.halloc(64);
    // each stream appends its id to a log through SOB 0 as a counter
    Cb a, b;
    for (int i = 0; i < 3; i++) {
        a.sob_update(0, 1, HPU_SOB_OP_ADD).wait(0, 2 * i + 1, HPU_WAIT_GE);
        b.wait(0, 2 * i + 1, HPU_WAIT_GE).sob_update(0, 1, HPU_SOB_OP_ADD);
    }
    a.write_value(host_addr(h), 0xa);
    b.write_value(host_addr(h + 4), 0xb);
    r.submit(0, 0, a);
    r.submit(0, 1, b);
    r.run();
    CHECK(r.rd(HPU_REG_SOB(0)) == 6u);
    CHECK(r.cq_pi(0, 0) == 1u);
    CHECK(r.cq_pi(0, 1) == 1u);
    CHECK(r.hrd32(h) == 0xau);
    CHECK(r.hrd32(h + 4) == 0xbu);
}

TEST_CASE("event queue: entries, PI/CI and DROPPED", "[emu][eq]")
{
    Rig r;

    // disabled: counted as dropped
    CHECK(r.run_cb(Cb().raw(0x77, 0)).status == HPU_CQ_BAD_PACKET);
    CHECK(r.rd(HPU_REG_EQ_DROPPED) == 1u);
    // bad configuration: stays disabled
    r.wr(HPU_REG_EQ_SIZE, 3);
    r.wr(HPU_REG_EQ_LO, 0x10000000);
    r.wr(HPU_REG_EQ_CTRL, HPU_EQ_ENABLE);
    CHECK(r.rd(HPU_REG_EQ_CTRL) == 0u);

    r.setup_eq(2);
    r.env.vectors.clear();
    r.env.now = 4242;
    for (int i = 0; i < 3; i++) {
        CHECK(r.run_cb(Cb().nop().raw(0x77, 0)).status == HPU_CQ_BAD_PACKET);
    }
    CHECK(r.rd(HPU_REG_EQ_PI) == 2u);
    CHECK(r.rd(HPU_REG_EQ_DROPPED) == 2u);
    Eqe e = r.eqe(0);
    CHECK(e.id == HPU_EVENT_BAD_PACKET);
    CHECK(e.severity == HPU_EVENT_SEV_ERROR);
    CHECK(e.engine == 0);
    CHECK(e.asid == 0);
    CHECK(e.timestamp == 4242u);
    CHECK(e.info == 8u);
    CHECK((e.addr & HPU_ADDR_HOST) != 0);
    CHECK(std::count(r.env.vectors.begin(), r.env.vectors.end(),
                     unsigned{HPU_VEC_EQ}) == 2);
    // consuming one makes room for one
    r.wr(HPU_REG_EQ_CI, 1);
    CHECK(r.run_cb(Cb().raw(0x77, 0)).status == HPU_CQ_BAD_PACKET);
    CHECK(r.rd(HPU_REG_EQ_PI) == 3u);
    CHECK(r.rd(HPU_REG_EQ_DROPPED) == 2u);
    CHECK(r.eqe(2).info == 0u);
    // ring registers frozen while enabled
    r.wr(HPU_REG_EQ_SIZE, 64);
    CHECK(r.rd(HPU_REG_EQ_SIZE) == 2u);
}

TEST_CASE("disabling a stream aborts its descriptor", "[emu][qm]")
{
    Rig r;
    r.setup_stream(3, 0);

    r.submit(3, 0, Cb().wait(5, 1, HPU_WAIT_GE));
    r.submit(3, 0, Cb().nop());
    r.run();
    REQUIRE(r.status(3, 0) == HPU_QS_STATUS_WAITING);
    r.wr(r.qreg(3, 0, HPU_QS_CTRL), HPU_QS_CTRL_IRQ_EN);
    CHECK(r.status(3, 0) == HPU_QS_STATUS_WAITING);   // not yet written
    r.run();
    CHECK(r.status(3, 0) == HPU_QS_STATUS_IDLE);
    CHECK(r.cq_pi(3, 0) == 1u);
    CHECK(r.cqe(3, 0, 0).status == HPU_CQ_ABORTED);
    CHECK(r.rd(r.qreg(3, 0, HPU_QS_PI)) == 2u);       // later one left
    // enabling again resets the indices
    r.wr(r.qreg(3, 0, HPU_QS_CTRL), HPU_QS_CTRL_ENABLE);
    CHECK(r.rd(r.qreg(3, 0, HPU_QS_PI)) == 0u);
    CHECK(r.rd(r.qreg(3, 0, HPU_QS_CI)) == 0u);
    CHECK(r.cq_pi(3, 0) == 0u);
}

TEST_CASE("soft reset aborts in-flight work and clears engine state",
          "[emu][reset][qm]")
{
    Rig r;
    r.setup_eq();
    r.setup_stream(0, 0);
    r.setup_stream(6, 1);

    r.submit(0, 0, Cb().wait(1, 1, HPU_WAIT_GE));
    r.submit(6, 1, Cb().nop().nop().nop());
    hpum_core_engine_step(&r.core, 0);
    hpum_core_engine_step(&r.core, 0);
    hpum_core_engine_step(&r.core, 6);               // fetched, not run
    r.wr(HPU_REG_SOB(3), 9);
    r.wr(HPU_REG_FAULT_INFO, 0);
    r.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    CHECK(r.env.kicks[0] >= 1u);
    CHECK(r.env.kicks[6] >= 1u);
    // the timer finds the engines still busy: it waits longer
    r.fire_timer();
    CHECK(r.rd(HPU_REG_STATUS) == HPU_STATUS_RESET_BUSY);
    r.run();
    CHECK(r.cqe(0, 0, 0).status == HPU_CQ_ABORTED);
    CHECK(r.cqe(6, 1, 0).status == HPU_CQ_ABORTED);
    CHECK(r.cqe(6, 1, 0).offset == 0);
    r.fire_timer();
    CHECK(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK(r.rd(HPU_REG_SOB(3)) == 0u);
    CHECK(r.rd(r.qreg(0, 0, HPU_QS_CTRL)) == 0u);
    CHECK(r.rd(r.qreg(0, 0, HPU_QS_RING_LO)) == 0u);
    CHECK(r.rd(r.qreg(0, 0, HPU_QS_CQ_PI)) == 0u);
    CHECK(r.status(0, 0) == HPU_QS_STATUS_IDLE);
    CHECK(r.rd(HPU_REG_EQ_CTRL) == 0u);
    CHECK(r.rd(HPU_REG_EQ_LO) == 0u);
    // roots survive
    CHECK(r.rd(HPU_REG_MMU_ROOT_LO(0)) == 0u);
}

TEST_CASE("soft reset keeps page-table roots, the window and HBM",
          "[emu][reset][mmu]")
{
    Rig r;
    r.set_root(7);
    r.wr(HPU_REG_HBM_WIN_BASE_LO, 0x4000000);
    r.bwrite64(100 * MiB, 0x1234);
    r.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    r.fire_timer();
    CHECK(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK(r.rd(HPU_REG_MMU_ROOT_LO(7)) ==
          (static_cast<uint32_t>(r.roots[7]) | HPU_MMU_ROOT_VALID));
    CHECK(r.rd(HPU_REG_HBM_WIN_BASE_LO) == 0x4000000u);
    CHECK(r.bread64(100 * MiB) == 0x1234u);
}

TEST_CASE("no new work is taken during a soft reset", "[emu][reset][qm]")
{
    Rig r;
    r.setup_stream(0, 0);
    r.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    r.submit(0, 0, Cb().sob_update(1, 1, 0));
    CHECK_FALSE(hpum_core_engine_ready(&r.core, 0));
    r.run();
    CHECK(r.rd(HPU_REG_SOB(1)) == 0u);
    r.fire_timer();
    CHECK(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
}

TEST_CASE("power-on reset drops engine state", "[emu][reset][qm]")
{
    Rig r;
    r.setup_stream(0, 0);
    r.submit(0, 0, Cb().wait(1, 1, HPU_WAIT_GE));
    r.run();
    hpum_core_reset(&r.core);
    CHECK_FALSE(hpum_core_engine_ready(&r.core, 0));
    CHECK(r.status(0, 0) == HPU_QS_STATUS_IDLE);
    CHECK(r.cq_pi(0, 0) == 0u);
}

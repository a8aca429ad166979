// SPDX-License-Identifier: MIT
//
// Unit tests of the compute engines' plumbing (spec version 6,
// Documentation/hw/compute.md): engine indexes and classes, queue managers
// of engines 8-10, vectors, packets refused on the wrong class, the TPC
// placeholder, BUSY_NS and fault injection for engines 8-10, the
// watchdog's progress per output tile, and an MME GEMM stopped by an MMU
// fault, a stream disable, the watchdog, a soft, a hard and a power-on
// reset.
//
// Copyright (c) 2026 The hpu authors

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "hpu_mme_rig.hpp"

using namespace hpu_test;

namespace {

constexpr uint64_t MS = 1000000;
constexpr unsigned MME0 = HPU_ENGINE_MME0;
constexpr unsigned MME1 = HPU_ENGINE_MME(1);
constexpr unsigned TPC = HPU_ENGINE_TPC;

std::vector<Eqe> events(Rig &r)
{
    std::vector<Eqe> v;
    for (uint32_t i = 0; i < r.rd(HPU_REG_EQ_PI); i++) {
        v.push_back(r.eqe(i));
    }
    return v;
}

uint64_t busy(Rig &r, unsigned e)
{
    uint64_t lo = r.rd(HPU_REG_BUSY_NS_LO(e));
    return lo | static_cast<uint64_t>(r.rd(HPU_REG_BUSY_NS_HI(e))) << 32;
}

// An FP32 GEMM of @m x @n x @k with every operand in host memory (bus
// addresses, ASID 0), D filled with 0xee; A = 1, B = 1 so D = K.
struct HostGemm {
    Gemm g;
    uint64_t d_bus = 0, desc = 0;

    HostGemm(Rig &r, uint32_t m, uint32_t n, uint32_t k)
    {
        g.m = m;
        g.n = n;
        g.k = k;
        g.lda = k;
        g.ldb = n;
        g.ldd = n;
        uint64_t a = r.halloc(4ULL * m * k), b = r.halloc(4ULL * k * n);
        d_bus = r.halloc(4ULL * m * n);
        std::vector<float> ones(std::max<size_t>(static_cast<size_t>(m) * k,
                                                 static_cast<size_t>(k) * n), 1.0f);
        r.hwrite(a, ones.data(), 4ULL * m * k);
        r.hwrite(b, ones.data(), 4ULL * k * n);
        std::memset(r.hp(d_bus), 0xee, 4ULL * m * n);
        g.a = host_addr(a);
        g.b = host_addr(b);
        g.d = host_addr(d_bus);
        desc = r.halloc(HPU_MME_DESC_SIZE, 64);
        auto db = g.bytes();
        r.hwrite(desc, db.data(), db.size());
        desc = host_addr(desc);
    }
    float d(Rig &r, uint32_t i, uint32_t j) const
    {
        float f;
        std::memcpy(&f, r.hp(d_bus + 4ULL * (static_cast<uint64_t>(i) * g.n + j)), 4);
        return f;
    }
    // Rows [r0, r1) of D are all K (written) or all untouched.
    bool rows_are(Rig &r, uint32_t r0, uint32_t r1, bool written) const
    {
        for (uint32_t i = r0; i < r1; i++) {
            for (uint32_t j = 0; j < g.n; j++) {
                float v = d(r, i, j);
                if (written ? v != static_cast<float>(g.k)
                            : f32_bits(v) != 0xeeeeeeeeu) {
                    return false;
                }
            }
        }
        return true;
    }
};

} // namespace

TEST_CASE("spec version 6: SPEC_VERSION, ENGINES, eleven queue managers", "[emu][compute]")
{
    Rig r;
    CHECK(r.rd(HPU_REG_SPEC_VERSION) == 10u);
    CHECK(r.rd(HPU_REG_ENGINES) == (8u | 8u << 8 | 2u << 16 | 10u << 24));
    for (unsigned e = 0; e < HPU_NUM_ENGINES; e++) {
        CAPTURE(e);
        for (unsigned s = 0; s < HPU_QM_STREAMS; s++) {
            r.wr(HPU_REG_QM_STREAM(e, s) + HPU_QS_RING_SIZE, 16 + e * 4 + s);
            CHECK(r.rd(HPU_REG_QM_STREAM(e, s) + HPU_QS_RING_SIZE) == 16 + e * 4 + s);
            CHECK(r.rd(HPU_REG_QM_STREAM(e, s) + HPU_QS_STATUS) == HPU_QS_STATUS_IDLE);
        }
    }
    CHECK(r.error() == 0u);
    CHECK(HPU_REG_QM_STREAM(TPC, 0) == 0x18000u);
    CHECK(HPU_REG_QM_STREAM(MME0, 0) == 0x19000u);
    CHECK(HPU_REG_QM_STREAM(MME1, 0) == 0x1a000u);
    r.rd(HPU_REG_QM_STREAM(HPU_NUM_ENGINES, 0));   // no engine 11
    CHECK(r.error() == HPU_ERROR_BAD_ACCESS);
}

TEST_CASE("version 5 packets run on every engine class, with its vector and index",
          "[emu][compute]")
{
    const unsigned e = GENERATE(0u, 7u, TPC, MME0, MME1);
    CAPTURE(e);
    Rig r;
    uint64_t v = r.halloc(8);
    Cb cb;
    cb.nop().write_value(host_addr(v), 0xc0ffee00 + e).sob_update(3, 5).wait(3, 5);
    Cqe c = r.run_cb(cb, 0, e, 3);
    CHECK(c.status == HPU_CQ_OK);
    CHECK(c.engine == e);
    CHECK(c.stream == 3);
    CHECK(r.hrd32(v) == 0xc0ffee00 + e);
    CHECK(r.rd(HPU_REG_SOB(3)) == 5u);
    CHECK(r.env.vectors == std::vector<unsigned int>{HPU_VEC_ENGINE(e)});
    CHECK(HPU_VEC_ENGINE(TPC) == 10u);
    CHECK(HPU_VEC_ENGINE(MME1) == 12u);
}

TEST_CASE("packets on the wrong engine class fail BAD_PACKET", "[emu][compute][bad]")
{
    struct Wrong {
        unsigned e;
        Cb cb;
        const char *log;
    };
    const uint64_t desc = 0x100000;
    auto wrong = GENERATE_COPY(
        Wrong{TPC, Cb().lin_dma(0, 4096, 64), "LIN_DMA does not run on TPC"},
        Wrong{MME0, Cb().lin_dma(0, 4096, 64), "LIN_DMA does not run on MME0"},
        Wrong{MME1, Cb().memset(0, 4096, 64), "LIN_DMA does not run on MME1"},
        Wrong{0, gemm_cb(desc), "MME_GEMM does not run on DMA0"},
        Wrong{TPC, gemm_cb(desc), "MME_GEMM does not run on TPC"},
        Wrong{3, Cb().raw(HPU_PKT_TPC_LAUNCH, 0).raw(0x100000, 0),
              "TPC_LAUNCH does not run on DMA3"},
        Wrong{MME1, Cb().raw(HPU_PKT_TPC_LAUNCH, 0).raw(0x100000, 0),
              "TPC_LAUNCH does not run on MME1"});
    CAPTURE(wrong.log);
    Rig r;
    r.setup_eq();
    Cb cb;
    cb.nop();
    for (uint64_t w : wrong.cb.words()) {
        cb.raw(static_cast<uint32_t>(w), static_cast<uint32_t>(w >> 32));
    }
    Cqe c = r.run_cb(cb, 0, wrong.e, 1);
    CHECK(c.status == HPU_CQ_BAD_PACKET);
    CHECK(c.offset == 8u);
    CHECK(c.engine == wrong.e);
    REQUIRE(r.rd(HPU_REG_EQ_PI) == 1u);
    CHECK(r.eqe(0).id == HPU_EVENT_BAD_PACKET);
    CHECK(r.eqe(0).engine == wrong.e);
    CHECK(r.eqe(0).info == 8u);
    REQUIRE(r.env.errors.size() == 1);
    CHECK(r.env.errors[0].find(wrong.log) != std::string::npos);
    CHECK(r.bread64(4096) == 0u);                   // nothing moved
}

TEST_CASE("TPC_LAUNCH: fields checked; a descriptor of zeros is BAD_LAUNCH DESC_MAGIC",
          "[emu][compute][tpc]")
{
    Rig r;
    r.setup_eq();
    Cb ok = Cb().raw(HPU_PKT_TPC_LAUNCH, 0).raw(0x40000, 0);
    Cqe c = r.run_cb(ok, 0, TPC, 0);
    CHECK(c.status == HPU_CQ_BAD_LAUNCH);
    CHECK(c.engine == TPC);
    Eqe ev = r.eqe(0);
    CHECK(ev.id == HPU_EVENT_BAD_LAUNCH);
    CHECK(ev.engine == TPC);
    CHECK(ev.addr == 0x40000u);
    REQUIRE(r.env.errors.size() == 1);
    CHECK(r.env.errors[0].find("DESC_MAGIC") != std::string::npos);
    CHECK(ev.info == 1u);
    c = r.run_cb(Cb().raw(HPU_PKT_TPC_LAUNCH, 0).raw(0x40020, 0), 0, TPC, 0);
    CHECK(c.status == HPU_CQ_BAD_LAUNCH);
    CHECK(r.eqe(1).info == 1u);
    c = r.run_cb(Cb().raw(HPU_PKT_TPC_LAUNCH, 7).raw(0x40000, 0), 0, TPC, 0);
    CHECK(c.status == HPU_CQ_BAD_PACKET);
}

TEST_CASE("BUSY_NS counts the packets of engines 8-10", "[emu][compute][busy]")
{
    Rig r;
    HostGemm gm(r, 4, 4, 4);
    // device time moves 1 us at each host access made by the engines
    r.env.on_dma_read = [&](uint64_t) { r.env.now += 1000; };
    r.env.on_dma_write = [&](uint64_t) { r.env.now += 1000; };
    CHECK(r.run_cb(gemm_cb(gm.desc), 0, MME1, 0).status == HPU_CQ_OK);
    CHECK(r.run_cb(Cb().nop(), 0, TPC, 0).status == HPU_CQ_OK);
    r.env.on_dma_read = nullptr;
    r.env.on_dma_write = nullptr;
    // MME1: the packet's two reads, descriptor, A, B and the D store;
    // TPC: the NOP's read
    CHECK(busy(r, MME1) == 6000u);
    CHECK(busy(r, TPC) == 1000u);
    CHECK(busy(r, MME0) == 0u);
    CHECK(busy(r, 0) == 0u);
    CHECK(r.error() == 0u);
    r.rd(HPU_REG_BUSY_NS_HI(10) + 4);               // past BUSY_NS(10)
    CHECK(r.error() == HPU_ERROR_BAD_ACCESS);
}

TEST_CASE("INJ_HANG and INJ_DMA_FAIL hold a bit for each of the 11 engines",
          "[emu][compute][inj]")
{
    Rig r;
    r.wr(HPU_REG_INJ_HANG, 0xffffffffu);
    CHECK(r.rd(HPU_REG_INJ_HANG) == 0x7ffu);
    r.wr(HPU_REG_INJ_HANG, 0);
    r.wr(HPU_REG_INJ_DMA_FAIL, 0xffffffffu);
    CHECK(r.rd(HPU_REG_INJ_DMA_FAIL) == 0x7ffu);
    r.wr(HPU_REG_INJ_DMA_FAIL, 0);

    r.setup_eq();
    HostGemm gm(r, 4, 4, 4);
    // the descriptor is command-buffer data: armed after the packet's
    // fetch (reads 2 and 3), its host read fails
    unsigned reads = 0;
    r.env.on_dma_read = [&](uint64_t) {
        if (++reads == 3) {
            r.wr(HPU_REG_INJ_DMA_FAIL, 1u << MME0);
        }
    };
    Cqe c = r.run_cb(gemm_cb(gm.desc), 0, MME0, 0);
    r.env.on_dma_read = nullptr;
    CHECK(c.status == HPU_CQ_BUS_ERROR);
    CHECK(r.rd(HPU_REG_INJ_DMA_FAIL) == 0u);        // used
    Eqe ev = r.eqe(0);
    CHECK(ev.id == HPU_EVENT_DMA_BUS_ERROR);
    CHECK(ev.engine == MME0);
    CHECK(ev.addr == (gm.desc & ~HPU_ADDR_HOST));
    CHECK(gm.rows_are(r, 0, 4, false));
    CHECK(r.run_cb(gemm_cb(gm.desc), 0, MME0, 0).status == HPU_CQ_OK);
    CHECK(gm.rows_are(r, 0, 4, true));
}

TEST_CASE("a compute engine hung by INJ_HANG is caught by the watchdog and lets go "
          "when its stream is disabled", "[emu][compute][wdt][inj]")
{
    const unsigned e = GENERATE(TPC, MME0, MME1);
    CAPTURE(e);
    Rig r;
    r.setup_eq();
    r.setup_stream(e, 0);
    r.setup_stream(e, 1);
    r.wr(HPU_REG_WDT_MS, 5);
    r.wr(HPU_REG_INJ_HANG, 1u << e);
    r.submit(e, 0, Cb().nop(), 0, 0x70);
    r.submit(e, 1, Cb().nop(), 0, 0x71);
    r.run();
    CHECK_FALSE(hpum_core_engine_ready(&r.core, e));
    CHECK(r.cq_pi(e, 0) == 0u);
    r.advance(5 * MS);
    CHECK((r.status(e, 0) & HPU_QS_STATUS_HUNG) != 0u);
    auto ev = events(r);
    REQUIRE_FALSE(ev.empty());
    CHECK(ev[0].id == HPU_EVENT_ENGINE_HANG);
    CHECK(ev[0].engine == e);
    r.wr(HPU_REG_INJ_HANG, 0);
    // disabling the stream the engine hangs in: ABORTED at once, no reset
    const unsigned hung = 0;                        // stream 0 went first
    r.wr(r.qreg(e, hung, HPU_QS_CTRL), 0);
    r.run();
    CHECK(r.cq_pi(e, hung) == 1u);
    CHECK(r.cqe(e, hung, 0).status == HPU_CQ_ABORTED);
    CHECK(r.cqe(e, hung, 0).seq == 0x70u);
    CHECK(r.status(e, hung) == HPU_QS_STATUS_IDLE);
    // the other stream runs again
    CHECK(r.cq_pi(e, 1) == 1u);
    CHECK(r.cqe(e, 1, 0).status == HPU_CQ_OK);
    CHECK(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK(r.rd(HPU_REG_RESET_COUNT) == 0u);
}

TEST_CASE("INJ_HANG stops a GEMM between two output tiles", "[emu][compute][inj][mme]")
{
    Rig r;
    r.setup_stream(MME0, 2);
    HostGemm gm(r, 300, 64, 8);                     // three tiles
    unsigned writes = 0;
    r.env.on_dma_write = [&](uint64_t addr) {
        if (addr >= gm.d_bus && addr < gm.d_bus + 4ULL * 300 * 64 && ++writes == 1) {
            r.wr(HPU_REG_INJ_HANG, 1u << MME0);
        }
    };
    r.submit(MME0, 2, gemm_cb(gm.desc));
    r.run();
    r.env.on_dma_write = nullptr;
    CHECK(gm.rows_are(r, 0, 128, true));            // the tile in flight
    CHECK(gm.rows_are(r, 128, 300, false));
    CHECK_FALSE(hpum_core_engine_ready(&r.core, MME0));
    r.wr(r.qreg(MME0, 2, HPU_QS_CTRL), 0);
    r.run();
    CHECK(r.cqe(MME0, 2, 0).status == HPU_CQ_ABORTED);
    CHECK(gm.rows_are(r, 128, 300, false));
}

TEST_CASE("the watchdog counts an MME output tile as progress", "[emu][compute][wdt][mme]")
{
    Rig r;
    r.setup_eq();
    r.setup_stream(MME1, 0);
    r.wr(HPU_REG_WDT_MS, 1);
    HostGemm gm(r, 512, 256, 4);                    // 8 tiles
    unsigned tiles = 0;
    uint64_t last = 0;
    // 0.7 ms of device time per tile store: 5.6 ms in all, never 1 ms
    // without a tile done
    r.env.on_dma_write = [&](uint64_t addr) {
        if (addr < gm.d_bus || addr >= gm.d_bus + 4ULL * 512 * 256) {
            return;
        }
        uint64_t tile = (addr - gm.d_bus) / (4ULL * 256 * 128) * 2 +
                        ((addr - gm.d_bus) % (4ULL * 256)) / (4ULL * 128);
        if (!tiles || tile != last) {
            tiles++;
            last = tile;
            r.advance(700000);
        }
    };
    r.submit(MME1, 0, gemm_cb(gm.desc));
    r.run();
    r.env.on_dma_write = nullptr;
    CHECK(tiles == 8u);
    CHECK(r.cqe(MME1, 0, 0).status == HPU_CQ_OK);
    CHECK(r.rd(HPU_REG_EQ_PI) == 0u);               // no ENGINE_HANG
    CHECK(gm.rows_are(r, 0, 512, true));
}

TEST_CASE("an MMU fault in a GEMM tile fails only that job", "[emu][compute][mme][mmu]")
{
    Rig r;
    r.setup_eq();
    const unsigned A = 5, B = 6;
    Space s(r, A, true);
    Gemm g;
    g.m = 300;
    g.n = 64;
    g.k = 8;
    g.lda = 8;
    g.ldb = 64;
    g.ldd = 64;
    std::vector<float> ones(300 * 64, 1.0f);
    g.a = s.alloc(4 * 300 * 8);
    g.b = s.alloc(4 * 8 * 64);
    g.d = s.alloc(4 * 300 * 64);
    s.write(g.a, ones.data(), 4 * 300 * 8);
    s.write(g.b, ones.data(), 4 * 8 * 64);
    // unmap the page holding row 200 of D (tile 1: rows 128-255)
    const uint64_t hole = (g.d + 4 * 200 * 64) & ~(PG - 1);
    r.bwrite64(r.pte_slot(A, hole, 3), 0);
    uint64_t desc = s.alloc(HPU_MME_DESC_SIZE);
    auto db = g.bytes();
    s.write(desc, db.data(), db.size());
    Cqe c = r.run_cb(Cb().nop().raw(HPU_PKT_MME_GEMM, 0)
                         .raw(static_cast<uint32_t>(desc), static_cast<uint32_t>(desc >> 32)),
                     A, MME0, 0);
    CHECK(c.status == HPU_CQ_MMU_FAULT);
    CHECK(c.offset == 8u);
    CHECK(c.engine == MME0);
    Eqe ev = r.eqe(0);
    CHECK(ev.id == HPU_EVENT_MMU_FAULT);
    CHECK(ev.engine == MME0);
    CHECK(ev.asid == A);
    CHECK(ev.addr == hole);
    uint32_t info = r.rd(HPU_REG_FAULT_INFO);
    CHECK((info & HPU_FAULT_ENGINE_MASK) >> 8 == MME0);
    CHECK((info & HPU_FAULT_WRITE) != 0u);
    CHECK(r.rd(HPU_REG_FAULT_ASID) == A);
    // tile 0 was stored; rows after the hole's page were not
    auto d = s.read(g.d, 4 * 128 * 64);
    std::vector<float> dv(128 * 64);
    std::memcpy(dv.data(), d.data(), d.size());
    CHECK(std::all_of(dv.begin(), dv.end(), [](float f) { return f == 8.0f; }));
    auto tail = s.read(g.d + 4 * 256 * 64, 4 * 44 * 64);
    CHECK(std::all_of(tail.begin(), tail.end(), [](uint8_t b) { return b == 0; }));

    // the next job, of another context, on the same engine works
    Space s2(r, B, false);
    Gemm g2 = g;
    g2.a = s2.alloc(4 * 300 * 8);
    g2.b = s2.alloc(4 * 8 * 64);
    g2.d = s2.alloc(4 * 300 * 64);
    s2.write(g2.a, ones.data(), 4 * 300 * 8);
    s2.write(g2.b, ones.data(), 4 * 8 * 64);
    uint64_t desc2 = s2.alloc(HPU_MME_DESC_SIZE);
    db = g2.bytes();
    s2.write(desc2, db.data(), db.size());
    CHECK(r.run_cb(gemm_cb(desc2), B, MME0, 0).status == HPU_CQ_OK);
    auto d2 = s2.read(g2.d, 4 * 300 * 64);
    std::vector<float> dv2(300 * 64);
    std::memcpy(dv2.data(), d2.data(), d2.size());
    CHECK(std::all_of(dv2.begin(), dv2.end(), [](float f) { return f == 8.0f; }));
    CHECK(r.rd(HPU_REG_EQ_PI) == 1u);
}

TEST_CASE("disabling the stream of a running GEMM completes it ABORTED at once",
          "[emu][compute][mme]")
{
    Rig r;
    r.setup_stream(MME0, 1);
    HostGemm gm(r, 256, 256, 16);                   // 4 tiles
    bool done = false;
    r.env.on_dma_write = [&](uint64_t addr) {
        if (!done && addr >= gm.d_bus) {
            done = true;                            // the first tile's store
            r.wr(r.qreg(MME0, 1, HPU_QS_CTRL), 0);
        }
    };
    r.submit(MME0, 1, gemm_cb(gm.desc), 0, 0x99);
    hpum_core_engine_step(&r.core, MME0);           // fetch
    hpum_core_engine_step(&r.core, MME0);           // the packet
    r.env.on_dma_write = nullptr;
    REQUIRE(done);
    CHECK(r.cq_pi(MME0, 1) == 1u);
    CHECK(r.cqe(MME0, 1, 0).status == HPU_CQ_ABORTED);
    CHECK(r.cqe(MME0, 1, 0).seq == 0x99u);
    // the store batch in flight completed (64 row runs: rows 0-63 of the
    // first tile), none after it: the job is checked before every batch
    for (uint32_t i = 0; i < 256; i++) {
        for (uint32_t j = 0; j < 256; j++) {
            bool first = i < 64 && j < 128;
            float v = gm.d(r, i, j);
            if (first ? v != 16.0f : f32_bits(v) != 0xeeeeeeeeu) {
                FAIL("D[" << i << "][" << j << "] = " << v);
            }
        }
    }
}

TEST_CASE("a soft reset in the middle of a GEMM: ABORTED, nothing written after",
          "[emu][compute][mme][reset]")
{
    Rig r;
    r.setup_stream(MME1, 3);
    HostGemm gm(r, 256, 128, 32);
    bool reset = false;
    unsigned writes_after = 0;
    r.env.on_dma_read = [&](uint64_t addr) {
        // the read of B (after the descriptor and A)
        if (!reset && addr == (gm.g.b & ~HPU_ADDR_HOST)) {
            reset = true;
            r.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
        }
    };
    r.env.on_dma_write = [&](uint64_t addr) {
        if (reset && addr >= gm.d_bus && addr < gm.d_bus + 4ULL * 256 * 128) {
            writes_after++;
        }
    };
    r.submit(MME1, 3, gemm_cb(gm.desc));
    r.run();
    REQUIRE(reset);
    CHECK(writes_after == 0u);
    CHECK(gm.rows_are(r, 0, 256, false));
    CHECK(r.cqe(MME1, 3, 0).status == HPU_CQ_ABORTED);
    r.advance(HPU_SOFT_RESET_NS);
    CHECK(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
}

TEST_CASE("a power-on reset in the middle of a GEMM store writes nothing after the batch "
          "in flight", "[emu][compute][mme][reset]")
{
    Rig r;
    r.setup_stream(MME0, 0);
    HostGemm gm(r, 256, 256, 4);
    bool reset = false;
    unsigned writes = 0;
    r.env.on_dma_write = [&](uint64_t addr) {
        if (addr >= gm.d_bus && addr < gm.d_bus + 4ULL * 256 * 256 && ++writes == 1) {
            reset = true;
            hpum_core_reset(&r.core);
        }
    };
    r.submit(MME0, 0, gemm_cb(gm.desc));
    r.run();
    r.env.on_dma_write = nullptr;
    REQUIRE(reset);
    // one batch of 64 row runs of tile 0 was in flight; nothing after it
    CHECK(writes == 64u);
    CHECK(r.cq_pi(MME0, 0) == 0u);
    for (uint32_t i = 0; i < 256; i++) {
        for (uint32_t j = 0; j < 256; j++) {
            bool in_flight = i < 64 && j < 128;
            float v = gm.d(r, i, j);
            if (in_flight ? v != 4.0f : f32_bits(v) != 0xeeeeeeeeu) {
                FAIL("D[" << i << "][" << j << "] = " << v);
            }
        }
    }
    r.bh();
    CHECK_FALSE(hpum_core_in_reset(&r.core));
}

TEST_CASE("a GEMM the watchdog finds hung: disabling its stream aborts it and the "
          "engine's other stream runs again", "[emu][compute][wdt][mme]")
{
    Rig r;
    r.setup_eq();
    r.setup_stream(MME0, 0);
    r.setup_stream(MME0, 1);
    r.wr(HPU_REG_WDT_MS, 1);
    HostGemm gm(r, 256, 128, 4);                    // two tiles
    bool hung = false;
    r.env.on_dma_write = [&](uint64_t addr) {
        if (!hung && addr >= gm.d_bus && addr < gm.d_bus + 4ULL * 256 * 128) {
            r.advance(2 * MS);                      // no tile done for 2 ms
            hung = (r.status(MME0, 0) & HPU_QS_STATUS_HUNG) &&
                   (r.status(MME0, 1) & HPU_QS_STATUS_HUNG);
            r.wr(r.qreg(MME0, 0, HPU_QS_CTRL), 0);   // the driver's recovery
        }
    };
    r.submit(MME0, 0, gemm_cb(gm.desc), 0, 0x10);
    r.submit(MME0, 1, Cb().nop(), 0, 0x11);
    hpum_core_engine_step(&r.core, MME0);           // fetch stream 0
    hpum_core_engine_step(&r.core, MME0);           // fetch stream 1
    hpum_core_engine_step(&r.core, MME0);           // the GEMM
    r.env.on_dma_write = nullptr;
    REQUIRE(hung);
    CHECK(r.cqe(MME0, 0, 0).status == HPU_CQ_ABORTED);
    CHECK(gm.rows_are(r, 128, 256, false));         // the second tile: never
    CHECK((r.status(MME0, 1) & HPU_QS_STATUS_HUNG) == 0u);
    r.run();
    CHECK(r.cq_pi(MME0, 1) == 1u);
    CHECK(r.cqe(MME0, 1, 0).status == HPU_CQ_OK);
    auto ev = events(r);
    REQUIRE(ev.size() == 2);
    CHECK(ev[0].id == HPU_EVENT_ENGINE_HANG);
    CHECK(ev[0].engine == MME0);
}

TEST_CASE("a hard reset in the middle of a GEMM: no store, no record, and the MME works "
          "after it", "[emu][compute][mme][hard-reset]")
{
    Rig r;
    r.setup_stream(MME0, 0);
    HostGemm gm(r, 200, 160, 24);
    bool reset = false;
    unsigned writes_after = 0;
    r.env.on_dma_read = [&](uint64_t addr) {
        if (!reset && addr == (gm.g.b & ~HPU_ADDR_HOST)) {
            reset = true;
            r.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
        }
    };
    r.env.on_dma_write = [&](uint64_t) {
        if (reset) {
            writes_after++;
        }
    };
    r.submit(MME0, 0, gemm_cb(gm.desc));
    r.run();
    r.env.on_dma_read = nullptr;
    r.env.on_dma_write = nullptr;
    REQUIRE(reset);
    CHECK(writes_after == 0u);                      // neither D nor a record
    CHECK(gm.rows_are(r, 0, 200, false));
    r.advance(HPU_HARD_RESET_NS);
    REQUIRE(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK(r.cq_pi(MME0, 0) == 0u);
    r.q[MME0][0] = {};
    CHECK(r.run_cb(gemm_cb(gm.desc), 0, MME0, 0).status == HPU_CQ_OK);
    CHECK(gm.rows_are(r, 0, 200, true));
}

TEST_CASE("a compute engine stuck by INJ_HANG lets go when its stream is disabled and "
          "re-enabled before the engine runs", "[emu][compute][inj]")
{
    const unsigned e = GENERATE(TPC, MME0);
    CAPTURE(e);
    Rig r;
    r.setup_stream(e, 0);
    r.setup_stream(e, 1);
    r.wr(HPU_REG_INJ_HANG, 1u << e);
    r.submit(e, 0, Cb().nop(), 0, 0x70);
    r.run();
    REQUIRE_FALSE(hpum_core_engine_ready(&r.core, e));
    r.wr(HPU_REG_INJ_HANG, 0);
    r.submit(e, 1, Cb().nop(), 0, 0x71);            // waits for the engine
    uint32_t ctrl = r.rd(r.qreg(e, 0, HPU_QS_CTRL));
    r.wr(r.qreg(e, 0, HPU_QS_CTRL), 0);
    r.wr(r.qreg(e, 0, HPU_QS_CTRL), ctrl);          // no step in between
    r.run();
    // the stuck descriptor's record is lost (enable while pending); the
    // engine let go: the other stream and new work on stream 0 run
    CHECK(r.cq_pi(e, 1) == 1u);
    CHECK(r.cqe(e, 1, 0).status == HPU_CQ_OK);
    r.q[e][0] = {};
    CHECK(r.run_cb(Cb().nop(), 0, e, 0).status == HPU_CQ_OK);
    CHECK(r.rd(HPU_REG_RESET_COUNT) == 0u);
}

TEST_CASE("disabling a sibling of the stream a compute engine hangs in lets nothing go",
          "[emu][compute][wdt][inj]")
{
    Rig r;
    r.setup_eq();
    r.setup_stream(MME0, 0);
    r.setup_stream(MME0, 1);
    r.wr(HPU_REG_WDT_MS, 5);
    r.wr(HPU_REG_INJ_HANG, 1u << MME0);
    r.submit(MME0, 0, Cb().nop(), 0, 0x70);         // stuck in stream 0
    r.run();
    r.submit(MME0, 1, Cb().nop(), 0, 0x71);
    hpum_core_engine_step(&r.core, MME0);           // nothing runs
    r.advance(5 * MS);
    REQUIRE((r.status(MME0, 0) & HPU_QS_STATUS_HUNG) != 0u);
    r.wr(HPU_REG_INJ_HANG, 0);
    r.wr(r.qreg(MME0, 1, HPU_QS_CTRL), 0);          // the sibling
    r.run();
    // stream 0 stays HUNG, its descriptor pending, the engine stuck
    CHECK((r.status(MME0, 0) & HPU_QS_STATUS_HUNG) != 0u);
    CHECK(r.cq_pi(MME0, 0) == 0u);
    CHECK_FALSE(hpum_core_engine_ready(&r.core, MME0));
    r.wr(r.qreg(MME0, 0, HPU_QS_CTRL), 0);          // the hung stream
    r.run();
    CHECK(r.cq_pi(MME0, 0) == 1u);
    CHECK(r.cqe(MME0, 0, 0).status == HPU_CQ_ABORTED);
    CHECK(r.status(MME0, 0) == HPU_QS_STATUS_IDLE);
}

TEST_CASE("a GEMM whose last tile is stored completes OK even if INJ_HANG or a disable "
          "comes after that store", "[emu][compute][mme][inj]")
{
    const bool disable = GENERATE(false, true);
    CAPTURE(disable);
    Rig r;
    r.setup_stream(MME0, 0);
    HostGemm gm(r, 200, 64, 4);                     // two tiles
    const uint64_t tile1 = gm.d_bus + 4ULL * 128 * 64, end = gm.d_bus + 4ULL * 200 * 64;
    bool fired = false;
    r.env.on_dma_write = [&](uint64_t addr) {
        if (addr >= tile1 && addr < end && !fired) {    // the last tile's store
            fired = true;
            if (disable) {
                r.wr(r.qreg(MME0, 0, HPU_QS_CTRL), 0);
            } else {
                r.wr(HPU_REG_INJ_HANG, 1u << MME0);
            }
        }
    };
    r.submit(MME0, 0, gemm_cb(gm.desc), 0, 0x42);
    r.run();
    r.env.on_dma_write = nullptr;
    REQUIRE(fired);
    CHECK(gm.rows_are(r, 0, 200, true));
    REQUIRE(r.cq_pi(MME0, 0) == 1u);
    CHECK(r.cqe(MME0, 0, 0).status == HPU_CQ_OK);
}

TEST_CASE("an MMU fault after a failing run of the same store batch is not latched",
          "[emu][compute][mme][mmu]")
{
    Rig r;
    r.setup_eq();
    const unsigned A = 5;
    Space h(r, A, false), s(r, A, true);
    Gemm g;
    g.m = 64;
    g.n = 64;
    g.k = 8;
    g.lda = 8;
    g.ldb = 64;
    g.ldd = 128;                                    // a run per row
    std::vector<float> ones(64 * 64, 1.0f);
    g.a = h.alloc(4 * 64 * 8);
    g.b = h.alloc(4 * 8 * 64);
    g.d = s.alloc(4 * 64 * 128);
    h.write(g.a, ones.data(), 4 * 64 * 8);
    h.write(g.b, ones.data(), 4 * 8 * 64);
    // row 0's page points outside host memory (the DMA fails); row 40's
    // page is unmapped (an MMU fault, later in the same batch)
    const uint64_t p0 = g.d & ~(PG - 1);
    const uint64_t hole = (g.d + 4 * 40 * 128) & ~(PG - 1);
    REQUIRE(hole != p0);
    uint64_t pte = r.bread64(r.pte_slot(A, p0, 3));
    r.bwrite64(r.pte_slot(A, p0, 3), (pte & ~HPU_PTE_ADDR_MASK) |
                                         ((pte + (1ULL << 40)) & HPU_PTE_ADDR_MASK));
    r.bwrite64(r.pte_slot(A, hole, 3), 0);
    uint64_t desc = h.alloc(HPU_MME_DESC_SIZE);
    auto db = g.bytes();
    h.write(desc, db.data(), db.size());
    Cqe c = r.run_cb(gemm_cb(desc), A, MME0, 0);
    CHECK(c.status == HPU_CQ_BUS_ERROR);
    CHECK(r.rd(HPU_REG_FAULT_COUNT) == 0u);        // the MMU fault: never reached
    Eqe ev = r.eqe(0);
    CHECK(ev.id == HPU_EVENT_DMA_BUS_ERROR);
    CHECK(r.rd(HPU_REG_EQ_PI) == 1u);
}

TEST_CASE("a GEMM the watchdog marked hung that finishes its packet keeps its stream HUNG; "
          "disabling a sibling lets nothing go", "[emu][compute][wdt][mme]")
{
    Rig r;
    r.setup_eq();
    r.setup_stream(MME0, 0);
    r.setup_stream(MME0, 1);
    r.wr(HPU_REG_WDT_MS, 1);
    HostGemm gm(r, 256, 128, 4);                    // two tiles
    bool marked = false;
    r.env.on_dma_write = [&](uint64_t addr) {
        if (!marked && addr >= gm.d_bus && addr < gm.d_bus + 4ULL * 256 * 128) {
            r.advance(2 * MS);                      // no tile done for 2 ms
            marked = (r.status(MME0, 0) & HPU_QS_STATUS_HUNG) &&
                     (r.status(MME0, 1) & HPU_QS_STATUS_HUNG);
        }
    };
    Cb cb = gemm_cb(gm.desc);
    cb.nop();                                       // more after the GEMM
    r.submit(MME0, 0, cb, 0, 0x10);
    r.submit(MME0, 1, Cb().nop(), 0, 0x11);
    hpum_core_engine_step(&r.core, MME0);           // fetch stream 0
    hpum_core_engine_step(&r.core, MME0);           // fetch stream 1
    hpum_core_engine_step(&r.core, MME0);           // the GEMM: finishes
    r.env.on_dma_write = nullptr;
    REQUIRE(marked);
    CHECK(gm.rows_are(r, 0, 256, true));
    r.run();
    // stream 0 stays HUNG with its NOP not run, stream 1 waits too
    CHECK((r.status(MME0, 0) & HPU_QS_STATUS_HUNG) != 0u);
    CHECK(r.cq_pi(MME0, 0) == 0u);
    CHECK(r.cq_pi(MME0, 1) == 0u);
    r.wr(r.qreg(MME0, 1, HPU_QS_CTRL), 0);          // the sibling
    r.run();
    CHECK(r.cq_pi(MME0, 1) == 1u);
    CHECK(r.cqe(MME0, 1, 0).status == HPU_CQ_ABORTED);
    CHECK((r.status(MME0, 0) & HPU_QS_STATUS_HUNG) != 0u);   // not let go
    CHECK(r.cq_pi(MME0, 0) == 0u);
    r.wr(r.qreg(MME0, 0, HPU_QS_CTRL), 0);          // the hung stream
    r.run();
    CHECK(r.cq_pi(MME0, 0) == 1u);
    CHECK(r.cqe(MME0, 0, 0).status == HPU_CQ_ABORTED);
    CHECK(r.status(MME0, 0) == HPU_QS_STATUS_IDLE);
}

// SPDX-License-Identifier: MIT
//
// Unit tests of LIN_DMA's one-copy path (emu/hpu_mem.c hpum_dma_copy()):
// each 1 MiB piece moves straight between host memory and HBM chunk
// memory, and everything the bounce-buffer path did exactly (faults,
// poison, INJ_DMA_FAIL, overlap, resets) stays as it was
// (Documentation/hw/memory-and-queues.md, errors-and-reset.md).  The
// hpu_dma_runs trace point tells which path each piece took and how many
// runs each side had.  With HPU_DMA_RUNS_REPORT set in the environment,
// the mean runs per piece over the run are printed at exit.
//
// Copyright (c) 2026 The hpu authors

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

#include "hpu_rig.hpp"

using namespace hpu_test;

namespace {

// One hit of the hpu_dma_runs trace point.
struct Piece {
    uint64_t bytes;
    uint64_t src_runs;
    uint64_t dst_runs;
    bool bounce;
};

struct DmaLog {
    std::vector<Piece> pieces;

    [[nodiscard]] unsigned int count(bool bounce) const
    {
        return static_cast<unsigned int>(
            std::count_if(pieces.begin(), pieces.end(),
                          [bounce](const Piece &p) { return p.bounce == bounce; }));
    }
    [[nodiscard]] unsigned int one_copy() const { return count(false); }
    [[nodiscard]] unsigned int bounced() const { return count(true); }
};

// The pieces of the current test, and totals over the whole run.
struct DmaTotals {
    uint64_t pieces = 0;
    uint64_t runs = 0;          // source + destination runs, one-copy pieces

    DmaTotals() = default;
    DmaTotals(const DmaTotals &) = delete;
    DmaTotals &operator=(const DmaTotals &) = delete;
    DmaTotals(DmaTotals &&) = delete;
    DmaTotals &operator=(DmaTotals &&) = delete;
    ~DmaTotals()
    {
        if (std::getenv("HPU_DMA_RUNS_REPORT") && pieces) {
            std::fprintf(stderr, "hpu_dma_runs: %llu one-copy pieces, %.2f runs "
                         "per piece and side\n",
                         static_cast<unsigned long long>(pieces),
                         static_cast<double>(runs) / (2.0 * static_cast<double>(pieces)));
        }
    }
};

DmaLog g_log;
DmaTotals g_totals;

void dma_trace(void *opaque, HpuTraceId id, const uint64_t *arg)
{
    env_trace(opaque, id, arg);
    if (id == HPU_TRACE_DMA_RUNS) {
        g_log.pieces.push_back({ arg[1], arg[2], arg[3], arg[4] != 0 });
        if (!arg[4]) {
            g_totals.pieces++;
            g_totals.runs += arg[2] + arg[3];
        }
    }
}

const HpuCoreOps dma_ops = [] {
    HpuCoreOps o = env_ops;
    o.trace = dma_trace;
    return o;
}();

DevOpts dma_dev()
{
    DevOpts o;
    o.hbm = 256 * MiB;
    o.ops = &dma_ops;
    return o;
}

struct DmaRig : Rig {
    DmaRig() : Rig(dma_dev()) { g_log = {}; }
};

std::vector<Eqe> events(Rig &r)
{
    std::vector<Eqe> v;
    for (uint32_t i = 0; i < r.rd(HPU_REG_EQ_PI); i++) {
        v.push_back(r.eqe(i));
    }
    return v;
}

uint64_t pieces_of(uint64_t n) { return (n + MiB - 1) / MiB; }

uint64_t fault_va(Rig &r)
{
    return r.rd(HPU_REG_FAULT_VA_LO) |
           static_cast<uint64_t>(r.rd(HPU_REG_FAULT_VA_HI)) << 32;
}

// Map @pages host pages at @va, page i at bus page order[i] of @bus.
void map_scattered(Rig &r, unsigned int asid, uint64_t va, uint64_t bus,
                   const std::vector<uint64_t> &order, bool write)
{
    for (size_t i = 0; i < order.size(); i++) {
        r.map(asid, va + i * PG, bus + order[i] * PG,
              HPU_PTE_HOST | (write ? HPU_PTE_WRITE : 0));
    }
}

// A page order in which no page follows its predecessor in memory.
std::vector<uint64_t> scattered(uint64_t pages)
{
    std::vector<uint64_t> v(pages);
    for (uint64_t i = 0; i < pages; i++) {
        v[i] = pages - 1 - i;
    }
    return v;
}

} // namespace

TEST_CASE("LIN_DMA one copy: host to HBM to HBM to host, byte for byte at odd "
          "sizes and offsets across chunks", "[emu][dma][one-copy]")
{
    DmaRig r;
    const uint64_t n = GENERATE(1ULL, 4095ULL, 4097ULL, MiB + 13, 3 * MiB + 4095);
    const uint64_t soff = GENERATE(0ULL, 5ULL);
    auto data = pattern_bytes(n, static_cast<uint32_t>(n + soff));
    uint64_t src = r.halloc(n + 64, PG) + soff;
    uint64_t dst = r.halloc(n + 64, PG) + 3;
    r.hwrite(src, data.data(), n);
    std::memset(r.hp(dst) - 3, 0xee, n + 64);
    // HBM ends 7 bytes before a chunk, and 1000 bytes before another
    const uint64_t h1 = 20 * MiB - 7, h2 = 62 * MiB - 1000 + soff;
    r.bwrite64(h2 - 8, 0x1111111111111111ULL);

    Cb cb;
    cb.lin_dma(host_addr(src), h1, n)
      .lin_dma(h1, h2, n)
      .lin_dma(h2, host_addr(dst), n);
    Cqe e = r.run_cb(cb);
    CHECK(e.status == HPU_CQ_OK);
    CHECK(std::memcmp(r.hp(dst), data.data(), n) == 0);
    CHECK((r.bread(h1, n) == data));
    CHECK((r.bread(h2, n) == data));
    CHECK(r.bread64(h2 - 8) == 0x1111111111111111ULL);
    CHECK(r.hp(dst)[-1] == 0xee);
    CHECK(r.hp(dst)[n] == 0xee);
    // host segments through the bulk ops: one read and one write a piece
    CHECK(r.env.dma_bulk_reads == pieces_of(n));
    CHECK(r.env.dma_bulk_writes == pieces_of(n));
    // every piece moved once, none through the bounce buffer
    CHECK(g_log.pieces.size() == 3 * pieces_of(n));
    CHECK(g_log.one_copy() == 3 * pieces_of(n));
    for (const Piece &p : g_log.pieces) {
        CHECK(p.src_runs == 1u);            // ASID 0: one run a side
        CHECK(p.dst_runs == 1u);
    }
    CHECK(r.env.errors.empty());
}

TEST_CASE("LIN_DMA one copy over scattered host pages in a user context",
          "[emu][dma][one-copy]")
{
    DmaRig r;
    const unsigned int A = 9;
    // 1 MiB + 13 from page offset 77: 257 pages in the first piece
    const uint64_t n = GENERATE(1ULL, 5 * PG + 123, MiB + 13);
    const uint64_t off = 77;
    const uint64_t pages = (off + n + PG - 1) / PG;
    auto data = pattern_bytes(n, 21);
    uint64_t sbus = r.halloc(pages * PG, PG), dbus = r.halloc(pages * PG, PG);
    const uint64_t sva = 0x200000000ULL, dva = 0x300000000ULL;
    map_scattered(r, A, sva, sbus, scattered(pages), false);
    map_scattered(r, A, dva, dbus, scattered(pages), true);
    // the source bytes where the scattered mapping puts them
    auto order = scattered(pages);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v = off + i;
        r.hp(sbus + order[v / PG] * PG)[v % PG] = data[i];
    }
    uint64_t hva = r.map_hbm(A, 40 * MiB, 4 * MiB);

    Cb cb;
    cb.lin_dma(sva + off, hva + 2 * MiB - 1000, n)
      .lin_dma(hva + 2 * MiB - 1000, hva + 17, n)
      .lin_dma(hva + 17, dva + off, n);
    CHECK(r.run_cb(cb, A).status == HPU_CQ_OK);
    CHECK((r.bread(40 * MiB + 2 * MiB - 1000, n) == data));
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v = off + i;
        if (r.hp(dbus + order[v / PG] * PG)[v % PG] != data[i]) {
            FAIL("byte " << i);
        }
    }
    REQUIRE(g_log.pieces.size() == 3 * pieces_of(n));
    CHECK(g_log.one_copy() == 3 * pieces_of(n));
    // a piece's host side: one run per page, nothing merges
    const Piece &first = g_log.pieces[0];
    CHECK(first.src_runs == std::min<uint64_t>(pages, MiB / PG + 1));
    CHECK(first.dst_runs == 1u);           // 2 MiB HBM pages, contiguous
    // the last copy's first piece: the same pages on its destination side
    CHECK(g_log.pieces[2 * pieces_of(n)].dst_runs == first.src_runs);
    CHECK(g_log.pieces[2 * pieces_of(n)].src_runs == 1u);
}

TEST_CASE("LIN_DMA one copy merges host pages that follow each other into "
          "one run", "[emu][dma][one-copy]")
{
    DmaRig r;
    const unsigned int A = 3;
    const uint64_t n = 64 * PG + 9;
    auto data = pattern_bytes(n, 5);
    uint64_t sbus = r.halloc(n + PG, PG);
    r.hwrite(sbus + 11, data.data(), n);
    uint64_t sva = r.map_host(A, sbus, n + 11, false);
    uint64_t hva = r.map_hbm(A, 8 * MiB, 2 * MiB);
    CHECK(r.run_cb(Cb().lin_dma(sva + 11, hva + 5, n), A).status == HPU_CQ_OK);
    CHECK((r.bread(8 * MiB + 5, n) == data));
    REQUIRE(g_log.pieces.size() == 1u);
    CHECK_FALSE(g_log.pieces[0].bounce);
    CHECK(g_log.pieces[0].src_runs == 1u);
    CHECK(g_log.pieces[0].dst_runs == 1u);
}

TEST_CASE("LIN_DMA host to host still goes through the bounce buffer, byte "
          "for byte", "[emu][dma][one-copy]")
{
    DmaRig r;
    const uint64_t n = GENERATE(1ULL, 4097ULL, MiB + 13);
    auto data = pattern_bytes(n, 7);
    uint64_t src = r.halloc(n, PG) + 1, dst = r.halloc(n + 2, PG) + 1;
    r.hwrite(src, data.data(), n);
    CHECK(r.run_cb(Cb().lin_dma(host_addr(src), host_addr(dst), n)).status ==
          HPU_CQ_OK);
    CHECK(std::memcmp(r.hp(dst), data.data(), n) == 0);
    CHECK(r.hp(dst)[n] == 0);
    CHECK(g_log.bounced() == pieces_of(n));
    CHECK(g_log.one_copy() == 0u);
    // the bounce buffer is read back at once: no bulk (streaming) access
    CHECK(r.env.dma_bulk_reads == 0u);
    CHECK(r.env.dma_bulk_writes == 0u);
}

TEST_CASE("LIN_DMA one copy: overlapping HBM ranges equal memmove",
          "[emu][dma][one-copy][overlap]")
{
    DmaRig r;
    const uint64_t n = 3 * MiB + 5;
    const int64_t delta = GENERATE(int64_t{1}, int64_t{-1}, int64_t{1000},
                                   int64_t{-1000}, int64_t{4097},
                                   int64_t{-4097}, int64_t{MiB + 1},
                                   -int64_t{MiB + 1}, int64_t{0});
    auto data = pattern_bytes(n + 2 * MiB + 2, 11);
    const uint64_t base = 16 * MiB + 3;
    r.bwrite(base, data.data(), data.size());
    const uint64_t src = base + MiB + 1, dst = src + delta;

    CHECK(r.run_cb(Cb().lin_dma(src, dst, n)).status == HPU_CQ_OK);
    std::vector<uint8_t> want = data;
    std::memmove(want.data() + (dst - base), data.data() + (src - base), n);
    CHECK((r.bread(base, data.size()) == want));
    // Below the source, or apart by a piece or more: each piece moved once.
    // A piece whose destination overlaps above its source: through the
    // bounce buffer (pieces are taken from the end: 1 MiB, 1 MiB, 1 MiB,
    // then 5 bytes).
    unsigned int bounced = 0;
    for (uint64_t piece : { MiB, MiB, MiB, uint64_t{5} }) {
        bounced += delta > 0 && static_cast<uint64_t>(delta) < piece;
    }
    CHECK(g_log.pieces.size() == pieces_of(n));
    CHECK(g_log.bounced() == bounced);
}

TEST_CASE("LIN_DMA over scattered HBM pages of a user context: overlap "
          "equals memmove", "[emu][dma][one-copy][overlap]")
{
    DmaRig r;
    const unsigned int A = 10;
    const uint64_t pages = 16, n = 8 * PG + 100;
    const int64_t delta = GENERATE(int64_t{1000}, int64_t{-1000},
                                   int64_t{3 * PG}, -int64_t{3 * PG});
    // VA page i at HBM page 15 - i: every page a run of its own
    const uint64_t va = 0x800000000ULL, hbm = 110 * MiB;
    for (uint64_t i = 0; i < pages; i++) {
        r.map(A, va + i * PG, hbm + (pages - 1 - i) * PG, HPU_PTE_WRITE);
    }
    auto data = pattern_bytes(pages * PG, 13);
    for (uint64_t i = 0; i < pages; i++) {
        r.bwrite(hbm + (pages - 1 - i) * PG, data.data() + i * PG, PG);
    }
    const uint64_t src = va + 3 * PG + 50, dst = src + delta;
    CHECK(r.run_cb(Cb().lin_dma(src, dst, n), A).status == HPU_CQ_OK);
    std::vector<uint8_t> want = data;
    std::memmove(want.data() + (dst - va), data.data() + (src - va), n);
    for (uint64_t i = 0; i < pages; i++) {
        auto got = r.bread(hbm + (pages - 1 - i) * PG, PG);
        if (!std::equal(got.begin(), got.end(),
                        want.begin() + static_cast<std::ptrdiff_t>(i * PG))) {
            FAIL("VA page " << i);
        }
    }
    REQUIRE(g_log.pieces.size() == 1u);
    CHECK(g_log.pieces[0].bounce == (delta > 0));
}

TEST_CASE("LIN_DMA one copy: never-written HBM reads as zeros and stays "
          "unbacked", "[emu][dma][one-copy][hbm]")
{
    DmaRig r;
    const uint64_t n = GENERATE(13ULL, MiB + 13, 3 * MiB);
    uint64_t dst = r.halloc(n, PG);
    std::memset(r.hp(dst), 0xaa, n);
    // the source starts in an unbacked chunk and (for the larger sizes)
    // runs on into a backed one
    const uint64_t src = 100 * MiB - 13;
    r.bwrite64(100 * MiB + MiB, 0x0123456789abcdefULL);
    const uint64_t backed = hpum_core_hbm_backed(&r.core);
    r.bwrite(60 * MiB, std::vector<uint8_t>(n, 0x55).data(), n);

    Cb cb;
    cb.lin_dma(src, host_addr(dst), n).lin_dma(src, 60 * MiB, n);
    CHECK(r.run_cb(cb).status == HPU_CQ_OK);
    std::vector<uint8_t> want(n, 0);
    if (n > MiB + 13) {
        const uint64_t v = 0x0123456789abcdefULL;
        std::memcpy(want.data() + 13 + MiB, &v, 8);
    }
    CHECK(std::memcmp(r.hp(dst), want.data(), n) == 0);
    CHECK((r.bread(60 * MiB, n) == want));
    // reading allocated nothing: only the destination's chunks
    CHECK(hpum_core_hbm_backed(&r.core) ==
          backed + ((60 * MiB + n - 1) / (2 * MiB) - 60 / 2 + 1) * 2 * MiB);
    CHECK(g_log.one_copy() == 2 * pieces_of(n));
}

TEST_CASE("LIN_DMA into a poisoned chunk drops exactly its bytes, as before",
          "[emu][dma][one-copy][ecc]")
{
    DmaRig r;
    r.setup_eq();
    const uint64_t page = 20 * MiB;
    const uint64_t n = 2 * MiB;                // 1 MiB each side of the page
    auto data = pattern_bytes(n, 17);
    uint64_t src = r.halloc(n, PG);
    r.hwrite(src, data.data(), n);
    r.bwrite64(page + 64, 0xabcdef);
    r.wr(HPU_REG_INJ_ECC_ADDR_LO, static_cast<uint32_t>(page));
    r.wr(HPU_REG_INJ_ECC_ADDR_HI, 0);
    r.wr(HPU_REG_INJ_ECC_CTRL, HPU_INJ_ECC_UE);
    REQUIRE(r.rd(HPU_REG_ECC_UE_COUNT) == 1u);
    const uint32_t eq_pi = r.rd(HPU_REG_EQ_PI);

    const uint64_t dst = page - MiB;
    CHECK(r.run_cb(Cb().lin_dma(host_addr(src), dst, n)).status == HPU_CQ_OK);
    auto got = r.bread(dst, n);
    CHECK(std::equal(got.begin(), got.begin() + MiB, data.begin()));
    // the poisoned page kept its old bytes: the engine's writes were dropped
    std::vector<uint8_t> old(MiB, 0);
    const uint64_t v = 0xabcdef;
    std::memcpy(old.data() + 64, &v, 8);
    CHECK(std::equal(got.begin() + MiB, got.end(), old.begin()));
    CHECK(r.rd(HPU_REG_ECC_UE_COUNT) == 1u);
    CHECK(r.rd(HPU_REG_EQ_PI) == eq_pi);
    // the piece outside the page moved once, the one into it bounced
    REQUIRE(g_log.pieces.size() == 2u);
    CHECK_FALSE(g_log.pieces[0].bounce);
    CHECK(g_log.pieces[1].bounce);
    // a read of the page still fails ECC at the packet
    uint64_t h = r.halloc(64, 64);
    Cqe c = r.run_cb(Cb().nop().lin_dma(page - 8, host_addr(h), 16));
    CHECK(c.status == HPU_CQ_ECC);
    CHECK(c.offset == 8u);
}

TEST_CASE("LIN_DMA with INJ_DMA_FAIL still fails without touching the host",
          "[emu][dma][one-copy][inj]")
{
    DmaRig r;
    r.setup_eq();
    r.setup_stream(3, 1);
    const uint64_t n = 4097;
    uint64_t host = r.halloc(n, PG);
    std::memset(r.hp(host), 0x5a, n);
    const bool to_hbm = GENERATE(true, false);
    const uint64_t hbm = 30 * MiB + 3;
    r.bwrite(hbm, std::vector<uint8_t>(n, 0x33).data(), n);
    const uint64_t src = to_hbm ? host_addr(host) : hbm;
    const uint64_t dst = to_hbm ? hbm : host_addr(host);

    r.wr(HPU_REG_INJ_DMA_FAIL, 1u << 3);
    // the CB in HBM: the LIN_DMA's data is the engine's first host access
    Cb cb;
    cb.nop().lin_dma(src, dst, n);
    r.bwrite(8 * MiB, cb.data(), cb.size());
    unsigned int touched = 0;
    auto in_data = [&](uint64_t addr) {
        touched += addr >= host && addr < host + n;
    };
    r.env.on_dma_read = in_data;
    r.env.on_dma_write = in_data;
    r.put_desc(3, 1, 8 * MiB, cb.size(), 0, 0x77);
    r.ring(3, 1);
    r.run();
    r.env.on_dma_read = nullptr;
    r.env.on_dma_write = nullptr;
    Cqe c = r.cqe(3, 1, 0);
    CHECK(c.status == HPU_CQ_BUS_ERROR);
    CHECK(c.offset == 8u);
    CHECK(r.rd(HPU_REG_INJ_DMA_FAIL) == 0u);        // used
    auto ev = events(r);
    REQUIRE(ev.size() == 1u);
    CHECK(ev[0].id == HPU_EVENT_DMA_BUS_ERROR);
    CHECK(ev[0].engine == 3u);
    CHECK(ev[0].addr == host);
    CHECK(touched == 0u);                       // the host was not touched
    CHECK((r.bread(hbm, n) == std::vector<uint8_t>(n, 0x33)));
    CHECK(std::all_of(r.hp(host), r.hp(host) + n,
                      [](uint8_t b) { return b == 0x5a; }));
    CHECK(g_log.bounced() == 1u);
    CHECK(g_log.one_copy() == 0u);
}

TEST_CASE("LIN_DMA one copy: an MMU fault in the middle reports as before and "
          "writes nothing of its piece", "[emu][dma][one-copy][mmu]")
{
    DmaRig r;
    r.setup_eq();
    const unsigned int A = 5;
    // the source: mapped for `mapped` bytes, then a hole
    const uint64_t mapped = GENERATE(3 * PG, MiB + 3 * PG);
    const uint64_t n = mapped + 2 * PG;
    auto data = pattern_bytes(mapped, 31);
    uint64_t sbus = r.halloc(mapped, PG);
    r.hwrite(sbus, data.data(), mapped);
    uint64_t sva = r.map_host(A, sbus, mapped, false);
    uint64_t hva = r.map_hbm(A, 50 * MiB, 4 * MiB);

    Cqe c = r.run_cb(Cb().nop().lin_dma(sva, hva, n), A);
    CHECK(c.status == HPU_CQ_MMU_FAULT);
    CHECK(c.offset == 8u);
    CHECK(fault_va(r) == sva + mapped);
    CHECK(((r.rd(HPU_REG_FAULT_INFO) & HPU_FAULT_CAUSE_MASK) >> 4) ==
          HPU_FAULT_NOT_PRESENT);
    CHECK((r.rd(HPU_REG_FAULT_INFO) & HPU_FAULT_WRITE) == 0u);
    auto ev = events(r);
    REQUIRE(ev.size() == 1u);
    CHECK(ev[0].id == HPU_EVENT_MMU_FAULT);
    CHECK(ev[0].addr == sva + mapped);
    // pieces before the faulting one landed, nothing of it
    const uint64_t landed = mapped > MiB ? MiB : 0;
    auto got = r.bread(50 * MiB, n);
    CHECK(std::equal(got.begin(), got.begin() + landed, data.begin()));
    CHECK(std::all_of(got.begin() + landed, got.end(),
                      [](uint8_t b) { return b == 0; }));
    REQUIRE(g_log.pieces.size() == pieces_of(n));
    CHECK(g_log.pieces.back().bounce);
    CHECK(g_log.one_copy() == pieces_of(n) - 1);
}

TEST_CASE("LIN_DMA one copy: a write fault in the middle writes the runs "
          "before it, as before", "[emu][dma][one-copy][mmu]")
{
    DmaRig r;
    const unsigned int A = 6;
    const uint64_t n = 3 * PG;
    auto data = pattern_bytes(n, 41);
    r.bwrite(70 * MiB, data.data(), n);
    uint64_t dbus = r.halloc(n, PG);
    std::memset(r.hp(dbus), 0x77, n);
    const uint64_t dva = 0x500000000ULL;
    r.map(A, dva, dbus, HPU_PTE_HOST | HPU_PTE_WRITE);
    r.map(A, dva + PG, dbus + PG, HPU_PTE_HOST | HPU_PTE_WRITE);
    r.map(A, dva + 2 * PG, dbus + 2 * PG, HPU_PTE_HOST);   // read-only
    uint64_t hva = r.map_hbm(A, 70 * MiB, 2 * MiB);

    Cqe c = r.run_cb(Cb().lin_dma(hva, dva, n), A);
    CHECK(c.status == HPU_CQ_MMU_FAULT);
    CHECK(fault_va(r) == dva + 2 * PG);
    CHECK(((r.rd(HPU_REG_FAULT_INFO) & HPU_FAULT_CAUSE_MASK) >> 4) ==
          HPU_FAULT_PROT);
    CHECK((r.rd(HPU_REG_FAULT_INFO) & HPU_FAULT_WRITE) != 0u);
    CHECK(std::memcmp(r.hp(dbus), data.data(), 2 * PG) == 0);
    CHECK(std::all_of(r.hp(dbus) + 2 * PG, r.hp(dbus) + n,
                      [](uint8_t b) { return b == 0x77; }));
    CHECK(g_log.bounced() == 1u);
}

TEST_CASE("LIN_DMA one copy: a host bus error reports the run it was copying",
          "[emu][dma][one-copy][event]")
{
    DmaRig r;
    r.setup_eq();
    const unsigned int A = 7;
    const uint64_t n = 4 * PG;
    // page 2 of the source or destination lies beyond host memory
    const uint64_t bad = HOST_BASE + HOST_SIZE + 5 * PG;
    const bool read = GENERATE(true, false);
    uint64_t bus = r.halloc(n, PG);
    const uint64_t va = 0x600000000ULL;
    for (uint64_t i = 0; i < 4; i++) {
        r.map(A, va + i * PG, i == 2 ? bad : bus + i * PG,
              HPU_PTE_HOST | HPU_PTE_WRITE);
    }
    uint64_t hva = r.map_hbm(A, 80 * MiB, 2 * MiB);

    Cqe c = r.run_cb(read ? Cb().lin_dma(va, hva, n) : Cb().lin_dma(hva, va, n),
                     A);
    CHECK(c.status == HPU_CQ_BUS_ERROR);
    auto ev = events(r);
    REQUIRE(ev.size() == 1u);
    CHECK(ev[0].id == HPU_EVENT_DMA_BUS_ERROR);
    CHECK(ev[0].addr == bad);               // where the failing run starts
    CHECK(ev[0].asid == A);
    REQUIRE(g_log.pieces.size() == 1u);
    CHECK_FALSE(g_log.pieces[0].bounce);
    CHECK(g_log.pieces[0].src_runs == (read ? 3u : 1u));
    CHECK(g_log.pieces[0].dst_runs == (read ? 1u : 3u));
}

TEST_CASE("LIN_DMA one copy: MMU_INV of the ASID stays BUSY while a piece is "
          "in flight", "[emu][dma][one-copy][mmu]")
{
    DmaRig r;
    const unsigned int A = 12;
    const uint64_t n = 8 * PG;
    auto data = pattern_bytes(n, 2);
    uint64_t sbus = r.halloc(n, PG);
    r.hwrite(sbus, data.data(), n);
    uint64_t sva = r.map_host(A, sbus, n, false);
    uint64_t hva = r.map_hbm(A, 90 * MiB, 2 * MiB);
    uint32_t during = 0, other = 0;
    bool seen = false;
    r.env.on_dma_read = [&](uint64_t addr) {
        if (addr == sbus && !seen) {
            seen = true;
            r.wr(HPU_REG_MMU_INV, 4);                   // another ASID
            other = r.rd(HPU_REG_MMU_INV_STATUS);
            r.wr(HPU_REG_MMU_INV, A);
            during = r.rd(HPU_REG_MMU_INV_STATUS);
        }
    };
    CHECK(r.run_cb(Cb().lin_dma(sva, hva, n), A).status == HPU_CQ_OK);
    r.env.on_dma_read = nullptr;
    REQUIRE(seen);
    CHECK(other == 0u);
    CHECK(during == HPU_MMU_INV_BUSY);
    CHECK(r.rd(HPU_REG_MMU_INV_STATUS) == 0u);     // done with the piece
    CHECK((r.bread(90 * MiB, n) == data));
    CHECK(g_log.one_copy() == 1u);
}

TEST_CASE("LIN_DMA one copy: a power-on reset during a piece's host read "
          "stops it before the next run", "[emu][dma][one-copy][reset]")
{
    DmaRig r;
    const unsigned int A = 8;
    const uint64_t n = 4 * PG;
    auto data = pattern_bytes(n, 3);
    uint64_t sbus = r.halloc(n, PG);
    r.hwrite(sbus, data.data(), n);
    const uint64_t sva = 0x700000000ULL;
    map_scattered(r, A, sva, sbus, { 0, 2, 1, 3 }, false);
    uint64_t hva = r.map_hbm(A, 96 * MiB, 2 * MiB);
    r.setup_stream(0, 0);
    r.submit(0, 0, Cb().lin_dma(sva, hva, n), A);
    bool reset = false;
    unsigned int after = 0;
    r.env.on_dma_read = [&](uint64_t addr) {
        if (reset) {
            after++;
        } else if (addr == sbus) {
            reset = true;
            hpum_core_reset(&r.core);
        }
    };
    r.env.on_dma_write = [&](uint64_t) { after += reset; };
    r.run();
    r.env.on_dma_read = nullptr;
    r.env.on_dma_write = nullptr;
    REQUIRE(reset);
    CHECK(after == 0u);             // no other run, no record
    CHECK(r.cq_pi(0, 0) == 0u);
    auto got = r.bread(96 * MiB, n);
    // the runs after the one in flight did not land
    CHECK(std::all_of(got.begin() + PG, got.end(),
                      [](uint8_t b) { return b == 0; }));
    REQUIRE(g_log.pieces.size() == 1u);
    CHECK_FALSE(g_log.pieces[0].bounce);
}

TEST_CASE("LIN_DMA one copy backs at most four HBM chunks per piece: more go "
          "through the bounce buffer", "[emu][dma][one-copy][hbm]")
{
    DmaRig r;
    const unsigned int A = 11;
    // VA page i in HBM chunk 20 + i: every page backed by a chunk of its own
    const uint64_t pages = GENERATE(4ULL, 5ULL, 40ULL);
    const uint64_t n = pages * PG, va = 0x900000000ULL;
    for (uint64_t i = 0; i < pages; i++) {
        r.map(A, va + i * PG, (20 + i) * 2 * MiB + 8 * PG, HPU_PTE_WRITE);
    }
    auto data = pattern_bytes(n, 29);
    uint64_t sbus = r.halloc(n, PG);
    r.hwrite(sbus, data.data(), n);
    uint64_t sva = r.map_host(A, sbus, n, false);
    const uint64_t backed = hpum_core_hbm_backed(&r.core);

    CHECK(r.run_cb(Cb().lin_dma(sva, va, n), A).status == HPU_CQ_OK);
    for (uint64_t i = 0; i < pages; i++) {
        auto got = r.bread((20 + i) * 2 * MiB + 8 * PG, PG);
        if (!std::equal(got.begin(), got.end(),
                        data.begin() + static_cast<std::ptrdiff_t>(i * PG))) {
            FAIL("VA page " << i);
        }
    }
    CHECK(hpum_core_hbm_backed(&r.core) == backed + pages * 2 * MiB);
    REQUIRE(g_log.pieces.size() == 1u);
    CHECK(g_log.pieces[0].bounce == (pages > 4));
    // backed now: the same copy again moves once
    CHECK(r.run_cb(Cb().lin_dma(sva, va, n), A).status == HPU_CQ_OK);
    REQUIRE(g_log.pieces.size() == 2u);
    CHECK_FALSE(g_log.pieces[1].bounce);
    CHECK(r.env.errors.empty());
}

TEST_CASE("MMU_INV of the ASID stays BUSY while a bounced access writes through "
          "its translation", "[emu][dma][mmu]")
{
    DmaRig r;
    const unsigned int A = 13;
    const int kind = GENERATE(0, 1, 2);     // bounced LIN_DMA, MEMSET, WRITE_VALUE
    const uint64_t n = 4 * PG;
    auto data = pattern_bytes(n, 4);
    uint64_t sbus = r.halloc(n, PG), dbus = r.halloc(n, PG);
    r.hwrite(sbus, data.data(), n);
    uint64_t sva = r.map_host(A, sbus, n, false);
    uint64_t dva = r.map_host(A, dbus, n, true);
    uint32_t during = 0, other = 0;
    bool seen = false;
    r.env.on_dma_write = [&](uint64_t addr) {
        if (addr == dbus && !seen) {
            seen = true;
            r.wr(HPU_REG_MMU_INV, 4);                   // another ASID
            other = r.rd(HPU_REG_MMU_INV_STATUS);
            r.wr(HPU_REG_MMU_INV, A);
            during = r.rd(HPU_REG_MMU_INV_STATUS);
        }
    };
    Cb cb;
    if (kind == 0) {
        cb.lin_dma(sva, dva, n);                        // host to host: bounced
    } else if (kind == 1) {
        cb.memset(0x5a5a5a5a5a5a5a5aULL, dva, n);
    } else {
        cb.write_value(dva, 0x12345678);
    }
    CHECK(r.run_cb(cb, A).status == HPU_CQ_OK);
    r.env.on_dma_write = nullptr;
    REQUIRE(seen);
    CHECK(other == 0u);
    CHECK(during == HPU_MMU_INV_BUSY);
    CHECK(r.rd(HPU_REG_MMU_INV_STATUS) == 0u);     // done with the access
    if (kind == 0) {
        CHECK(std::memcmp(r.hp(dbus), data.data(), n) == 0);
        CHECK(g_log.bounced() == 1u);
    }
}

TEST_CASE("hpum_copy_bulk() copies every byte and nothing else, whatever the "
          "size and alignment", "[emu][dma][bulk]")
{
    const size_t n = GENERATE(size_t{0}, size_t{1}, size_t{63}, size_t{HPU_COPY_BULK_MIN} - 1,
                              size_t{HPU_COPY_BULK_MIN}, size_t{HPU_COPY_BULK_MIN} + 1,
                              size_t{HPU_COPY_BULK_MIN} + 127, 3 * size_t{MiB} + 61);
    const size_t soff = GENERATE(size_t{0}, size_t{1}, size_t{17});
    const size_t doff = GENERATE(size_t{0}, size_t{5}, size_t{63});
    const auto data = pattern_bytes(n + 128, static_cast<uint32_t>(n ^ soff ^ (doff << 8)));
    std::vector<uint8_t> dst(n + 128, 0xa5);

    hpum_copy_bulk(dst.data() + doff, data.data() + soff, n);
    CHECK(std::equal(data.begin() + static_cast<std::ptrdiff_t>(soff),
                     data.begin() + static_cast<std::ptrdiff_t>(soff + n),
                     dst.begin() + static_cast<std::ptrdiff_t>(doff)));
    CHECK(std::all_of(dst.begin(), dst.begin() + static_cast<std::ptrdiff_t>(doff),
                      [](uint8_t b) { return b == 0xa5; }));
    CHECK(std::all_of(dst.begin() + static_cast<std::ptrdiff_t>(doff + n), dst.end(),
                      [](uint8_t b) { return b == 0xa5; }));
}

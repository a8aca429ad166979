// SPDX-License-Identifier: MIT
//
// Unit tests of HBM, the BAR4 window, the scrubber and the device MMU
// (emu/hpu_mem.c) against Documentation/hw/memory-and-queues.md.
//
// Copyright (c) 2026 The hpu authors

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "hpu_rig.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

using namespace hpu_test;

TEST_CASE("HBM is sparse and reads zero where never written", "[emu][hbm]")
{
    Rig r(32ULL << 30);

    CHECK(hpum_core_hbm_backed(&r.core) == 0);
    auto z = r.bread((32ULL << 30) - 64, 64);
    // NOLINTNEXTLINE
    CHECK(std::all_of(z.begin(), z.end(), [](uint8_t b) { return b == 0; }));
    uint32_t v = 0xa5a5a5a5;
    r.bwrite((20ULL << 30) + 3, &v, 4);
    CHECK(hpum_core_hbm_backed(&r.core) == HPU_HBM_CHUNK_SIZE);
    uint8_t out[8];
    REQUIRE(hpum_core_hbm_read(&r.core, (20ULL << 30) + 1, out, 8));
    CHECK(out[0] == 0);
    CHECK(out[2] == 0xa5);
    CHECK(out[5] == 0xa5);
    CHECK(out[6] == 0);
    CHECK_FALSE(hpum_core_hbm_read(&r.core, 32ULL << 30, out, 1));
}

TEST_CASE("spec version 8: BAR4 covers HBM, a power of two of at least 64 MiB", "[emu][hbm][window]")
{
    CHECK(hpum_hbm_bar_size(256ULL << 20) == 256ULL << 20);
    CHECK(hpum_hbm_bar_size(768ULL << 20) == 1ULL << 30);
    CHECK(hpum_hbm_bar_size(4ULL << 30) == 4ULL << 30);
    CHECK(hpum_hbm_bar_size(6ULL << 30) == 8ULL << 30);
    CHECK(hpum_hbm_bar_size(32ULL << 30) == 32ULL << 30);
    CHECK(hpum_hbm_bar_size(1) == uint64_t{HPU_BAR_HBM_SIZE});

    Rig r(768ULL << 20);
    // Beyond version 7's 64 MiB, up to the last HBM byte, one to one.
    hpum_core_hbm_window_write(&r.core, 0x4000000, 0x0102030405060708ULL, 8);
    CHECK(r.bread64(0x4000000) == 0x0102030405060708ULL);
    hpum_core_hbm_window_write(&r.core, (768ULL << 20) - 8, 0xa5a5a5a5a5a5a5a5ULL, 8);
    CHECK(hpum_core_hbm_window_read(&r.core, (768ULL << 20) - 8, 8) == 0xa5a5a5a5a5a5a5a5ULL);
    CHECK(r.error() == 0);
    // Inside the 1 GiB BAR but past HBM: reads 0, BAD_ACCESS.
    CHECK(hpum_core_hbm_window_read(&r.core, 768ULL << 20, 8) == 0u);
    CHECK(r.error() == HPU_ERROR_BAD_ACCESS);
    r.wr(HPU_REG_ERROR, HPU_ERROR_BAD_ACCESS);
    // Past the BAR: BAD_ACCESS too (the MMIO layer never sends it, but the core checks).
    CHECK(hpum_core_hbm_window_read(&r.core, 1ULL << 30, 1) == 0u);
    CHECK(r.error() == HPU_ERROR_BAD_ACCESS);
}

TEST_CASE("hbm-bar=64M: version 7's 64 MiB BAR4 and SPEC_VERSION 7, the window base moves it", "[emu][hbm][window]")
{
    HpuCoreConfig cfg;
    hpum_core_make_config(&cfg, 4ULL << 30, 10, "HPU-0000000000", test_uuid);
    CHECK(hpum_config_bar4_size(&cfg) == 4ULL << 30);
    CHECK(hpum_config_spec_version(&cfg) == 10u);
    cfg.bar4_v7 = true;
    CHECK(hpum_config_bar4_size(&cfg) == uint64_t{HPU_BAR_HBM_SIZE});
    CHECK(hpum_config_spec_version(&cfg) == 7u);

    DevOpts o;
    o.boot = false;
    o.hbm = 1ULL << 30;
    o.bar4_v7 = true;
    Rig r(o);
    CHECK(r.rd(HPU_REG_SPEC_VERSION) == 7u);
    // The last byte of the 64 MiB window, then one past it: BAD_ACCESS.
    hpum_core_hbm_window_write(&r.core, HPU_BAR_HBM_SIZE - 1, 0x5a, 1);
    CHECK(r.bread(HPU_BAR_HBM_SIZE - 1, 1)[0] == 0x5a);
    CHECK(r.error() == 0);
    CHECK(hpum_core_hbm_window_read(&r.core, HPU_BAR_HBM_SIZE, 1) == 0u);
    CHECK(r.error() == HPU_ERROR_BAD_ACCESS);
    r.wr(HPU_REG_ERROR, HPU_ERROR_BAD_ACCESS);
    hpum_core_hbm_window_write(&r.core, HPU_BAR_HBM_SIZE, 0x77, 1);
    CHECK(r.error() == HPU_ERROR_BAD_ACCESS);
    CHECK(r.bread(HPU_BAR_HBM_SIZE, 1)[0] == 0);
    r.wr(HPU_REG_ERROR, HPU_ERROR_BAD_ACCESS);
    // HBM above 64 MiB through the window base, as a version 7 driver reaches it.
    r.wr(HPU_REG_HBM_WIN_BASE_LO, HPU_BAR_HBM_SIZE);
    hpum_core_hbm_window_write(&r.core, 8, 0x0123456789abcdefULL, 8);
    CHECK(r.bread64(HPU_BAR_HBM_SIZE + 8) == 0x0123456789abcdefULL);
    CHECK(r.error() == 0);
}

TEST_CASE("BAR4 window reaches HBM at HBM_WIN_BASE", "[emu][hbm][window]")
{
    Rig r(1ULL << 30);

    SECTION("every size, any alignment, across a chunk boundary") {
        const uint64_t addr = GENERATE(0ULL, 1ULL, 7ULL, HPU_HBM_CHUNK_SIZE - 3,
                                       uint64_t{HPU_BAR_HBM_SIZE} - 8);
        for (unsigned int size = 1; size <= 8; size++) {
            uint64_t val = 0x1122334455667788ULL & (~0ULL >> (64 - 8 * size));
            hpum_core_hbm_window_write(&r.core, addr, val, size);
            CHECK(hpum_core_hbm_window_read(&r.core, addr, size) == val);
            auto b = r.bread(addr, size);
            for (unsigned int i = 0; i < size; i++) {
                CHECK(b[i] == static_cast<uint8_t>(val >> (8 * i)));
            }
        }
        CHECK(r.error() == 0);
    }
    SECTION("the base moves the window; low bits are ignored") {
        r.wr(HPU_REG_HBM_WIN_BASE_LO, 0x0c000000u | 0x1234u);
        CHECK(r.rd(HPU_REG_HBM_WIN_BASE_LO) == 0x0c000000u);
        CHECK(r.env.errors.size() == 1);
        hpum_core_hbm_window_write(&r.core, 0x10, 0xdeadbeef, 4);
        CHECK(r.bread64(0x0c000010) == 0xdeadbeefu);
    }
    SECTION("bytes beyond HBM: read 0, write dropped, BAD_ACCESS") {
        r.wr(HPU_REG_HBM_WIN_BASE_LO, (1u << 30) - HPU_BAR_HBM_SIZE);
        hpum_core_hbm_window_write(&r.core, HPU_BAR_HBM_SIZE - 4, 0x01020304, 4);
        CHECK(hpum_core_hbm_window_read(&r.core, HPU_BAR_HBM_SIZE - 4, 4) ==
              0x01020304u);
        CHECK(r.error() == 0);
        r.wr(HPU_REG_HBM_WIN_BASE_HI, 1);       // window at 4 GiB + ...
        CHECK(hpum_core_hbm_window_read(&r.core, 0, 4) == 0u);
        CHECK(r.error() == HPU_ERROR_BAD_ACCESS);
        r.wr(HPU_REG_ERROR, HPU_ERROR_BAD_ACCESS);
        hpum_core_hbm_window_write(&r.core, 0, 1, 1);
        CHECK(r.error() == HPU_ERROR_BAD_ACCESS);
        CHECK(hpum_core_hbm_backed(&r.core) == HPU_HBM_CHUNK_SIZE);
    }
}

TEST_CASE("the scrubber zeroes HBM and frees its backing", "[emu][hbm][scrub]")
{
    Rig r(1ULL << 30);
    auto fill = pattern_bytes(6 * MiB, 1);

    r.bwrite(2 * MiB, fill.data(), fill.size());
    REQUIRE(hpum_core_hbm_backed(&r.core) == 6 * MiB);

    SECTION("a good range") {
        r.wr(HPU_REG_SCRUB_ADDR_LO, 4 * MiB);
        r.wr(HPU_REG_SCRUB_SIZE_LO, 2 * MiB);
        r.wr(HPU_REG_SCRUB_CTRL, HPU_SCRUB_START);
        CHECK(r.rd(HPU_REG_SCRUB_STATUS) == 0u);
        CHECK(r.rd(HPU_REG_SCRUB_COUNT) == 1u);
        CHECK(hpum_core_hbm_backed(&r.core) == 4 * MiB);
        auto b = r.bread(2 * MiB, 6 * MiB);
        CHECK(std::equal(b.begin(), b.begin() + 2 * MiB, fill.begin()));
        CHECK(std::all_of(b.begin() + 2 * MiB, b.begin() + 4 * MiB,
                          [](uint8_t x) { return x == 0; }));
        CHECK(std::equal(b.begin() + 4 * MiB, b.end(), fill.begin() + 4 * MiB));
    }
    SECTION("bad ranges set ERROR and scrub nothing") {
        struct { uint64_t addr, size; } bad[] = {
            { 4 * MiB + 4096, 2 * MiB }, { 4 * MiB, MiB }, { 4 * MiB, 0 },
            { 1ULL << 30, 2 * MiB }, { (1ULL << 30) - 2 * MiB, 4 * MiB },
            { 2 * MiB, ~0ULL - 2 * MiB + 1 },
        };
        for (auto &b : bad) {
            r.wr(HPU_REG_SCRUB_ADDR_LO, static_cast<uint32_t>(b.addr));
            r.wr(HPU_REG_SCRUB_ADDR_HI, static_cast<uint32_t>(b.addr >> 32));
            r.wr(HPU_REG_SCRUB_SIZE_LO, static_cast<uint32_t>(b.size));
            r.wr(HPU_REG_SCRUB_SIZE_HI, static_cast<uint32_t>(b.size >> 32));
            r.wr(HPU_REG_SCRUB_CTRL, HPU_SCRUB_START);
            CHECK(r.rd(HPU_REG_SCRUB_STATUS) == HPU_SCRUB_ERROR);
        }
        CHECK(r.rd(HPU_REG_SCRUB_COUNT) == 0u);
        CHECK(hpum_core_hbm_backed(&r.core) == 6 * MiB);
        CHECK(r.env.errors.size() == std::size(bad));
        // the next good start clears ERROR
        r.wr(HPU_REG_SCRUB_ADDR_LO, 0);
        r.wr(HPU_REG_SCRUB_ADDR_HI, 0);
        r.wr(HPU_REG_SCRUB_SIZE_LO, 2 * MiB);
        r.wr(HPU_REG_SCRUB_SIZE_HI, 0);
        r.wr(HPU_REG_SCRUB_CTRL, HPU_SCRUB_START);
        CHECK(r.rd(HPU_REG_SCRUB_STATUS) == 0u);
    }
}

namespace {

// The protection of the host mapping holding @p, from /proc/self/maps
// ("rw-p", "---p"), or "" if none does.
std::string host_prot(const void *p)
{
    const auto at = reinterpret_cast<uintptr_t>(p);
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        unsigned long lo, hi;
        char prot[5] = {};
        if (std::sscanf(line.c_str(), "%lx-%lx %4s", &lo, &hi, prot) == 3 && at >= lo &&
            at < hi) {
            return prot;
        }
    }
    return "";
}

} // namespace

TEST_CASE("the HBM reservation is inaccessible but for the chunks allocated", "[emu][hbm]")
{
    Rig r(1ULL << 30);
    if (!r.core.hbm.base) {
        SKIP("the host refused the HBM reservation: chunks are mapped one by one");
    }
    // reserved address space only: nothing faulted in or locked, nothing
    // charged against strict overcommit (device-model.md)
    CHECK(host_prot(r.core.hbm.base) == "---p");
    CHECK(host_prot(r.core.hbm.base + (1ULL << 30) - 1) == "---p");
    const uint8_t one = 1;
    r.bwrite(4 * MiB + 5, &one, 1);
    REQUIRE(r.core.hbm.chunks[2] == r.core.hbm.base + 4 * MiB);
    CHECK(host_prot(r.core.hbm.base + 4 * MiB) == "rw-p");
    CHECK(host_prot(r.core.hbm.base + 6 * MiB - 1) == "rw-p");
    CHECK(host_prot(r.core.hbm.base + 4 * MiB - 1) == "---p");
    CHECK(host_prot(r.core.hbm.base + 6 * MiB) == "---p");
    CHECK(r.bread(4 * MiB + 5, 1)[0] == 1);
}

TEST_CASE("a chunk freed in the HBM reservation reads zeros even where the host refuses "
          "MADV_DONTNEED", "[emu][hbm][scrub]")
{
    Rig r(1ULL << 30);
    if (!r.core.hbm.base) {
        SKIP("the host refused the HBM reservation: chunks are unmapped when freed");
    }
    auto fill = pattern_bytes(2 * MiB, 7);
    r.bwrite(4 * MiB, fill.data(), fill.size());
    uint8_t *chunk = r.core.hbm.chunks[2];
    REQUIRE(chunk == r.core.hbm.base + 4 * MiB);
    // a locked page: MADV_DONTNEED fails with EINVAL on it
    if (mlock(chunk, 4096) != 0) {
        SKIP("mlock() refused (RLIMIT_MEMLOCK)");
    }
    r.wr(HPU_REG_SCRUB_ADDR_LO, 4 * MiB);
    r.wr(HPU_REG_SCRUB_SIZE_LO, 2 * MiB);
    r.wr(HPU_REG_SCRUB_CTRL, HPU_SCRUB_START);
    CHECK(r.rd(HPU_REG_SCRUB_STATUS) == 0u);
    CHECK(hpum_core_hbm_backed(&r.core) == 0);
    // the chunk's next allocation is the same memory: no old byte in it
    const uint8_t one = 1;
    r.bwrite(6 * MiB - 1, &one, 1);
    CHECK(r.core.hbm.chunks[2] == chunk);
    auto b = r.bread(4 * MiB, 8192);
    CHECK(std::all_of(b.begin(), b.end(), [](uint8_t x) { return x == 0; }));
    munlock(chunk, 4096);
}

namespace {

// A user context with an HBM buffer and a host buffer, both mapped.
struct Ctx : Rig {
    static constexpr unsigned int ASID = 5;
    uint64_t hbm_va = 0, host_bus = 0, host_va = 0;

    Ctx()
    {
        setup_eq();
        hbm_va = map_hbm(ASID, 32 * MiB, 4 * MiB);
        host_bus = halloc(64 * 1024, PG);
        host_va = map_host(ASID, host_bus, 64 * 1024);
    }
    // Copy 16 bytes from @src to @dst in the context; the record.
    Cqe copy(uint64_t src, uint64_t dst, uint64_t n = 16)
    {
        return run_cb(Cb().lin_dma(src, dst, n), ASID);
    }
};

} // namespace

TEST_CASE("page walk: 4 KiB host pages and 2 MiB HBM pages", "[emu][mmu]")
{
    Ctx c;
    auto data = pattern_bytes(40000, 7);

    c.hwrite(c.host_bus, data.data(), data.size());
    // host -> HBM (odd offset across a 2 MiB page) -> host
    uint64_t hva = c.hbm_va + 2 * MiB - 12345;
    CHECK(c.copy(c.host_va + 3, hva, 30000).status == HPU_CQ_OK);
    auto got = c.bread(32 * MiB + 2 * MiB - 12345, 30000);
    CHECK(std::memcmp(got.data(), data.data() + 3, 30000) == 0);
    CHECK(c.copy(hva, c.host_va + 30001, 30000).status == HPU_CQ_OK);
    CHECK(std::memcmp(c.hp(c.host_bus + 30001), data.data() + 3, 30000) == 0);
    CHECK(c.rd(HPU_REG_FAULT_COUNT) == 0u);
}

TEST_CASE("MMU faults: every cause, latch, count and event", "[emu][mmu]")
{
    Ctx c;
    const unsigned int A = Ctx::ASID;
    uint64_t va = 0, want_va = 0;
    uint32_t cause = 0;
    bool write = false;

    SECTION("NOT_PRESENT: unmapped VA") {
        va = want_va = 0x7000000000ULL + 0x123;
        cause = HPU_FAULT_NOT_PRESENT;
    }
    SECTION("NOT_PRESENT: leaf missing next to a mapped page") {
        va = want_va = c.host_va + 64 * 1024 + 8;
        cause = HPU_FAULT_NOT_PRESENT;
    }
    SECTION("WRITE: write through a read-only leaf") {
        uint64_t ro = c.map_hbm(A, 64 * MiB, 2 * MiB, false);
        va = want_va = ro + 100;
        write = true;
        cause = HPU_FAULT_PROT;
    }
    SECTION("BAD_PTE: reserved bits") {
        uint64_t slot = c.pte_slot(A, c.hbm_va, 2);
        c.bwrite64(slot, c.bread64(slot) | 0x10);
        va = want_va = c.hbm_va + 8;
        cause = HPU_FAULT_BAD_PTE;
    }
    SECTION("BAD_PTE: HUGE at L1") {
        uint64_t slot = c.pte_slot(A, c.hbm_va, 1);
        c.bwrite64(slot, c.bread64(slot) | HPU_PTE_HUGE);
        va = want_va = c.hbm_va;
        cause = HPU_FAULT_BAD_PTE;
    }
    SECTION("BAD_PTE: HUGE at L3") {
        uint64_t slot = c.pte_slot(A, c.host_va, 3);
        c.bwrite64(slot, c.bread64(slot) | HPU_PTE_HUGE);
        va = want_va = c.host_va;
        cause = HPU_FAULT_BAD_PTE;
    }
    SECTION("BAD_PTE: misaligned 2 MiB leaf") {
        uint64_t v = c.va_next;
        c.map(A, v, 64 * MiB + PG, HPU_PTE_WRITE, true);
        va = want_va = v;
        cause = HPU_FAULT_BAD_PTE;
    }
    SECTION("BAD_PTE: HBM page beyond HBM") {
        uint64_t v = c.va_next;
        c.map(A, v, 256 * MiB, HPU_PTE_WRITE, true);
        va = want_va = v;
        cause = HPU_FAULT_BAD_PTE;
    }
    SECTION("RANGE: VA bits 63:48") {
        va = want_va = 1ULL << 48;
        cause = HPU_FAULT_RANGE;
    }
    INFO("cause " << cause);
    // A read fault reads from va; a write fault writes to it.
    Cb cb;
    cb.nop();
    if (write) {
        cb.lin_dma(c.hbm_va, va, 16);
    } else {
        cb.lin_dma(va, c.hbm_va, 16);
    }
    Cqe e = c.run_cb(cb, A);
    CHECK(e.status == HPU_CQ_MMU_FAULT);
    CHECK(e.offset == 8);
    CHECK(c.rd(HPU_REG_FAULT_COUNT) == 1u);
    uint32_t info = HPU_FAULT_VALID | (write ? HPU_FAULT_WRITE : 0) | cause << 4;
    CHECK(c.rd(HPU_REG_FAULT_INFO) == info);
    CHECK(c.rd(HPU_REG_FAULT_ASID) == A);
    CHECK(c.rd(HPU_REG_FAULT_VA_LO) == static_cast<uint32_t>(want_va));
    CHECK(c.rd(HPU_REG_FAULT_VA_HI) == static_cast<uint32_t>(want_va >> 32));
    REQUIRE(c.rd(HPU_REG_EQ_PI) == 1u);
    Eqe ev = c.eqe(0);
    CHECK(ev.id == HPU_EVENT_MMU_FAULT);
    CHECK(ev.severity == HPU_EVENT_SEV_ERROR);
    CHECK(ev.engine == 0);
    CHECK(ev.asid == A);
    CHECK(ev.addr == want_va);
    CHECK(ev.info == info);
    CHECK(ev.timestamp == c.env.now);
    CHECK(std::find(c.env.vectors.begin(), c.env.vectors.end(),
                    unsigned{HPU_VEC_EQ}) != c.env.vectors.end());
}

TEST_CASE("MMU faults: a root that is not valid", "[emu][mmu]")
{
    Ctx c;
    const unsigned int A = Ctx::ASID;

    c.wr(HPU_REG_MMU_ROOT_LO(A), static_cast<uint32_t>(c.roots[A]));
    c.wr(HPU_REG_MMU_INV, A);
    Cqe e = c.run_cb(Cb().nop(), A);       // the fetch itself faults
    CHECK(e.status == HPU_CQ_MMU_FAULT);
    CHECK(e.offset == 0);
    CHECK(c.rd(HPU_REG_FAULT_INFO) ==
          (HPU_FAULT_VALID | HPU_FAULT_NOT_PRESENT << 4));
    CHECK(c.rd(HPU_REG_FAULT_VA_HI) == 0x40u);
}

TEST_CASE("MMU faults: the latch keeps the first until released", "[emu][mmu]")
{
    Ctx c;

    CHECK(c.copy(0x7000000000ULL, c.hbm_va).status == HPU_CQ_MMU_FAULT);
    // second fault, on engine 3, a write
    uint64_t ro = c.map_hbm(Ctx::ASID, 64 * MiB, 2 * MiB, false);
    CHECK(c.run_cb(Cb().lin_dma(c.hbm_va, ro, 4), Ctx::ASID, 3).status ==
          HPU_CQ_MMU_FAULT);
    CHECK(c.rd(HPU_REG_FAULT_COUNT) == 2u);
    CHECK(c.rd(HPU_REG_FAULT_VA_LO) == 0u);
    CHECK(c.rd(HPU_REG_FAULT_VA_HI) == 0x70u);
    CHECK(c.eqe(1).engine == 3);
    CHECK(c.eqe(1).info == (HPU_FAULT_VALID | HPU_FAULT_WRITE |
                            HPU_FAULT_PROT << 4 | 3 << 8));
    c.wr(HPU_REG_FAULT_INFO, HPU_FAULT_VALID);
    CHECK((c.rd(HPU_REG_FAULT_INFO) & HPU_FAULT_VALID) == 0u);
    CHECK(c.run_cb(Cb().lin_dma(c.hbm_va, ro, 4), Ctx::ASID, 3).status ==
          HPU_CQ_MMU_FAULT);
    CHECK(c.rd(HPU_REG_FAULT_INFO) == (HPU_FAULT_VALID | HPU_FAULT_WRITE |
                                       HPU_FAULT_PROT << 4 | 3 << 8));
    CHECK(c.rd(HPU_REG_FAULT_VA_LO) == static_cast<uint32_t>(ro));
}

TEST_CASE("an ASID above 63 is a RANGE fault", "[emu][mmu]")
{
    Rig r;
    r.setup_stream(0, 0);
    uint64_t cb = r.place_cb(Cb().nop(), 0);
    r.put_desc(0, 0, cb, 8, 64, 1);
    r.ring(0, 0);
    r.run();
    CHECK(r.cqe(0, 0, 0).status == HPU_CQ_MMU_FAULT);
    CHECK(((r.rd(HPU_REG_FAULT_INFO) & HPU_FAULT_CAUSE_MASK) >> 4) ==
          HPU_FAULT_RANGE);
    CHECK(r.rd(HPU_REG_FAULT_ASID) == 64u);
}

TEST_CASE("the TLB stays stale until invalidated", "[emu][mmu][tlb]")
{
    Ctx c;
    const unsigned int A = Ctx::ASID;
    uint32_t a = 0xaaaaaaaa, b = 0xbbbbbbbb;
    uint64_t va = c.map_hbm(A, 64 * MiB, 2 * MiB);

    c.bwrite(64 * MiB, &a, 4);
    c.bwrite(66 * MiB, &b, 4);
    CHECK(c.copy(va, c.host_va, 4).status == HPU_CQ_OK);
    CHECK(c.hrd32(c.host_bus) == a);
    // remap va to the second page without invalidating
    c.map(A, va, 66 * MiB, HPU_PTE_WRITE, true);
    CHECK(c.copy(va, c.host_va, 4).status == HPU_CQ_OK);
    CHECK(c.hrd32(c.host_bus) == a);                 // stale
    uint32_t inv = GENERATE(uint32_t{Ctx::ASID}, uint32_t{HPU_MMU_INV_ALL});
    c.wr(HPU_REG_MMU_INV, inv);
    CHECK(c.rd(HPU_REG_MMU_INV_STATUS) == 0u);
    CHECK(c.rd(HPU_REG_MMU_INV_COUNT) == 1u);
    CHECK(c.copy(va, c.host_va, 4).status == HPU_CQ_OK);
    CHECK(c.hrd32(c.host_bus) == b);

    // invalidating another ASID leaves ours stale
    c.map(A, va, 64 * MiB, HPU_PTE_WRITE, true);
    c.wr(HPU_REG_MMU_INV, A + 1);
    CHECK(c.copy(va, c.host_va, 4).status == HPU_CQ_OK);
    CHECK(c.hrd32(c.host_bus) == b);
    // and removing a mapping faults only after invalidation
    c.bwrite64(c.pte_slot(A, va, 2), 0);
    CHECK(c.copy(va, c.host_va, 4).status == HPU_CQ_OK);
    c.wr(HPU_REG_MMU_INV, A);
    CHECK(c.copy(va, c.host_va, 4).status == HPU_CQ_MMU_FAULT);
}

TEST_CASE("MMU registers", "[emu][mmu]")
{
    Rig r;

    CHECK(r.rd(HPU_REG_MMU_ASIDS) == 64u);
    r.wr(HPU_REG_MMU_ROOT_LO(63), 0xfffffffeu);
    CHECK(r.rd(HPU_REG_MMU_ROOT_LO(63)) == 0xfffff000u);
    r.wr(HPU_REG_MMU_ROOT_HI(63), 0x12u);
    CHECK(r.rd(HPU_REG_MMU_ROOT_HI(63)) == 0x12u);
    for (uint32_t reg : { HPU_REG_MMU_ASIDS, HPU_REG_MMU_INV_STATUS,
                          HPU_REG_MMU_INV_COUNT, HPU_REG_FAULT_ASID,
                          HPU_REG_FAULT_VA_LO, HPU_REG_FAULT_VA_HI,
                          HPU_REG_FAULT_COUNT, HPU_REG_SCRUB_STATUS,
                          HPU_REG_SCRUB_COUNT }) {
        r.wr(HPU_REG_ERROR, ~0u);
        r.wr(reg, 1);
        CHECK(r.error() == HPU_ERROR_BAD_ACCESS);
    }
}

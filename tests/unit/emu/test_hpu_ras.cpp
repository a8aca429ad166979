// SPDX-License-Identifier: MIT
//
// Unit tests of spec version 3 (Documentation/hw/errors-and-reset.md):
// hard reset, the engine watchdog, hang and DMA-failure injection, HBM ECC
// errors and poison, the management CPU (boot, heartbeat, fatal error)
// and the events they post.  Device time moves only through the fake
// timer (Dev::fire_timer, Dev::advance); engines are stepped synchronously.
//
// Copyright (c) 2026 The hpu authors

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <algorithm>

#include "hpu_rig.hpp"

using namespace hpu_test;

namespace {

constexpr uint64_t MS = 1000000;

std::vector<Eqe> events(Rig &r)
{
    std::vector<Eqe> v;
    for (uint32_t i = 0; i < r.rd(HPU_REG_EQ_PI); i++) {
        v.push_back(r.eqe(i));
    }
    return v;
}

void hard_reset(Dev &d)
{
    d.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
    d.advance(HPU_HARD_RESET_NS);
    REQUIRE(d.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
}

// After power-on or a hard reset: the boot ROM, then the driver's image.
void reboot(Dev &d)
{
    REQUIRE(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_ROM_INIT);
    d.advance(HPU_ROM_INIT_NS);
    REQUIRE(d.boot(fw_image()) == HPU_CPU_RUNNING);
}

void inject_ecc(Dev &d, uint64_t off, uint32_t kind)
{
    d.wr(HPU_REG_INJ_ECC_ADDR_LO, static_cast<uint32_t>(off));
    d.wr(HPU_REG_INJ_ECC_ADDR_HI, static_cast<uint32_t>(off >> 32));
    d.wr(HPU_REG_INJ_ECC_CTRL, kind);
}

} // namespace

// Management CPU

TEST_CASE("the management CPU runs 20 ms after the ROM accepts an image",
          "[emu][cpu]")
{
    Dev d;

    hpum_core_reset(&d.core);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_ROM_INIT);
    d.advance(HPU_ROM_INIT_NS);
    d.load_image(fw_image());
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_HOST);
    d.advance(HPU_FW_VERIFY_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_BOOTING);
    d.advance(HPU_CPU_BOOT_NS - 1);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_BOOTING);
    d.advance(1);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_RUNNING);
    CHECK(d.rd(HPU_REG_HB_ACK) == 0u);
    CHECK(d.rd(HPU_REG_FW_ERROR) == 0u);
}

TEST_CASE("heartbeat: HB_REQ is copied to HB_ACK within 1 ms", "[emu][cpu]")
{
    Dev d;

    d.wr(HPU_REG_HB_REQ, 41);
    CHECK(d.rd(HPU_REG_HB_REQ) == 41u);
    CHECK(d.rd(HPU_REG_HB_ACK) == 0u);      // not in the MMIO handler
    REQUIRE(d.env.timer_armed);
    CHECK(d.env.timer_ns < HPU_HB_ACK_NS);
    d.advance(HPU_HB_ACK_NS);
    CHECK(d.rd(HPU_REG_HB_ACK) == 41u);
    // two requests before the answer: the last one is answered
    d.wr(HPU_REG_HB_REQ, 42);
    d.wr(HPU_REG_HB_REQ, 43);
    d.advance(HPU_HB_ACK_NS);
    CHECK(d.rd(HPU_REG_HB_ACK) == 43u);
    // HB_ACK, CPU_STATUS and FW_ERROR are read-only
    d.wr(HPU_REG_HB_ACK, 1);
    CHECK(d.error() == HPU_ERROR_BAD_ACCESS);
    CHECK(d.rd(HPU_REG_HB_ACK) == 43u);
}

TEST_CASE("heartbeat requests written while booting are answered once running",
          "[emu][cpu]")
{
    Dev d;

    hpum_core_reset(&d.core);
    d.advance(HPU_ROM_INIT_NS);
    d.load_image(fw_image());
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_HOST);
    d.advance(HPU_FW_VERIFY_NS);
    REQUIRE(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_BOOTING);
    d.wr(HPU_REG_HB_REQ, 7);
    d.advance(HPU_CPU_BOOT_NS - 1);
    CHECK(d.rd(HPU_REG_HB_ACK) == 0u);
    d.advance(1 + HPU_HB_ACK_NS);
    CHECK(d.rd(HPU_REG_HB_ACK) == 7u);
}

TEST_CASE("HB_EVENT_MS posts numbered HEARTBEAT events", "[emu][cpu][event]")
{
    Rig r;
    r.setup_eq(16);
    r.wr(HPU_REG_HB_EVENT_MS, 10);
    r.advance(35 * MS);
    auto ev = events(r);
    REQUIRE(ev.size() == 3);
    for (uint32_t i = 0; i < 3; i++) {
        CHECK(ev[i].id == HPU_EVENT_HEARTBEAT);
        CHECK(ev[i].severity == HPU_EVENT_SEV_INFO);
        CHECK(ev[i].engine == HPU_EVENT_ENGINE_NONE);
        CHECK(ev[i].asid == 0);
        CHECK(ev[i].addr == 0u);
        CHECK(ev[i].info == i + 1);
    }
    CHECK(ev[1].timestamp - ev[0].timestamp == 10 * MS);
    CHECK(std::count(r.env.vectors.begin(), r.env.vectors.end(),
                     unsigned{HPU_VEC_EQ}) == 3);
    // 0 stops them
    r.wr(HPU_REG_HB_EVENT_MS, 0);
    r.advance(100 * MS);
    CHECK(r.rd(HPU_REG_EQ_PI) == 3u);
    CHECK_FALSE(r.core.tmr.armed & (1u << HPU_TMR_HB_EVENT));
}

TEST_CASE("INJ_FW 1 stops heartbeat answers and events", "[emu][cpu][inj]")
{
    Rig r;
    r.setup_eq(16);
    r.wr(HPU_REG_HB_EVENT_MS, 5);
    r.advance(6 * MS);
    REQUIRE(r.rd(HPU_REG_EQ_PI) == 1u);
    r.wr(HPU_REG_INJ_FW, HPU_INJ_FW_HB_STOP);
    r.wr(HPU_REG_HB_REQ, 9);
    r.advance(50 * MS);
    CHECK(r.rd(HPU_REG_HB_ACK) == 0u);
    CHECK(r.rd(HPU_REG_EQ_PI) == 1u);
    CHECK(r.rd(HPU_REG_CPU_STATUS) == HPU_CPU_RUNNING);
    CHECK(r.rd(HPU_REG_FW_ERROR) == 0u);
    CHECK(r.rd(HPU_REG_INJ_FW) == 0u);      // write-only, reads 0
}

TEST_CASE("INJ_FW 2: FW_FATAL, FW_ERROR and a halted CPU", "[emu][cpu][inj]")
{
    Rig r;
    r.setup_eq(16);
    r.env.now = 123456789;
    r.wr(HPU_REG_HB_EVENT_MS, 5);
    r.wr(HPU_REG_INJ_FW, HPU_INJ_FW_FATAL);
    CHECK(r.rd(HPU_REG_CPU_STATUS) == HPU_CPU_HALTED);
    CHECK(r.rd(HPU_REG_FW_ERROR) == HPU_FW_FATAL_INJECTED);
    auto ev = events(r);
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].id == HPU_EVENT_FW_FATAL);
    CHECK(ev[0].severity == HPU_EVENT_SEV_FATAL);
    CHECK(ev[0].engine == HPU_EVENT_ENGINE_NONE);
    CHECK(ev[0].info == 0xdeadu);
    CHECK(ev[0].timestamp == 123456789u);
    r.wr(HPU_REG_HB_REQ, 3);
    r.advance(100 * MS);
    CHECK(r.rd(HPU_REG_HB_ACK) == 0u);
    CHECK(r.rd(HPU_REG_EQ_PI) == 1u);       // no heartbeat events
    // a second fatal error while halted is ignored
    r.wr(HPU_REG_INJ_FW, HPU_INJ_FW_FATAL);
    CHECK(r.rd(HPU_REG_EQ_PI) == 1u);
    // an unknown code is a logged guest error
    r.env.errors.clear();
    r.wr(HPU_REG_INJ_FW, 3);
    CHECK(r.env.errors.size() == 1);
}

TEST_CASE("a hard reset reboots a halted CPU and clears INJ_FW",
          "[emu][cpu][hard-reset]")
{
    Dev d;
    d.wr(HPU_REG_INJ_FW, HPU_INJ_FW_HB_STOP);
    d.wr(HPU_REG_INJ_FW, HPU_INJ_FW_FATAL);
    d.wr(HPU_REG_HB_REQ, 5);
    d.wr(HPU_REG_HB_EVENT_MS, 100);

    d.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_OFF);
    d.advance(HPU_HARD_RESET_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_ROM_INIT);
    CHECK(d.rd(HPU_REG_FW_ERROR) == 0u);
    CHECK(d.rd(HPU_REG_HB_REQ) == 0u);
    CHECK(d.rd(HPU_REG_HB_EVENT_MS) == 0u);
    reboot(d);
    d.wr(HPU_REG_HB_REQ, 6);
    d.advance(HPU_HB_ACK_NS);
    CHECK(d.rd(HPU_REG_HB_ACK) == 6u);
}

TEST_CASE("a soft reset keeps the firmware running", "[emu][cpu][reset]")
{
    Dev d;
    d.wr(HPU_REG_HB_EVENT_MS, 20);
    d.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    d.advance(HPU_SOFT_RESET_NS);
    REQUIRE(d.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_RUNNING);
    CHECK(d.rd(HPU_REG_HB_EVENT_MS) == 20u);
    d.wr(HPU_REG_HB_REQ, 77);
    d.advance(HPU_HB_ACK_NS);
    CHECK(d.rd(HPU_REG_HB_ACK) == 77u);
}

TEST_CASE("INJ_MMU_INV: invalidations stop completing until a hard reset",
          "[emu][inj][hard-reset]")
{
    Dev d;
    d.wr(HPU_REG_MMU_INV, HPU_MMU_INV_ALL);
    CHECK(d.rd(HPU_REG_MMU_INV_STATUS) == 0u);
    const uint32_t done = d.rd(HPU_REG_MMU_INV_COUNT);

    d.wr(HPU_REG_INJ_MMU_INV, 0xffffffffu);
    CHECK(d.rd(HPU_REG_INJ_MMU_INV) == HPU_INJ_MMU_INV_STUCK);
    d.wr(HPU_REG_MMU_INV, 1);
    CHECK(d.rd(HPU_REG_MMU_INV_STATUS) == HPU_MMU_INV_BUSY);
    // Still pending once the injection is withdrawn, and after a soft reset.
    d.wr(HPU_REG_INJ_MMU_INV, 0);
    d.wr(HPU_REG_MMU_INV, HPU_MMU_INV_ALL);
    d.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    d.advance(HPU_SOFT_RESET_NS);
    REQUIRE(d.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK(d.rd(HPU_REG_MMU_INV_STATUS) == HPU_MMU_INV_BUSY);
    CHECK(d.rd(HPU_REG_MMU_INV_COUNT) == done);

    d.wr(HPU_REG_INJ_MMU_INV, HPU_INJ_MMU_INV_STUCK);
    hard_reset(d);
    CHECK(d.rd(HPU_REG_INJ_MMU_INV) == 0u);
    CHECK(d.rd(HPU_REG_MMU_INV_STATUS) == 0u);
    d.wr(HPU_REG_MMU_INV, HPU_MMU_INV_ALL);
    CHECK(d.rd(HPU_REG_MMU_INV_STATUS) == 0u);
    CHECK(d.rd(HPU_REG_MMU_INV_COUNT) == done + 1);
}

TEST_CASE("INJ_QUIESCE: streams that never stop and a hard reset that never completes, until power-on",
          "[emu][inj][hard-reset]")
{
    Dev d;
    const uint32_t qs = HPU_REG_QM_STREAM(0, 0) + HPU_QS_STATUS;
    CHECK((d.rd(qs) & HPU_QS_STATUS_IDLE) != 0u);

    d.wr(HPU_REG_INJ_QUIESCE, 0xffffffffu);
    CHECK(d.rd(HPU_REG_INJ_QUIESCE) ==
          (HPU_INJ_QUIESCE_STREAMS | HPU_INJ_QUIESCE_HARD_RESET));
    // Writing 0 withdraws nothing.
    d.wr(HPU_REG_INJ_QUIESCE, 0);
    CHECK(d.rd(HPU_REG_INJ_QUIESCE) ==
          (HPU_INJ_QUIESCE_STREAMS | HPU_INJ_QUIESCE_HARD_RESET));
    CHECK((d.rd(qs) & HPU_QS_STATUS_IDLE) == 0u);
    // Only that stream.
    CHECK((d.rd(HPU_REG_QM_STREAM(0, 1) + HPU_QS_STATUS) & HPU_QS_STATUS_IDLE) != 0u);
    CHECK((d.rd(HPU_REG_QM_STREAM(3, 3) + HPU_QS_STATUS) & HPU_QS_STATUS_IDLE) != 0u);

    // A soft reset leaves it; a hard reset never completes.
    d.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    d.advance(HPU_SOFT_RESET_NS);
    REQUIRE(d.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK((d.rd(qs) & HPU_QS_STATUS_IDLE) == 0u);
    d.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
    d.advance(100 * HPU_HARD_RESET_NS);
    CHECK(d.rd(HPU_REG_STATUS) == HPU_STATUS_HARD_RESET_BUSY);

    // Power-on (FLR) ends both.
    hpum_core_reset(&d.core);
    CHECK(d.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK(d.rd(HPU_REG_INJ_QUIESCE) == 0u);
    CHECK((d.rd(qs) & HPU_QS_STATUS_IDLE) != 0u);
    hard_reset(d);
}

TEST_CASE("INJ_QUIESCE.STREAMS alone: a hard reset completes and keeps it", "[emu][inj][hard-reset]")
{
    Dev d;
    const uint32_t qs = HPU_REG_QM_STREAM(0, 0) + HPU_QS_STATUS;

    d.wr(HPU_REG_INJ_QUIESCE, HPU_INJ_QUIESCE_STREAMS);
    hard_reset(d);
    CHECK(d.rd(HPU_REG_INJ_QUIESCE) == HPU_INJ_QUIESCE_STREAMS);
    CHECK((d.rd(qs) & HPU_QS_STATUS_IDLE) == 0u);
}

// Hard reset

TEST_CASE("hard reset sequence: what is cleared and what survives",
          "[emu][hard-reset]")
{
    Rig r;
    r.wr(HPU_REG_IRQ_MASK, HPU_IRQ_RESET_DONE);
    r.wr(HPU_REG_IRQ_TEST, 3);
    r.wr(HPU_REG_SCRATCH, 0x55);
    r.wr(HPU_REG_WDT_MS, 100);
    r.wr(HPU_REG_SOB(5), 9);
    r.set_root(3);
    r.wr(HPU_REG_HBM_WIN_BASE_LO, 0x4000000);
    r.wr(HPU_REG_MMU_INV, 3);
    r.bwrite64(100 * MiB, 0x1234);
    inject_ecc(r, 200 * MiB, HPU_INJ_ECC_UE);
    inject_ecc(r, 8, HPU_INJ_ECC_CE);
    r.wr(HPU_REG_INJ_DMA_FAIL, 0x3);
    r.wr(HPU_REG_INJ_HANG, 0x80);
    r.setup_eq();
    r.setup_stream(1, 2);
    r.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);   // abandoned by the hard one
    r.env.vectors.clear();
    r.env.errors.clear();

    r.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
    CHECK(r.rd(HPU_REG_STATUS) == HPU_STATUS_HARD_RESET_BUSY);
    REQUIRE(r.env.timer_armed);
    CHECK(r.env.timer_ns == HPU_HARD_RESET_NS);
    // registers read their reset values; writes are dropped (logged)
    CHECK(r.rd(HPU_REG_SCRATCH) == 0u);
    CHECK(r.rd(r.qreg(1, 2, HPU_QS_CTRL)) == 0u);
    CHECK(r.rd(HPU_REG_CPU_STATUS) == HPU_CPU_OFF);
    r.wr(HPU_REG_SCRATCH, 1);
    r.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    r.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
    CHECK(r.env.errors.size() == 3);
    CHECK(r.rd(HPU_REG_SCRATCH) == 0u);
    CHECK(r.error() == 0u);
    CHECK(hpum_core_hbm_window_read(&r.core, 0, 4) == 0u);

    r.advance(HPU_HARD_RESET_NS - 1);
    CHECK(r.rd(HPU_REG_STATUS) == HPU_STATUS_HARD_RESET_BUSY);
    CHECK(r.env.vectors.empty());
    r.advance(1);
    CHECK(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK(r.rd(HPU_REG_HARD_RESET_COUNT) == 1u);
    CHECK(r.rd(HPU_REG_IRQ_STATUS) == HPU_IRQ_RESET_DONE);
    CHECK(r.env.vectors == std::vector<unsigned int>{HPU_VEC_MISC});
    // cleared
    CHECK(r.rd(HPU_REG_SCRATCH) == 0u);
    CHECK(r.rd(HPU_REG_WDT_MS) == 0u);
    CHECK(r.rd(HPU_REG_SOB(5)) == 0u);
    CHECK(r.rd(HPU_REG_MMU_ROOT_LO(3)) == 0u);
    CHECK(r.rd(HPU_REG_HBM_WIN_BASE_LO) == 0u);
    CHECK(r.rd(HPU_REG_EQ_CTRL) == 0u);
    CHECK(r.rd(HPU_REG_EQ_LO) == 0u);
    CHECK(r.rd(r.qreg(1, 2, HPU_QS_RING_LO)) == 0u);
    CHECK(r.status(1, 2) == HPU_QS_STATUS_IDLE);
    CHECK(r.rd(HPU_REG_INJ_DMA_FAIL) == 0u);
    CHECK(r.rd(HPU_REG_INJ_HANG) == 0u);
    CHECK(r.rd(HPU_REG_INJ_ECC_ADDR_LO) == 0u);
    CHECK(r.rd(HPU_REG_RESET_COUNT) == 0u);         // the soft one never completed
    // HBM lost, poison gone
    CHECK(r.bread64(100 * MiB) == 0u);
    CHECK(hpum_core_hbm_backed(&r.core) == 0u);
    CHECK(hpum_core_hbm_window_read(&r.core, 0, 4) == 0u);
    // kept
    CHECK(r.rd(HPU_REG_IRQ_MASK) == HPU_IRQ_RESET_DONE);
    CHECK(r.rd(HPU_REG_IRQ_TEST_COUNT) == 1u);
    CHECK(r.rd(HPU_REG_ECC_CE_COUNT) == 1u);
    CHECK(r.rd(HPU_REG_ECC_UE_COUNT) == 1u);
    CHECK(r.rd(HPU_REG_MMU_INV_COUNT) == 1u);
    CHECK(r.rd(HPU_REG_MAGIC) == HPU_MAGIC_VALUE);
    CHECK(r.rd(HPU_REG_HBM_SIZE_LO) == static_cast<uint32_t>(256 * MiB));
    // the boot ROM starts again and waits for the driver's image
    reboot(r);
    // a second one counts again
    hard_reset(r);
    CHECK(r.rd(HPU_REG_HARD_RESET_COUNT) == 2u);
}

TEST_CASE("HARD_RESET with a bad key", "[emu][hard-reset]")
{
    const uint32_t key = GENERATE(0u, HPU_SOFT_RESET_KEY, HPU_HARD_RESET_KEY ^ 1u);
    Dev d;
    d.wr(HPU_REG_SCRATCH, 7);
    d.wr(HPU_REG_HARD_RESET, key);
    CHECK(d.error() == HPU_ERROR_BAD_RESET_KEY);
    CHECK(d.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK(d.rd(HPU_REG_SCRATCH) == 7u);
    CHECK(d.env.arms == 0u);
    CHECK(d.rd(HPU_REG_HARD_RESET) == 0u);          // write-only
}

TEST_CASE("hard reset stops streams without completion records",
          "[emu][hard-reset][qm]")
{
    Rig r;
    r.setup_stream(0, 0);
    r.setup_stream(2, 1);
    r.setup_stream(4, 3);
    r.wr(HPU_REG_INJ_HANG, 1u << 4);
    r.submit(0, 0, Cb().wait(1, 1, HPU_WAIT_GE));
    r.submit(2, 1, Cb().nop().nop());
    r.submit(4, 3, Cb().nop());
    hpum_core_engine_step(&r.core, 0);
    hpum_core_engine_step(&r.core, 0);               // waiting
    hpum_core_engine_step(&r.core, 2);               // fetched
    r.run();                                         // engine 4 hangs
    REQUIRE(r.status(0, 0) == HPU_QS_STATUS_WAITING);
    REQUIRE_FALSE(hpum_core_engine_ready(&r.core, 4));
    std::vector<uint8_t> cq0(r.hp(r.q[0][0].cq), r.hp(r.q[0][0].cq) + 16);

    r.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
    r.run();
    r.advance(HPU_HARD_RESET_NS);
    REQUIRE(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK(std::vector<uint8_t>(r.hp(r.q[0][0].cq), r.hp(r.q[0][0].cq) + 16) == cq0);
    CHECK(r.hrd32(r.q[2][1].cq + 8) == 0u);
    CHECK(r.hrd32(r.q[4][3].cq + 8) == 0u);
    CHECK(r.cq_pi(0, 0) == 0u);
    for (unsigned int e = 0; e < HPU_H1_DMA_ENGINES; e++) {
        CHECK_FALSE(hpum_core_engine_ready(&r.core, e));
    }
    // the hung engine works again
    r.q[4][3] = {};
    CHECK(r.run_cb(Cb().nop(), 0, 4, 3).status == HPU_CQ_OK);
}

TEST_CASE("hard reset while an engine is in the middle of a copy",
          "[emu][hard-reset][qm]")
{
    Rig r;
    const uint64_t n = 3 * MiB;
    uint64_t src = r.halloc(n, PG);
    r.bwrite64(50 * MiB, 0xfeed);
    r.setup_stream(1, 0);
    r.submit(1, 0, Cb().lin_dma(host_addr(src), 40 * MiB, n));
    hpum_core_engine_step(&r.core, 1);               // fetch
    int reads = 0;
    bool timer_seen_busy = false;
    r.env.on_dma_read = [&](uint64_t) {
        if (++reads == 2) {                          // second piece
            r.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
            r.advance(HPU_HARD_RESET_NS);           // engine still busy
            timer_seen_busy = r.rd(HPU_REG_STATUS) ==
                              HPU_STATUS_HARD_RESET_BUSY;
        }
    };
    hpum_core_engine_step(&r.core, 1);               // the LIN_DMA
    r.env.on_dma_read = nullptr;
    CHECK(timer_seen_busy);
    CHECK(r.hrd32(r.q[1][0].cq + 8) == 0u);         // no record
    r.advance(HPU_SOFT_RESET_NS);
    CHECK(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    // HBM lost, including what the engine copied before the reset
    CHECK(r.bread64(40 * MiB) == 0u);
    CHECK(r.bread64(50 * MiB) == 0u);
    CHECK(hpum_core_hbm_backed(&r.core) == 0u);
}

TEST_CASE("power-on reset abandons a hard reset", "[emu][hard-reset]")
{
    Dev d;
    d.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
    hpum_core_reset(&d.core);
    CHECK(d.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    reboot(d);
    CHECK(d.rd(HPU_REG_HARD_RESET_COUNT) == 0u);
}

// RESET_DONE event

TEST_CASE("RESET_DONE is the first event after the queue is next enabled",
          "[emu][event][reset]")
{
    Rig r;
    const bool hard = GENERATE(false, true);
    r.setup_eq();
    if (hard) {
        hard_reset(r);
    } else {
        r.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
        r.advance(HPU_SOFT_RESET_NS);
    }
    CHECK(r.rd(HPU_REG_EQ_CTRL) == 0u);             // cleared by the reset
    r.env.now += 777;
    uint64_t t = r.env.now;
    r.setup_eq();
    r.run_cb(Cb().raw(0x77, 0));                    // a BAD_PACKET event
    auto ev = events(r);
    REQUIRE(ev.size() == 2);
    CHECK(ev[0].id == HPU_EVENT_RESET_DONE);
    CHECK(ev[0].severity == HPU_EVENT_SEV_INFO);
    CHECK(ev[0].engine == HPU_EVENT_ENGINE_NONE);
    CHECK(ev[0].info == (hard ? 2u : 1u));
    CHECK(ev[0].timestamp == t);
    CHECK(ev[1].id == HPU_EVENT_BAD_PACKET);
    // once per reset
    r.wr(HPU_REG_EQ_CTRL, 0);
    r.setup_eq();
    CHECK(r.rd(HPU_REG_EQ_PI) == 0u);
}

TEST_CASE("no RESET_DONE event after power-on", "[emu][event][reset]")
{
    Rig r;
    r.setup_eq();
    CHECK(r.rd(HPU_REG_EQ_PI) == 0u);
}

// Watchdog and hangs

TEST_CASE("the watchdog ignores idle and waiting streams", "[emu][wdt]")
{
    Rig r;
    r.setup_eq();
    r.setup_stream(0, 0);
    r.setup_stream(0, 1);
    r.wr(HPU_REG_WDT_MS, 10);
    CHECK(r.rd(HPU_REG_WDT_MS) == 10u);
    r.submit(0, 0, Cb().wait(1, 1, HPU_WAIT_GE).nop());
    r.run();
    REQUIRE(r.status(0, 0) == HPU_QS_STATUS_WAITING);
    r.advance(100 * MS);
    CHECK(r.status(0, 0) == HPU_QS_STATUS_WAITING);
    CHECK(r.status(0, 1) == HPU_QS_STATUS_IDLE);
    CHECK(r.rd(HPU_REG_EQ_PI) == 0u);
    // a stream that keeps completing packets is not hung either
    Cb cb;
    for (int i = 0; i < 20; i++) {
        cb.nop();
    }
    r.submit(0, 1, cb);
    for (int i = 0; i < 40 && r.cq_pi(0, 1) == 0; i++) {
        hpum_core_engine_step(&r.core, 0);
        r.advance(6 * MS);
    }
    CHECK(r.cq_pi(0, 1) == 1u);
    CHECK(r.cqe(0, 1, 0).status == HPU_CQ_OK);
    // released WAIT: runs to the end
    r.wr(HPU_REG_SOB(1), 1);
    r.advance(50 * MS);
    r.run();
    CHECK(r.cqe(0, 0, 0).status == HPU_CQ_OK);
    CHECK(r.rd(HPU_REG_EQ_PI) == 0u);
}

TEST_CASE("INJ_HANG + watchdog: ENGINE_HANG once per hung stream, STATUS.HUNG, "
          "soft reset recovers", "[emu][wdt][inj]")
{
    Rig r;
    r.setup_eq();
    r.setup_stream(5, 0);
    r.setup_stream(5, 2);
    r.setup_stream(6, 0);
    r.wr(HPU_REG_WDT_MS, 10);
    r.wr(HPU_REG_INJ_HANG, 1u << 5);
    CHECK(r.rd(HPU_REG_INJ_HANG) == 1u << 5);
    r.submit(5, 0, Cb().nop().nop(), 0, 0x50);
    r.submit(5, 2, Cb().nop(), 0, 0x52);
    r.run();
    CHECK_FALSE(hpum_core_engine_ready(&r.core, 5));
    CHECK(r.status(5, 0) == 0u);                    // in flight, not idle
    CHECK(r.cq_pi(5, 0) == 0u);
    r.advance(10 * MS - 1);
    CHECK(r.rd(HPU_REG_EQ_PI) == 0u);
    r.advance(1);
    CHECK(r.status(5, 0) == HPU_QS_STATUS_HUNG);
    CHECK(r.status(5, 2) == HPU_QS_STATUS_HUNG);    // the whole engine
    auto ev = events(r);
    REQUIRE(ev.size() == 2);
    for (const Eqe &e : ev) {
        CHECK(e.id == HPU_EVENT_ENGINE_HANG);
        CHECK(e.severity == HPU_EVENT_SEV_FATAL);
        CHECK(e.engine == 5);
        CHECK(e.asid == 0);
        CHECK((e.addr & HPU_ADDR_HOST) != 0);
    }
    CHECK(((ev[0].info == 0 && ev[1].info == 2) ||
           (ev[0].info == 2 && ev[1].info == 0)));
    // other engines continue
    CHECK(r.run_cb(Cb().nop(), 0, 6, 0).status == HPU_CQ_OK);
    r.advance(100 * MS);
    CHECK(r.rd(HPU_REG_EQ_PI) == 2u);               // once per stream

    // disabling a hung stream: no ABORTED while the engine holds it
    r.wr(r.qreg(5, 0, HPU_QS_CTRL), 0);
    r.run();
    CHECK(r.cq_pi(5, 0) == 0u);
    CHECK(r.status(5, 0) == HPU_QS_STATUS_HUNG);
    // a soft reset releases the engine; the records are written ABORTED
    r.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    CHECK(r.rd(HPU_REG_INJ_HANG) == 0u);
    r.run();
    CHECK(r.cq_pi(5, 0) == 1u);
    CHECK(r.cqe(5, 0, 0).status == HPU_CQ_ABORTED);
    CHECK(r.cqe(5, 0, 0).seq == 0x50u);
    CHECK(r.cqe(5, 2, 0).status == HPU_CQ_ABORTED);
    r.advance(HPU_SOFT_RESET_NS);
    REQUIRE(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK(r.status(5, 0) == HPU_QS_STATUS_IDLE);
    CHECK(r.rd(HPU_REG_WDT_MS) == 10u);              // survives a soft reset
    r.q[5][0] = {};
    CHECK(r.run_cb(Cb().nop(), 0, 5, 0).status == HPU_CQ_OK);
}

TEST_CASE("INJ_HANG stops a LIN_DMA between pieces", "[emu][inj]")
{
    Rig r;
    const uint64_t n = 3 * MiB;
    uint64_t src = r.halloc(n, PG);
    std::memset(r.hp(src), 0x3c, n);
    r.setup_stream(2, 0);
    r.submit(2, 0, Cb().lin_dma(host_addr(src), 40 * MiB, n));
    hpum_core_engine_step(&r.core, 2);               // fetch
    int reads = 0;
    r.env.on_dma_read = [&](uint64_t) {
        // reads 1-2: the packet; 3: the first 1 MiB piece of data
        if (++reads == 3) {
            r.wr(HPU_REG_INJ_HANG, 1u << 2);
        }
    };
    hpum_core_engine_step(&r.core, 2);
    r.env.on_dma_read = nullptr;
    CHECK(reads == 3);                              // one piece, then stuck
    CHECK(r.bread64(40 * MiB + MiB - 8) == 0x3c3c3c3c3c3c3c3cULL);
    CHECK(r.bread64(40 * MiB + MiB) == 0u);
    CHECK_FALSE(hpum_core_engine_ready(&r.core, 2));
    r.wr(HPU_REG_INJ_HANG, 0);                      // does not release it
    CHECK_FALSE(hpum_core_engine_ready(&r.core, 2));
    r.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    r.run();
    CHECK(r.cqe(2, 0, 0).status == HPU_CQ_ABORTED);
    r.advance(HPU_SOFT_RESET_NS);
    CHECK(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
}

TEST_CASE("WDT_MS 0 disables the watchdog", "[emu][wdt]")
{
    Rig r;
    r.setup_eq();
    r.setup_stream(0, 0);
    r.wr(HPU_REG_INJ_HANG, 1);
    r.submit(0, 0, Cb().nop());
    r.run();
    r.advance(1000 * MS);
    CHECK(r.status(0, 0) == 0u);
    CHECK(r.rd(HPU_REG_EQ_PI) == 0u);
    // enabling it later catches the stream WDT_MS after the write
    r.wr(HPU_REG_WDT_MS, 5);
    r.advance(5 * MS - 1);
    CHECK(r.status(0, 0) == 0u);
    r.advance(1);
    CHECK(r.status(0, 0) == HPU_QS_STATUS_HUNG);
    CHECK(r.rd(HPU_REG_EQ_PI) == 1u);
    // a descriptor queued behind the hung engine is not fetched, so not
    // in progress: pending, not HUNG
    r.setup_stream(0, 1);
    r.submit(0, 1, Cb().nop());
    r.run();
    r.advance(20 * MS);
    CHECK(r.status(0, 1) == 0u);
    // a new WDT_MS write restarts the period of a stream not yet hung
    r.wr(HPU_REG_INJ_HANG, 0x3);
    r.setup_stream(1, 1);
    r.submit(1, 1, Cb().nop());
    r.run();
    r.advance(4 * MS);
    r.wr(HPU_REG_WDT_MS, 5);
    r.advance(4 * MS);
    CHECK(r.status(1, 1) == 0u);
    r.advance(1 * MS);
    CHECK(r.status(1, 1) == HPU_QS_STATUS_HUNG);
    CHECK(r.rd(HPU_REG_EQ_PI) == 2u);
}

// DMA failure injection

TEST_CASE("INJ_DMA_FAIL fails the next host access of the engine",
          "[emu][inj][dma]")
{
    Rig r;
    r.setup_eq();
    r.setup_stream(3, 1);
    uint64_t dst = r.halloc(64, 64);

    SECTION("a data access") {
        // the command buffer in HBM, its WRITE_VALUE aimed at the host
        Cb cb;
        cb.nop().write_value(host_addr(dst), 0xabcd);
        r.bwrite(8 * MiB, cb.data(), cb.size());
        r.wr(HPU_REG_INJ_DMA_FAIL, 1u << 3);
        CHECK(r.rd(HPU_REG_INJ_DMA_FAIL) == 1u << 3);
        r.put_desc(3, 1, 8 * MiB, cb.size(), 0, 0x77);
        r.ring(3, 1);
        r.run();
        Cqe c = r.cqe(3, 1, 0);
        CHECK(c.status == HPU_CQ_BUS_ERROR);
        CHECK(c.offset == 8);
        CHECK(r.hrd32(dst) == 0u);
        auto ev = events(r);
        REQUIRE(ev.size() == 1);
        CHECK(ev[0].id == HPU_EVENT_DMA_BUS_ERROR);
        CHECK(ev[0].severity == HPU_EVENT_SEV_ERROR);
        CHECK(ev[0].engine == 3);
        CHECK(ev[0].addr == dst);
        CHECK(ev[0].info == 1u);
    }
    SECTION("a command buffer fetch, in a user context") {
        r.wr(HPU_REG_INJ_DMA_FAIL, 1u << 3);
        Cqe c = r.run_cb(Cb().nop(), 9, 3, 1);
        CHECK(c.status == HPU_CQ_BUS_ERROR);
        auto ev = events(r);
        REQUIRE(ev.size() == 1);
        CHECK(ev[0].id == HPU_EVENT_DMA_BUS_ERROR);
        CHECK(ev[0].asid == 9);
        CHECK(ev[0].addr >= HOST_BASE);             // a bus address, not the VA
        CHECK(ev[0].addr < HOST_BASE + HOST_SIZE);
    }
    // used once: the bit cleared, the next job runs
    CHECK(r.rd(HPU_REG_INJ_DMA_FAIL) == 0u);
    CHECK(r.run_cb(Cb().write_value(host_addr(dst), 5), 0, 3, 1).status ==
          HPU_CQ_OK);
    CHECK(r.hrd32(dst) == 5u);
}

TEST_CASE("a real host bus error also posts DMA_BUS_ERROR", "[emu][dma][event]")
{
    Rig r;
    r.setup_eq();
    const uint64_t bad = HOST_BASE + HOST_SIZE + 0x1000;
    CHECK(r.run_cb(Cb().write_value(host_addr(bad), 1)).status ==
          HPU_CQ_BUS_ERROR);
    auto ev = events(r);
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].id == HPU_EVENT_DMA_BUS_ERROR);
    CHECK(ev[0].addr == bad);
    // an ASID 0 HBM offset beyond HBM is no host access: no event
    CHECK(r.run_cb(Cb().write_value(512 * MiB, 1)).status == HPU_CQ_BUS_ERROR);
    CHECK(r.rd(HPU_REG_EQ_PI) == 1u);
}

// ECC

TEST_CASE("a correctable ECC error is reported and leaves data intact",
          "[emu][ecc]")
{
    Rig r;
    r.setup_eq();
    r.bwrite64(0x123450, 0x1122334455667788ULL);
    inject_ecc(r, 0x123456, HPU_INJ_ECC_CE);
    CHECK(r.rd(HPU_REG_ECC_CE_COUNT) == 1u);
    CHECK(r.rd(HPU_REG_ECC_UE_COUNT) == 0u);
    CHECK(r.rd(HPU_REG_INJ_ECC_ADDR_LO) == 0x123456u);
    CHECK(r.rd(HPU_REG_INJ_ECC_CTRL) == 0u);
    auto ev = events(r);
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].id == HPU_EVENT_ECC_CE);
    CHECK(ev[0].severity == HPU_EVENT_SEV_INFO);
    CHECK(ev[0].engine == HPU_EVENT_ENGINE_NONE);
    CHECK(ev[0].addr == 0x123450u);
    CHECK(ev[0].info == HPU_INJ_ECC_CE);
    uint64_t dst = r.halloc(8, 8);
    CHECK(r.run_cb(Cb().lin_dma(0x123450, host_addr(dst), 8)).status ==
          HPU_CQ_OK);
    uint64_t v;
    std::memcpy(&v, r.hp(dst), 8);
    CHECK(v == 0x1122334455667788ULL);
    inject_ecc(r, 0x123456, HPU_INJ_ECC_CE);
    CHECK(r.rd(HPU_REG_ECC_CE_COUNT) == 2u);        // each one counts
}

TEST_CASE("an uncorrectable ECC error poisons its 2 MiB page until scrubbed",
          "[emu][ecc]")
{
    Rig r;
    r.setup_eq();
    const uint64_t page = 20 * MiB;
    r.bwrite64(page + 64, 0xabcdef);
    r.bwrite64(page + 2 * MiB, 0x5555);              // the next page
    inject_ecc(r, page + 0x1234, HPU_INJ_ECC_UE);
    CHECK(r.rd(HPU_REG_ECC_UE_COUNT) == 1u);
    auto ev = events(r);
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].id == HPU_EVENT_ECC_UE);
    CHECK(ev[0].severity == HPU_EVENT_SEV_FATAL);
    CHECK(ev[0].engine == HPU_EVENT_ENGINE_NONE);
    CHECK(ev[0].addr == page);
    CHECK(ev[0].info == HPU_INJ_ECC_UE);
    // once: the same page again is not reported nor counted
    inject_ecc(r, page + 8, HPU_INJ_ECC_UE);
    CHECK(r.rd(HPU_REG_ECC_UE_COUNT) == 1u);
    CHECK(r.rd(HPU_REG_EQ_PI) == 1u);

    uint64_t dst = r.halloc(64, 64);
    // engine reads fail with ECC at the packet
    Cqe c = r.run_cb(Cb().nop().lin_dma(page + 64, host_addr(dst), 8));
    CHECK(c.status == HPU_CQ_ECC);
    CHECK(c.offset == 8);
    CHECK(r.rd(HPU_REG_EQ_PI) == 1u);               // no event per read
    // a read that only ends in the page fails too
    CHECK(r.run_cb(Cb().lin_dma(page - 8, host_addr(dst), 16)).status ==
          HPU_CQ_ECC);
    // the page next to it is fine
    CHECK(r.run_cb(Cb().lin_dma(page + 2 * MiB, host_addr(dst), 8)).status ==
          HPU_CQ_OK);
    // writes to the page are dropped; bytes outside it land
    CHECK(r.run_cb(Cb().memset(0x0101010101010101ULL, page - 8, 16)).status ==
          HPU_CQ_OK);
    CHECK(r.bread64(page - 8) == 0x0101010101010101ULL);
    CHECK(r.bread64(page) == 0u);
    CHECK(r.bread64(page + 64) == 0xabcdefu);
    // BAR4 reads all ones, writes dropped
    r.wr(HPU_REG_HBM_WIN_BASE_LO, 0);
    CHECK(hpum_core_hbm_window_read(&r.core, page + 64, 4) == 0xffffffffu);
    hpum_core_hbm_window_write(&r.core, page + 64, 7, 4);
    CHECK(r.bread64(page + 64) == 0xabcdefu);
    // Also a page beyond version 7's 64 MiB, with the window base at 0.
    const uint64_t far = 200 * MiB;
    r.bwrite64(far + 64, 0x1234);
    inject_ecc(r, far, HPU_INJ_ECC_UE);
    CHECK(hpum_core_hbm_window_read(&r.core, far + 64, 8) == ~0ULL);
    hpum_core_hbm_window_write(&r.core, far + 64, 7, 4);
    CHECK(r.bread64(far + 64) == 0x1234u);
    // a soft reset keeps the poison
    r.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    r.advance(HPU_SOFT_RESET_NS);
    r.q[0][0] = {};
    CHECK(r.run_cb(Cb().lin_dma(page, host_addr(dst), 8)).status == HPU_CQ_ECC);
    // scrubbing clears it
    r.wr(HPU_REG_SCRUB_ADDR_LO, static_cast<uint32_t>(page));
    r.wr(HPU_REG_SCRUB_SIZE_LO, static_cast<uint32_t>(2 * MiB));
    r.wr(HPU_REG_SCRUB_CTRL, HPU_SCRUB_START);
    CHECK(r.run_cb(Cb().lin_dma(page + 64, host_addr(dst), 8)).status ==
          HPU_CQ_OK);
    CHECK(r.bread64(page + 64) == 0u);
    CHECK(r.bread64(page + 2 * MiB) == 0x5555u);
}

TEST_CASE("a page table in a poisoned page fails the access with ECC",
          "[emu][ecc][mmu]")
{
    Rig r;
    uint64_t bus = r.halloc(PG, PG);
    uint64_t va = r.map_host(4, bus, PG);
    // the tables live in HBM [4 KiB, 16 MiB)
    inject_ecc(r, r.roots[4], HPU_INJ_ECC_UE);
    r.wr(HPU_REG_MMU_INV, HPU_MMU_INV_ALL);
    Cqe c = r.run_cb(Cb().write_value(host_addr(bus), 1), 0);
    CHECK(c.status == HPU_CQ_OK);                   // ASID 0: no walk
    r.setup_stream(1, 0);
    uint64_t cb_bus = r.halloc(16, 8);
    Cb cb;
    cb.write_value(va, 2);
    r.hwrite(cb_bus, cb.data(), cb.size());
    // the command buffer itself is reached through the poisoned tables
    r.put_desc(1, 0, va, cb.size(), 4, 1);
    r.ring(1, 0);
    r.run();
    CHECK(r.cqe(1, 0, 0).status == HPU_CQ_ECC);
    CHECK(r.rd(HPU_REG_FAULT_COUNT) == 0u);         // not an MMU fault
}

TEST_CASE("ECC injection: bad kind or address", "[emu][ecc][inj]")
{
    Rig r;
    r.setup_eq();
    inject_ecc(r, 8, 3);
    inject_ecc(r, 256 * MiB, HPU_INJ_ECC_UE);       // beyond HBM
    CHECK(r.env.errors.size() == 2);
    CHECK(r.rd(HPU_REG_ECC_UE_COUNT) == 0u);
    CHECK(r.rd(HPU_REG_EQ_PI) == 0u);
    CHECK(r.error() == 0u);
}

TEST_CASE("the fault-injection and CPU blocks follow the access rules",
          "[emu][access]")
{
    Dev d;
    d.wr(HPU_REG_CPU_STATUS, 0);
    CHECK(d.error() == HPU_ERROR_BAD_ACCESS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_RUNNING);
    d.wr(HPU_REG_ERROR, 0xffffffff);
    d.wr(HPU_REG_FW_ERROR, 1);
    CHECK(d.error() == HPU_ERROR_BAD_ACCESS);
    d.wr(HPU_REG_ERROR, 0xffffffff);
    d.wr(HPU_REG_HARD_RESET_COUNT, 1);
    d.wr(HPU_REG_ECC_CE_COUNT, 1);
    CHECK(d.error() == HPU_ERROR_BAD_ACCESS);
    d.wr(HPU_REG_ERROR, 0xffffffff);
    d.wr(HPU_REG_INJ_HANG, 0xffffffff);
    CHECK(d.rd(HPU_REG_INJ_HANG) == 0x7ffu);        // one bit per engine
    d.wr(HPU_REG_INJ_HANG, 0);
    d.wr(HPU_REG_HB_EVENT_MS, 12);
    CHECK(d.rd(HPU_REG_HB_EVENT_MS) == 12u);
    CHECK(d.error() == 0u);
}

// SPDX-License-Identifier: MIT
//
// Unit tests of spec version 9 (Documentation/hw/registers.md, "Version 9";
// memory-and-queues.md, "Write-back record", "Interrupt moderation"): the
// stream's write-back record, IRQ_MOD, DONE and BUSY_NS, DEVICE_TIME and the
// WAIT condition GE_WRAP.  Engines are stepped synchronously; device time
// moves only when a test moves it.
//
// Copyright (c) 2026 The hpu authors

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <algorithm>

#include "hpu_rig.hpp"

using namespace hpu_test;

namespace {

struct Wb {
    uint64_t done;
    uint64_t busy_ns;
    uint32_t cq_pi;
    uint32_t status;
    uint32_t err_status;
    uint32_t err_where;
};

constexpr uint32_t mod(uint32_t count, uint32_t delay_us)
{
    return count << 16 | delay_us;
}

struct V9Rig : Rig {
    uint64_t wb_addr = 0;
    unsigned int wb_writes = 0;         // DMA writes to wb_addr
    std::vector<size_t> vectors_at_wb;  // vectors raised when each began
    std::vector<Wb> wb_before;          // the record as each write found it

    V9Rig()
    {
        env.on_dma_write = [this](uint64_t a) {
            if (wb_addr && a == wb_addr) {
                wb_writes++;
                vectors_at_wb.push_back(env.vectors.size());
                wb_before.push_back(wb());
            }
        };
    }
    void set_wb(unsigned int e, unsigned int s, uint64_t addr)
    {
        wr(qreg(e, s, HPU_QS_WB_LO), static_cast<uint32_t>(addr));
        wr(qreg(e, s, HPU_QS_WB_HI), static_cast<uint32_t>(addr >> 32));
    }
    // Stream e.s with a write-back record and IRQ_MOD @m, enabled.
    void setup_v9(unsigned int e, unsigned int s, uint32_t m,
                  bool irq = true, uint32_t size = 16)
    {
        wb_addr = halloc(HPU_WB_SIZE, HPU_WB_SIZE);
        set_wb(e, s, wb_addr);
        wr(qreg(e, s, HPU_QS_IRQ_MOD), m);
        setup_stream(e, s, size, irq);
    }
    Wb wb()
    {
        const uint8_t *p = hp(wb_addr);
        Wb w{};
        std::memcpy(&w.done, p + HPU_WB_DONE, 8);
        std::memcpy(&w.busy_ns, p + HPU_WB_BUSY_NS, 8);
        std::memcpy(&w.cq_pi, p + HPU_WB_CQ_PI, 4);
        std::memcpy(&w.status, p + HPU_WB_STATUS, 4);
        std::memcpy(&w.err_status, p + HPU_WB_ERR_STATUS, 4);
        std::memcpy(&w.err_where, p + HPU_WB_ERR_WHERE, 4);
        return w;
    }
    // A 64-bit counter read as LO, then HI.
    uint64_t rd_lo_hi(uint32_t lo)
    {
        uint64_t v = rd(lo);
        return v | static_cast<uint64_t>(rd(lo + 4)) << 32;
    }
    bool mod_timer_armed()
    {
        return core.tmr.armed & (1u << HPU_TMR_IRQ_MOD);
    }
    size_t vectors_of(unsigned int e)
    {
        return static_cast<size_t>(std::count(env.vectors.begin(), env.vectors.end(),
                                              HPU_VEC_ENGINE(e)));
    }
};

} // namespace

TEST_CASE("the write-back record holds DONE, CQ_PI, STATUS and the last failure, "
          "written before the vector", "[emu][v9]")
{
    V9Rig r;
    r.setup_v9(2, 1, 0);

    for (uint32_t i = 1; i <= 3; i++) {
        r.submit(2, 1, Cb().nop());
        r.run();
        Wb w = r.wb();
        CHECK(w.done == i);
        CHECK(w.cq_pi == i);
        CHECK(w.status == HPU_QS_STATUS_IDLE);
        CHECK(w.err_status == 0u);
        CHECK(w.err_where == 0u);
    }
    // Each record was written while its vector was still to come.
    CHECK(r.vectors_at_wb == std::vector<size_t>{ 0, 1, 2 });
    CHECK(r.env.vectors == std::vector<unsigned int>(3, HPU_VEC_ENGINE(2)));

    // A failure (BAD_PACKET at offset 8) is kept until the stream is enabled again.
    r.submit(2, 1, Cb().nop().raw(0x3f, 0));
    r.run();
    Wb w = r.wb();
    CHECK(w.done == 4u);
    CHECK(w.cq_pi == 4u);
    CHECK(w.err_status == HPU_CQ_BAD_PACKET);
    CHECK(w.err_where == (8u | 2u << HPU_CQE_ENGINE_SHIFT | 1u << HPU_CQE_STREAM_SHIFT));
    r.submit(2, 1, Cb().nop());
    r.run();
    w = r.wb();
    CHECK(w.done == 5u);
    CHECK(w.err_status == HPU_CQ_BAD_PACKET);
    CHECK(r.rd(r.qreg(2, 1, HPU_QS_DONE_LO)) == 5u);
    CHECK(r.wb_writes == 5u);
    CHECK(r.vectors_of(2) == 5u);
}

TEST_CASE("without IRQ_EN a notification writes the record and raises nothing", "[emu][v9]")
{
    V9Rig r;
    r.setup_v9(1, 0, 0, false);

    r.submit(1, 0, Cb().nop());
    r.submit(1, 0, Cb().nop());
    r.run();
    CHECK(r.wb_writes == 2u);
    CHECK(r.wb().done == 2u);
    CHECK(r.env.vectors.empty());
}

TEST_CASE("WB 0 writes nothing and IRQ_MOD 0 raises per record: version 8 behaviour",
          "[emu][v9]")
{
    Rig r;
    r.setup_stream(6, 0);

    CHECK(r.rd(r.qreg(6, 0, HPU_QS_WB_LO)) == 0u);
    CHECK(r.rd(r.qreg(6, 0, HPU_QS_WB_HI)) == 0u);
    CHECK(r.rd(r.qreg(6, 0, HPU_QS_IRQ_MOD)) == 0u);
    const unsigned int writes = r.env.dma_writes;
    for (int i = 0; i < 4; i++) {
        r.submit(6, 0, Cb().nop());
    }
    r.run();
    CHECK(r.cq_pi(6, 0) == 4u);
    CHECK(r.env.dma_writes == writes + 4);  // the four completion records only
    CHECK(r.env.vectors == std::vector<unsigned int>(4, HPU_VEC_ENGINE(6)));
    CHECK(r.rd(r.qreg(6, 0, HPU_QS_DONE_LO)) == 4u);
    CHECK(r.env.errors.empty());
}

TEST_CASE("IRQ_MOD notifies once per count records at depth and at once when the stream "
          "runs dry", "[emu][v9]")
{
    V9Rig r;
    r.setup_v9(0, 0, mod(3, 1000));     // the 1 ms bound never comes: time stands still

    for (int i = 0; i < 8; i++) {
        r.submit(0, 0, Cb().nop());
    }
    r.run();
    REQUIRE(r.cq_pi(0, 0) == 8u);
    // records 3 and 6 by the count, 8 because PI == CI
    CHECK(r.vectors_of(0) == 3u);
    REQUIRE(r.wb_before.size() == 3u);
    CHECK(r.wb_before[1].cq_pi == 3u);
    CHECK(r.wb_before[2].cq_pi == 6u);
    CHECK(r.wb().cq_pi == 8u);
    CHECK(r.wb().done == 8u);
    CHECK(r.vectors_at_wb == std::vector<size_t>{ 0, 1, 2 });

    // Depth 1: the lone record is announced at once, no timer involved.
    r.submit(0, 0, Cb().nop());
    r.run();
    CHECK(r.vectors_of(0) == 4u);
    CHECK(r.wb().cq_pi == 9u);

    // The same eight records on a stream without IRQ_MOD: eight vectors.
    r.setup_stream(1, 0);
    for (int i = 0; i < 8; i++) {
        r.submit(1, 0, Cb().nop());
    }
    r.run();
    CHECK(r.vectors_of(1) == 8u);
}

TEST_CASE("IRQ_MOD's delay bounds how long records wait for their notification", "[emu][v9]")
{
    V9Rig r;
    r.setup_v9(3, 0, mod(16, 50));

    // Two records, then a descriptor blocked in WAIT: the two are held back.
    r.submit(3, 0, Cb().nop());
    r.submit(3, 0, Cb().nop());
    r.submit(3, 0, Cb().wait(7, 1, HPU_WAIT_GE));
    r.run();
    REQUIRE(r.cq_pi(3, 0) == 2u);
    REQUIRE(r.status(3, 0) == HPU_QS_STATUS_WAITING);
    CHECK(r.env.vectors.empty());
    CHECK(r.wb_writes == 0u);
    CHECK(r.mod_timer_armed());

    SECTION("the delay ends") {
        r.advance(49999);
        CHECK(r.env.vectors.empty());
        CHECK(r.wb_writes == 0u);
        r.advance(1);
        CHECK(r.env.vectors == std::vector<unsigned int>{ HPU_VEC_ENGINE(3) });
        Wb w = r.wb();
        CHECK(w.cq_pi == 2u);
        CHECK(w.done == 2u);
        CHECK(w.status == HPU_QS_STATUS_WAITING);
        CHECK_FALSE(r.mod_timer_armed());
    }
    SECTION("an IRQ_MOD write") {
        r.wr(r.qreg(3, 0, HPU_QS_IRQ_MOD), mod(16, 50));
        CHECK(r.env.vectors == std::vector<unsigned int>{ HPU_VEC_ENGINE(3) });
        CHECK(r.wb().cq_pi == 2u);
    }
    // The WAIT's record leaves the stream with nothing to fetch: at once.
    r.wr(HPU_REG_SOB(7), 1);
    r.run();
    CHECK(r.vectors_of(3) == 2u);
    CHECK(r.wb().cq_pi == 3u);
    CHECK(r.wb().status == HPU_QS_STATUS_IDLE);
    // Nothing more comes from the timer.
    r.advance(1000000);
    CHECK(r.vectors_of(3) == 2u);
    CHECK(r.wb_writes == 2u);
}

TEST_CASE("DONE counts 64 bits; reading DONE_LO latches DONE_HI", "[emu][v9]")
{
    V9Rig r;
    r.setup_v9(4, 2, 0);
    const uint32_t lo = r.qreg(4, 2, HPU_QS_DONE_LO), hi = r.qreg(4, 2, HPU_QS_DONE_HI);

    r.core.eng[4].st[2].done = 0xfffffffeULL;  // 2^32 - 2 descriptors done
    for (int i = 0; i < 3; i++) {
        r.submit(4, 2, Cb().nop());
    }
    r.run();
    CHECK(r.rd(hi) == 0u);                      // nothing latched yet
    CHECK(r.rd(lo) == 1u);
    CHECK(r.rd(hi) == 1u);
    CHECK(r.wb().done == 0x100000001ULL);
    CHECK(r.rd(r.qreg(4, 2, HPU_QS_CI)) == 3u);
    // HI keeps the latched value until the next LO read.
    r.core.eng[4].st[2].done = 0x200000007ULL;
    CHECK(r.rd(hi) == 1u);
    CHECK(r.rd_lo_hi(lo) == 0x200000007ULL);
    // Enabling the stream again counts from 0.
    r.wr(r.qreg(4, 2, HPU_QS_CTRL), 0);
    r.wr(r.qreg(4, 2, HPU_QS_CTRL), HPU_QS_CTRL_ENABLE);
    CHECK(r.rd_lo_hi(lo) == 0u);
}

TEST_CASE("BUSY_NS counts the time packets of the stream execute, not WAIT", "[emu][v9]")
{
    V9Rig r;
    r.setup_v9(5, 0, 0);
    r.setup_stream(5, 1);
    const uint64_t n = 3 * MiB;
    const uint64_t src = r.halloc(n, PG);
    const uint32_t busy0 = r.qreg(5, 0, HPU_QS_BUSY_NS_LO);
    uint64_t during = 0;
    unsigned int reads = 0;

    // Each read of the source takes 1 ms of device time.
    r.env.on_dma_read = [&](uint64_t a) {
        if (a >= src && a < src + n) {
            r.env.now += 1000000;
            if (++reads == 2) {     // while the packet executes
                during = hpum_core_read(&r.core, busy0, 4);
            }
        }
    };
    const uint64_t eng0 = r.rd_lo_hi(HPU_REG_BUSY_NS_LO(5));
    r.submit(5, 0, Cb().lin_dma(host_addr(src), 64 * MiB, n));
    r.run();
    REQUIRE(r.cqe(5, 0, 0).status == HPU_CQ_OK);
    REQUIRE(reads >= 3u);
    const uint64_t busy = r.rd_lo_hi(busy0);
    CHECK(busy >= 3000000u);
    CHECK(busy == r.rd_lo_hi(HPU_REG_BUSY_NS_LO(5)) - eng0);  // the engine's, all this stream's
    CHECK(during >= 1000000u);
    CHECK(during < busy);
    CHECK(r.wb().busy_ns == busy);

    // A stream blocked in WAIT while time passes executes nothing.
    r.env.on_dma_read = nullptr;
    r.submit(5, 1, Cb().wait(9, 1, HPU_WAIT_GE));
    r.run();
    r.env.now += 10000000;
    r.wr(HPU_REG_SOB(9), 1);
    r.run();
    REQUIRE(r.cq_pi(5, 1) == 1u);
    CHECK(r.rd_lo_hi(r.qreg(5, 1, HPU_QS_BUSY_NS_LO)) == 0u);
    CHECK(r.rd_lo_hi(busy0) == busy);

    // Enabling the stream again counts from 0.
    r.wr(r.qreg(5, 0, HPU_QS_CTRL), 0);
    r.wr(r.qreg(5, 0, HPU_QS_CTRL), HPU_QS_CTRL_ENABLE);
    CHECK(r.rd_lo_hi(busy0) == 0u);
}

TEST_CASE("DEVICE_TIME reads the device clock; reading LO latches HI", "[emu][v9]")
{
    Dev d;

    d.env.now = 0x0123456789abcdefULL;
    CHECK(d.rd(HPU_REG_DEVICE_TIME_LO) == 0x89abcdefu);
    d.env.now = 0x0123456800000005ULL;
    CHECK(d.rd(HPU_REG_DEVICE_TIME_HI) == 0x01234567u);    // latched
    CHECK(d.rd(HPU_REG_DEVICE_TIME_LO) == 5u);
    CHECK(d.rd(HPU_REG_DEVICE_TIME_HI) == 0x01234568u);
    CHECK(d.error() == 0u);
    // read-only; 0x7c, reserved in version 9, is version 10's UQ_DB_REFUSED
    d.wr(HPU_REG_DEVICE_TIME_LO, 1);
    CHECK(d.error() == HPU_ERROR_BAD_ACCESS);
    d.wr(HPU_REG_ERROR, ~0u);
    CHECK(d.rd(0x7c) == 0u);
    CHECK(d.error() == 0u);
}

TEST_CASE("DEVICE_TIME_HI latched during a hard reset reads 0 once it completes",
          "[emu][v9][reset]")
{
    Rig r;

    r.env.now = 0x0123456789abcdefULL;
    r.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
    REQUIRE(r.rd(HPU_REG_STATUS) == HPU_STATUS_HARD_RESET_BUSY);
    CHECK(r.rd(HPU_REG_DEVICE_TIME_LO) == 0x89abcdefu);    // latches HI in the window
    r.run();
    r.advance(HPU_HARD_RESET_NS);
    REQUIRE(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK(r.rd(HPU_REG_DEVICE_TIME_HI) == 0u);
}

TEST_CASE("WAIT GE_WRAP holds across the 2^32 wrap where GE does not", "[emu][v9][sync]")
{
    Rig r;

    // SOB 2 is past 0xfffffffe on a wrapping counter: GE_WRAP holds at once.
    r.wr(HPU_REG_SOB(10), 2);
    CHECK(r.run_cb(Cb().wait(10, 0xfffffffe, HPU_WAIT_GE_WRAP)).status == HPU_CQ_OK);
    // GE does not.
    r.setup_stream(1, 0);
    r.submit(1, 0, Cb().wait(10, 0xfffffffe, HPU_WAIT_GE));
    r.run();
    CHECK(r.status(1, 0) == HPU_QS_STATUS_WAITING);

    // 0xfffffffe is behind 2: GE_WRAP waits through the wrap (GE would not).
    r.wr(HPU_REG_SOB(11), 0xfffffffe);
    r.setup_stream(2, 0);
    r.submit(2, 0, Cb().wait(11, 2, HPU_WAIT_GE_WRAP));
    r.run();
    CHECK(r.status(2, 0) == HPU_QS_STATUS_WAITING);
    // (the updates on engine 0: Rig::run() steps it before engine 2)
    r.setup_stream(0, 1);
    r.submit(0, 1, Cb().sob_update(11, 3, HPU_SOB_OP_ADD));    // 1
    r.run();
    CHECK(r.rd(HPU_REG_SOB(11)) == 1u);
    CHECK(r.status(2, 0) == HPU_QS_STATUS_WAITING);
    r.submit(0, 1, Cb().sob_update(11, 1, HPU_SOB_OP_ADD));    // 2
    r.run();
    REQUIRE(r.cq_pi(2, 0) == 1u);
    CHECK(r.cqe(2, 0, 0).status == HPU_CQ_OK);

    // Conditions above 2 are still BAD_PACKET.
    CHECK(r.run_cb(Cb().wait(10, 0, 3), 0, 4).status == HPU_CQ_BAD_PACKET);
}

TEST_CASE("a write-back record that cannot be written is lost: logged, no event, no ERROR "
          "bit, the vector still raised", "[emu][v9]")
{
    V9Rig r;
    r.setup_eq();
    const uint64_t bad = HOST_BASE + HOST_SIZE + 4096;  // no host memory there

    r.set_wb(7, 0, bad);
    r.setup_stream(7, 0);
    r.submit(7, 0, Cb().nop());
    r.run();
    CHECK(r.cqe(7, 0, 0).status == HPU_CQ_OK);
    CHECK(r.env.vectors == std::vector<unsigned int>{ HPU_VEC_ENGINE(7) });
    REQUIRE(r.env.errors.size() == 1);
    CHECK(r.env.errors[0].find("write-back") != std::string::npos);
    CHECK(r.error() == 0u);
    CHECK(r.rd(HPU_REG_EQ_PI) == 0u);
    CHECK(r.rd(HPU_REG_EQ_DROPPED) == 0u);
    // The stream goes on.
    r.submit(7, 0, Cb().nop());
    r.run();
    CHECK(r.cq_pi(7, 0) == 2u);
    CHECK(r.rd(r.qreg(7, 0, HPU_QS_DONE_LO)) == 2u);
    CHECK(r.vectors_of(7) == 2u);
    CHECK(r.env.errors.size() == 2);
}

TEST_CASE("WB: 32-byte aligned or the stream halts; read-only while enabled", "[emu][v9]")
{
    V9Rig r;
    const uint64_t wb = r.halloc(64, 64);

    r.set_wb(0, 1, wb + 8);
    r.setup_stream(0, 1);
    CHECK(r.status(0, 1) == (HPU_QS_STATUS_HALTED | HPU_QS_STATUS_IDLE));
    CHECK(r.env.errors.size() == 1);
    r.wr(r.qreg(0, 1, HPU_QS_CTRL), 0);
    r.set_wb(0, 1, wb);
    r.wr(r.qreg(0, 1, HPU_QS_CTRL), HPU_QS_CTRL_ENABLE);
    CHECK(r.status(0, 1) == HPU_QS_STATUS_IDLE);
    r.wr(r.qreg(0, 1, HPU_QS_WB_LO), static_cast<uint32_t>(wb + 32));
    CHECK(r.rd(r.qreg(0, 1, HPU_QS_WB_LO)) == static_cast<uint32_t>(wb));
    CHECK(r.env.errors.size() == 2);
    // IRQ_MOD keeps its fields only
    r.wr(r.qreg(0, 1, HPU_QS_IRQ_MOD), ~0u);
    CHECK(r.rd(r.qreg(0, 1, HPU_QS_IRQ_MOD)) == 0x00ffffffu);
    CHECK(r.error() == 0u);
}

TEST_CASE("WB is read-only while the stream's stop record is due or being written",
          "[emu][v9]")
{
    V9Rig r;
    const unsigned int e = 4, s = 2;
    r.setup_v9(e, s, 0);
    const uint64_t old_wb = r.wb_addr;
    const uint64_t new_wb = r.halloc(HPU_WB_SIZE, HPU_WB_SIZE);
    unsigned int new_writes = 0;
    bool done = false;

    // While the engine writes the record of its last completion, the
    // driver stops the stream (the stop record comes due: the engine is to
    // write it) and points WB elsewhere.
    r.env.on_dma_write = [&](uint64_t a) {
        if (a == old_wb) {
            r.wb_writes++;
        } else if (static_cast<uint32_t>(a) == static_cast<uint32_t>(new_wb)) {
            new_writes++;               // new LO, whatever HI
        }
        if (a == old_wb && !done) {
            done = true;
            r.wr(r.qreg(e, s, HPU_QS_CTRL), 0);
            CHECK((r.status(e, s) & HPU_QS_STATUS_IDLE) == 0u);
            r.set_wb(e, s, new_wb);
        }
    };
    r.submit(e, s, Cb().nop());
    r.run();
    REQUIRE(done);
    // Both writes were refused (logged), WB still reads the old address,
    // and the stop record went there, nowhere else.
    CHECK(r.rd(r.qreg(e, s, HPU_QS_WB_LO)) == static_cast<uint32_t>(old_wb));
    CHECK(r.rd(r.qreg(e, s, HPU_QS_WB_HI)) == static_cast<uint32_t>(old_wb >> 32));
    CHECK(r.env.errors.size() == 2);
    CHECK(r.wb_writes == 2u);
    CHECK(new_writes == 0u);
    CHECK(r.wb().done == 1u);
    CHECK(r.status(e, s) == HPU_QS_STATUS_IDLE);
    // Idle and disabled: WB is writable again.
    r.set_wb(e, s, new_wb);
    CHECK(r.rd(r.qreg(e, s, HPU_QS_WB_LO)) == static_cast<uint32_t>(new_wb));
    CHECK(r.env.errors.size() == 2);
    CHECK(r.error() == 0u);
}

TEST_CASE("a drain writes at most one record per stream: what comes due meanwhile "
          "is left to the engine", "[emu][v9]")
{
    V9Rig r;
    const unsigned int e = 3, s = 1;
    r.setup_v9(e, s, mod(16, 0));
    auto step_until = [&](uint32_t cq_pi) {
        for (int i = 0; i < 100 && r.cq_pi(e, s) < cq_pi; i++) {
            hpum_core_engine_step(&r.core, e);
        }
        REQUIRE(r.cq_pi(e, s) == cq_pi);
    };

    r.submit(e, s, Cb().nop());
    r.submit(e, s, Cb().nop());
    step_until(1);                      // held back: the second is to come
    REQUIRE(r.wb_writes == 0u);
    // The IRQ_MOD write notifies the held record (the vCPU's drain); while
    // it writes it, the engine completes the second, due at once (PI == CI)
    // but left to the drain holding the record.
    unsigned int in_drain = 0;
    bool stepped = false;
    r.env.on_dma_write = [&](uint64_t a) {
        if (a != r.wb_addr) {
            return;
        }
        r.wb_writes++;
        in_drain++;
        if (!stepped) {
            stepped = true;
            step_until(2);
        }
    };
    const unsigned int kicks = r.env.kicks[e];
    r.wr(r.qreg(e, s, HPU_QS_IRQ_MOD), mod(16, 0));
    CHECK(stepped);
    CHECK(in_drain == 1u);              // one record on the vCPU
    CHECK(r.wb().done == 1u);           // the first landed, not the second
    CHECK(r.env.kicks[e] > kicks);      // the second for the engine
    CHECK((r.status(e, s) & HPU_QS_STATUS_IDLE) == 0u);
    CHECK(hpum_core_engine_ready(&r.core, e));
    r.run();
    CHECK(r.wb_writes == 2u);
    CHECK(r.wb().done == 2u);
    CHECK(r.wb().cq_pi == 2u);
    CHECK(r.vectors_of(e) == 2u);
    CHECK(r.status(e, s) == HPU_QS_STATUS_IDLE);
    CHECK(r.env.errors.empty());
}

TEST_CASE("the new counters are read-only; stream offsets left reserved are unmapped",
          "[emu][v9]")
{
    Rig r;
    const uint32_t ro = GENERATE(uint32_t{HPU_QS_DONE_LO}, uint32_t{HPU_QS_DONE_HI},
                                 uint32_t{HPU_QS_BUSY_NS_LO}, uint32_t{HPU_QS_BUSY_NS_HI});
    const uint32_t hole = GENERATE(0x2cu, 0x38u, 0x3cu, 0x44u, 0x50u, 0x64u);

    r.wr(r.qreg(3, 3, ro), 1);
    CHECK(r.error() == HPU_ERROR_BAD_ACCESS);
    r.wr(HPU_REG_ERROR, ~0u);
    CHECK(r.rd(r.qreg(3, 3, hole)) == 0u);
    CHECK(r.error() == HPU_ERROR_BAD_ACCESS);
}

TEST_CASE("disabling a stream writes its write-back record: after the ABORTED record, or "
          "at once", "[emu][v9]")
{
    V9Rig r;
    r.setup_v9(9, 3, 0);

    r.submit(9, 3, Cb().nop());
    r.submit(9, 3, Cb().nop());
    r.run();
    REQUIRE(r.wb_writes == 2u);
    REQUIRE(r.vectors_of(9) == 2u);

    SECTION("idle: the record, no vector") {
        r.wr(r.qreg(9, 3, HPU_QS_CTRL), HPU_QS_CTRL_IRQ_EN);
        CHECK(r.wb_writes == 3u);
        CHECK(r.vectors_of(9) == 2u);
        CHECK(r.wb().done == 2u);
        CHECK(r.wb().status == HPU_QS_STATUS_IDLE);
        CHECK(r.status(9, 3) == HPU_QS_STATUS_IDLE);
        // Disabling a disabled stream writes nothing more.
        r.wr(r.qreg(9, 3, HPU_QS_CTRL), 0);
        CHECK(r.wb_writes == 3u);
    }
    SECTION("a descriptor in flight: its ABORTED record first") {
        r.submit(9, 3, Cb().wait(1, 1, HPU_WAIT_GE));
        r.run();
        REQUIRE(r.status(9, 3) == HPU_QS_STATUS_WAITING);
        r.wr(r.qreg(9, 3, HPU_QS_CTRL), HPU_QS_CTRL_IRQ_EN);
        CHECK(r.wb_writes == 2u);
        r.run();
        CHECK(r.wb_writes == 3u);
        CHECK(r.vectors_of(9) == 3u);
        Wb w = r.wb();
        CHECK(w.done == 3u);
        CHECK(w.cq_pi == 3u);
        CHECK(w.err_status == HPU_CQ_ABORTED);
        CHECK(w.status == HPU_QS_STATUS_IDLE);
    }
}

TEST_CASE("resets: the stop of a soft reset writes the record, none after a hard or "
          "power-on reset, and the registers read their reset values", "[emu][v9][reset]")
{
    V9Rig r;
    const int kind = GENERATE(0, 1, 2);     // soft, hard, power-on
    const unsigned int e = 0, s = 3;
    r.setup_v9(e, s, mod(16, 100));

    // Two records held back, a descriptor blocked in WAIT.
    r.submit(e, s, Cb().nop());
    r.submit(e, s, Cb().nop());
    r.submit(e, s, Cb().wait(5, 1, HPU_WAIT_GE));
    r.run();
    REQUIRE(r.cq_pi(e, s) == 2u);
    REQUIRE(r.wb_writes == 0u);
    REQUIRE(r.rd(r.qreg(e, s, HPU_QS_DONE_LO)) == 2u);

    if (kind == 0) {
        r.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
        r.run();                            // the ABORTED record
        CHECK(r.wb_writes == 1u);
        Wb w = r.wb();
        CHECK(w.done == 3u);
        CHECK(w.cq_pi == 3u);
        CHECK(w.err_status == HPU_CQ_ABORTED);
        CHECK(r.vectors_of(e) == 1u);       // one notification for all three
        r.advance(HPU_SOFT_RESET_NS);
        REQUIRE(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    } else {
        if (kind == 1) {
            r.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
        } else {
            hpum_core_reset(&r.core);
        }
        r.run();
        r.advance(HPU_HARD_RESET_NS);
        REQUIRE(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
        CHECK(r.wb_writes == 0u);
        CHECK(r.vectors_of(e) == 0u);
    }
    const unsigned int writes = r.wb_writes;
    r.advance(10000000);                // well past the moderation delay
    CHECK(r.wb_writes == writes);
    for (uint32_t reg : { HPU_QS_WB_LO, HPU_QS_WB_HI, HPU_QS_IRQ_MOD, HPU_QS_DONE_LO,
                          HPU_QS_DONE_HI, HPU_QS_BUSY_NS_LO, HPU_QS_BUSY_NS_HI }) {
        CHECK(r.rd(r.qreg(e, s, reg)) == 0u);
    }
    CHECK(r.status(e, s) == HPU_QS_STATUS_IDLE);
    CHECK_FALSE(r.mod_timer_armed());
}

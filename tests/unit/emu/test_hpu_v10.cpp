// SPDX-License-Identifier: MIT
//
// Unit tests of spec version 10 (Documentation/hw/registers.md, "Version 10";
// memory-and-queues.md, "User streams", "Doorbell pages"): user streams 4-15
// with rings, records and command buffers in a user ASID, their doorbell
// pages and UQ_DB_REFUSED, the enable rules, the error stop and RESUME, queue
// faults, TMO_MS, pause and abort, ARM, SIGNAL and the soft reset's pause.
// Engines are stepped synchronously; device time moves only when a test
// moves it.
//
// Copyright (c) 2026 The hpu authors

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <algorithm>
#include <cstring>
#include <vector>

#include "hpu_rig.hpp"
#include "hpu_thread_env.hpp"

#include <atomic>
#include <thread>

using namespace hpu_test;

namespace {

struct Ucqe {
    uint64_t seq;
    uint32_t status;
    uint32_t where;
    uint64_t index;
    uint64_t time;
};

struct Wb {
    uint64_t done;
    uint32_t cq_pi;
    uint32_t status;
    uint32_t err_status;
    uint32_t err_where;
};

constexpr uint32_t where(uint32_t off, uint32_t e, uint32_t s)
{
    return off | e << HPU_CQE_ENGINE_SHIFT | s << HPU_CQE_STREAM_SHIFT;
}

constexpr uint32_t sob_of(uint32_t asid, uint32_t sob)
{
    return HPU_REG_SOB(HPU_SOBS_PER_ASID * asid + sob);
}

struct UqRig : Rig {
    struct U {
        uint64_t ring = 0, cq = 0, wb = 0;      // bus addresses
        uint64_t ring_va = 0, cq_va = 0;
        uint32_t size = 0, cq_size = 0, pi = 0;
        uint16_t asid = 0;
    } u[HPU_H1_ENGINES][HPU_H1_STREAMS];

    UqRig() = default;
    explicit UqRig(const DevOpts &o) : Rig(o) {}

    void wr64(uint32_t lo, uint64_t v)
    {
        wr(lo, static_cast<uint32_t>(v));
        wr(lo + 4, static_cast<uint32_t>(v >> 32));
    }
    uint64_t rd64lo(uint32_t lo)
    {
        uint64_t v = rd(lo);
        return v | static_cast<uint64_t>(rd(lo + 4)) << 32;
    }
    // User stream e.s in @asid, programmed (ring and completion ring mapped
    // in the ASID, write-back record in host memory), not enabled.
    void program(unsigned e, unsigned s, uint16_t asid, uint32_t size = 8,
                 uint64_t start = 0)
    {
        U &x = u[e][s];
        x.size = x.cq_size = size;
        x.asid = asid;
        x.ring = halloc(size * HPU_DESC_SIZE, 64);
        x.ring_va = map_host(asid, x.ring, size * HPU_DESC_SIZE, false);
        x.cq = halloc(size * HPU_UCQE_SIZE, 32);
        x.cq_va = map_host(asid, x.cq, size * HPU_UCQE_SIZE, true);
        x.wb = halloc(HPU_WB_SIZE, HPU_WB_SIZE);
        x.pi = static_cast<uint32_t>(start);
        wr64(qreg(e, s, HPU_QS_RING_LO), x.ring_va);
        wr(qreg(e, s, HPU_QS_RING_SIZE), size);
        wr64(qreg(e, s, HPU_QS_CQ_LO), x.cq_va);
        wr(qreg(e, s, HPU_QS_CQ_SIZE), size);
        wr64(qreg(e, s, HPU_QS_WB_LO), x.wb);
        wr(qreg(e, s, HPU_QS_ASID), asid);
        wr64(qreg(e, s, HPU_QS_START_LO), start);
    }
    void enable(unsigned e, unsigned s)
    {
        wr(qreg(e, s, HPU_QS_CTRL), HPU_QS_CTRL_ENABLE);
    }
    void setup_uq(unsigned e, unsigned s, uint16_t asid, uint32_t size = 8,
                  uint64_t start = 0)
    {
        program(e, s, asid, size, start);
        enable(e, s);
    }
    void put(unsigned e, unsigned s, uint64_t cb, uint32_t cb_size, uint16_t asid,
             uint64_t seq)
    {
        U &x = u[e][s];
        uint8_t d[HPU_DESC_SIZE] = {};
        std::memcpy(d, &cb, 8);
        std::memcpy(d + 8, &cb_size, 4);
        std::memcpy(d + 12, &asid, 2);
        std::memcpy(d + 16, &seq, 8);
        hwrite(x.ring + (x.pi % x.size) * HPU_DESC_SIZE, d, sizeof(d));
        x.pi++;
    }
    // The process rings the stream's doorbell page with its PI.
    void db(unsigned e, unsigned s)
    {
        wr(HPU_UQDB_PAGE(e, s) + HPU_UQDB_DB, u[e][s].pi);
    }
    void usubmit(unsigned e, unsigned s, const Cb &cb, uint64_t seq = 0)
    {
        U &x = u[e][s];
        put(e, s, place_cb(cb, x.asid), cb.size(), x.asid, seq ? seq : 0x7000 + x.pi);
        db(e, s);
    }
    Ucqe ucqe(unsigned e, unsigned s, uint64_t n)
    {
        const uint8_t *p = hp(u[e][s].cq + (n % u[e][s].cq_size) * HPU_UCQE_SIZE);
        Ucqe c{};
        std::memcpy(&c.seq, p + HPU_UCQE_SEQ, 8);
        std::memcpy(&c.status, p + HPU_UCQE_STATUS, 4);
        std::memcpy(&c.where, p + HPU_UCQE_WHERE, 4);
        std::memcpy(&c.index, p + HPU_UCQE_INDEX, 8);
        std::memcpy(&c.time, p + HPU_UCQE_TIME, 8);
        return c;
    }
    Wb wb(unsigned e, unsigned s)
    {
        const uint8_t *p = hp(u[e][s].wb);
        Wb w{};
        std::memcpy(&w.done, p + HPU_WB_DONE, 8);
        std::memcpy(&w.cq_pi, p + HPU_WB_CQ_PI, 4);
        std::memcpy(&w.status, p + HPU_WB_STATUS, 4);
        std::memcpy(&w.err_status, p + HPU_WB_ERR_STATUS, 4);
        std::memcpy(&w.err_where, p + HPU_WB_ERR_WHERE, 4);
        return w;
    }
    uint64_t done(unsigned e, unsigned s) { return rd64lo(qreg(e, s, HPU_QS_DONE_LO)); }
    uint32_t ci(unsigned e, unsigned s) { return rd(qreg(e, s, HPU_QS_CI)); }
    uint32_t refused() { return rd(HPU_REG_UQ_DB_REFUSED); }
    size_t vectors_of(unsigned e)
    {
        return static_cast<size_t>(std::count(env.vectors.begin(), env.vectors.end(),
                                              HPU_VEC_ENGINE(e)));
    }
};

} // namespace

TEST_CASE("a doorbell runs a user stream: descriptor and 32-byte record through the MMU, "
          "DONE from START", "[emu][v10]")
{
    UqRig r;
    const uint64_t start = (1ULL << 32) + 6;    // CI 6: slot 2 of a 4-entry ring
    r.setup_uq(0, 4, 5, 4, start);
    CHECK(r.ci(0, 4) == 6u);
    CHECK(r.rd(r.qreg(0, 4, HPU_QS_CQ_PI)) == 6u);
    CHECK(r.rd(r.qreg(0, 4, HPU_QS_PI)) == 6u);   // 0 is out of reach: PI = CI
    CHECK(r.done(0, 4) == start);

    const uint64_t buf = r.halloc(64);
    const uint64_t va = r.map_host(5, buf, 64);
    r.env.now = 77777;
    r.usubmit(0, 4, Cb().write_value(va, 0xfeedf00d), 0x1234);
    r.run();

    CHECK(r.hrd32(buf) == 0xfeedf00du);
    const Ucqe c = r.ucqe(0, 4, 6);
    CHECK(c.seq == 0x1234u);
    CHECK(c.status == uint32_t{HPU_CQ_OK});
    CHECK(c.where == where(0, 0, 4));
    CHECK(c.index == start);
    CHECK(c.time == 77777u);
    CHECK(r.done(0, 4) == start + 1);
    CHECK(r.ci(0, 4) == 7u);
    CHECK(r.rd(r.qreg(0, 4, HPU_QS_CQ_PI)) == 7u);
    CHECK(r.status(0, 4) == HPU_QS_STATUS_IDLE);
    // A completion alone neither notifies nor writes the write-back record.
    CHECK(r.env.vectors.empty());
    CHECK(r.wb(0, 4).done == 0u);
    CHECK(r.error() == 0u);
    CHECK(r.env.errors.empty());
}

TEST_CASE("a user stream's record lands in two writes: all ones in the index, then the index",
          "[emu][v10]")
{
    // Software reading index n finds the rest of record n: the index is
    // the last thing of the record to land.
    UqRig r;
    r.setup_uq(0, 4, 5, 4);
    const uint64_t slot = r.u[0][4].cq;             // descriptor 0's record
    std::memset(r.hp(slot), 0xee, HPU_UCQE_SIZE);   // an older record's bytes
    std::vector<uint64_t> writes;
    uint64_t index_before = 0;
    uint64_t time_before = 0;
    r.env.on_dma_write = [&](uint64_t a) {
        if (a < slot || a >= slot + HPU_UCQE_SIZE) {
            return;
        }
        writes.push_back(a - slot);
        if (a == slot + HPU_UCQE_INDEX) {
            std::memcpy(&index_before, r.hp(slot) + HPU_UCQE_INDEX, 8);
            std::memcpy(&time_before, r.hp(slot) + HPU_UCQE_TIME, 8);
        }
    };
    const uint64_t buf = r.halloc(64);
    const uint64_t va = r.map_host(5, buf, 64);
    r.env.now = 4242;
    r.usubmit(0, 4, Cb().write_value(va, 1), 0x99);
    r.run();
    r.env.on_dma_write = nullptr;
    REQUIRE(writes.size() == 2u);
    CHECK(writes[0] == 0u);
    CHECK(writes[1] == uint64_t{HPU_UCQE_INDEX});
    CHECK(index_before == UINT64_MAX);   // the first write: the index all ones
    CHECK(time_before == 4242u);         // and every other field new
    const Ucqe c = r.ucqe(0, 4, 0);
    CHECK(c.index == 0u);
    CHECK(c.seq == 0x99u);
    CHECK(c.time == 4242u);
}

TEST_CASE("a user stream with ASID 0, no WB, a 16-byte aligned CQ or CQ_SIZE < RING_SIZE "
          "halts", "[emu][v10]")
{
    const int which = GENERATE(0, 1, 2, 3);
    CAPTURE(which);
    UqRig r;
    r.program(1, 5, 7, 8);
    switch (which) {
    case 0:
        r.wr(r.qreg(1, 5, HPU_QS_ASID), 0);
        break;
    case 1:
        r.wr64(r.qreg(1, 5, HPU_QS_WB_LO), 0);
        break;
    case 2:
        r.wr64(r.qreg(1, 5, HPU_QS_CQ_LO), r.u[1][5].cq_va + 16);
        break;
    default:
        r.wr(r.qreg(1, 5, HPU_QS_CQ_SIZE), 4);
        break;
    }
    r.enable(1, 5);
    CHECK(r.status(1, 5) & HPU_QS_STATUS_HALTED);
    CHECK(r.env.errors.size() == 1);
    r.usubmit(1, 5, Cb().nop());
    r.run();
    CHECK(r.ci(1, 5) == 0u);
    CHECK(r.env.dma_reads == 0u);
    CHECK(r.error() == 0u);
    // ENABLE 0 clears HALTED; nothing was running, so no stop record.
    r.wr(r.qreg(1, 5, HPU_QS_CTRL), 0);
    CHECK(r.status(1, 5) == HPU_QS_STATUS_IDLE);
    CHECK(r.env.vectors.empty());
}

TEST_CASE("a descriptor whose asid is not the stream's is BAD_DESC and error-stops",
          "[emu][v10]")
{
    UqRig r;
    r.setup_uq(5, 4, 5);
    const uint64_t cb = r.place_cb(Cb().nop(), 6);
    r.put(5, 4, cb, 8, 6, 0x51);
    r.db(5, 4);
    r.usubmit(5, 4, Cb().nop());
    r.run();

    CHECK(r.ucqe(5, 4, 0).status == uint32_t{HPU_CQ_BAD_DESC});
    CHECK(r.ucqe(5, 4, 0).seq == 0x51u);
    CHECK(r.ci(5, 4) == 1u);                 // the second is not fetched
    CHECK(r.status(5, 4) & HPU_QS_STATUS_ERROR);
    CHECK(r.wb(5, 4).err_status == uint32_t{HPU_CQ_BAD_DESC});
    CHECK(r.vectors_of(5) == 1u);
}

TEST_CASE("WREG on a user stream is PRIV, error-stops with its event, and RESUME goes on",
          "[emu][v10]")
{
    UqRig r;
    r.setup_eq();
    r.setup_uq(2, 6, 5);
    r.usubmit(2, 6, Cb().nop().wreg(HPU_REG_SCRATCH, 0x77), 0x61);
    r.usubmit(2, 6, Cb().nop(), 0x62);
    r.run();

    CHECK(r.rd(HPU_REG_SCRATCH) == 0u);
    const Ucqe c = r.ucqe(2, 6, 0);
    CHECK(c.status == uint32_t{HPU_CQ_PRIV});
    CHECK(c.where == where(8, 2, 6));
    CHECK(r.rd(r.qreg(2, 6, HPU_QS_CQ_PI)) == 1u);
    CHECK(r.done(2, 6) == 1u);
    const uint32_t st = r.status(2, 6);
    CHECK((st & HPU_QS_STATUS_ERROR) != 0);
    CHECK((st & HPU_QS_STATUS_IDLE) != 0);       // stopped: nothing to fetch
    REQUIRE(r.rd(HPU_REG_EQ_PI) == 1u);
    const Eqe ev = r.eqe(0);
    CHECK(ev.id == HPU_EVENT_PRIV);
    CHECK(ev.engine == 2);
    CHECK(ev.asid == 5);
    const Wb w = r.wb(2, 6);
    CHECK(w.done == 1u);
    CHECK(w.err_status == uint32_t{HPU_CQ_PRIV});
    CHECK(w.err_where == where(8, 2, 6));
    CHECK((w.status & HPU_QS_STATUS_ERROR) != 0);
    CHECK(r.vectors_of(2) == 1u);
    CHECK(r.error() == 0u);

    // More doorbells change nothing while it is stopped.
    r.db(2, 6);
    r.run();
    CHECK(r.rd(r.qreg(2, 6, HPU_QS_CQ_PI)) == 1u);

    r.wr(r.qreg(2, 6, HPU_QS_CTRL), HPU_QS_CTRL_ENABLE | HPU_QS_CTRL_RESUME);
    CHECK((r.status(2, 6) & HPU_QS_STATUS_ERROR) == 0);
    r.run();
    CHECK(r.rd(r.qreg(2, 6, HPU_QS_CQ_PI)) == 2u);
    CHECK(r.ucqe(2, 6, 1).status == uint32_t{HPU_CQ_OK});
    CHECK(r.ucqe(2, 6, 1).seq == 0x62u);
    CHECK(r.status(2, 6) == HPU_QS_STATUS_IDLE);
    CHECK(r.vectors_of(2) == 1u);
    CHECK(r.rd(r.qreg(2, 6, HPU_QS_CTRL)) == uint32_t{HPU_QS_CTRL_ENABLE});
}

TEST_CASE("a ring or completion ring the stream cannot reach is a queue fault", "[emu][v10]")
{
    UqRig r;
    r.setup_eq();

    SECTION("the ring in an unmapped page: MMU_FAULT event, nothing counted") {
        const uint64_t hole = 0x7700000000ULL;
        r.program(3, 4, 9);
        r.wr64(r.qreg(3, 4, HPU_QS_RING_LO), hole);
        r.enable(3, 4);
        r.usubmit(3, 4, Cb().nop());
        r.run();

        CHECK(r.status(3, 4) & HPU_QS_STATUS_FAULT);
        CHECK(r.ci(3, 4) == 0u);
        CHECK(r.done(3, 4) == 0u);
        CHECK(r.rd(r.qreg(3, 4, HPU_QS_CQ_PI)) == 0u);
        REQUIRE(r.rd(HPU_REG_EQ_PI) == 1u);
        const Eqe ev = r.eqe(0);
        CHECK(ev.id == HPU_EVENT_MMU_FAULT);
        CHECK(ev.engine == 3);
        CHECK(ev.asid == 9);
        CHECK(ev.addr == hole);
        CHECK((ev.info & HPU_FAULT_WRITE) == 0);
        const Wb w = r.wb(3, 4);
        CHECK(w.err_status == uint32_t{HPU_CQ_MMU_FAULT});
        CHECK(w.err_where == where(0, 3, 4));
        CHECK((w.status & HPU_QS_STATUS_FAULT) != 0);
        CHECK(r.vectors_of(3) == 1u);
        // It stays stopped; only a disable clears FAULT.
        r.db(3, 4);
        r.run();
        CHECK(r.rd(HPU_REG_EQ_PI) == 1u);
        r.wr(r.qreg(3, 4, HPU_QS_CTRL), HPU_QS_CTRL_ENABLE | HPU_QS_CTRL_RESUME);
        CHECK(r.status(3, 4) & HPU_QS_STATUS_FAULT);
        r.wr(r.qreg(3, 4, HPU_QS_CTRL), 0);
        CHECK(r.status(3, 4) == HPU_QS_STATUS_IDLE);
    }
    SECTION("the completion ring read-only: the work is done, the descriptor not counted") {
        r.program(3, 4, 9);
        const uint64_t ro = r.map_host(9, r.u[3][4].cq, 8 * HPU_UCQE_SIZE, false);
        r.wr64(r.qreg(3, 4, HPU_QS_CQ_LO), ro);
        r.enable(3, 4);
        const uint64_t buf = r.halloc(64);
        r.usubmit(3, 4, Cb().write_value(r.map_host(9, buf, 64), 0xabcd));
        r.run();

        CHECK(r.hrd32(buf) == 0xabcdu);
        CHECK(r.status(3, 4) & HPU_QS_STATUS_FAULT);
        CHECK(r.ci(3, 4) == 0u);
        CHECK(r.done(3, 4) == 0u);
        REQUIRE(r.rd(HPU_REG_EQ_PI) == 1u);
        CHECK(r.eqe(0).id == HPU_EVENT_MMU_FAULT);
        CHECK(r.eqe(0).addr == ro);
        CHECK((r.eqe(0).info & HPU_FAULT_WRITE) != 0);
        CHECK(r.wb(3, 4).err_status == uint32_t{HPU_CQ_MMU_FAULT});
        CHECK(r.vectors_of(3) == 1u);
    }
    CHECK(r.error() == 0u);
}

TEST_CASE("TMO_MS times out a WAIT-blocked descriptor: STREAM_TIMEOUT, then ABORT",
          "[emu][v10]")
{
    UqRig r;
    r.setup_eq();
    r.program(0, 7, 5);
    r.wr(r.qreg(0, 7, HPU_QS_TMO_MS), 5);
    r.enable(0, 7);
    r.usubmit(0, 7, Cb().nop().wait(3, 1));
    r.run();
    REQUIRE(r.status(0, 7) & HPU_QS_STATUS_WAITING);

    r.advance(5 * 1000000ULL);                  // exactly TMO_MS: not more
    CHECK((r.status(0, 7) & HPU_QS_STATUS_TIMEOUT) == 0);
    CHECK(r.rd(HPU_REG_EQ_PI) == 0u);
    r.advance(1000);
    CHECK(r.status(0, 7) & HPU_QS_STATUS_TIMEOUT);
    REQUIRE(r.rd(HPU_REG_EQ_PI) == 1u);
    const Eqe ev = r.eqe(0);
    CHECK(ev.id == HPU_EVENT_STREAM_TIMEOUT);
    CHECK(ev.severity == HPU_EVENT_SEV_ERROR);
    CHECK(ev.engine == 0);
    CHECK(ev.asid == 5);
    CHECK(ev.info == 7u);
    CHECK((r.wb(0, 7).status & HPU_QS_STATUS_TIMEOUT) != 0);
    CHECK(r.vectors_of(0) == 1u);

    // The WAIT's condition comes true: the timed-out stream still runs nothing.
    r.wr(sob_of(5, 3), 1);
    r.run();
    CHECK(r.rd(r.qreg(0, 7, HPU_QS_CQ_PI)) == 0u);

    r.wr(r.qreg(0, 7, HPU_QS_CTRL), HPU_QS_CTRL_ABORT);
    r.run();
    CHECK(r.ucqe(0, 7, 0).status == uint32_t{HPU_CQ_ABORTED});
    CHECK(r.rd(r.qreg(0, 7, HPU_QS_CQ_PI)) == 1u);
    CHECK(r.status(0, 7) == HPU_QS_STATUS_IDLE);
}

TEST_CASE("a disable pauses a user stream; with ABORT the descriptor completes ABORTED",
          "[emu][v10]")
{
    UqRig r;
    r.setup_uq(1, 4, 5);
    r.usubmit(1, 4, Cb().nop().wait(2, 1), 0x91);
    r.run();
    REQUIRE(r.status(1, 4) & HPU_QS_STATUS_WAITING);

    SECTION("pause: CI stays, the write-back record has the offset; START resumes") {
        r.wr(r.qreg(1, 4, HPU_QS_CTRL), 0);
        r.run();
        CHECK(r.rd(r.qreg(1, 4, HPU_QS_CQ_PI)) == 0u);
        CHECK(r.ci(1, 4) == 0u);
        CHECK(r.done(1, 4) == 0u);
        CHECK(r.ucqe(1, 4, 0).seq == 0u);       // no record
        const Wb w = r.wb(1, 4);
        CHECK(w.done == 0u);
        CHECK(w.err_status == uint32_t{HPU_CQ_ABORTED});
        CHECK(w.err_where == where(8, 1, 4));
        CHECK(r.vectors_of(1) == 1u);
        CHECK(r.status(1, 4) == HPU_QS_STATUS_IDLE);

        // A doorbell rung while paused is kept.
        r.usubmit(1, 4, Cb().nop(), 0x92);
        CHECK(r.rd(r.qreg(1, 4, HPU_QS_PI)) == 2u);
        r.wr(sob_of(5, 2), 1);
        r.wr64(r.qreg(1, 4, HPU_QS_START_LO), w.done);
        r.enable(1, 4);
        r.run();
        CHECK(r.rd(r.qreg(1, 4, HPU_QS_CQ_PI)) == 2u);
        CHECK(r.ucqe(1, 4, 0).seq == 0x91u);
        CHECK(r.ucqe(1, 4, 0).status == uint32_t{HPU_CQ_OK});
        CHECK(r.ucqe(1, 4, 1).seq == 0x92u);
        CHECK(r.ucqe(1, 4, 1).index == 1u);
    }
    SECTION("abort: the ABORTED record at the WAIT's offset, CI moves") {
        r.wr(r.qreg(1, 4, HPU_QS_CTRL), HPU_QS_CTRL_ABORT);
        r.run();
        CHECK(r.rd(r.qreg(1, 4, HPU_QS_CQ_PI)) == 1u);
        CHECK(r.ucqe(1, 4, 0).status == uint32_t{HPU_CQ_ABORTED});
        CHECK(r.ucqe(1, 4, 0).where == where(8, 1, 4));
        CHECK(r.ci(1, 4) == 1u);
        CHECK(r.wb(1, 4).done == 1u);
        CHECK(r.vectors_of(1) == 1u);
        CHECK(r.status(1, 4) == HPU_QS_STATUS_IDLE);
    }
    CHECK(r.error() == 0u);
}

TEST_CASE("refused doorbell accesses count in UQ_DB_REFUSED and set no ERROR bit",
          "[emu][v10]")
{
    UqRig r;
    r.setup_uq(4, 9, 5);
    r.setup_stream(4, 2);
    const uint64_t page = HPU_UQDB_PAGE(4, 9);

    SECTION("a read") { CHECK(r.rd(page) == 0u); }
    SECTION("a 64-bit write") { r.wr(page, 1, 8); }
    SECTION("a 16-bit write") { r.wr(page, 1, 2); }
    SECTION("another offset") { r.wr(page + 4, 1); }
    SECTION("a kernel stream's page") { r.wr(HPU_UQDB_PAGE(4, 2), 1); }
    SECTION("PI more than RING_SIZE ahead") { r.wr(page, 9); }
    CHECK(r.refused() == 1u);
    CHECK(r.error() == 0u);
    CHECK(r.rd(r.qreg(4, 9, HPU_QS_PI)) == 0u);
    CHECK(r.rd(r.qreg(4, 2, HPU_QS_PI)) == 0u);
    CHECK(r.status(4, 9) == HPU_QS_STATUS_IDLE);

    // A good doorbell moves its own stream's PI only, and is not counted.
    r.put(4, 9, r.place_cb(Cb().nop(), 5), 8, 5, 1);
    r.db(4, 9);
    CHECK(r.rd(r.qreg(4, 9, HPU_QS_PI)) == 1u);
    CHECK(r.rd(r.qreg(4, 8, HPU_QS_PI)) == 0u);
    CHECK(r.rd(r.qreg(5, 9, HPU_QS_PI)) == 0u);
    CHECK(r.refused() == 1u);
    r.run();
    CHECK(r.ci(4, 9) == 1u);
    CHECK(r.error() == 0u);
    // The register itself follows the access rules.
    r.wr(HPU_REG_UQ_DB_REFUSED, 0);
    CHECK(r.error() == HPU_ERROR_BAD_ACCESS);
}

TEST_CASE("ARM raises the vector once, at once when already reached", "[emu][v10]")
{
    UqRig r;
    r.setup_uq(0, 5, 5);
    r.wr(r.qreg(0, 5, HPU_QS_ARM_HI), 0);
    r.wr(r.qreg(0, 5, HPU_QS_ARM_LO), 2);
    CHECK(r.rd(r.qreg(0, 5, HPU_QS_ARM_LO)) == 2u);

    r.usubmit(0, 5, Cb().nop());
    r.run();
    CHECK(r.vectors_of(0) == 0u);
    CHECK(r.wb(0, 5).done == 0u);
    r.usubmit(0, 5, Cb().nop());
    r.run();
    CHECK(r.vectors_of(0) == 1u);
    CHECK(r.wb(0, 5).done == 2u);
    CHECK(r.rd(r.qreg(0, 5, HPU_QS_ARM_LO)) == 0u);
    r.usubmit(0, 5, Cb().nop());
    r.run();
    CHECK(r.vectors_of(0) == 1u);

    r.wr(r.qreg(0, 5, HPU_QS_ARM_LO), 3);       // DONE is 3: fires now
    CHECK(r.vectors_of(0) == 2u);
    CHECK(r.wb(0, 5).done == 3u);
    CHECK(r.rd(r.qreg(0, 5, HPU_QS_ARM_LO)) == 0u);
    r.usubmit(0, 5, Cb().nop());
    r.run();
    CHECK(r.vectors_of(0) == 2u);
}

TEST_CASE("SIGNAL adds 1 per completion, failed and aborted ones included", "[emu][v10]")
{
    UqRig r;
    r.program(0, 6, 5);
    r.wr(r.qreg(0, 6, HPU_QS_SIGNAL), HPU_QS_SIGNAL_EN | 3);
    r.enable(0, 6);
    r.usubmit(0, 6, Cb().nop());
    r.usubmit(0, 6, Cb().nop().raw(0x3f, 0));   // BAD_PACKET
    r.run();
    CHECK(r.ucqe(0, 6, 1).status == uint32_t{HPU_CQ_BAD_PACKET});
    CHECK(r.rd(sob_of(5, 3)) == 2u);

    r.wr(r.qreg(0, 6, HPU_QS_CTRL), HPU_QS_CTRL_ENABLE | HPU_QS_CTRL_RESUME);
    r.usubmit(0, 6, Cb().wait(1, 1));
    r.run();
    r.wr(r.qreg(0, 6, HPU_QS_CTRL), HPU_QS_CTRL_ABORT);
    r.run();
    CHECK(r.ucqe(0, 6, 2).status == uint32_t{HPU_CQ_ABORTED});
    CHECK(r.rd(sob_of(5, 3)) == 3u);
    // Without EN nothing counts.
    CHECK(r.rd(sob_of(5, 0)) == 0u);
}

TEST_CASE("a soft reset pauses user streams: no record, the offset in the write-back "
          "record, no vector, PI kept", "[emu][v10]")
{
    UqRig r;
    r.setup_uq(2, 4, 5);
    r.usubmit(2, 4, Cb().nop().wait(2, 1));
    r.usubmit(2, 4, Cb().nop());
    r.run();
    REQUIRE(r.status(2, 4) & HPU_QS_STATUS_WAITING);

    r.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    r.run();
    r.advance(HPU_SOFT_RESET_NS);
    REQUIRE(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);

    CHECK(r.ucqe(2, 4, 0).seq == 0u);           // no record
    const Wb w = r.wb(2, 4);
    CHECK(w.done == 0u);
    CHECK(w.err_status == uint32_t{HPU_CQ_ABORTED});
    CHECK(w.err_where == where(8, 2, 4));
    CHECK(r.vectors_of(2) == 0u);
    // Reset values, but the doorbell rung is kept.
    CHECK(r.rd(r.qreg(2, 4, HPU_QS_CTRL)) == 0u);
    CHECK(r.rd(r.qreg(2, 4, HPU_QS_ASID)) == 0u);
    CHECK(r.rd(r.qreg(2, 4, HPU_QS_RING_LO)) == 0u);
    CHECK(r.rd(r.qreg(2, 4, HPU_QS_WB_LO)) == 0u);
    CHECK(r.rd(r.qreg(2, 4, HPU_QS_PI)) == 2u);
    CHECK(r.status(2, 4) == HPU_QS_STATUS_IDLE);
}

TEST_CASE("a user stream's configuration is read-only while it is enabled", "[emu][v10]")
{
    UqRig r;
    r.setup_uq(3, 8, 5);
    const uint32_t reg = GENERATE(uint32_t{HPU_QS_ASID}, uint32_t{HPU_QS_SIGNAL},
                                  uint32_t{HPU_QS_TMO_MS}, uint32_t{HPU_QS_START_LO},
                                  uint32_t{HPU_QS_START_HI}, uint32_t{HPU_QS_RING_LO},
                                  uint32_t{HPU_QS_CQ_LO}, uint32_t{HPU_QS_WB_LO});
    CAPTURE(reg);
    const uint32_t before = r.rd(r.qreg(3, 8, reg));
    r.wr(r.qreg(3, 8, reg), before ^ 0x41u);
    CHECK(r.rd(r.qreg(3, 8, reg)) == before);
    CHECK(r.env.errors.size() == 1);
    CHECK(r.error() == 0u);
    // ARM is not configuration.
    r.wr(r.qreg(3, 8, HPU_QS_ARM_HI), 7);
    CHECK(r.rd(r.qreg(3, 8, HPU_QS_ARM_HI)) == 7u);
    // Disabled (and idle) it takes the write.
    r.wr(r.qreg(3, 8, HPU_QS_CTRL), 0);
    r.wr(r.qreg(3, 8, reg), before ^ 0x41u);
    CHECK(r.rd(r.qreg(3, 8, reg)) != before);
}

TEST_CASE("kernel streams keep the version 9 page: the user registers are unmapped",
          "[emu][v10]")
{
    Rig r;
    const uint32_t reg = GENERATE(uint32_t{HPU_QS_ASID}, uint32_t{HPU_QS_ARM_LO},
                                  uint32_t{HPU_QS_SIGNAL}, uint32_t{HPU_QS_TMO_MS},
                                  uint32_t{HPU_QS_START_HI});
    CAPTURE(reg);
    CHECK(r.rd(r.qreg(1, 3, reg)) == 0u);
    CHECK(r.error() == HPU_ERROR_BAD_ACCESS);
    r.wr(HPU_REG_ERROR, ~0u);
    CHECK(r.rd(r.qreg(1, 4, reg)) == 0u);       // a user stream has them
    CHECK(r.error() == 0u);
}

TEST_CASE("MMU_INV of the stream's ASID stays BUSY while its descriptor or record is in "
          "flight", "[emu][v10][tlb]")
{
    const bool record = GENERATE(false, true);
    CAPTURE(record);
    UqRig r;
    r.setup_uq(0, 4, 5);
    const uint64_t watch = record ? r.u[0][4].cq : r.u[0][4].ring;
    bool seen = false;
    uint32_t during = 0, other = 0;
    auto hook = [&](uint64_t a) {
        if (a == watch && !seen) {
            seen = true;
            r.wr(HPU_REG_MMU_INV, 4);                   // another ASID
            other = r.rd(HPU_REG_MMU_INV_STATUS);
            r.wr(HPU_REG_MMU_INV, 5);
            during = r.rd(HPU_REG_MMU_INV_STATUS);
        }
    };
    if (record) {
        r.env.on_dma_write = hook;
    } else {
        r.env.on_dma_read = hook;
    }
    r.usubmit(0, 4, Cb().nop());
    r.run();
    REQUIRE(seen);
    CHECK(other == 0u);
    CHECK(during == HPU_MMU_INV_BUSY);
    CHECK(r.rd(HPU_REG_MMU_INV_STATUS) == 0u);
    CHECK(r.ucqe(0, 4, 0).status == uint32_t{HPU_CQ_OK});
}

TEST_CASE("a hard reset writes nothing for a user stream and drops its doorbells uncounted",
          "[emu][v10][reset]")
{
    UqRig r;
    r.setup_uq(6, 5, 5);
    r.usubmit(6, 5, Cb().nop().wait(2, 1));
    r.run();
    REQUIRE(r.status(6, 5) & HPU_QS_STATUS_WAITING);
    r.wr(HPU_UQDB_PAGE(6, 5), 1, 8);                // refused before the reset
    REQUIRE(r.refused() == 1u);
    const unsigned int writes = r.env.dma_writes;

    r.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
    r.usubmit(6, 5, Cb().nop());                    // dropped: no PI, not counted
    r.run();
    r.advance(HPU_HARD_RESET_NS);
    r.run();
    REQUIRE(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK(r.env.dma_writes == writes);              // no record, no write-back
    CHECK(r.rd(r.qreg(6, 5, HPU_QS_PI)) == 0u);
    CHECK(r.rd(r.qreg(6, 5, HPU_QS_ASID)) == 0u);
    CHECK(r.status(6, 5) == HPU_QS_STATUS_IDLE);
    CHECK(r.refused() == 1u);                       // survives the hard reset
    CHECK(r.error() == 0u);
}

TEST_CASE("doorbells race an engine thread: every descriptor completes once, in order",
          "[emu][v10][threads]")
{
    UqRig r(thread_dev(256 * MiB));
    constexpr uint32_t n = 300, size = 8;
    r.program(0, 4, 5, size);
    r.wr(r.qreg(0, 4, HPU_QS_SIGNAL), HPU_QS_SIGNAL_EN | 1);
    r.enable(0, 4);
    const Cb prog = Cb().nop().sob_update(2, 1, HPU_SOB_OP_ADD);
    const uint64_t cb = r.place_cb(prog, 5);

    std::atomic<bool> stop{false};
    std::thread engine([&] {
        while (!stop.load()) {
            if (!hpum_core_engine_step(&r.core, 0)) {
                std::this_thread::yield();
            }
        }
    });
    for (uint32_t i = 0; i < n; i++) {
        while (r.u[0][4].pi - r.ci(0, 4) >= size &&
               !(r.status(0, 4) & HPU_QS_STATUS_ERROR)) {
            std::this_thread::yield();
        }
        r.put(0, 4, cb, prog.size(), 5, 1000 + i);
        r.db(0, 4);
    }
    for (int spin = 0; r.ci(0, 4) != n && spin < 10000000; spin++) {
        if (r.status(0, 4) & HPU_QS_STATUS_ERROR) {
            break;
        }
        std::this_thread::yield();
    }
    stop = true;
    engine.join();

    CHECK(r.done(0, 4) == n);
    CHECK(r.rd(sob_of(5, 1)) == n);             // SIGNAL
    CHECK(r.rd(sob_of(5, 2)) == n);             // the packets
    for (uint32_t i = n - size; i < n; i++) {
        const Ucqe c = r.ucqe(0, 4, i);
        CHECK(c.index == i);
        CHECK(c.seq == 1000u + i);
        CHECK(c.status == uint32_t{HPU_CQ_OK});
    }
    CHECK(r.refused() == 0u);
    CHECK(r.error() == 0u);
    CHECK(r.status(0, 4) == HPU_QS_STATUS_IDLE);
}

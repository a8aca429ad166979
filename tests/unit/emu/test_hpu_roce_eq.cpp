// SPDX-License-Identifier: MIT
//
// Host unit tests of the RoCE engine's event ring ordering
// (Documentation/hw/roce.md, "Events" and its "Ordering" paragraph) and of
// INJ_ROCE_CMD (Documentation/hw/errors-and-reset.md).  The ordering cases
// run the device in the threaded environment (hpu_thread_env.hpp): one
// thread makes an event whose entry write waits in the host-write hook,
// before its bytes land, while the test looks at the registers and makes
// more events and commands from its own thread.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "hpu_roce_rig.hpp"
#include "hpu_thread_env.hpp"

using namespace hpu_test;

namespace {

constexpr uint32_t EVQ_LEN = 32;        // events made, not yet written (roce.md)
constexpr uint32_t EQ_ON = HPU_ROCE_EQ_ENABLE | HPU_ROCE_EQ_IRQ;

uint64_t port_ctrl(unsigned int p) { return HPU_ROCE_PORT_BASE(p) + HPU_ROCE_PORT_CTRL; }

// Runs @fn on a thread of its own.  The first host write into [lo, hi)
// (an event ring), from whichever thread, waits in the hook before its
// bytes land until release(); later writes pass.
class HeldWrite {
public:
    HeldWrite(Env &env, uint64_t lo, uint64_t hi, std::function<void()> fn) : env_(env)
    {
        env_.on_dma_write = [this, lo, hi](uint64_t a) {
            if (a >= lo && a < hi) {
                hold();
            }
        };
        thread_ = std::thread(std::move(fn));
    }
    ~HeldWrite() { release(); }
    HeldWrite(const HeldWrite &) = delete;
    HeldWrite &operator=(const HeldWrite &) = delete;
    HeldWrite(HeldWrite &&) = delete;
    HeldWrite &operator=(HeldWrite &&) = delete;

    // Whether the write is waiting in the hook (a bound, not a pacing:
    // false only if it never came).
    bool held()
    {
        std::unique_lock<std::mutex> l(m_);
        return cv_.wait_for(l, std::chrono::seconds(30), [this] { return waiting_; });
    }
    // Let the write go on and wait until @fn has returned.
    void release()
    {
        {
            std::lock_guard<std::mutex> l(m_);
            go_ = true;
        }
        cv_.notify_all();
        if (thread_.joinable()) {
            thread_.join();
        }
        env_.on_dma_write = nullptr;
    }

private:
    void hold()
    {
        std::unique_lock<std::mutex> l(m_);
        if (used_) {
            return;
        }
        used_ = true;
        waiting_ = true;
        cv_.notify_all();
        cv_.wait(l, [this] { return go_; });
    }

    Env &env_;
    std::thread thread_;
    std::mutex m_;
    std::condition_variable cv_;
    bool used_ = false, waiting_ = false, go_ = false;
};

struct Entry {
    uint16_t type, port;
    uint32_t obj;
};

Entry entry(RoceRig &r, uint64_t ring, uint32_t i)
{
    const uint8_t *p = r.hp(ring + 32ull * i);
    Entry e{};
    std::memcpy(&e.type, p + HPU_ROCE_EQE_TYPE, 2);
    std::memcpy(&e.port, p + HPU_ROCE_EQE_PORT, 2);
    e.obj = get32(p + HPU_ROCE_EQE_OBJECT);
    return e;
}

// The RoCE rig in the threaded environment, with its event ring of @n
// entries enabled and CQ 1 made (for commands to run).
struct EqRig : RoceRig {
    uint32_t dropped0 = 0;      // EQ_DROPPED once the ring is on

    explicit EqRig(uint32_t n = 64) : RoceRig(thread_dev(256 * MiB))
    {
        setup_roce_eq(n);
        make_cq(1);
        dropped0 = crd(HPU_ROCE_EQ_DROPPED);
    }
    // Port 1's RoCE enable cleared from another thread: a PORT_DOWN event
    // whose entry write waits (ring bytes [lo, hi)).
    std::unique_ptr<HeldWrite> hold_port_down(uint64_t lo, uint64_t hi)
    {
        return std::make_unique<HeldWrite>(env, lo, hi, [this] {
            hpum_core_write(&core, port_ctrl(1), 0, 4);
        });
    }
    std::unique_ptr<HeldWrite> hold_port_down()
    {
        return hold_port_down(eq_bus, eq_bus + 32ull * eq_n);
    }
    // A command (QUERY of CQ 1) written and run on the worker.
    void run_query()
    {
        cwr(HPU_ROCE_CMD_INDEX, 1);
        cwr(HPU_ROCE_CMD, HPU_ROCE_OP_QUERY | HPU_ROCE_TYPE_CQ << HPU_ROCE_CMD_TYPE_SHIFT);
        pump();
    }
};

} // namespace

TEST_CASE("RoCE event ring: EQ_PI covers an entry only once its write is done; EQ_CTRL.BUSY "
          "meanwhile", "[emu][roce][eq]")
{
    EqRig r;
    auto h = r.hold_port_down();
    REQUIRE(h->held());
    CHECK(r.crd(HPU_ROCE_EQ_PI) == 0u);
    CHECK(r.crd(HPU_ROCE_EQ_CTRL) == (EQ_ON | HPU_ROCE_EQ_BUSY));
    CHECK(entry(r, r.eq_bus, 0).type == 0u);
    h->release();
    CHECK(r.crd(HPU_ROCE_EQ_PI) == 1u);
    CHECK(r.crd(HPU_ROCE_EQ_CTRL) == EQ_ON);
    Entry e = entry(r, r.eq_bus, 0);
    CHECK(e.type == HPU_ROCE_EV_PORT_DOWN);
    CHECK(e.port == 1u);
    CHECK(e.obj == 1u);
    CHECK(r.crd(HPU_ROCE_EQ_DROPPED) == r.dropped0);
    CHECK(std::count(r.env.vectors.begin(), r.env.vectors.end(), HPU_VEC_ROCE) == 1);
}

TEST_CASE("RoCE event ring: CMD_STATUS.BUSY stays set for a command done while an earlier "
          "event is not yet written", "[emu][roce][eq]")
{
    EqRig r;
    auto h = r.hold_port_down();
    REQUIRE(h->held());
    const uint32_t done = r.crd(HPU_ROCE_CMD_DONE);
    r.run_query();
    CHECK(r.crd(HPU_ROCE_CMD_DONE) == done + 1);        // it has run
    CHECK(r.crd(HPU_ROCE_CMD_STATUS) == HPU_ROCE_CMD_BUSY);
    // Still BUSY: command registers written now are dropped.
    r.cwr(HPU_ROCE_CMD_INDEX, 7);
    CHECK(r.crd(HPU_ROCE_CMD_INDEX) == 1u);
    h->release();
    CHECK(r.crd(HPU_ROCE_EQ_PI) == 1u);
    CHECK(r.crd(HPU_ROCE_CMD_STATUS) == 0u);            // done, RESULT OK
    CHECK(r.cmd(HPU_ROCE_OP_QUERY, HPU_ROCE_TYPE_CQ, 1, Bytes(256)) == HPU_ROCE_RES_OK);
}

TEST_CASE("RoCE event ring: disabled during a write with another event queued, the queued "
          "one is dropped and no BUSY sticks", "[emu][roce][eq]")
{
    EqRig r;
    auto h = r.hold_port_down();
    REQUIRE(h->held());
    r.wr(port_ctrl(1), HPU_ROCE_PORT_ENABLE);            // PORT_ACTIVE, queued
    CHECK(r.crd(HPU_ROCE_EQ_PI) == 0u);
    r.run_query();
    CHECK(r.crd(HPU_ROCE_CMD_STATUS) == HPU_ROCE_CMD_BUSY);
    r.cwr(HPU_ROCE_EQ_CTRL, 0);
    CHECK(r.crd(HPU_ROCE_EQ_CTRL) == HPU_ROCE_EQ_BUSY);  // the write under way
    h->release();
    // The write under way finished; the queued event was dropped.
    CHECK(r.crd(HPU_ROCE_EQ_CTRL) == 0u);
    CHECK(r.crd(HPU_ROCE_EQ_PI) == 1u);
    CHECK(entry(r, r.eq_bus, 0).type == HPU_ROCE_EV_PORT_DOWN);
    CHECK(entry(r, r.eq_bus, 1).type == 0u);
    CHECK(r.crd(HPU_ROCE_EQ_DROPPED) == r.dropped0 + 1);
    CHECK(r.crd(HPU_ROCE_CMD_STATUS) == 0u);
    CHECK(r.cmd(HPU_ROCE_OP_QUERY, HPU_ROCE_TYPE_CQ, 1, Bytes(256)) == HPU_ROCE_RES_OK);
}

TEST_CASE("RoCE event ring: enabled again during a write, the old write never advances the "
          "new ring's EQ_PI", "[emu][roce][eq]")
{
    EqRig r;
    const uint64_t ring_a = r.eq_bus;
    auto h = r.hold_port_down();
    REQUIRE(h->held());
    r.wr(port_ctrl(1), HPU_ROCE_PORT_ENABLE);            // queued behind it
    // A new ring while the write to the old one waits.
    const uint64_t ring_b = r.halloc(32ull * 16, 64);
    r.cwr(HPU_ROCE_EQ_CTRL, 0);
    r.cwr(HPU_ROCE_EQ_LO, static_cast<uint32_t>(host_addr(ring_b)));
    r.cwr(HPU_ROCE_EQ_HI, static_cast<uint32_t>(host_addr(ring_b) >> 32));
    r.cwr(HPU_ROCE_EQ_SIZE, 16);
    r.cwr(HPU_ROCE_EQ_CTRL, EQ_ON);
    CHECK(r.crd(HPU_ROCE_EQ_CTRL) == (EQ_ON | HPU_ROCE_EQ_BUSY));
    CHECK(r.crd(HPU_ROCE_EQ_PI) == 0u);
    // The new ring takes events at once, written from this thread.
    r.wr(port_ctrl(0), 0);
    CHECK(r.crd(HPU_ROCE_EQ_PI) == 1u);
    CHECK(entry(r, ring_b, 0).type == HPU_ROCE_EV_PORT_DOWN);
    CHECK(entry(r, ring_b, 0).obj == 0u);
    h->release();
    CHECK(r.crd(HPU_ROCE_EQ_PI) == 1u);
    CHECK(r.crd(HPU_ROCE_EQ_CTRL) == EQ_ON);
    CHECK(entry(r, ring_b, 1).type == 0u);
    // The old write landed where it was aimed; the event queued behind it
    // was never written.  Both are lost to the new ring.
    CHECK(entry(r, ring_a, 0).type == HPU_ROCE_EV_PORT_DOWN);
    CHECK(entry(r, ring_a, 0).obj == 1u);
    CHECK(entry(r, ring_a, 1).type == 0u);
    CHECK(r.crd(HPU_ROCE_EQ_DROPPED) == r.dropped0 + 2);
    // The ring goes on from there.
    r.wr(port_ctrl(0), HPU_ROCE_PORT_ENABLE);
    CHECK(r.crd(HPU_ROCE_EQ_PI) == 2u);
    CHECK(entry(r, ring_b, 1).type == HPU_ROCE_EV_PORT_ACTIVE);
}

TEST_CASE("RoCE event ring: a failed entry write counts in EQ_DROPPED and EQ_PI moves past it",
          "[emu][roce][eq]")
{
    EqRig r;
    // A ring whose entry 0 is just below host memory (unreachable) and
    // entry 1 at its start.
    const uint64_t ring = HOST_BASE - 32;
    r.cwr(HPU_ROCE_EQ_CTRL, 0);
    r.cwr(HPU_ROCE_EQ_LO, static_cast<uint32_t>(host_addr(ring)));
    r.cwr(HPU_ROCE_EQ_HI, static_cast<uint32_t>(host_addr(ring) >> 32));
    r.cwr(HPU_ROCE_EQ_SIZE, 16);
    r.cwr(HPU_ROCE_EQ_CTRL, EQ_ON);
    std::memset(r.hp(HOST_BASE), 0, 32);
    auto h = r.hold_port_down(ring, ring + 32ull * 16);
    REQUIRE(h->held());
    r.wr(port_ctrl(1), HPU_ROCE_PORT_ENABLE);            // queued, for entry 1
    r.run_query();
    CHECK(r.crd(HPU_ROCE_CMD_STATUS) == HPU_ROCE_CMD_BUSY);
    h->release();
    CHECK(r.crd(HPU_ROCE_EQ_PI) == 2u);
    CHECK(r.crd(HPU_ROCE_EQ_DROPPED) == r.dropped0 + 1);
    Entry e = entry(r, ring, 1);
    CHECK(e.type == HPU_ROCE_EV_PORT_ACTIVE);
    CHECK(e.obj == 1u);
    CHECK(r.crd(HPU_ROCE_CMD_STATUS) == 0u);            // a failed write counts as done
    CHECK(r.crd(HPU_ROCE_EQ_CTRL) == EQ_ON);
}

TEST_CASE("RoCE event ring: more than 32 events made during one write: the excess is dropped, "
          "the rest written in order", "[emu][roce][eq]")
{
    EqRig r(64);
    auto h = r.hold_port_down();
    REQUIRE(h->held());
    // 39 more events (port 0 off, on, off, ...): 31 join the one under way.
    const uint32_t more = EVQ_LEN + 7;
    for (uint32_t i = 0; i < more; i++) {
        r.wr(port_ctrl(0), i % 2 ? HPU_ROCE_PORT_ENABLE : 0);
    }
    CHECK(r.crd(HPU_ROCE_EQ_PI) == 0u);
    CHECK(r.crd(HPU_ROCE_EQ_DROPPED) == r.dropped0 + (more + 1 - EVQ_LEN));
    h->release();
    REQUIRE(r.crd(HPU_ROCE_EQ_PI) == EVQ_LEN);
    CHECK(r.crd(HPU_ROCE_EQ_DROPPED) == r.dropped0 + (more + 1 - EVQ_LEN));
    CHECK(entry(r, r.eq_bus, 0).type == HPU_ROCE_EV_PORT_DOWN);
    CHECK(entry(r, r.eq_bus, 0).obj == 1u);
    for (uint32_t i = 1; i < EVQ_LEN; i++) {
        Entry e = entry(r, r.eq_bus, i);
        CAPTURE(i);
        CHECK(e.type == (i % 2 ? HPU_ROCE_EV_PORT_DOWN : HPU_ROCE_EV_PORT_ACTIVE));
        CHECK(e.obj == 0u);
    }
    CHECK(entry(r, r.eq_bus, EVQ_LEN).type == 0u);
}

TEST_CASE("RoCE event ring: events queued behind a write count against the ring's room",
          "[emu][roce][eq]")
{
    EqRig r(16);
    auto h = r.hold_port_down();
    REQUIRE(h->held());
    for (uint32_t i = 0; i < 20; i++) {                 // 15 fit beside the one under way
        r.wr(port_ctrl(0), i % 2 ? HPU_ROCE_PORT_ENABLE : 0);
    }
    CHECK(r.crd(HPU_ROCE_EQ_DROPPED) == r.dropped0 + 5);
    h->release();
    CHECK(r.crd(HPU_ROCE_EQ_PI) == 16u);
    CHECK(r.crd(HPU_ROCE_EQ_DROPPED) == r.dropped0 + 5);
}

TEST_CASE("RoCE event ring: a soft reset completes only once an entry write under way is done",
          "[emu][roce][eq][reset]")
{
    EqRig r;
    auto h = r.hold_port_down();
    REQUIRE(h->held());
    r.wr(port_ctrl(1), HPU_ROCE_PORT_ENABLE);            // queued behind it
    r.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    r.advance(4ull * HPU_SOFT_RESET_NS);
    CHECK(r.rd(HPU_REG_STATUS) == HPU_STATUS_RESET_BUSY);
    CHECK(r.crd(HPU_ROCE_EQ_CTRL) == HPU_ROCE_EQ_BUSY);
    h->release();
    r.advance(HPU_SOFT_RESET_NS);
    CHECK(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK(r.crd(HPU_ROCE_EQ_CTRL) == 0u);
    CHECK(r.crd(HPU_ROCE_EQ_PI) == 0u);
    CHECK(r.crd(HPU_ROCE_EQ_DROPPED) == 0u);            // its reset value
}

TEST_CASE("RoCE event ring: a hard or power-on reset completes only once an entry write under "
          "way is done, the ring registers at their reset values", "[emu][roce][eq][reset]")
{
    const bool hard = GENERATE(true, false);
    CAPTURE(hard);
    EqRig r;
    auto h = r.hold_port_down();
    REQUIRE(h->held());
    r.wr(port_ctrl(1), HPU_ROCE_PORT_ENABLE);            // queued behind it
    if (hard) {
        r.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
        r.advance(2ull * HPU_HARD_RESET_NS);
        CHECK(r.rd(HPU_REG_STATUS) == HPU_STATUS_HARD_RESET_BUSY);
    } else {
        hpum_core_reset(&r.core);
        CHECK(hpum_core_in_reset(&r.core));             // BAR reads all ones meanwhile
    }
    h->release();
    if (hard) {
        r.advance(HPU_HARD_RESET_NS);
    }
    CHECK(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK_FALSE(hpum_core_in_reset(&r.core));
    CHECK(r.crd(HPU_ROCE_EQ_CTRL) == 0u);
    CHECK(r.crd(HPU_ROCE_EQ_PI) == 0u);
    CHECK(r.crd(HPU_ROCE_EQ_DROPPED) == 0u);            // its reset value
    // Nothing of the queued event reached the ring.
    CHECK(entry(r, r.eq_bus, 1).type == 0u);
}

// INJ_ROCE_CMD

namespace {

void soft_reset(Dev &d)
{
    d.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    d.advance(HPU_SOFT_RESET_NS);
    REQUIRE(d.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
}

void hard_reset(Dev &d)
{
    d.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
    d.advance(HPU_HARD_RESET_NS);
    REQUIRE(d.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
}

// A CREATE of CQ 3 written with INJ_ROCE_CMD set: it must stay BUSY, never
// run, and leave the worker idle.
void stuck_create(RoceRig &r)
{
    RoceRig::Cq c;
    Bytes img = r.cq_image(c, 16);
    const uint32_t done = r.crd(HPU_ROCE_CMD_DONE);
    const unsigned int ran = r.env.traces[HPU_TRACE_ROCE_CMD];
    const unsigned int kicks = r.env.roce_kicks;

    for (size_t w = 0; w < 64; w++) {
        r.cwr(HPU_ROCE_CMD_DATA(static_cast<uint32_t>(w)), get32(img.data() + 4 * w));
    }
    r.cwr(HPU_ROCE_CMD_INDEX, 3);
    r.cwr(HPU_ROCE_CMD, HPU_ROCE_OP_CREATE | HPU_ROCE_TYPE_CQ << HPU_ROCE_CMD_TYPE_SHIFT);
    CHECK(r.crd(HPU_ROCE_CMD_STATUS) == HPU_ROCE_CMD_BUSY);
    CHECK(r.env.roce_kicks == kicks);                   // the worker is not asked
    CHECK_FALSE(hpum_core_roce_step(&r.core));          // nor does it ask again
    r.pump();
    CHECK(r.crd(HPU_ROCE_CMD_STATUS) == HPU_ROCE_CMD_BUSY);
    CHECK(r.crd(HPU_ROCE_CMD_DONE) == done);
    CHECK(r.env.traces[HPU_TRACE_ROCE_CMD] == ran);     // never run
}

} // namespace

TEST_CASE("INJ_ROCE_CMD: bit 0 only, read back", "[emu][roce][inj]")
{
    const unsigned int nics = GENERATE(10u, 0u);        // with no engine: stored, inert
    CAPTURE(nics);
    Dev d(256 * MiB, nics);
    CHECK(d.rd(HPU_REG_INJ_ROCE_CMD) == 0u);
    d.wr(HPU_REG_INJ_ROCE_CMD, 0xffffffffu);
    CHECK(d.rd(HPU_REG_INJ_ROCE_CMD) == HPU_INJ_ROCE_CMD_STUCK);
    d.wr(HPU_REG_INJ_ROCE_CMD, 0xfffffffeu);
    CHECK(d.rd(HPU_REG_INJ_ROCE_CMD) == 0u);
    CHECK(d.env.errors.empty());
}

TEST_CASE("INJ_ROCE_CMD: a command stays BUSY and never runs until the engine is disabled",
          "[emu][roce][inj]")
{
    RoceRig r;
    r.wr(HPU_REG_INJ_ROCE_CMD, HPU_INJ_ROCE_CMD_STUCK);
    stuck_create(r);
    // Withdrawn: the stuck command still does not run.
    r.wr(HPU_REG_INJ_ROCE_CMD, 0);
    r.pump();
    CHECK(r.crd(HPU_ROCE_CMD_STATUS) == HPU_ROCE_CMD_BUSY);
    // Clearing CTRL.ENABLE destroys the objects and ends it.
    r.cwr(HPU_ROCE_CTRL, 0);
    CHECK(r.crd(HPU_ROCE_CMD_STATUS) == 0u);
    r.cwr(HPU_ROCE_CTRL, HPU_ROCE_CTRL_ENABLE);
    CHECK(r.cmd(HPU_ROCE_OP_QUERY, HPU_ROCE_TYPE_CQ, 3, Bytes(256)) == HPU_ROCE_RES_BAD_INDEX);
    RoceRig::Cq c;
    CHECK(r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_CQ, 3, r.cq_image(c, 16)) == HPU_ROCE_RES_OK);
}

TEST_CASE("INJ_ROCE_CMD: a soft reset clears BUSY and keeps the injection; a hard reset clears both",
          "[emu][roce][inj][reset]")
{
    RoceRig r;
    r.wr(HPU_REG_INJ_ROCE_CMD, HPU_INJ_ROCE_CMD_STUCK);
    stuck_create(r);
    soft_reset(r);
    CHECK(r.crd(HPU_ROCE_CMD_STATUS) == 0u);
    CHECK(r.crd(HPU_ROCE_CMD_DONE) == 0u);
    CHECK(r.rd(HPU_REG_INJ_ROCE_CMD) == HPU_INJ_ROCE_CMD_STUCK);
    r.cwr(HPU_ROCE_CTRL, HPU_ROCE_CTRL_ENABLE);
    stuck_create(r);                                    // still injected
    hard_reset(r);
    CHECK(r.crd(HPU_ROCE_CMD_STATUS) == 0u);
    CHECK(r.rd(HPU_REG_INJ_ROCE_CMD) == 0u);
    r.cwr(HPU_ROCE_CTRL, HPU_ROCE_CTRL_ENABLE);
    RoceRig::Cq c;
    CHECK(r.cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_CQ, 3, r.cq_image(c, 16)) == HPU_ROCE_RES_OK);
    CHECK(r.crd(HPU_ROCE_CMD_DONE) == 1u);
}

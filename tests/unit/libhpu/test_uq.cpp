// SPDX-License-Identifier: MIT
// libhpu's user queues (driver 1.2) against the mocked kernel: the ring,
// the doorbell and the completion records, the fences of user-queue jobs,
// the choice between the user queue and the kernel path and the order
// across a switch, the fallback to the kernel path.
//
// Copyright (c) 2026 The hpu authors
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "fence.h"
#include "fixture.h"
#include "hpu/hpu.h"
#include "hw/hpu_regs.h"
#include "mock_os.h"

using hpu::test::MockOs;
using hpu::test::ScopedMock;

namespace {

// Sets (or unsets, with nullptr) an environment variable for a scope.
class EnvGuard {
public:
    EnvGuard(const char *name, const char *value) : name_(name)
    {
        if (const char *old = std::getenv(name); old != nullptr) // NOLINT(concurrency-mt-unsafe)
            old_ = old;
        if (value != nullptr) {
            (void)::setenv(name, value, 1); // NOLINT(concurrency-mt-unsafe)
        } else {
            (void)::unsetenv(name); // NOLINT(concurrency-mt-unsafe)
        }
    }
    EnvGuard(const EnvGuard &) = delete;
    EnvGuard &operator=(const EnvGuard &) = delete;
    EnvGuard(EnvGuard &&) = delete;
    EnvGuard &operator=(EnvGuard &&) = delete;
    ~EnvGuard()
    {
        if (old_) {
            (void)::setenv(name_, old_->c_str(), 1); // NOLINT(concurrency-mt-unsafe)
        } else {
            (void)::unsetenv(name_); // NOLINT(concurrency-mt-unsafe)
        }
    }

private:
    const char *name_;
    std::optional<std::string> old_;
};

// Two HPUs, the first with user queues (rings of ring descriptors), open;
// HPU_USER_QUEUES=1 (as unset: on), HPU_SPIN_US unset. The mock
// clock moves 1 us per reading, so a spin ends.
struct UqFixture {
    EnvGuard uq_env{"HPU_USER_QUEUES", "1"};
    EnvGuard spin_env{"HPU_SPIN_US", nullptr};
    MockOs m;
    ScopedMock scoped{m};
    hpu_device_t *dev = nullptr;
    hpu_queue_t *q = nullptr;
    hpu_cmdlist_t *cl = nullptr;

    explicit UqFixture(std::uint32_t ring = 4, bool make_queue = true)
    {
        hpu::test::add_two_hpus(m);
        m.enable_user_queues();
        m.uq_info.ring_max = ring;
        m.uq_info.time_offset_ns = 123456;
        m.clock_step_ns = 1000;
        REQUIRE(hpu_open_by_index(0, &dev) == 0);
        if (make_queue) {
            REQUIRE(hpu_queue_create(dev, HPU_ENGINE_DMA, 0, &q) == 0);
            REQUIRE(hpu_cmdlist_create(dev, &cl) == 0);
            REQUIRE(hpu_cmd_nop(cl) == 0);
        }
    }
    UqFixture(const UqFixture &) = delete;
    UqFixture &operator=(const UqFixture &) = delete;
    UqFixture(UqFixture &&) = delete;
    UqFixture &operator=(UqFixture &&) = delete;
    ~UqFixture() { hpu_close(dev); }

    // The id of the only user queue made.
    [[nodiscard]] std::uint32_t uq_id() const
    {
        REQUIRE(m.uqs.size() == 1);
        return m.uqs.begin()->first;
    }
    [[nodiscard]] int calls(unsigned long request) const
    {
        const auto it = m.request_calls.find(request);
        return it == m.request_calls.end() ? 0 : it->second;
    }
    // Destroys what the fixture made and checks every object was released.
    void finish()
    {
        CHECK(hpu_cmdlist_destroy(cl) == 0);
        CHECK(hpu_queue_destroy(q) == 0);
        cl = nullptr;
        q = nullptr;
        CHECK(hpu_close(dev) == 0); // the device keeps a spare ring until then
        dev = nullptr;
        CHECK(m.leaks() == 0);
        CHECK(m.misuse == 0);
    }
};

bool has_in_sync(const MockOs::Job &j, std::uint32_t handle)
{
    for (const auto &s : j.in) {
        if (s.handle == handle)
            return true;
    }
    return false;
}

} // namespace

TEST_CASE("a user-queue job is a descriptor and a doorbell, with no system call", "[libhpu][uq]")
{
    UqFixture fx;
    const std::uint32_t id = fx.uq_id();
    const auto &u = fx.m.uqs.at(id);
    CHECK(u.req.ring_size == 4);
    CHECK(u.req.cq_size == 4);
    CHECK(u.req.cq_va == u.req.ring_va + std::uint64_t{4} * 32);
    CHECK(fx.m.mmaps.count(const_cast<std::uint8_t *>(u.db.data())) == 1); // NOLINT(cppcoreguidelines-pro-type-const-cast)

    const int before = fx.m.ioctl_calls;
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, &f) == 0);
    CHECK(hpu_fence_status(f) == 1);
    CHECK(fx.m.ioctl_calls == before);
    CHECK(fx.m.jobs.empty());
    CHECK(fx.m.uq_doorbell(id) == 1);

    REQUIRE(fx.m.uq_complete(id) == 1);
    CHECK(hpu_fence_status(f) == 0);
    CHECK(hpu_fence_wait(f, 0) == 0);
    CHECK(fx.m.ioctl_calls == before);
    const drm_hpu_uq_desc &d = fx.m.uqs.at(id).ran.at(0);
    CHECK(d.asid == 7);
    CHECK(d.cb_size == 8);
    CHECK(d.seq == 1);
    CHECK(d.flags == 0);
    CHECK(d.reserved == 0);
    CHECK(fx.m.read_va(d.cb_va, 8).size() == 8);
    CHECK(hpu_fence_destroy(f) == 0);
    fx.finish();
}

TEST_CASE("user-queue jobs wrap the ring in order", "[libhpu][uq]")
{
    UqFixture fx;
    const std::uint32_t id = fx.uq_id();
    std::vector<hpu_fence_t *> fences;
    for (int i = 0; i < 11; ++i) {
        hpu_fence_t *f = nullptr;
        REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, &f) == 0);
        fences.push_back(f);
        if (i % 3 == 2)
            CHECK(fx.m.uq_complete(id) == 3);
    }
    CHECK(fx.m.uq_complete(id) == 2);
    const auto &ran = fx.m.uqs.at(id).ran;
    REQUIRE(ran.size() == 11);
    for (std::size_t i = 0; i < ran.size(); ++i)
        CHECK(ran[i].seq == i + 1);
    for (hpu_fence_t *f : fences) {
        CHECK(hpu_fence_status(f) == 0);
        CHECK(hpu_fence_destroy(f) == 0);
    }
    CHECK(fx.m.jobs.empty());
    fx.finish();
}

TEST_CASE("a full ring waits in UQ_WAIT until a slot is free", "[libhpu][uq]")
{
    UqFixture fx;
    const std::uint32_t id = fx.uq_id();
    // A ring of 4 holds 3: the device takes a doorbell at most a ring
    // ahead of a consumer index it moves only after the record.
    for (int i = 0; i < 3; ++i)
        REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, nullptr) == 0);
    CHECK(fx.m.uq_doorbell(id) == 3);
    CHECK(fx.calls(DRM_IOCTL_HPU_UQ_WAIT) == 0);
    // The device completes the first job once the library sleeps.
    fx.m.on_wait = [&]() { fx.m.uq_complete(id, 1); };
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, nullptr) == 0);
    CHECK(fx.calls(DRM_IOCTL_HPU_UQ_WAIT) == 1);
    CHECK(fx.m.wait_deadlines.back() == INT64_MAX);
    CHECK(fx.m.uq_doorbell(id) == 4);
    CHECK(fx.m.uqs.at(id).done == 1);
    fx.m.on_wait = [&]() { fx.m.uq_complete(id); };
    fx.finish();
}

TEST_CASE("a failed user-queue job fails its fence with the driver's errno", "[libhpu][uq]")
{
    UqFixture fx;
    const std::uint32_t id = fx.uq_id();
    hpu_fence_t *f1 = nullptr;
    hpu_fence_t *f2 = nullptr;
    hpu_fence_t *f3 = nullptr;
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, &f1) == 0);
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, &f2) == 0);
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, &f3) == 0);
    fx.m.uq_complete(id, 1, HPU_CQ_MMU_FAULT);
    fx.m.uq_complete(id, 1, HPU_CQ_OK);
    fx.m.uq_complete(id, 1, HPU_CQ_PRIV);
    CHECK(hpu_fence_status(f1) == -EFAULT);
    CHECK(hpu_fence_wait(f1, 0) == -EFAULT);
    CHECK(hpu_fence_status(f2) == 0);
    CHECK(hpu_fence_wait(f3, 0) == -EPERM);
    hpu_error_info info{};
    info.size = sizeof(info);
    REQUIRE(hpu_fence_error_info(f3, &info) == 0);
    CHECK(info.error == -EPERM);
    CHECK(info.queue_id == id);
    CHECK(info.seq == 3);
    for (hpu_fence_t *f : {f1, f2, f3})
        CHECK(hpu_fence_destroy(f) == 0);
    fx.finish();
}

TEST_CASE("a queue that dies with jobs pending is noticed by status polls alone", "[libhpu][uq]")
{
    // A ring fault: the device writes no more records; only the driver
    // knows. hpu_fence_status() asks it now and then (not at every call).
    UqFixture fx;
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, &f) == 0);
    const int before = fx.calls(DRM_IOCTL_HPU_UQ_WAIT);
    CHECK(hpu_fence_status(f) == 1);
    CHECK(fx.calls(DRM_IOCTL_HPU_UQ_WAIT) == before); // within the first 2 ms: the records only
    // Once 2 ms have passed, one UQ_WAIT; then none until 2 ms more.
    fx.m.clock_step_ns = 100000; // 0.1 ms per clock reading
    int polls = 0;
    for (int i = 0; i < 30; ++i) {
        CHECK(hpu_fence_status(f) == 1);
        polls = fx.calls(DRM_IOCTL_HPU_UQ_WAIT) - before;
    }
    CHECK(polls == 1); // 30 calls, 3 ms: one poll at 2 ms
    fx.m.uqs.at(fx.uq_id()).dead = -EFAULT;
    fx.m.clock_step_ns = 1000000; // 1 ms per clock reading
    int st = 1;
    for (int i = 0; i < 4 && st == 1; ++i)
        st = hpu_fence_status(f);
    CHECK(st == -EFAULT);
    CHECK(fx.calls(DRM_IOCTL_HPU_UQ_WAIT) > before);
    CHECK(hpu_fence_status(f) == -EFAULT);
    // The next job takes the kernel path.
    hpu_fence_t *g = nullptr;
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, &g) == 0);
    CHECK(fx.m.jobs.size() == 1);
    fx.m.complete_jobs();
    CHECK(hpu_fence_wait(g, 0) == 0);
    CHECK(hpu_fence_destroy(f) == 0);
    CHECK(hpu_fence_destroy(g) == 0);
    fx.finish();
}

TEST_CASE("an aborted user-queue job takes the driver's reason", "[libhpu][uq]")
{
    UqFixture fx;
    const std::uint32_t id = fx.uq_id();
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, &f) == 0);
    fx.m.uq_complete(id, 1, HPU_CQ_ABORTED);
    fx.m.uqs.at(id).errors[1] = -ETIMEDOUT; // the driver timed it out
    CHECK(hpu_fence_status(f) == -ETIMEDOUT);
    CHECK(hpu_fence_destroy(f) == 0);
    fx.finish();
}

TEST_CASE("a job the records skip gets its outcome from UQ_WAIT", "[libhpu][uq]")
{
    UqFixture fx;
    const std::uint32_t id = fx.uq_id();
    hpu_fence_t *f1 = nullptr;
    hpu_fence_t *f3 = nullptr;
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, &f1) == 0);
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, nullptr) == 0);
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, &f3) == 0);

    SECTION("a later record shows the gap")
    {
        fx.m.uq_skip(id, -ETIMEDOUT);
        fx.m.uq_complete(id);
        CHECK(hpu_fence_status(f3) == 0);
        CHECK(fx.calls(DRM_IOCTL_HPU_UQ_WAIT) == 1); // descriptor 0's outcome
        CHECK(hpu_fence_status(f1) == -ETIMEDOUT);
    }
    SECTION("the last job skipped: the wait's UQ_WAIT tells")
    {
        fx.m.uq_complete(id, 2);
        fx.m.uq_skip(id, -ETIMEDOUT);
        CHECK(hpu_fence_status(f1) == 0);
        CHECK(hpu_fence_status(f3) == 1); // no record yet
        CHECK(hpu_fence_wait(f3, 1000000) == -ETIMEDOUT);
        CHECK(fx.calls(DRM_IOCTL_HPU_UQ_WAIT) == 1);
    }
    CHECK(hpu_fence_destroy(f1) == 0);
    CHECK(hpu_fence_destroy(f3) == 0);
    fx.finish();
}

TEST_CASE("a user-queue fence wait spins on the records, then sleeps in UQ_WAIT", "[libhpu][uq]")
{
    UqFixture fx;
    const std::uint32_t id = fx.uq_id();
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, &f) == 0);

    SECTION("a completion within the spin needs no system call")
    {
        int readings = 0;
        fx.m.on_clock = [&]() {
            if (++readings == 5)
                fx.m.uq_complete(id);
        };
        CHECK(hpu_fence_wait(f, 1000000000) == 0);
        CHECK(fx.calls(DRM_IOCTL_HPU_UQ_WAIT) == 0);
        fx.m.on_clock = nullptr;
    }
    SECTION("no completion: UQ_WAIT with the absolute deadline, after HPU_SPIN_US")
    {
        const std::int64_t t0 = fx.m.now_ns;
        std::int64_t slept_at = 0;
        fx.m.on_wait = [&]() { slept_at = fx.m.now_ns; };
        CHECK(hpu_fence_wait(f, 1000000) == -ETIME);
        REQUIRE(fx.calls(DRM_IOCTL_HPU_UQ_WAIT) == 1);
        // deadline_after() read the clock once (t0 + 1 us); the spin polled
        // for HPU_SPIN_US (20 us) of it before the sleep.
        CHECK(fx.m.wait_deadlines.back() == t0 + 1000 + 1000000);
        CHECK(slept_at - t0 >= 20000);
        CHECK(slept_at - t0 < 30000);
    }
    SECTION("UQ_WAIT's -ETIME before the deadline: asked again with the same deadline")
    {
        fx.m.wait_script = {-ETIME};
        int waits = 0;
        fx.m.on_wait = [&]() {
            if (++waits == 2)
                fx.m.uq_complete(id);
        };
        CHECK(hpu_fence_wait(f, 1000000) == 0);
        REQUIRE(fx.calls(DRM_IOCTL_HPU_UQ_WAIT) == 2);
        CHECK(fx.m.wait_deadlines.at(0) == fx.m.wait_deadlines.at(1));
    }
    SECTION("HPU_SPIN_US=0: no spin")
    {
        hpu_fence_t *g = nullptr;
        {
            const EnvGuard spin("HPU_SPIN_US", "0");
            hpu_queue_t *q2 = nullptr;
            REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 1, &q2) == 0);
            REQUIRE(hpu_queue_submit(q2, fx.cl, nullptr, 0, &g) == 0);
            int readings = 0;
            fx.m.on_clock = [&]() { ++readings; };
            CHECK(hpu_fence_wait(g, 1000000) == -ETIME);
            // The deadline, the spin's end, its one check, and the check
            // that UQ_WAIT's -ETIME came at the deadline.
            CHECK(readings <= 4);
            fx.m.on_clock = nullptr;
            fx.m.on_wait = [&]() {
                for (auto &u : fx.m.uqs)
                    fx.m.uq_complete(u.first);
            };
            CHECK(hpu_fence_destroy(g) == 0);
            CHECK(hpu_queue_destroy(q2) == 0);
        }
    }
    fx.m.on_wait = [&]() { fx.m.uq_complete(id); };
    CHECK(hpu_fence_destroy(f) == 0);
    fx.finish();
}

TEST_CASE("UQ_CREATE failing leaves the queue on the kernel path", "[libhpu][uq]")
{
    for (const int err : {-EBUSY, -ENOSPC, -EOPNOTSUPP, -ENOMEM}) {
        UqFixture fx(4, false);
        fx.m.request_fail[DRM_IOCTL_HPU_UQ_CREATE] = err;
        REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &fx.q) == 0);
        REQUIRE(hpu_cmdlist_create(fx.dev, &fx.cl) == 0);
        REQUIRE(hpu_cmd_nop(fx.cl) == 0);
        CHECK(fx.calls(DRM_IOCTL_HPU_UQ_CREATE) == 1);
        REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, nullptr) == 0);
        CHECK(fx.m.jobs.size() == 1);
        CHECK(fx.m.uqs.empty());
        fx.finish();
    }
}

TEST_CASE("past the file's ctx_max no user queue is tried: no UQ_CREATE, no ring buffer", "[libhpu][uq]")
{
    UqFixture fx(4, false);
    fx.m.uq_info.ctx_max = 2;
    hpu_queue_t *a = nullptr;
    hpu_queue_t *b = nullptr;
    hpu_queue_t *c = nullptr;
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &a) == 0);
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &b) == 0);
    CHECK(fx.calls(DRM_IOCTL_HPU_UQ_CREATE) == 2);
    const int bos = fx.calls(DRM_IOCTL_HPU_BO_CREATE);
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &c) == 0);
    CHECK(fx.calls(DRM_IOCTL_HPU_UQ_CREATE) == 2);
    CHECK(fx.calls(DRM_IOCTL_HPU_BO_CREATE) == bos);
    // A user queue destroyed makes room for the next queue's.
    CHECK(hpu_queue_destroy(a) == 0);
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &a) == 0);
    CHECK(fx.calls(DRM_IOCTL_HPU_UQ_CREATE) == 3);
    CHECK(fx.m.uqs.size() == 3);
    CHECK(hpu_queue_destroy(a) == 0);
    CHECK(hpu_queue_destroy(b) == 0);
    CHECK(hpu_queue_destroy(c) == 0);
    fx.finish();
}

TEST_CASE("the ring of a failed UQ_CREATE is kept, not unmapped, and the next user queue takes it",
          "[libhpu][uq]")
{
    // Unmapping waits for every job of the context: a queue made while
    // another is held at a WAIT must not wait for it.
    UqFixture fx(4, false);
    fx.m.request_fail[DRM_IOCTL_HPU_UQ_CREATE] = -EBUSY;
    hpu_queue_t *a = nullptr;
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &a) == 0);
    CHECK(fx.calls(DRM_IOCTL_HPU_UQ_CREATE) == 1);
    const int bos = fx.calls(DRM_IOCTL_HPU_BO_CREATE);
    CHECK(fx.calls(DRM_IOCTL_GEM_CLOSE) == 0);
    // Failing again: the same ring, still no new buffer and no close.
    hpu_queue_t *b = nullptr;
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &b) == 0);
    CHECK(fx.calls(DRM_IOCTL_HPU_UQ_CREATE) == 2);
    CHECK(fx.calls(DRM_IOCTL_HPU_BO_CREATE) == bos);
    CHECK(fx.calls(DRM_IOCTL_GEM_CLOSE) == 0);
    fx.m.request_fail.erase(DRM_IOCTL_HPU_UQ_CREATE);
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &fx.q) == 0);
    CHECK(fx.calls(DRM_IOCTL_HPU_BO_CREATE) == bos);
    CHECK(fx.calls(DRM_IOCTL_GEM_CLOSE) == 0);
    REQUIRE(fx.m.uqs.size() == 1);
    REQUIRE(hpu_cmdlist_create(fx.dev, &fx.cl) == 0);
    REQUIRE(hpu_cmd_nop(fx.cl) == 0);
    const int submits = fx.m.submit_calls;
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, nullptr) == 0);
    CHECK(fx.m.submit_calls == submits); // the user queue
    CHECK(fx.m.uq_complete(fx.uq_id()) == 1);
    CHECK(hpu_queue_destroy(a) == 0);
    CHECK(hpu_queue_destroy(b) == 0);
    fx.finish();
}

TEST_CASE("a destroyed user queue's ring is not unmapped: the next queue takes it", "[libhpu][uq]")
{
    UqFixture fx;
    const std::uint64_t ring_va = fx.m.uqs.at(fx.uq_id()).req.ring_va;
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, nullptr) == 0);
    fx.m.on_wait = [&]() { fx.m.uq_complete(fx.uq_id()); };
    CHECK(hpu_cmdlist_destroy(fx.cl) == 0);
    fx.cl = nullptr;
    const int bos = fx.calls(DRM_IOCTL_HPU_BO_CREATE);
    const int closes = fx.calls(DRM_IOCTL_GEM_CLOSE);
    CHECK(hpu_queue_destroy(fx.q) == 0);
    fx.q = nullptr;
    CHECK(fx.calls(DRM_IOCTL_GEM_CLOSE) == closes);
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 1, &fx.q) == 0);
    CHECK(fx.calls(DRM_IOCTL_HPU_BO_CREATE) == bos);
    REQUIRE(fx.m.uqs.size() == 2);
    CHECK(fx.m.uqs.rbegin()->second.req.ring_va == ring_va);
    // Its old records cannot pass for the new queue's.
    REQUIRE(hpu_cmdlist_create(fx.dev, &fx.cl) == 0);
    REQUIRE(hpu_cmd_nop(fx.cl) == 0);
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, &f) == 0);
    CHECK(hpu_fence_status(f) == 1);
    CHECK(fx.m.uq_complete(fx.m.uqs.rbegin()->first) == 1);
    CHECK(hpu_fence_status(f) == 0);
    CHECK(hpu_fence_destroy(f) == 0);
    fx.finish();
}

TEST_CASE("a reopened device counts its user queues anew and drops the old file's rings", "[libhpu][uq]")
{
    UqFixture fx(4, false);
    fx.m.uq_info.ctx_max = 1;
    fx.m.request_fail[DRM_IOCTL_HPU_UQ_CREATE] = -EBUSY; // leaves a spare ring
    hpu_queue_t *a = nullptr;
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &a) == 0);
    fx.m.request_fail.erase(DRM_IOCTL_HPU_UQ_CREATE);
    hpu_queue_t *b = nullptr;
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &b) == 0); // the file's one user queue
    CHECK(fx.calls(DRM_IOCTL_HPU_UQ_CREATE) == 2);
    REQUIRE(hpu_device_reopen(fx.dev) == 0);
    const int bos = fx.calls(DRM_IOCTL_HPU_BO_CREATE);
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &fx.q) == 0);
    CHECK(fx.calls(DRM_IOCTL_HPU_UQ_CREATE) == 3); // the new file: room again
    CHECK(fx.calls(DRM_IOCTL_HPU_BO_CREATE) == bos + 1); // a new ring, not the old file's
    CHECK(hpu_queue_destroy(a) == 0);
    CHECK(hpu_queue_destroy(b) == 0);
    CHECK(hpu_queue_destroy(fx.q) == 0);
    fx.q = nullptr;
    // (The mock keeps the old file's objects: they died with that file.)
    CHECK(fx.m.misuse == 0);
}

TEST_CASE("a doorbell that cannot be mapped: the user queue is destroyed, the kernel path", "[libhpu][uq]")
{
    UqFixture fx(4, false);
    fx.m.db_mmap_fail = -ENOMEM;
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &fx.q) == 0);
    CHECK(fx.calls(DRM_IOCTL_HPU_UQ_CREATE) == 1);
    REQUIRE(fx.m.uqs.size() == 1);
    CHECK(fx.m.queues.count(fx.m.uqs.begin()->first) == 0); // QUEUE_DESTROY
    REQUIRE(hpu_cmdlist_create(fx.dev, &fx.cl) == 0);
    REQUIRE(hpu_cmd_nop(fx.cl) == 0);
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, nullptr) == 0);
    CHECK(fx.m.jobs.size() == 1);
    fx.finish();
}

TEST_CASE("HPU_USER_QUEUES unset is on; =0 or a device without user queues: the kernel path", "[libhpu][uq]")
{
    SECTION("HPU_USER_QUEUES unset: on by default")
    {
        UqFixture fx(4, false);
        const EnvGuard unset("HPU_USER_QUEUES", nullptr);
        REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &fx.q) == 0);
        REQUIRE(hpu_cmdlist_create(fx.dev, &fx.cl) == 0);
        REQUIRE(hpu_cmd_nop(fx.cl) == 0);
        REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, nullptr) == 0);
        CHECK(fx.calls(DRM_IOCTL_HPU_UQ_CREATE) == 1);
        CHECK(fx.m.jobs.empty());
        CHECK(fx.m.uq_complete(fx.uq_id()) == 1);
        fx.finish();
    }
    SECTION("HPU_USER_QUEUES=yes (not 1): off")
    {
        UqFixture fx(4, false);
        const EnvGuard off("HPU_USER_QUEUES", "yes");
        REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &fx.q) == 0);
        REQUIRE(hpu_cmdlist_create(fx.dev, &fx.cl) == 0);
        REQUIRE(hpu_cmd_nop(fx.cl) == 0);
        REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, nullptr) == 0);
        CHECK(fx.calls(DRM_IOCTL_HPU_UQ_CREATE) == 0);
        CHECK(fx.m.jobs.size() == 1);
        fx.finish();
    }
    SECTION("HPU_USER_QUEUES=0")
    {
        UqFixture fx(4, false);
        const EnvGuard off("HPU_USER_QUEUES", "0");
        REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &fx.q) == 0);
        REQUIRE(hpu_cmdlist_create(fx.dev, &fx.cl) == 0);
        REQUIRE(hpu_cmd_nop(fx.cl) == 0);
        REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, nullptr) == 0);
        CHECK(fx.calls(DRM_IOCTL_HPU_UQ_CREATE) == 0);
        CHECK(fx.m.jobs.size() == 1);
        fx.finish();
    }
    SECTION("HPU_USER_QUEUES=1 on a device without the cap")
    {
        UqFixture fx(4, false);
        const EnvGuard on("HPU_USER_QUEUES", "1");
        fx.m.nodes.at("/dev/accel/accel0").caps &= ~static_cast<__u64>(DRM_HPU_CAP_USER_QUEUES);
        REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &fx.q) == 0);
        REQUIRE(hpu_cmdlist_create(fx.dev, &fx.cl) == 0);
        REQUIRE(hpu_cmd_nop(fx.cl) == 0);
        REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, nullptr) == 0);
        CHECK(fx.calls(DRM_IOCTL_HPU_UQ_CREATE) == 0);
        CHECK(fx.m.jobs.size() == 1);
        fx.finish();
    }
    SECTION("ctx_max 0: user queues are off for this file")
    {
        UqFixture fx(4, false);
        fx.m.uq_info.ctx_max = 0;
        REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &fx.q) == 0);
        REQUIRE(hpu_cmdlist_create(fx.dev, &fx.cl) == 0);
        REQUIRE(hpu_cmd_nop(fx.cl) == 0);
        REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, nullptr) == 0);
        CHECK(fx.calls(DRM_IOCTL_HPU_UQ_CREATE) == 0);
        CHECK(fx.m.jobs.size() == 1);
        fx.finish();
    }
}

TEST_CASE("the first kernel-path job after user-queue jobs waits for the last of them", "[libhpu][uq]")
{
    UqFixture fx;
    const std::uint32_t id = fx.uq_id();
    fx.m.auto_complete = false;
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, nullptr) == 0);
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, nullptr) == 0);
    // A job timeout of its own: the kernel path.
    REQUIRE(hpu_queue_submit_timeout(fx.q, fx.cl, nullptr, 0, 500, nullptr) == 0);
    REQUIRE(fx.m.jobs.size() == 1);
    REQUIRE(fx.m.uq_fence_calls.size() == 1);
    CHECK(fx.m.uq_fence_calls[0].queue_id == id);
    CHECK(fx.m.uq_fence_calls[0].point == 2);
    CHECK(has_in_sync(fx.m.jobs[0], fx.m.uq_fence_calls[0].handle));
    CHECK(fx.m.jobs[0].req.queue_id != id);

    // The next kernel-path job is ordered behind that one by the kernel.
    REQUIRE(hpu_queue_submit_timeout(fx.q, fx.cl, nullptr, 0, 500, nullptr) == 0);
    CHECK(fx.m.uq_fence_calls.size() == 1);
    CHECK(fx.m.jobs[1].in.empty());

    // While a kernel-path job runs, every job takes the kernel path.
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, nullptr) == 0);
    CHECK(fx.m.jobs.size() == 3);
    CHECK(fx.m.uq_doorbell(id) == 2);

    // Once the last one is seen ended: the user queue again.
    fx.m.complete_jobs();
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, nullptr) == 0);
    CHECK(fx.m.jobs.size() == 3);
    CHECK(fx.m.uq_doorbell(id) == 3);

    // A user-queue point that has completed needs no in-sync.
    fx.m.uq_complete(id);
    REQUIRE(hpu_queue_submit_timeout(fx.q, fx.cl, nullptr, 0, 500, nullptr) == 0);
    CHECK(fx.m.uq_fence_calls.size() == 1);
    CHECK(fx.m.jobs.back().in.empty());
    fx.m.complete_jobs();
    fx.finish();
}

TEST_CASE("waits decide the path: own points and ended fences stay on the user queue", "[libhpu][uq]")
{
    UqFixture fx;
    const std::uint32_t id1 = fx.uq_id();
    hpu_queue_t *q2 = nullptr;
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 1, &q2) == 0);
    std::uint32_t id2 = 0;
    for (const auto &u : fx.m.uqs)
        id2 = u.first != id1 ? u.first : id2;
    REQUIRE(id2 != 0);

    hpu_fence_t *f1 = nullptr;
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, &f1) == 0);
    const hpu_fence_t *w[] = {f1}; // NOLINT(cppcoreguidelines-avoid-c-arrays,modernize-avoid-c-arrays)

    // An earlier point of the same user queue: order is implied.
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, w, 1, nullptr) == 0);
    CHECK(fx.m.uq_doorbell(id1) == 2);
    CHECK(fx.m.jobs.empty());

    // Another queue waiting for the pending point: the kernel path, with
    // the point's fence (UQ_FENCE) as an in-sync.
    fx.m.auto_complete = false;
    REQUIRE(hpu_queue_submit(q2, fx.cl, w, 1, nullptr) == 0);
    REQUIRE(fx.m.jobs.size() == 1);
    REQUIRE(fx.m.uq_fence_calls.size() == 1);
    CHECK(fx.m.uq_fence_calls[0].queue_id == id1);
    CHECK(fx.m.uq_fence_calls[0].point == 1);
    CHECK(has_in_sync(fx.m.jobs[0], fx.m.uq_fence_calls[0].handle));
    CHECK(fx.m.uq_doorbell(id2) == 0);
    fx.m.complete_jobs();

    // Once the point has completed: q2's user queue.
    fx.m.uq_complete(id1);
    REQUIRE(hpu_queue_submit(q2, fx.cl, w, 1, nullptr) == 0);
    CHECK(fx.m.jobs.size() == 1);
    CHECK(fx.m.uq_doorbell(id2) == 1);

    // A pending kernel-path fence: the kernel path; once ended, the user queue.
    hpu_fence_t *k = nullptr;
    REQUIRE(hpu_queue_submit_timeout(fx.q, fx.cl, nullptr, 0, 500, &k) == 0);
    REQUIRE(fx.m.jobs.size() == 2);
    const hpu_fence_t *wk[] = {k}; // NOLINT(cppcoreguidelines-avoid-c-arrays,modernize-avoid-c-arrays)
    fx.m.uq_complete(id2);
    REQUIRE(hpu_queue_submit(q2, fx.cl, wk, 1, nullptr) == 0);
    CHECK(fx.m.jobs.size() == 3);
    CHECK(has_in_sync(fx.m.jobs[2], k->handle));
    fx.m.complete_jobs();
    REQUIRE(hpu_queue_submit(q2, fx.cl, wk, 1, nullptr) == 0);
    CHECK(fx.m.jobs.size() == 3);
    CHECK(fx.m.uq_doorbell(id2) == 2);

    fx.m.on_wait = [&]() {
        for (auto &u : fx.m.uqs)
            fx.m.uq_complete(u.first);
    };
    CHECK(hpu_fence_destroy(f1) == 0);
    CHECK(hpu_fence_destroy(k) == 0);
    CHECK(hpu_queue_destroy(q2) == 0);
    fx.finish();
}

TEST_CASE("a user-queue fence exports as a sync_file through a temporary syncobj", "[libhpu][uq]")
{
    UqFixture fx;
    const std::uint32_t id = fx.uq_id();
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, &f) == 0);
    const std::size_t syncobjs = fx.m.syncobjs.size();
    int fd = -1;
    REQUIRE(hpu_fence_export_fd(f, &fd) == 0);
    CHECK(fx.m.syncobjs.size() == syncobjs);
    REQUIRE(fx.m.uq_fence_calls.size() == 1);
    CHECK(fx.m.uq_fence_calls[0].point == 1);
    REQUIRE(fx.m.aux_fds.count(fd) == 1);
    CHECK_FALSE(fx.m.aux_fds.at(fd).fence->signalled);
    const std::int64_t done_at = fx.m.now_ns;
    fx.m.uq_complete(id, 1, HPU_CQ_BAD_PACKET);
    CHECK(fx.m.aux_fds.at(fd).fence->signalled);
    CHECK(fx.m.aux_fds.at(fd).fence->error == -EINVAL);
    CHECK(fx.m.close(fd) == 0);

    // The signal time of the job: its record's device time plus the offset.
    std::uint64_t ns = 0;
    CHECK(hpu_fence_signal_time(f, &ns) == 0);
    CHECK(ns == static_cast<std::uint64_t>(done_at));
    CHECK(hpu_fence_destroy(f) == 0);
    fx.finish();
}

TEST_CASE("a user-queue fence seen ended exports as a signalled sync_file while the driver lags", "[libhpu][uq]")
{
    UqFixture fx;
    const std::uint32_t id = fx.uq_id();
    fx.m.uqs.at(id).lag = true;
    hpu_fence_t *f = nullptr;
    hpu_fence_t *g = nullptr;
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, &f) == 0);
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, &g) == 0);
    REQUIRE(fx.m.uq_complete(id, 1, HPU_CQ_MMU_FAULT) == 1);
    // The library reads the record; the driver has not taken it in yet.
    CHECK(hpu_fence_status(f) == -EFAULT);
    CHECK(hpu_fence_status(g) == 1);
    REQUIRE(fx.m.uqs.at(id).seen == 0);
    int fd = -1;
    REQUIRE(hpu_fence_export_fd(f, &fd) == 0);
    REQUIRE(fx.m.aux_fds.count(fd) == 1);
    CHECK(fx.m.aux_fds.at(fd).fence->signalled);
    CHECK(fx.m.aux_fds.at(fd).fence->error == -EFAULT);
    CHECK(fx.m.close(fd) == 0);
    // A fence still pending exports as it is, without a wait.
    const int waits = fx.calls(DRM_IOCTL_HPU_UQ_WAIT);
    REQUIRE(hpu_fence_export_fd(g, &fd) == 0);
    CHECK(fx.calls(DRM_IOCTL_HPU_UQ_WAIT) == waits);
    CHECK_FALSE(fx.m.aux_fds.at(fd).fence->signalled);
    REQUIRE(fx.m.uq_complete(id) == 1);
    CHECK_FALSE(fx.m.aux_fds.at(fd).fence->signalled); // the driver lags
    fx.m.uqs.at(id).lag = false;
    REQUIRE(fx.m.uq_complete(id) == 0); // nothing runs: the driver catches up
    CHECK(fx.m.aux_fds.at(fd).fence->signalled);
    CHECK(fx.m.aux_fds.at(fd).fence->error == 0);
    CHECK(fx.m.close(fd) == 0);
    CHECK(hpu_fence_destroy(f) == 0);
    CHECK(hpu_fence_destroy(g) == 0);
    fx.finish();
}

TEST_CASE("a user-queue fence whose end the driver never learns of exports pending after a second", "[libhpu][uq]")
{
    UqFixture fx;
    const std::uint32_t id = fx.uq_id();
    fx.m.uqs.at(id).lag = true;
    fx.m.uqs.at(id).stuck = true;
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, &f) == 0);
    REQUIRE(fx.m.uq_complete(id) == 1);
    CHECK(hpu_fence_status(f) == 0);
    const std::int64_t before = fx.m.now_ns;
    int fd = -1;
    REQUIRE(hpu_fence_export_fd(f, &fd) == 0);
    // The catch-up wait ran to its deadline, a second on.
    REQUIRE_FALSE(fx.m.wait_deadlines.empty());
    CHECK(fx.m.wait_deadlines.back() >= before + 1'000'000'000);
    CHECK(fx.m.wait_deadlines.back() <= fx.m.now_ns);
    REQUIRE(fx.m.aux_fds.count(fd) == 1);
    CHECK_FALSE(fx.m.aux_fds.at(fd).fence->signalled);
    fx.m.uqs.at(id).lag = false;
    REQUIRE(fx.m.uq_complete(id) == 0);
    CHECK(fx.m.aux_fds.at(fd).fence->signalled);
    CHECK(fx.m.aux_fds.at(fd).fence->error == 0);
    CHECK(fx.m.close(fd) == 0);
    CHECK(hpu_fence_destroy(f) == 0);
    fx.finish();
}

TEST_CASE("destroying a queue waits for its user-queue jobs; their fences stay readable", "[libhpu][uq]")
{
    UqFixture fx;
    const std::uint32_t id = fx.uq_id();
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, &f) == 0);
    fx.m.on_wait = [&]() { fx.m.uq_complete(id, SIZE_MAX, HPU_CQ_MMU_FAULT); };
    CHECK(hpu_cmdlist_destroy(fx.cl) == 0); // waits (UQ_WAIT) for its job
    fx.cl = nullptr;
    CHECK(fx.m.uqs.at(id).done == 1);
    CHECK(hpu_queue_destroy(fx.q) == 0);
    fx.q = nullptr;
    CHECK(fx.m.queues.empty());
    const int before = fx.m.ioctl_calls;
    CHECK(hpu_fence_status(f) == -EFAULT);
    CHECK(hpu_fence_wait(f, 0) == -EFAULT);
    CHECK(fx.m.ioctl_calls == before);
    CHECK(hpu_fence_destroy(f) == 0);
    // The queue's ring is kept for the next queue until the device closes.
    CHECK(hpu_close(fx.dev) == 0);
    fx.dev = nullptr;
    CHECK(fx.m.leaks() == 0);
    CHECK(fx.m.misuse == 0);
}

TEST_CASE("eager commands go to the user queue and reuse their lists", "[libhpu][uq]")
{
    UqFixture fx;
    const std::uint32_t id = fx.uq_id();
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_write_value(fx.q, 0x1000, 5, &f) == 0);
    CHECK(fx.m.uq_doorbell(id) == 1);
    fx.m.uq_complete(id);
    const std::size_t syncobjs = fx.m.syncobjs.size();
    REQUIRE(hpu_queue_write_value(fx.q, 0x1000, 6, nullptr) == 0);
    CHECK(fx.m.syncobjs.size() == syncobjs); // the idle list was taken again
    CHECK(fx.m.uq_doorbell(id) == 2);
    CHECK(fx.m.jobs.empty());
    fx.m.on_wait = [&]() { fx.m.uq_complete(id); };
    CHECK(hpu_fence_destroy(f) == 0);
    fx.finish();
}

TEST_CASE("after fork() the child's jobs take the kernel path", "[libhpu][uq]")
{
    UqFixture fx;
    const std::uint32_t id = fx.uq_id();
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, nullptr) == 0);
    REQUIRE(fx.m.uq_doorbell(id) == 1);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        // The child: its own copy of the mock. Exit code: 0 when the job
        // went to the kernel (and waits for the parent's user-queue job).
        const auto child = [&]() {
            if (hpu_queue_submit(fx.q, fx.cl, nullptr, 0, nullptr) != 0)
                return 1;
            if (fx.m.jobs.size() != 1 || fx.m.uq_doorbell(id) != 1)
                return 2;
            if (fx.m.uq_fence_calls.size() != 1 || !has_in_sync(fx.m.jobs[0], fx.m.uq_fence_calls[0].handle))
                return 3;
            return 0;
        };
        ::_exit(child());
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    // A child makes no user queue of its own either (the file and the
    // rings are the parent's).
    const pid_t pid2 = ::fork();
    REQUIRE(pid2 >= 0);
    if (pid2 == 0) {
        const int uq_creates = fx.calls(DRM_IOCTL_HPU_UQ_CREATE);
        hpu_queue_t *cq = nullptr;
        if (hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 1, &cq) != 0)
            ::_exit(1);
        ::_exit(fx.calls(DRM_IOCTL_HPU_UQ_CREATE) == uq_creates ? 0 : 2);
    }
    REQUIRE(::waitpid(pid2, &status, 0) == pid2);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    // The parent's queue is unchanged.
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, nullptr) == 0);
    CHECK(fx.m.uq_doorbell(id) == 2);
    fx.m.on_wait = [&]() { fx.m.uq_complete(id); };
    fx.finish();
}

TEST_CASE("a graph launch waiting for a user-queue job stays on the kernel path, ordered by the job's fence",
          "[libhpu][uq]")
{
    UqFixture fx;
    const std::uint32_t id = fx.uq_id();
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_submit(fx.q, fx.cl, nullptr, 0, &f) == 0);
    hpu_graph_t *g = nullptr;
    REQUIRE(hpu_graph_create(fx.dev, &g) == 0);
    REQUIRE(hpu_graph_add_copy(g, 0x100000000ULL, 0x200000000ULL, 64, nullptr, 0) == 0);
    const hpu_fence_t *w[] = {f}; // NOLINT(cppcoreguidelines-avoid-c-arrays,modernize-avoid-c-arrays)
    hpu_fence_t *gf = nullptr;
    REQUIRE(hpu_graph_launch(g, w, 1, &gf) == 0);
    REQUIRE(fx.m.uq_fence_calls.size() == 1);
    CHECK(fx.m.uq_fence_calls[0].queue_id == id);
    CHECK(fx.m.uq_fence_calls[0].point == 1);
    REQUIRE_FALSE(fx.m.jobs.empty());
    CHECK(has_in_sync(fx.m.jobs.back(), fx.m.uq_fence_calls[0].handle));
    CHECK(fx.m.uq_doorbell(id) == 1);
    fx.m.uq_complete(id);
    CHECK(hpu_fence_wait(gf, 0) == 0);
    CHECK(hpu_fence_destroy(gf) == 0);
    CHECK(hpu_graph_destroy(g) == 0);
    CHECK(hpu_fence_destroy(f) == 0);
    CHECK(hpu_cmdlist_destroy(fx.cl) == 0);
    CHECK(hpu_queue_destroy(fx.q) == 0);
    fx.cl = nullptr;
    fx.q = nullptr;
    // The device's graph queue, and the user queue's ring (kept for the
    // next queue: its buffer handle, its mapping and its host mapping),
    // stay until it is closed.
    CHECK(fx.m.queues.size() == 1);
    CHECK(fx.m.leaks() == 4);
    CHECK(fx.m.misuse == 0);
}

TEST_CASE("a split copy from a user queue: its helper queues make no user queue, and its fence waits for every part",
          "[libhpu][uq][split]")
{
    UqFixture fx(64);
    const int uq_creates = fx.calls(DRM_IOCTL_HPU_UQ_CREATE);
    REQUIRE(uq_creates == 1);
    fx.m.auto_complete = false;
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_copy_split(fx.q, 0x20000000000ULL, 0x10000000000ULL, 32ULL << 20, 4, &f) == 0);
    CHECK(fx.calls(DRM_IOCTL_HPU_UQ_CREATE) == uq_creates); // the three helpers are kernel queues
    // The fork and part 0 went to the user queue; the parts on the other
    // engines (waiting for the fork) and the join to the kernel.
    REQUIRE(fx.m.jobs.size() == 4);
    CHECK(hpu_fence_status(f) == 1);
    fx.m.uq_complete(fx.uq_id());
    CHECK(hpu_fence_status(f) == 1); // the kernel jobs have not ended
    fx.m.complete_jobs();
    fx.m.uq_complete(fx.uq_id());
    CHECK(hpu_fence_wait(f, 1000000000ULL) == 0);
    CHECK(hpu_fence_destroy(f) == 0);
    fx.finish();
}

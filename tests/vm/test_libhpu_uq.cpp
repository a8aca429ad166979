// SPDX-License-Identifier: MIT
// libhpu's user queues on the device (issue 14): with HPU_USER_QUEUES=1,
// jobs that may take the user queue and jobs that must take the kernel
// path (a timeout of their own) mix on one queue and across queues, and
// every job still runs after what it waits for and after the earlier jobs
// of its queue. A job held at a sync-object WAIT on the kernel path is
// the gate: what is behind it must stay pending (its fence and the memory
// it writes), whatever path it took, until the gate opens. No timing:
// each check holds for any speed of the device.
//
//   [uq]   (hpu-vm-tests-uq in guest-suite.sh)
//
// Copyright (c) 2026 The hpu authors
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include <catch2/catch_test_macros.hpp>

#include "hpu/hpu.hpp"
#include "vm_util.h"

using namespace vmt;

namespace {

constexpr std::uint64_t kWaitNs = 60ULL * 1000000000ULL;
// The gate's own timeout: a kernel-path job (and long enough for any guest).
constexpr std::uint32_t kGateTimeoutMs = 120000;

// HPU_USER_QUEUES=1 for the queues made while it lives.
struct UserQueuesOn {
    UserQueuesOn() { REQUIRE(setenv("HPU_USER_QUEUES", "1", 1) == 0); } // NOLINT(concurrency-mt-unsafe)
    UserQueuesOn(const UserQueuesOn &) = delete;
    UserQueuesOn &operator=(const UserQueuesOn &) = delete;
    UserQueuesOn(UserQueuesOn &&) = delete;
    UserQueuesOn &operator=(UserQueuesOn &&) = delete;
    ~UserQueuesOn() { (void)unsetenv("HPU_USER_QUEUES"); } // NOLINT(concurrency-mt-unsafe)
};

struct Queue {
    hpu_queue_t *q = nullptr;
    Queue(hpu_device_t *dev, std::uint32_t cls)
    {
        REQUIRE(hpu_queue_create(dev, cls, 0, &q) == 0);
    }
    Queue(const Queue &) = delete;
    Queue &operator=(const Queue &) = delete;
    Queue(Queue &&) = delete;
    Queue &operator=(Queue &&) = delete;
    ~Queue() { (void)hpu_queue_destroy(q); }
};

struct Fence {
    hpu_fence_t *f = nullptr;
    Fence() = default;
    Fence(const Fence &) = delete;
    Fence &operator=(const Fence &) = delete;
    Fence(Fence &&) = delete;
    Fence &operator=(Fence &&) = delete;
    ~Fence() { (void)hpu_fence_destroy(f); }
};

struct List {
    hpu_cmdlist_t *cl = nullptr;
    explicit List(hpu_device_t *dev) { REQUIRE(hpu_cmdlist_create(dev, &cl) == 0); }
    List(const List &) = delete;
    List &operator=(const List &) = delete;
    List(List &&) = delete;
    List &operator=(List &&) = delete;
    ~List() { (void)hpu_cmdlist_destroy(cl); }
};

// A gate: a sync object, closed (0) by a job of the control queue, and a
// job on gated's queue that WAITs for it to be 1, with a timeout of its
// own (so on the kernel path), after waits.
struct Gate {
    hpu_device_t *dev;
    hpu_queue_t *control;
    std::uint32_t sob = 0;
    List cl{dev}; // destroying a list waits for its jobs: it goes after open()
    Fence held;

    Gate(hpu_device_t *d, hpu_queue_t *ctl, hpu_queue_t *gated, const std::vector<const hpu_fence_t *> &waits)
        : dev(d), control(ctl)
    {
        REQUIRE(hpu_sob_alloc(dev, &sob) == 0);
        set(0);
        REQUIRE(hpu_cmd_wait_sob(cl.cl, sob, 1, HPU_WAIT_GE) == 0);
        INFO(hpu_last_error());
        REQUIRE(hpu_queue_submit_timeout(gated, cl.cl, waits.data(), waits.size(), kGateTimeoutMs, &held.f) == 0);
    }
    Gate(const Gate &) = delete;
    Gate &operator=(const Gate &) = delete;
    Gate(Gate &&) = delete;
    Gate &operator=(Gate &&) = delete;
    // Opens a gate still closed, with no REQUIRE (a destructor must not
    // throw, also while a failed check unwinds).
    ~Gate()
    {
        if (held.f != nullptr && hpu_fence_status(held.f) == 1) {
            hpu_cmdlist_t *c = nullptr;
            hpu_fence_t *f = nullptr;
            if (hpu_cmdlist_create(dev, &c) == 0 && hpu_cmd_sob_update(c, sob, HPU_SOB_SET, 1) == 0 &&
                hpu_queue_submit(control, c, nullptr, 0, &f) == 0) {
                (void)hpu_fence_wait(f, kWaitNs);
                (void)hpu_fence_wait(held.f, kWaitNs);
            }
            (void)hpu_fence_destroy(f);
            (void)hpu_cmdlist_destroy(c);
        }
        (void)hpu_sob_free(dev, sob);
    }

    void set(std::uint32_t v) const
    {
        List cl(dev);
        REQUIRE(hpu_cmd_sob_update(cl.cl, sob, HPU_SOB_SET, v) == 0);
        Fence f;
        REQUIRE(hpu_queue_submit(control, cl.cl, nullptr, 0, &f.f) == 0);
        REQUIRE(hpu_fence_wait(f.f, kWaitNs) == 0);
    }
    void open() const
    {
        set(1);
        REQUIRE(hpu_fence_wait(held.f, kWaitNs) == 0);
    }
};

// Command lists kept until the jobs that read them ended (destroying a
// list waits for its jobs): declared before a Gate, they go after it opens.
using Lists = std::vector<std::unique_ptr<List>>;

// A job on q writing value to va, after waits; its fence in out, its
// command list in lists.
void write_after(hpu_device_t *dev, hpu_queue_t *q, std::uint64_t va, std::uint32_t value,
                 const std::vector<const hpu_fence_t *> &waits, Fence &out, Lists &lists)
{
    lists.push_back(std::make_unique<List>(dev));
    hpu_cmdlist_t *cl = lists.back()->cl;
    REQUIRE(hpu_cmd_write_value(cl, va, value) == 0);
    INFO(hpu_last_error());
    REQUIRE(hpu_queue_submit(q, cl, waits.data(), waits.size(), &out.f) == 0);
}

std::uint32_t word(const hpu::Buffer &b, std::size_t i)
{
    return static_cast<volatile std::uint32_t *>(b.host_ptr())[i]; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
}

// What every case uses: user queues on, the first HPU, a control queue
// for the gates, a host buffer the jobs write (va its device address),
// and the command lists (declared before any Gate, so freed after it).
struct Rig {
    UserQueuesOn on;
    hpu::Device dev;
    hpu_device_t *d;
    Queue control;
    hpu::Buffer buf;
    std::uint64_t va;
    Lists lists;

    Rig()
        : dev(open_first()), d(dev.get()), control(d, HPU_ENGINE_CLASS_TPC),
          buf(hpu::Buffer::create(dev, 4096, HPU_MEM_HOST)), va(buf.va())
    {
    }

    static hpu::Device open_first()
    {
        const auto list = nodes_by_pci();
        REQUIRE(!list.empty());
        return hpu::Device::open(list[0].index);
    }
};

} // namespace

TEST_CASE("libhpu user queues: jobs behind a kernel-path job held at a WAIT stay pending, on its queue and "
          "on the queues that wait for it",
          "[uq]")
{
    Rig r;
    hpu_device_t *d = r.d;
    Lists &lists = r.lists;
    Queue dma(d, HPU_ENGINE_DMA);
    Queue tpc(d, HPU_ENGINE_CLASS_TPC);
    const std::uint64_t va = r.va;

    // Before the gate, on the DMA queue: a job with no wait (the user
    // queue), left running or not.
    Fence before;
    write_after(d, dma.q, va, 0x11, {}, before, lists);
    const std::vector<const hpu_fence_t *> after_before{before.f};
    Gate gate(d, r.control.q, dma.q, after_before);
    REQUIRE(hpu_fence_status(gate.held.f) == 1);

    // Behind the gate: the same queue with no wait of its own (its order
    // alone), the same queue waiting for the gate, another queue waiting
    // for the gate, and the DMA queue waiting for that one.
    Fence same, same_wait, other, back;
    const std::vector<const hpu_fence_t *> on_gate{gate.held.f};
    write_after(d, dma.q, va + 4, 0x22, {}, same, lists);
    write_after(d, dma.q, va + 8, 0x33, on_gate, same_wait, lists);
    write_after(d, tpc.q, va + 12, 0x44, on_gate, other, lists);
    const std::vector<const hpu_fence_t *> on_other{other.f};
    write_after(d, dma.q, va + 16, 0x55, on_other, back, lists);

    REQUIRE(hpu_fence_wait(before.f, kWaitNs) == 0);
    CHECK(word(r.buf, 0) == 0x11);
    // The gate is still closed: nothing behind it ran.
    CHECK(hpu_fence_status(gate.held.f) == 1);
    CHECK(hpu_fence_status(same.f) == 1);
    CHECK(hpu_fence_status(same_wait.f) == 1);
    CHECK(hpu_fence_status(other.f) == 1);
    CHECK(hpu_fence_status(back.f) == 1);
    CHECK(hpu_fence_wait(other.f, 0) == -ETIME);
    for (std::size_t i = 1; i <= 4; ++i) {
        INFO("word " << i);
        CHECK(word(r.buf, i) == 0);
    }

    gate.open();
    for (hpu_fence_t *f : {same.f, same_wait.f, other.f, back.f})
        REQUIRE(hpu_fence_wait(f, kWaitNs) == 0);
    CHECK(word(r.buf, 1) == 0x22);
    CHECK(word(r.buf, 2) == 0x33);
    CHECK(word(r.buf, 3) == 0x44);
    CHECK(word(r.buf, 4) == 0x55);

    // The way back: once the kernel-path jobs ended, jobs run again (on
    // the user queue) and in order.
    Fence again1, again2;
    write_after(d, dma.q, va + 20, 0x66, {}, again1, lists);
    const std::vector<const hpu_fence_t *> on_again{again1.f};
    write_after(d, tpc.q, va + 24, 0x77, on_again, again2, lists);
    REQUIRE(hpu_fence_wait(again2.f, kWaitNs) == 0);
    REQUIRE(hpu_fence_wait(again1.f, kWaitNs) == 0);
    CHECK(word(r.buf, 5) == 0x66);
    CHECK(word(r.buf, 6) == 0x77);
}

TEST_CASE("libhpu user queues: a gate on one queue holds a job on another that waits for a user-queue job "
          "behind the gate's own wait",
          "[uq]")
{
    // The PyTorch stream pattern: the gate waits for the stream's last
    // job (a user-queue job), the stream's next jobs (another engine's
    // queue) wait for the gate.
    Rig r;
    hpu_device_t *d = r.d;
    Lists &lists = r.lists;
    Queue dma(d, HPU_ENGINE_DMA);
    Queue tpc(d, HPU_ENGINE_CLASS_TPC);
    const std::uint64_t va = r.va;

    Fence tail;
    write_after(d, tpc.q, va, 1, {}, tail, lists);
    const std::vector<const hpu_fence_t *> on_tail{tail.f};
    Gate gate(d, r.control.q, dma.q, on_tail);
    Fence next1, next2;
    const std::vector<const hpu_fence_t *> on_gate{gate.held.f};
    write_after(d, tpc.q, va + 4, 2, on_gate, next1, lists);
    const std::vector<const hpu_fence_t *> on_next1{next1.f};
    write_after(d, tpc.q, va + 8, 3, on_next1, next2, lists);
    REQUIRE(hpu_fence_wait(tail.f, kWaitNs) == 0);
    CHECK(hpu_fence_status(next1.f) == 1);
    CHECK(hpu_fence_status(next2.f) == 1);
    CHECK(word(r.buf, 1) == 0);
    CHECK(word(r.buf, 2) == 0);
    gate.open();
    REQUIRE(hpu_fence_wait(next2.f, kWaitNs) == 0);
    REQUIRE(hpu_fence_wait(next1.f, kWaitNs) == 0);
    CHECK(word(r.buf, 1) == 2);
    CHECK(word(r.buf, 2) == 3);
}

TEST_CASE("libhpu user queues: a queue made after the gate, its jobs alternating with the gated queue's, "
          "stays behind the gate",
          "[uq]")
{
    // As PyTorch runs `y = x * 2 + 1` on a held stream: the stream's DMA
    // queue (engine 1) holds the gate and a small job before each launch;
    // the stream's TPC queue, made only now, runs the launches, each
    // waiting for the DMA job before it.
    Rig r;
    hpu_device_t *d = r.d;
    Lists &lists = r.lists;
    hpu_queue_t *dma_q = nullptr;
    REQUIRE(hpu_queue_create(d, HPU_ENGINE_DMA, 1, &dma_q) == 0);
    const std::uint64_t va = r.va;
    {
        Gate gate(d, r.control.q, dma_q, {});
        Queue tpc(d, HPU_ENGINE_CLASS_TPC);
        std::vector<std::unique_ptr<Fence>> fences;
        const hpu_fence_t *prev = gate.held.f;
        for (std::uint32_t i = 0; i < 3; ++i) {
            fences.push_back(std::make_unique<Fence>());
            write_after(d, dma_q, va + std::uint64_t{8} * i, 0x100 + i, {prev}, *fences.back(), lists);
            prev = fences.back()->f;
            fences.push_back(std::make_unique<Fence>());
            write_after(d, tpc.q, va + std::uint64_t{8} * i + 4, 0x200 + i, {prev}, *fences.back(), lists);
            prev = fences.back()->f;
        }
        for (std::size_t i = 0; i < fences.size(); ++i) {
            INFO("job " << i);
            CHECK(hpu_fence_status(fences[i]->f) == 1);
            CHECK(word(r.buf, i) == 0);
        }
        gate.open();
        for (std::size_t i = 0; i < fences.size(); ++i) {
            INFO("job " << i);
            REQUIRE(hpu_fence_wait(fences[i]->f, kWaitNs) == 0);
            CHECK(word(r.buf, i) == (i % 2 == 0 ? 0x100U : 0x200U) + static_cast<std::uint32_t>(i / 2));
        }
    }
    lists.clear();
    (void)hpu_queue_destroy(dma_q);
}

TEST_CASE("libhpu user queues: queues made past the file's user-queue limit while a job is held at a WAIT "
          "are made at once and leave the held work pending",
          "[uq]")
{
    // limits/ctx_user_queues is 4 by default: the 5th and 6th queues get
    // none. Making them must not wait for the held job (an unmap of a
    // refused queue's ring would: it waits for every job of the context).
    Rig r;
    hpu_device_t *d = r.d;
    Lists &lists = r.lists;
    Queue dma(d, HPU_ENGINE_DMA);
    Gate gate(d, r.control.q, dma.q, {});
    Fence behind;
    write_after(d, dma.q, r.va, 7, {}, behind, lists);
    std::vector<std::unique_ptr<Queue>> more;
    for (int i = 0; i < 6; ++i) {
        INFO("queue " << i);
        more.push_back(std::make_unique<Queue>(d, HPU_ENGINE_CLASS_TPC));
        // Each one made while the gate holds (a stall would have timed it out).
        REQUIRE(hpu_fence_status(gate.held.f) == 1);
    }
    // Jobs on the new queues run (user queue or kernel path), the held work stays.
    for (std::size_t i = 0; i < more.size(); ++i) {
        Fence f;
        write_after(d, more[i]->q, r.va + 8 + 4 * i, static_cast<std::uint32_t>(100 + i), {}, f, lists);
        REQUIRE(hpu_fence_wait(f.f, kWaitNs) == 0);
        CHECK(word(r.buf, 2 + i) == 100 + i);
    }
    CHECK(hpu_fence_status(behind.f) == 1);
    CHECK(word(r.buf, 0) == 0);
    gate.open();
    REQUIRE(hpu_fence_wait(behind.f, kWaitNs) == 0);
    CHECK(word(r.buf, 0) == 7);
}

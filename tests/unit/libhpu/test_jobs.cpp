// SPDX-License-Identifier: MIT
// libhpu 1.1 against the mocked kernel: packets, buffers, queues, command
// lists, submission and fences.
//
// Copyright (c) 2026 The hpu authors
#include <array>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "fixture.h"
#include "hpu/hpu.h"
#include "mock_os.h"
#include "packets.h"
#include "spec_bytes.h"

using hpu::test::Bytes;
using hpu::test::cat;
using hpu::test::Fixture;
using hpu::test::MockOs;
using hpu::test::spec_lin_dma;
using hpu::test::spec_nop;
using hpu::test::spec_sob_update;
using hpu::test::spec_wait;
using hpu::test::spec_write_value;

namespace {

constexpr std::uint64_t kGiB = 1ULL << 30;
constexpr std::uint64_t kMiB = 1ULL << 20;

} // namespace

TEST_CASE("packet encoders are byte-exact", "[libhpu][packets]")
{
    namespace pkt = hpu::detail::pkt;
    std::array<std::uint8_t, 32> buf{};

    buf.fill(0xee);
    pkt::nop(buf.data());
    CHECK(Bytes(buf.begin(), buf.begin() + 8) == spec_nop());

    pkt::lin_dma(buf.data(), HPU_LIN_DMA_MEMSET, 0x1122334455667788ULL, 0x0000123456789abcULL, 1ULL << 32);
    CHECK(Bytes(buf.begin(), buf.end()) ==
          Bytes{0x01, 0, 0, 0, 0x01, 0, 0, 0,
                0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
                0xbc, 0x9a, 0x78, 0x56, 0x34, 0x12, 0x00, 0x00,
                0, 0, 0, 0, 0x01, 0, 0, 0});

    buf.fill(0xee);
    pkt::write_value(buf.data(), 0xdeadbeef0ULL, 0xcafef00dU);
    CHECK(Bytes(buf.begin(), buf.begin() + 16) ==
          Bytes{0x02, 0, 0, 0, 0x0d, 0xf0, 0xfe, 0xca, 0xf0, 0xee, 0xdb, 0xea, 0x0d, 0, 0, 0});

    pkt::sob_update(buf.data(), 31, 0x01020304U, HPU_SOB_OP_ADD);
    CHECK(Bytes(buf.begin(), buf.begin() + 16) ==
          Bytes{0x03, 0, 0, 0, 31, 0, 0, 0, 0x04, 0x03, 0x02, 0x01, 1, 0, 0, 0});

    pkt::wait(buf.data(), 7, 0xffffffffU, HPU_WAIT_EQ);
    CHECK(Bytes(buf.begin(), buf.begin() + 16) ==
          Bytes{0x04, 0, 0, 0, 7, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0});

    // The public constants are the hardware's.
    STATIC_REQUIRE(HPU_SOB_SET == HPU_SOB_OP_SET);
    STATIC_REQUIRE(HPU_SOB_ADD == HPU_SOB_OP_ADD);
    STATIC_REQUIRE(HPU_WAIT_GE == HPU_WAIT_GE);
    STATIC_REQUIRE(HPU_NUM_SOBS_PER_CONTEXT == HPU_SOBS_PER_ASID);
    STATIC_REQUIRE(HPU_CMDLIST_MAX_BYTES == HPU_CB_MAX_SIZE);
    STATIC_REQUIRE(HPU_MAX_WAIT_FENCES == DRM_HPU_MAX_SYNCS);
}

TEST_CASE("recorded commands reach the kernel as the spec's packets", "[libhpu][cmdlist]")
{
    Fixture fx;
    const Bytes got = fx.recorded([](hpu_cmdlist_t *cl) {
        REQUIRE(hpu_cmd_nop(cl) == 0);
        REQUIRE(hpu_cmd_copy(cl, 0x200000000ULL, 0x100000000ULL, 4096) == 0);
        REQUIRE(hpu_cmd_memset(cl, 0x300000000ULL, 0x0123456789abcdefULL, 100) == 0);
        REQUIRE(hpu_cmd_write_value(cl, 0x400000004ULL, 42) == 0);
        REQUIRE(hpu_cmd_sob_update(cl, 3, HPU_SOB_SET, 9) == 0);
        REQUIRE(hpu_cmd_wait_sob(cl, 3, 9, HPU_WAIT_GE) == 0);
        CHECK(hpu_cmdlist_size(cl) == 8 + 32 + 32 + 16 + 16 + 16);
    });
    CHECK(got == cat({spec_nop(), spec_lin_dma(0, 0x100000000ULL, 0x200000000ULL, 4096),
                      spec_lin_dma(1, 0x0123456789abcdefULL, 0x300000000ULL, 100),
                      spec_write_value(42, 0x400000004ULL), spec_sob_update(3, 9, 0), spec_wait(3, 9, 0)}));
    fx.check_clean();
}

TEST_CASE("copies and memsets over 4 GiB split into 4 GiB packets", "[libhpu][cmdlist]")
{
    Fixture fx;
    const std::uint64_t src = 0x10000000000ULL;
    const std::uint64_t dst = 0x20000000000ULL;
    SECTION("exactly 4 GiB is one packet")
    {
        const Bytes got = fx.recorded([&](hpu_cmdlist_t *cl) { REQUIRE(hpu_cmd_copy(cl, dst, src, 4 * kGiB) == 0); });
        CHECK(got == spec_lin_dma(0, src, dst, 4 * kGiB));
    }
    SECTION("9 GiB + 5 is three")
    {
        const Bytes got =
            fx.recorded([&](hpu_cmdlist_t *cl) { REQUIRE(hpu_cmd_copy(cl, dst, src, 9 * kGiB + 5) == 0); });
        CHECK(got == cat({spec_lin_dma(0, src, dst, 4 * kGiB), spec_lin_dma(0, src + 4 * kGiB, dst + 4 * kGiB, 4 * kGiB),
                          spec_lin_dma(0, src + 8 * kGiB, dst + 8 * kGiB, kGiB + 5)}));
    }
    SECTION("a memset keeps its pattern in every piece")
    {
        const Bytes got =
            fx.recorded([&](hpu_cmdlist_t *cl) { REQUIRE(hpu_cmd_memset(cl, dst, 0xa5a5ULL, 4 * kGiB + 8) == 0); });
        CHECK(got == cat({spec_lin_dma(1, 0xa5a5ULL, dst, 4 * kGiB), spec_lin_dma(1, 0xa5a5ULL, dst + 4 * kGiB, 8)}));
    }
    fx.check_clean();
}

TEST_CASE("recording checks its arguments without a system call", "[libhpu][cmdlist]")
{
    Fixture fx;
    hpu_cmdlist_t *cl = nullptr;
    REQUIRE(hpu_cmdlist_create(fx.dev, &cl) == 0);
    const int calls = fx.m.ioctl_calls;
    const std::uint64_t top = 1ULL << 48;
    CHECK(hpu_cmd_copy(cl, 0x1000, 0x2000, 0) == -EINVAL);
    CHECK(hpu_cmd_copy(cl, top - 8, 0x2000, 16) == -EINVAL);           // past the VA range
    CHECK(hpu_cmd_copy(cl, 0x1000, UINT64_MAX - 4, 16) == -EINVAL);    // wraps
    CHECK(hpu_cmd_memset(cl, 0x1000, 0, 0) == -EINVAL);
    CHECK(hpu_cmd_memset(cl, UINT64_MAX, 0, 1) == -EINVAL);
    CHECK(hpu_cmd_write_value(cl, 0x1002, 1) == -EINVAL);              // unaligned
    CHECK(hpu_cmd_write_value(cl, top, 1) == -EINVAL);
    CHECK(hpu_cmd_sob_update(cl, HPU_NUM_SOBS_PER_CONTEXT, HPU_SOB_SET, 1) == -EINVAL);
    CHECK(hpu_cmd_sob_update(cl, 0, 2, 1) == -EINVAL);
    CHECK(hpu_cmd_wait_sob(cl, 32, 1, HPU_WAIT_GE) == -EINVAL);
    CHECK(hpu_cmd_wait_sob(cl, 0, 1, 2) == -EINVAL);
    CHECK(hpu_cmd_nop(nullptr) == -EINVAL);
    CHECK(hpu_cmd_copy(nullptr, 0x1000, 0x2000, 8) == -EINVAL);
    CHECK(hpu_cmd_memset(nullptr, 0x1000, 0, 8) == -EINVAL);
    CHECK(hpu_cmd_write_value(nullptr, 0x1000, 0) == -EINVAL);
    CHECK(hpu_cmd_sob_update(nullptr, 0, 0, 0) == -EINVAL);
    CHECK(hpu_cmd_wait_sob(nullptr, 0, 0, 0) == -EINVAL);
    CHECK(hpu_cmdlist_reset(nullptr) == -EINVAL);
    CHECK(hpu_cmdlist_size(nullptr) == 0);
    CHECK(hpu_cmdlist_create(fx.dev, nullptr) == -EINVAL);
    hpu_cmdlist_t *none = cl;
    CHECK(hpu_cmdlist_create(nullptr, &none) == -EINVAL);
    CHECK(none == nullptr);
    CHECK(hpu_cmdlist_destroy(nullptr) == 0);
    CHECK(fx.m.ioctl_calls == calls);
    CHECK(fx.m.mmap_calls == 0);
    CHECK(hpu_cmdlist_destroy(cl) == 0);
    fx.check_clean();
}

TEST_CASE("a command list grows by doubling up to 1 MiB, then -ENOSPC", "[libhpu][cmdlist]")
{
    Fixture fx;
    hpu_cmdlist_t *cl = nullptr;
    REQUIRE(hpu_cmdlist_create(fx.dev, &cl) == 0);
    CHECK(fx.m.gem.empty()); // the buffer comes with the first command
    REQUIRE(hpu_cmd_nop(cl) == 0);
    REQUIRE(fx.m.gem.size() == 1);
    CHECK(fx.m.gem.begin()->second->size == 4096);
    CHECK((fx.m.gem.begin()->second->flags & DRM_HPU_BO_HOST) != 0);
    CHECK((fx.m.vm.begin()->second.flags & DRM_HPU_VM_READONLY) != 0);

    // Fill the first 4 KiB with distinct write-values, then one more.
    for (std::uint32_t i = 1; i < 4096 / 16; ++i)
        REQUIRE(hpu_cmd_write_value(cl, 0x1000, i) == 0);
    CHECK(hpu_cmdlist_size(cl) == 8 + 255 * 16);
    CHECK(fx.m.gem.size() == 1);
    REQUIRE(hpu_cmd_write_value(cl, 0x1000, 1000) == 0);
    REQUIRE(fx.m.gem.size() == 1); // the old one was idle: freed
    CHECK(fx.m.gem.begin()->second->size == 8192);
    CHECK(fx.m.vm.size() == 1);

    hpu_queue_t *q = nullptr;
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 1, &q) == 0);
    REQUIRE(hpu_queue_submit(q, cl, nullptr, 0, nullptr) == 0);
    const Bytes &cb = fx.m.cb(0);
    REQUIRE(cb.size() == 8 + 256 * 16);
    CHECK(Bytes(cb.begin(), cb.begin() + 8) == spec_nop()); // contents survived the move
    CHECK(Bytes(cb.end() - 16, cb.end()) == spec_write_value(1000, 0x1000));
    CHECK(Bytes(cb.begin() + 8 + 16L * 100, cb.begin() + 8 + 16L * 101) == spec_write_value(101, 0x1000));

    // Up to the limit: 1 MiB of commands in total.
    while (hpu_cmdlist_size(cl) + 32 <= HPU_CMDLIST_MAX_BYTES)
        REQUIRE(hpu_cmd_copy(cl, 0x1000, 0x2000, 64) == 0);
    const std::size_t full = hpu_cmdlist_size(cl);
    CHECK(fx.m.gem.begin()->second->size == HPU_CMDLIST_MAX_BYTES);
    CHECK(hpu_cmd_copy(cl, 0x1000, 0x2000, 64) == -ENOSPC);
    CHECK(hpu_cmdlist_size(cl) == full); // nothing recorded
    while (hpu_cmdlist_size(cl) + 8 <= HPU_CMDLIST_MAX_BYTES)
        REQUIRE(hpu_cmd_nop(cl) == 0);
    CHECK(hpu_cmdlist_size(cl) == HPU_CMDLIST_MAX_BYTES);
    CHECK(hpu_cmd_nop(cl) == -ENOSPC);
    REQUIRE(hpu_queue_submit(q, cl, nullptr, 0, nullptr) == 0);
    CHECK(fx.m.jobs.back().req.cb_size == HPU_CMDLIST_MAX_BYTES);

    SECTION("a split copy that does not fit records nothing")
    {
        REQUIRE(hpu_cmdlist_reset(cl) == 0);
        while (hpu_cmdlist_size(cl) + 32 <= HPU_CMDLIST_MAX_BYTES - 64)
            REQUIRE(hpu_cmd_copy(cl, 0x1000, 0x2000, 64) == 0);
        CHECK(hpu_cmdlist_size(cl) == HPU_CMDLIST_MAX_BYTES - 64);
        const std::size_t before = hpu_cmdlist_size(cl);
        CHECK(hpu_cmd_copy(cl, 0x1000, 0x10000000000ULL, 8 * kGiB + 1) == -ENOSPC); // 3 packets
        CHECK(hpu_cmdlist_size(cl) == before);
        CHECK(hpu_cmd_copy(cl, 0x1000, 0x10000000000ULL, 8 * kGiB) == 0);           // 2 packets
    }
    CHECK(hpu_cmdlist_destroy(cl) == 0);
    CHECK(hpu_queue_destroy(q) == 0);
    fx.check_clean();
}

TEST_CASE("submit marshalling: queue, command buffer, in- and out-syncs", "[libhpu][submit]")
{
    Fixture fx;
    hpu_queue_t *q = nullptr;
    hpu_cmdlist_t *cl = nullptr;
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 7, &q) == 0);
    REQUIRE(hpu_cmdlist_create(fx.dev, &cl) == 0);
    REQUIRE(hpu_cmd_nop(cl) == 0);

    hpu_fence_t *f1 = nullptr;
    hpu_fence_t *f2 = nullptr;
    REQUIRE(hpu_queue_submit(q, cl, nullptr, 0, &f1) == 0);
    REQUIRE(f1 != nullptr);
    const MockOs::Job j1 = fx.m.jobs.at(0);
    CHECK(j1.req.queue_id == *fx.m.queues.begin());
    CHECK(j1.req.flags == 0);
    CHECK(j1.req.cb_size == 8);
    CHECK(j1.req.timeout_ms == 0);
    CHECK(fx.m.vm.count(j1.req.cb_va) == 1);
    CHECK(j1.in.empty());
    CHECK(j1.req.in_syncs == 0);
    REQUIRE(j1.out.size() == 2);
    CHECK(j1.out[0].point == 1); // the list's timeline
    CHECK(j1.out[1].point == 0); // the caller's binary fence
    CHECK(j1.out[0].flags == 0);
    CHECK(j1.out[1].flags == 0);
    const std::uint32_t timeline = j1.out[0].handle;

    const hpu_fence_t *const waits[] = {f1, f1};
    REQUIRE(hpu_queue_submit(q, cl, waits, 2, &f2) == 0);
    const MockOs::Job j2 = fx.m.jobs.at(1);
    REQUIRE(j2.in.size() == 2);
    CHECK(j2.in[0].handle == fx.m.jobs.at(0).out[1].handle);
    CHECK(j2.in[0].point == 0);
    CHECK(j2.in[0].flags == 0);
    REQUIRE(j2.out.size() == 2);
    CHECK(j2.out[0].handle == timeline);
    CHECK(j2.out[0].point == 2);
    CHECK(j2.out[1].handle != j1.out[1].handle);

    // Without an out-fence only the timeline is signalled.
    REQUIRE(hpu_queue_submit(q, cl, nullptr, 0, nullptr) == 0);
    CHECK(fx.m.jobs.at(2).out.size() == 1);
    CHECK(fx.m.jobs.at(2).out[0].point == 3);

    SECTION("argument checks")
    {
        const int calls = fx.m.ioctl_calls;
        hpu_fence_t *f = nullptr;
        std::vector<const hpu_fence_t *> many(HPU_MAX_WAIT_FENCES + 1, f1);
        CHECK(hpu_queue_submit(q, cl, many.data(), many.size(), &f) == -EINVAL);
        CHECK(hpu_queue_submit(q, cl, nullptr, 1, &f) == -EINVAL);
        const hpu_fence_t *const null_wait[] = {nullptr};
        CHECK(hpu_queue_submit(q, cl, null_wait, 1, &f) == -EINVAL);
        CHECK(hpu_queue_submit(nullptr, cl, nullptr, 0, &f) == -EINVAL);
        CHECK(hpu_queue_submit(q, nullptr, nullptr, 0, &f) == -EINVAL);
        hpu_cmdlist_t *empty = nullptr;
        REQUIRE(hpu_cmdlist_create(fx.dev, &empty) == 0);
        const int calls2 = fx.m.ioctl_calls;
        CHECK(hpu_queue_submit(q, empty, nullptr, 0, &f) == -EINVAL);
        CHECK(fx.m.ioctl_calls == calls2);
        CHECK(hpu_cmdlist_destroy(empty) == 0);
        CHECK(f == nullptr);
        CHECK(fx.m.ioctl_calls == calls + 2);
    }
    SECTION("objects of another device: -EXDEV")
    {
        hpu_device_t *other = nullptr;
        REQUIRE(hpu_open_by_index(1, &other) == 0);
        hpu_cmdlist_t *ocl = nullptr;
        REQUIRE(hpu_cmdlist_create(other, &ocl) == 0);
        REQUIRE(hpu_cmd_nop(ocl) == 0);
        hpu_fence_t *f = nullptr;
        CHECK(hpu_queue_submit(q, ocl, nullptr, 0, &f) == -EXDEV);
        hpu_queue_t *oq = nullptr;
        REQUIRE(hpu_queue_create(other, HPU_ENGINE_DMA, 0, &oq) == 0);
        const hpu_fence_t *const w[] = {f1};
        CHECK(hpu_queue_submit(oq, ocl, w, 1, &f) == -EXDEV);
        CHECK(hpu_queue_destroy(oq) == 0);
        CHECK(hpu_cmdlist_destroy(ocl) == 0);
        CHECK(hpu_close(other) == 0);
    }
    SECTION("a failed submission leaves no fence and no point")
    {
        const int err = GENERATE(-EINVAL, -ENOENT, -EFAULT, -ENODEV);
        fx.m.request_fail[DRM_IOCTL_HPU_SUBMIT] = err;
        hpu_fence_t *f = nullptr;
        CHECK(hpu_queue_submit(q, cl, nullptr, 0, &f) == err);
        CHECK(f == nullptr);
        fx.m.request_fail.clear();
        REQUIRE(hpu_queue_submit(q, cl, nullptr, 0, nullptr) == 0);
        CHECK(fx.m.jobs.back().out[0].point == 4);
    }
    CHECK(hpu_fence_destroy(f1) == 0);
    CHECK(hpu_fence_destroy(f2) == 0);
    CHECK(hpu_cmdlist_destroy(cl) == 0);
    CHECK(hpu_queue_destroy(q) == 0);
    fx.check_clean();
}

TEST_CASE("buffers: create, map, host mapping, destroy", "[libhpu][buffer]")
{
    Fixture fx;
    SECTION("device memory")
    {
        hpu_buffer_t *b = nullptr;
        REQUIRE(hpu_buffer_create(fx.dev, 3 * kMiB, HPU_MEM_DEVICE | HPU_MEM_CONTIGUOUS, &b) == 0);
        REQUIRE(fx.m.gem.size() == 1);
        const auto &bo = *fx.m.gem.begin()->second;
        CHECK(bo.flags == (DRM_HPU_BO_HBM | DRM_HPU_BO_CONTIGUOUS));
        CHECK(hpu_buffer_size(b) == 4 * kMiB); // rounded to 2 MiB pages
        REQUIRE(fx.m.vm.size() == 1);
        CHECK(fx.m.vm.begin()->first == hpu_buffer_va(b));
        CHECK(fx.m.vm.begin()->second.size == 4 * kMiB);
        CHECK(fx.m.vm.begin()->second.flags == 0);
        CHECK(hpu_buffer_host_ptr(b) == nullptr);
        CHECK(fx.m.mmap_calls == 0);
        CHECK(hpu_buffer_destroy(b) == 0);
    }
    SECTION("hpu_buffer_map maps device memory once, unmapped at destroy")
    {
        hpu_buffer_t *b = nullptr;
        REQUIRE(hpu_buffer_create(fx.dev, 2 * kMiB, HPU_MEM_DEVICE, &b) == 0);
        void *p = nullptr;
        REQUIRE(hpu_buffer_map(b, &p) == 0);
        REQUIRE(p != nullptr);
        CHECK(p == fx.m.gem.begin()->second->mem.data());
        CHECK(hpu_buffer_host_ptr(b) == p);
        void *again = nullptr;
        REQUIRE(hpu_buffer_map(b, &again) == 0);
        CHECK(again == p);
        CHECK(fx.m.mmap_calls == 1);
        CHECK(fx.m.mmaps.size() == 1);
        CHECK(hpu_buffer_destroy(b) == 0);
        CHECK(fx.m.munmap_calls == 1);
        CHECK(fx.m.mmaps.empty());
        hpu_device_info info{};
        info.size = sizeof(info);
        REQUIRE(hpu_device_get_info(fx.dev, &info) == 0);
        CHECK(info.caps == HPU_DEVICE_CAP_HBM_MMAP);
    }
    SECTION("hpu_buffer_map: a device that cannot map HBM, a failed mmap, bad arguments")
    {
        hpu_buffer_t *b = nullptr;
        REQUIRE(hpu_buffer_create(fx.dev, 2 * kMiB, HPU_MEM_DEVICE, &b) == 0);
        void *p = &fx;
        fx.m.hbm_mmap = false;
        CHECK(hpu_buffer_map(b, &p) == -EOPNOTSUPP);
        CHECK(p == nullptr);
        CHECK(hpu_buffer_host_ptr(b) == nullptr);
        fx.m.hbm_mmap = true;
        fx.m.fail_at = fx.m.acquire_calls + 2; // the mmap after BO_MMAP_OFFSET
        fx.m.fail_errno = -ENOMEM;
        CHECK(hpu_buffer_map(b, &p) == -ENOMEM);
        CHECK(hpu_buffer_host_ptr(b) == nullptr);
        fx.m.fail_at = 0;
        REQUIRE(hpu_buffer_map(b, &p) == 0);
        CHECK(p != nullptr);
        CHECK(hpu_buffer_map(nullptr, &p) == -EINVAL);
        CHECK(hpu_buffer_map(b, nullptr) == -EINVAL);
        CHECK(hpu_buffer_destroy(b) == 0);
        CHECK(fx.m.mmaps.empty());
    }
    SECTION("hpu_buffer_map of a host buffer returns its mapping")
    {
        hpu_buffer_t *b = nullptr;
        REQUIRE(hpu_buffer_create(fx.dev, 4096, HPU_MEM_HOST, &b) == 0);
        void *p = nullptr;
        REQUIRE(hpu_buffer_map(b, &p) == 0);
        CHECK(p == hpu_buffer_host_ptr(b));
        CHECK(fx.m.mmap_calls == 1);
        CHECK(hpu_buffer_destroy(b) == 0);
    }
    SECTION("hpu_buffer_map of a user-pointer buffer returns the caller's pointer, with no system call")
    {
        std::vector<std::uint8_t> mem(8192);
        hpu_buffer_t *b = nullptr;
        REQUIRE(hpu_buffer_from_user(fx.dev, mem.data(), mem.size(), 0, &b) == 0);
        const int ioctls = fx.m.ioctl_calls;
        void *p = nullptr;
        REQUIRE(hpu_buffer_map(b, &p) == 0);
        CHECK(p == mem.data());
        CHECK(fx.m.ioctl_calls == ioctls);
        CHECK(fx.m.mmap_calls == 0);
        CHECK(hpu_buffer_destroy(b) == 0);
    }
    SECTION("hpu_buffer_map of an imported device-memory buffer maps the exporter's memory")
    {
        hpu_buffer_t *b = nullptr;
        REQUIRE(hpu_buffer_create(fx.dev, 2 * kMiB, HPU_MEM_DEVICE, &b) == 0);
        int fd = -1;
        REQUIRE(hpu_buffer_export_fd(b, &fd) == 0);
        hpu_buffer_t *imp = nullptr;
        REQUIRE(hpu_buffer_import_fd(fx.dev, fd, 2 * kMiB, &imp) == 0);
        CHECK(fx.m.close(fd) == 0);
        void *p = nullptr;
        REQUIRE(hpu_buffer_map(imp, &p) == 0);
        CHECK(p == fx.m.gem.begin()->second->mem.data());
        CHECK(hpu_buffer_host_ptr(imp) == p);
        CHECK(hpu_buffer_host_ptr(b) == nullptr); // the exporter's own buffer is not mapped by it
        CHECK(hpu_buffer_destroy(imp) == 0);
        CHECK(hpu_buffer_destroy(b) == 0);
        CHECK(fx.m.mmaps.empty());
    }
    SECTION("hpu_buffer_map from several threads at once: one mmap, one address")
    {
        hpu_buffer_t *b = nullptr;
        REQUIRE(hpu_buffer_create(fx.dev, 2 * kMiB, HPU_MEM_DEVICE, &b) == 0);
        constexpr int kThreads = 8;
        std::array<void *, kThreads> got{};
        std::array<int, kThreads> rets{};
        std::atomic<int> ready{0};
        std::vector<std::thread> threads;
        threads.reserve(kThreads);
        for (int i = 0; i < kThreads; ++i) {
            threads.emplace_back([&, i] {
                ready.fetch_add(1);
                while (ready.load() < kThreads) {
                }
                rets.at(i) = hpu_buffer_map(b, &got.at(i));
            });
        }
        for (auto &t : threads)
            t.join();
        for (int i = 0; i < kThreads; ++i) {
            CHECK(rets.at(i) == 0);
            CHECK(got.at(i) == got[0]);
        }
        CHECK(got[0] != nullptr);
        CHECK(fx.m.mmap_calls == 1);
        CHECK(fx.m.request_calls[DRM_IOCTL_HPU_BO_MMAP_OFFSET] == 1);
        CHECK(hpu_buffer_destroy(b) == 0);
        CHECK(fx.m.mmaps.empty());
    }
    SECTION("host memory is mapped into the caller")
    {
        hpu_buffer_t *b = nullptr;
        REQUIRE(hpu_buffer_create(fx.dev, 5000, HPU_MEM_HOST | HPU_MEM_READONLY, &b) == 0);
        CHECK(fx.m.gem.begin()->second->flags == DRM_HPU_BO_HOST);
        CHECK(hpu_buffer_size(b) == 8192);
        CHECK(fx.m.vm.begin()->second.flags == DRM_HPU_VM_READONLY);
        auto *p = static_cast<std::uint8_t *>(hpu_buffer_host_ptr(b));
        REQUIRE(p != nullptr);
        CHECK(p == fx.m.gem.begin()->second->mem.data());
        std::memset(p, 0x5a, 8192);
        CHECK(fx.m.mmaps.size() == 1);
        CHECK(hpu_buffer_destroy(b) == 0);
        CHECK(fx.m.munmap_calls == 1);
    }
    SECTION("argument checks: -EINVAL without a system call")
    {
        hpu_buffer_t *b = nullptr;
        CHECK(hpu_buffer_create(fx.dev, 0, HPU_MEM_DEVICE, &b) == -EINVAL);
        CHECK(hpu_buffer_create(fx.dev, 4096, 0, &b) == -EINVAL);
        CHECK(hpu_buffer_create(fx.dev, 4096, HPU_MEM_DEVICE | HPU_MEM_HOST, &b) == -EINVAL);
        CHECK(hpu_buffer_create(fx.dev, 4096, HPU_MEM_HOST | HPU_MEM_CONTIGUOUS, &b) == -EINVAL);
        CHECK(hpu_buffer_create(fx.dev, 4096, HPU_MEM_DEVICE | (1U << 7), &b) == -EINVAL);
        CHECK(hpu_buffer_create(fx.dev, UINT64_MAX, HPU_MEM_DEVICE, &b) == -EINVAL);
        CHECK(hpu_buffer_create(fx.dev, (1ULL << 48) + 1, HPU_MEM_DEVICE, &b) == -EINVAL);
        CHECK(hpu_buffer_create(nullptr, 4096, HPU_MEM_DEVICE, &b) == -EINVAL);
        CHECK(hpu_buffer_create(fx.dev, 4096, HPU_MEM_DEVICE, nullptr) == -EINVAL);
        CHECK(b == nullptr);
        std::array<std::uint8_t, 64> mem{};
        CHECK(hpu_buffer_from_user(fx.dev, nullptr, 64, 0, &b) == -EINVAL);
        CHECK(hpu_buffer_from_user(fx.dev, mem.data(), 0, 0, &b) == -EINVAL);
        CHECK(hpu_buffer_from_user(fx.dev, mem.data(), 64, HPU_MEM_DEVICE, &b) == -EINVAL);
        CHECK(hpu_buffer_from_user(fx.dev, reinterpret_cast<void *>(UINT64_MAX - 4095), 64, 0, &b) == -EINVAL); // NOLINT(performance-no-int-to-ptr,cppcoreguidelines-pro-type-reinterpret-cast)
        CHECK(hpu_buffer_import_fd(fx.dev, -1, 4096, &b) == -EINVAL);
        CHECK(hpu_buffer_import_fd(fx.dev, 3, 0, &b) == -EINVAL);
        int fd = 0;
        CHECK(hpu_buffer_export_fd(nullptr, &fd) == -EINVAL);
        CHECK(fd == -1);
        CHECK(hpu_buffer_destroy(nullptr) == 0);
        CHECK(hpu_buffer_va(nullptr) == 0);
        CHECK(hpu_buffer_size(nullptr) == 0);
        CHECK(hpu_buffer_host_ptr(nullptr) == nullptr);
        CHECK(fx.m.ioctl_calls == 0);
    }
    SECTION("errors of each step propagate and release what was made")
    {
        const unsigned long req = GENERATE(DRM_IOCTL_HPU_BO_CREATE, DRM_IOCTL_HPU_VM_BIND, DRM_IOCTL_HPU_BO_MMAP_OFFSET);
        fx.m.request_fail[req] = -ENOMEM;
        hpu_buffer_t *b = nullptr;
        CHECK(hpu_buffer_create(fx.dev, 4096, HPU_MEM_HOST, &b) == -ENOMEM);
        CHECK(b == nullptr);
    }
    SECTION("a failed mmap releases the mapping and the handle")
    {
        fx.m.fail_at = 4; // create, bind, offset, mmap
        hpu_buffer_t *b = nullptr;
        CHECK(hpu_buffer_create(fx.dev, 4096, HPU_MEM_HOST, &b) == -ENOMEM);
        CHECK(fx.m.mmap_calls == 1);
    }
    fx.check_clean();
}

TEST_CASE("user memory: the enclosing pages are pinned, the VA points at ptr", "[libhpu][buffer]")
{
    Fixture fx;
    std::vector<std::uint8_t> mem(3UL * 4096);
    auto *ptr = mem.data() + 100; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    const auto addr = reinterpret_cast<std::uintptr_t>(ptr); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    const std::uint64_t first = addr & ~4095ULL;
    const std::uint64_t end = (addr + 5000 + 4095) & ~4095ULL;

    hpu_buffer_t *b = nullptr;
    REQUIRE(hpu_buffer_from_user(fx.dev, ptr, 5000, HPU_MEM_READONLY, &b) == 0);
    const auto &bo = *fx.m.gem.begin()->second;
    CHECK(bo.userptr);
    CHECK(bo.user_addr == first);
    CHECK(bo.size == end - first);
    const auto &map = fx.m.vm.begin()->second;
    CHECK(map.flags == DRM_HPU_VM_READONLY);
    CHECK(map.size == end - first);
    CHECK(hpu_buffer_va(b) == fx.m.vm.begin()->first + (addr - first));
    CHECK(hpu_buffer_size(b) == 5000);
    CHECK(hpu_buffer_host_ptr(b) == ptr);

    int fd = -1;
    CHECK(hpu_buffer_export_fd(b, &fd) == 0); // user pointers are exported as any buffer
    CHECK(fx.m.aux_fds.count(fd) == 1);
    CHECK(fx.m.close(fd) == 0);
    CHECK(hpu_buffer_destroy(b) == 0);
    CHECK(fx.m.mmap_calls == 0);

    SECTION("-EFAULT from the kernel propagates")
    {
        fx.m.request_fail[DRM_IOCTL_HPU_BO_USERPTR] = -EFAULT;
        CHECK(hpu_buffer_from_user(fx.dev, ptr, 64, 0, &b) == -EFAULT);
        CHECK(b == nullptr);
    }
    fx.check_clean();
}

TEST_CASE("dma-buf export and import; one handle closed once", "[libhpu][buffer]")
{
    Fixture fx;
    hpu_buffer_t *a = nullptr;
    REQUIRE(hpu_buffer_create(fx.dev, 2 * kMiB, HPU_MEM_DEVICE, &a) == 0);
    int fd = -1;
    REQUIRE(hpu_buffer_export_fd(a, &fd) == 0);
    CHECK(fx.m.aux_fds.count(fd) == 1);

    hpu_buffer_t *b = nullptr;
    REQUIRE(hpu_buffer_import_fd(fx.dev, fd, hpu_buffer_size(a), &b) == 0);
    CHECK(fx.m.gem.size() == 1);          // same object, same handle
    CHECK(fx.m.vm.size() == 2);           // mapped twice
    CHECK(hpu_buffer_va(b) != hpu_buffer_va(a));
    CHECK(hpu_buffer_size(b) == 2 * kMiB);
    CHECK(fx.m.close(fd) == 0);           // the caller's fd is the caller's

    const bool first_a = GENERATE(true, false);
    CHECK(hpu_buffer_destroy(first_a ? a : b) == 0);
    CHECK(fx.m.gem.size() == 1);          // still held by the other
    CHECK(fx.m.request_calls[DRM_IOCTL_GEM_CLOSE] == 0);
    CHECK(hpu_buffer_destroy(first_a ? b : a) == 0);
    CHECK(fx.m.request_calls[DRM_IOCTL_GEM_CLOSE] == 1);

    SECTION("a failed map after import drops the reference")
    {
        hpu_buffer_t *c = nullptr;
        REQUIRE(hpu_buffer_create(fx.dev, 2 * kMiB, HPU_MEM_DEVICE, &c) == 0);
        REQUIRE(hpu_buffer_export_fd(c, &fd) == 0);
        fx.m.request_fail[DRM_IOCTL_HPU_VM_BIND] = -ENOSPC;
        CHECK(hpu_buffer_import_fd(fx.dev, fd, 2 * kMiB, &b) == -ENOSPC);
        CHECK(b == nullptr);
        fx.m.request_fail.clear();
        CHECK(fx.m.gem.size() == 1);
        CHECK(hpu_buffer_destroy(c) == 0);
        CHECK(fx.m.close(fd) == 0);
    }
    fx.check_clean();
}

TEST_CASE("memory info and DMA engine count", "[libhpu][info]")
{
    Fixture fx;
    fx.m.memory_answer = drm_hpu_info_memory{8 * kGiB, 3 * kGiB, kGiB, 5 * kMiB, 0x200000, 1ULL << 47, 7, 32};
    hpu_memory_info mi{};
    mi.size = sizeof(mi);
    REQUIRE(hpu_device_memory_info(fx.dev, &mi) == 0);
    CHECK(fx.m.last_info.op == DRM_HPU_INFO_MEMORY);
    CHECK(fx.m.last_info.size == sizeof(drm_hpu_info_memory));
    CHECK(mi.size == sizeof(mi));
    CHECK(mi.hbm_total == 8 * kGiB);
    CHECK(mi.hbm_used == 3 * kGiB);
    CHECK(mi.hbm_ctx_used == kGiB);
    CHECK(mi.host_ctx_used == 5 * kMiB);
    CHECK(mi.va_start == 0x200000);
    CHECK(mi.va_end == 1ULL << 47);
    CHECK(mi.asid == 7);
    CHECK(mi.num_sobs == 32);
    CHECK(mi.reserved0 == 0);
    CHECK(hpu_device_dma_engines(fx.dev) == 8);

    mi.size = 3;
    CHECK(hpu_device_memory_info(fx.dev, &mi) == -EINVAL);
    CHECK(hpu_device_memory_info(nullptr, &mi) == -EINVAL);
    CHECK(hpu_device_dma_engines(nullptr) == -EINVAL);
    fx.m.answer_size = 16;
    mi.size = sizeof(mi);
    CHECK(hpu_device_memory_info(fx.dev, &mi) == -EPROTO);
    CHECK(hpu_device_dma_engines(fx.dev) == -EPROTO);
    fx.m.answer_size = -1;
    fx.m.ioctl_fail = -ENODEV;
    CHECK(hpu_device_memory_info(fx.dev, &mi) == -ENODEV);
    CHECK(hpu_device_dma_engines(fx.dev) == -ENODEV);
}

TEST_CASE("queues: marshalling and errors", "[libhpu][queue]")
{
    Fixture fx;
    hpu_queue_t *q = nullptr;
    CHECK(hpu_queue_create(fx.dev, 3, 0, &q) == -EINVAL); // no such class
    CHECK(hpu_queue_create(fx.dev, 0xffffffffU, 0, &q) == -EINVAL);
    CHECK(hpu_queue_create(nullptr, HPU_ENGINE_DMA, 0, &q) == -EINVAL);
    CHECK(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, nullptr) == -EINVAL);
    CHECK(fx.m.ioctl_calls == 0);
    CHECK(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 8, &q) == -EINVAL); // from the kernel
    CHECK(fx.m.ioctl_calls == 1);
    CHECK(q == nullptr);
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 3, &q) == 0);
    CHECK(fx.m.last_queue_class == DRM_HPU_ENGINE_DMA);
    CHECK(fx.m.queues.size() == 1);
    CHECK(hpu_queue_destroy(q) == 0);
    CHECK(hpu_queue_destroy(nullptr) == 0);
    fx.check_clean();
}

TEST_CASE("queues on the compute engines: the class reaches the kernel", "[libhpu][queue]")
{
    Fixture fx;
    hpu_queue_t *q = nullptr;
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_CLASS_TPC, 0, &q) == 0);
    CHECK(fx.m.last_queue_class == DRM_HPU_ENGINE_TPC);
    CHECK(hpu_queue_destroy(q) == 0);
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_CLASS_MME, 1, &q) == 0);
    CHECK(fx.m.last_queue_class == DRM_HPU_ENGINE_MME);
    CHECK(hpu_queue_destroy(q) == 0);
    // Beyond the engines of the class: the kernel's -EINVAL.
    CHECK(hpu_queue_create(fx.dev, HPU_ENGINE_CLASS_TPC, 1, &q) == -EINVAL);
    CHECK(hpu_queue_create(fx.dev, HPU_ENGINE_CLASS_MME, 2, &q) == -EINVAL);
    CHECK(q == nullptr);
    fx.check_clean();
}

TEST_CASE("engine counts per class", "[libhpu][info]")
{
    Fixture fx;
    CHECK(hpu_device_engines(fx.dev, HPU_ENGINE_CLASS_DMA) == 8);
    CHECK(hpu_device_engines(fx.dev, HPU_ENGINE_CLASS_TPC) == 1);
    CHECK(hpu_device_engines(fx.dev, HPU_ENGINE_CLASS_MME) == 2);
    CHECK(hpu_device_engines(fx.dev, 3) == 0);
    CHECK(hpu_device_engines(fx.dev, HPU_MAX_ENGINE_CLASSES) == -EINVAL);
    CHECK(hpu_device_engines(nullptr, HPU_ENGINE_CLASS_DMA) == -EINVAL);

    SECTION("a driver before class_engines: its DMA engines only")
    {
        fx.m.answer_size = static_cast<int>(offsetof(drm_hpu_info_device, class_engines));
        CHECK(hpu_device_engines(fx.dev, HPU_ENGINE_CLASS_DMA) == 8);
        CHECK(hpu_device_engines(fx.dev, HPU_ENGINE_CLASS_TPC) == 0);
        CHECK(hpu_device_engines(fx.dev, HPU_ENGINE_CLASS_MME) == 0);
        hpu_device_info info{};
        info.size = sizeof(info);
        REQUIRE(hpu_device_get_info(fx.dev, &info) == 0);
        CHECK(info.class_engines[HPU_ENGINE_CLASS_DMA] == 8);
        CHECK(info.class_engines[HPU_ENGINE_CLASS_TPC] == 0);
    }
    SECTION("an answer shorter than the fields before class_engines: -EPROTO")
    {
        fx.m.answer_size = static_cast<int>(offsetof(drm_hpu_info_device, class_engines)) - 4;
        CHECK(hpu_device_engines(fx.dev, HPU_ENGINE_CLASS_DMA) == -EPROTO);
    }
}

TEST_CASE("device caps: HBM mapping only when the driver says so", "[libhpu][info]")
{
    Fixture fx;
    hpu_device_info info{};
    info.size = sizeof(info);
    REQUIRE(hpu_device_get_info(fx.dev, &info) == 0);
    CHECK(info.caps == HPU_DEVICE_CAP_HBM_MMAP);
    SECTION("a driver before caps (its answer ends where caps begins): no caps")
    {
        fx.m.answer_size = static_cast<int>(offsetof(drm_hpu_info_device, caps));
        info = hpu_device_info{};
        info.size = sizeof(info);
        REQUIRE(hpu_device_get_info(fx.dev, &info) == 0);
        CHECK(info.caps == 0);
        CHECK(info.class_engines[HPU_ENGINE_CLASS_MME] == 2); // the fields before it are there
    }
    SECTION("a device whose BAR does not cover its memory: no caps bit")
    {
        for (auto &n : fx.m.nodes)
            n.second.caps = 0;
        info = hpu_device_info{};
        info.size = sizeof(info);
        REQUIRE(hpu_device_get_info(fx.dev, &info) == 0);
        CHECK(info.caps == 0);
    }
    SECTION("unknown bits of the driver's caps are not passed on")
    {
        for (auto &n : fx.m.nodes)
            n.second.caps = DRM_HPU_CAP_HBM_MMAP | (1ULL << 40U);
        info = hpu_device_info{};
        info.size = sizeof(info);
        REQUIRE(hpu_device_get_info(fx.dev, &info) == 0);
        CHECK(info.caps == HPU_DEVICE_CAP_HBM_MMAP);
    }
}

TEST_CASE("every submission drains the CPU's write-combined stores first", "[libhpu][queue]")
{
    Fixture fx;
    auto [q, cl] = fx.queue_and_nop();
    const int before = fx.m.wc_flushes;
    REQUIRE(hpu_queue_submit(q, cl, nullptr, 0, nullptr) == 0);
    CHECK(fx.m.jobs.back().wc_flushes == before + 1);
    REQUIRE(hpu_queue_copy(q, 0x1000, 0x2000, 8, nullptr) == 0);
    CHECK(fx.m.jobs.back().wc_flushes == before + 2);
    CHECK(hpu_cmdlist_destroy(cl) == 0);
    CHECK(hpu_queue_destroy(q) == 0);
}

TEST_CASE("fence waits use an absolute deadline that survives EINTR", "[libhpu][fence]")
{
    Fixture fx;
    auto [q, cl] = fx.queue_and_nop();
    fx.m.auto_complete = false;
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_submit(q, cl, nullptr, 0, &f) == 0);
    const std::int64_t t0 = fx.m.now_ns;

    SECTION("timeout: -ETIME at now + timeout")
    {
        CHECK(hpu_fence_wait(f, 5000000) == -ETIME);
        REQUIRE(fx.m.wait_deadlines.size() == 1);
        CHECK(fx.m.wait_deadlines[0] == t0 + 5000000);
        CHECK(hpu_fence_status(f) == 1);
    }
    SECTION("signals interrupt the wait: restarted with the same deadline")
    {
        fx.m.wait_script = {-EINTR, -EINTR, -EAGAIN};
        fx.m.wait_advance_ns = 1000000; // 1 ms passes per attempt
        int attempts = 0;
        fx.m.on_wait = [&]() {
            if (++attempts == 4)
                fx.m.complete_jobs();
        };
        CHECK(hpu_fence_wait(f, 10000000) == 0);
        REQUIRE(fx.m.wait_deadlines.size() == 4);
        for (const auto d : fx.m.wait_deadlines)
            CHECK(d == t0 + 10000000);
    }
    SECTION("interrupted until the deadline passed: -ETIME")
    {
        fx.m.wait_script = {-EINTR};
        fx.m.wait_advance_ns = 20000000;
        CHECK(hpu_fence_wait(f, 10000000) == -ETIME);
        REQUIRE(fx.m.wait_deadlines.size() == 2);
        CHECK(fx.m.wait_deadlines[1] == t0 + 10000000);
    }
    SECTION("a -ETIME of the kernel before the deadline: asked again with the same deadline")
    {
        // Linux counts the deadline in jiffies from a jiffies value that a
        // late tick leaves behind the clock: the wait can end early.
        fx.m.wait_script = {-ETIME, -ETIME};
        fx.m.wait_advance_ns = 1000000;
        int attempts = 0;
        fx.m.on_wait = [&]() {
            if (++attempts == 3)
                fx.m.complete_jobs();
        };
        CHECK(hpu_fence_wait(f, 10000000) == 0);
        REQUIRE(fx.m.wait_deadlines.size() == 3);
        for (const auto d : fx.m.wait_deadlines)
            CHECK(d == t0 + 10000000);
    }
    SECTION("a kernel that always answers -ETIME before the deadline: asked again 8 times, no more")
    {
        // A time namespace whose clock runs behind the host's: no spin.
        fx.m.wait_script = std::deque<int>(100, -ETIME);
        CHECK(hpu_fence_wait(f, 10000000) == -ETIME);
        CHECK(fx.m.wait_deadlines.size() == 9);
        fx.m.wait_script.clear();
    }
    SECTION("a -ETIME of the kernel once the deadline passed is the answer")
    {
        fx.m.wait_script = {-ETIME};
        fx.m.wait_advance_ns = 10000000;
        CHECK(hpu_fence_wait(f, 10000000) == -ETIME);
        CHECK(fx.m.wait_deadlines.size() == 1);
    }
    SECTION("an infinite timeout never overflows")
    {
        fx.m.on_wait = [&]() { fx.m.complete_jobs(); };
        CHECK(hpu_fence_wait(f, HPU_TIMEOUT_INFINITE) == 0);
        CHECK(fx.m.wait_deadlines.at(0) == INT64_MAX);
        fx.m.now_ns = INT64_MAX - 10;
        CHECK(hpu_fence_wait(f, 100) == 0); // cached: no further wait
        CHECK(fx.m.wait_deadlines.size() == 1);
    }
    SECTION("a zero timeout polls")
    {
        CHECK(hpu_fence_wait(f, 0) == -ETIME);
        CHECK(fx.m.wait_deadlines.at(0) == t0);
    }
    SECTION("the wait ioctl's flags and handle")
    {
        fx.m.complete_jobs();
        CHECK(hpu_fence_wait(f, 1000) == 0);
        CHECK(fx.m.request_calls[DRM_IOCTL_SYNCOBJ_WAIT] == 1);
    }
    SECTION("other wait errors propagate")
    {
        fx.m.request_fail[DRM_IOCTL_SYNCOBJ_WAIT] = -ENOENT;
        CHECK(hpu_fence_wait(f, 1000) == -ENOENT);
        fx.m.request_fail.clear();
    }
    fx.m.on_wait = nullptr; // it may refer to a section's locals
    fx.m.complete_jobs();
    CHECK(hpu_fence_destroy(f) == 0);
    CHECK(hpu_cmdlist_destroy(cl) == 0);
    CHECK(hpu_queue_destroy(q) == 0);
    fx.check_clean();
    CHECK(hpu_fence_wait(nullptr, 0) == -EINVAL);
    CHECK(hpu_fence_status(nullptr) == -EINVAL);
    CHECK(hpu_fence_destroy(nullptr) == 0);
}

TEST_CASE("fence status and the job's error", "[libhpu][fence]")
{
    Fixture fx;
    hpu_queue_t *q = nullptr;
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &q) == 0);

    const int err = GENERATE(-EFAULT, -EINVAL, -EPERM, -EIO, -ETIMEDOUT, -ECANCELED);
    fx.m.auto_complete = false;
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_write_value(q, 0x100000000ULL, 1, &f) == 0);
    CHECK(hpu_fence_status(f) == 1);
    CHECK(fx.m.aux_fds.empty()); // the sync_file was closed
    fx.m.complete_jobs(err);
    CHECK(hpu_fence_status(f) == err);
    CHECK(hpu_fence_wait(f, 1000) == err);
    const int calls = fx.m.ioctl_calls;
    CHECK(hpu_fence_status(f) == err); // final: cached
    CHECK(fx.m.ioctl_calls == calls);

    SECTION("a successful job")
    {
        hpu_fence_t *g = nullptr;
        fx.m.auto_complete = true;
        REQUIRE(hpu_queue_write_value(q, 0x100000000ULL, 1, &g) == 0);
        CHECK(hpu_fence_wait(g, 0) == 0);
        CHECK(hpu_fence_status(g) == 0);
        CHECK(hpu_fence_destroy(g) == 0);
    }
    CHECK(hpu_fence_destroy(f) == 0);
    CHECK(hpu_queue_destroy(q) == 0);
    fx.check_clean();
}

namespace {

// A DMA queue and the fence of a memset on it, pending (jobs no longer
// complete at submission).
std::pair<hpu_queue_t *, hpu_fence_t *> pending_memset(Fixture &fx)
{
    hpu_queue_t *q = nullptr;
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &q) == 0);
    fx.m.auto_complete = false;
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_memset(q, 0x100000000ULL, 0, 64, &f) == 0);
    return {q, f};
}

} // namespace

TEST_CASE("fences export and import as sync_file fds", "[libhpu][fence]")
{
    Fixture fx;
    auto [q, f] = pending_memset(fx);
    int fd = -1;
    REQUIRE(hpu_fence_export_fd(f, &fd) == 0);
    REQUIRE(fx.m.aux_fds.count(fd) == 1);

    hpu_fence_t *g = nullptr;
    REQUIRE(hpu_fence_import_fd(fx.dev, fd, &g) == 0);
    CHECK(fx.m.close(fd) == 0);
    CHECK(hpu_fence_status(g) == 1);
    fx.m.complete_jobs(-EIO);
    CHECK(hpu_fence_status(g) == -EIO);

    // The imported fence gates a later job.
    hpu_cmdlist_t *cl = nullptr;
    REQUIRE(hpu_cmdlist_create(fx.dev, &cl) == 0);
    REQUIRE(hpu_cmd_nop(cl) == 0);
    const hpu_fence_t *const w[] = {g};
    REQUIRE(hpu_queue_submit(q, cl, w, 1, nullptr) == 0);
    const std::uint32_t gate = fx.m.jobs.back().in.at(0).handle;
    CHECK(gate != fx.m.jobs.front().out.at(1).handle);           // the imported syncobj,
    CHECK(fx.m.syncobjs.at(gate).fence == fx.m.jobs.front().fence); // carrying the first job's fence

    SECTION("import errors release the new syncobj")
    {
        hpu_fence_t *h = nullptr;
        CHECK(hpu_fence_import_fd(fx.dev, 9999, &h) == -EINVAL);
        CHECK(h == nullptr);
        CHECK(hpu_fence_import_fd(fx.dev, -1, &h) == -EINVAL);
        CHECK(hpu_fence_import_fd(nullptr, 3, &h) == -EINVAL);
        CHECK(hpu_fence_import_fd(fx.dev, 3, nullptr) == -EINVAL);
        int x = 0;
        CHECK(hpu_fence_export_fd(nullptr, &x) == -EINVAL);
        CHECK(x == -1);
        CHECK(hpu_fence_export_fd(f, nullptr) == -EINVAL);
    }
    fx.m.complete_jobs();
    CHECK(hpu_cmdlist_destroy(cl) == 0);
    CHECK(hpu_fence_destroy(g) == 0);
    CHECK(hpu_fence_destroy(f) == 0);
    CHECK(hpu_queue_destroy(q) == 0);
    fx.check_clean();
}

TEST_CASE("a fence's signal time is the kernel's timestamp of its job's fence", "[libhpu][fence]")
{
    Fixture fx;
    auto [q, f] = pending_memset(fx);
    auto &job = *fx.m.jobs.back().fence;
    std::uint64_t ns = 1;

    SECTION("pending: -EBUSY, without waiting")
    {
        const std::size_t waits = fx.m.wait_deadlines.size();
        CHECK(hpu_fence_signal_time(f, &ns) == -EBUSY);
        CHECK(ns == 0);
        CHECK(fx.m.wait_deadlines.size() == waits);
        CHECK(fx.m.aux_fds.empty()); // the sync_files were closed
    }
    SECTION("a successful job: its time")
    {
        fx.m.complete_jobs();
        job.timestamp_ns = 123456789;
        CHECK(hpu_fence_signal_time(f, &ns) == 0);
        CHECK(ns == 123456789);
        CHECK(fx.m.aux_fds.empty());
        CHECK(hpu_fence_status(f) == 0);
        CHECK(hpu_fence_signal_time(f, &ns) == 0); // after the result is cached too
        CHECK(ns == 123456789);
    }
    SECTION("a failed job: its time too; the status tells the error")
    {
        fx.m.complete_jobs(-EIO);
        job.timestamp_ns = 777;
        CHECK(hpu_fence_signal_time(f, &ns) == 0);
        CHECK(ns == 777);
        CHECK(hpu_fence_status(f) == -EIO);
    }
    SECTION("an imported fence of several (a merged sync_file): the latest, once all signalled")
    {
        hpu_fence_t *g = nullptr;
        REQUIRE(hpu_queue_memset(q, 0x100000000ULL, 0, 64, &g) == 0);
        auto &job2 = *fx.m.jobs.back().fence;
        int a = -1;
        int b = -1;
        REQUIRE(hpu_fence_export_fd(f, &a) == 0);
        REQUIRE(hpu_fence_export_fd(g, &b) == 0);
        sync_merge_data req{};
        req.fd2 = b;
        REQUIRE(fx.m.ioctl(a, SYNC_IOC_MERGE, &req) == 0);
        hpu_fence_t *imported = nullptr;
        REQUIRE(hpu_fence_import_fd(fx.dev, req.fence, &imported) == 0);
        for (const int fd : {a, b, static_cast<int>(req.fence)})
            CHECK(fx.m.close(fd) == 0);
        job2.signalled = true;
        job2.timestamp_ns = 5000;
        CHECK(hpu_fence_signal_time(imported, &ns) == -EBUSY); // f's job runs
        CHECK(ns == 0);
        job.signalled = true;
        job.timestamp_ns = 3000;
        CHECK(hpu_fence_signal_time(imported, &ns) == 0);
        CHECK(ns == 5000);
        CHECK(hpu_fence_destroy(imported) == 0);
        CHECK(hpu_fence_destroy(g) == 0);
    }
    SECTION("an imported fence that signalled without a time: -ENODATA")
    {
        fx.m.complete_jobs();
        int a = -1;
        REQUIRE(hpu_fence_export_fd(f, &a) == 0);
        sync_merge_data req{};
        req.fd2 = a;
        REQUIRE(fx.m.ioctl(a, SYNC_IOC_MERGE, &req) == 0); // all signalled: a stub
        hpu_fence_t *imported = nullptr;
        REQUIRE(hpu_fence_import_fd(fx.dev, req.fence, &imported) == 0);
        CHECK(fx.m.close(a) == 0);
        CHECK(fx.m.close(static_cast<int>(req.fence)) == 0);
        CHECK(hpu_fence_signal_time(imported, &ns) == -ENODATA);
        CHECK(ns == 0);
        CHECK(hpu_fence_destroy(imported) == 0);
    }
    SECTION("a system call's error")
    {
        fx.m.complete_jobs();
        job.timestamp_ns = 1;
        REQUIRE(hpu_fence_status(f) == 0); // cached: the export below is the time's
        fx.m.request_fail[DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD] = -EMFILE;
        CHECK(hpu_fence_signal_time(f, &ns) == -EMFILE);
        CHECK(ns == 0);
        fx.m.request_fail.clear();
    }
    SECTION("NULL arguments")
    {
        CHECK(hpu_fence_signal_time(nullptr, &ns) == -EINVAL);
        CHECK(ns == 0);
        CHECK(hpu_fence_signal_time(f, nullptr) == -EINVAL);
    }
    fx.m.complete_jobs();
    CHECK(hpu_fence_destroy(f) == 0);
    CHECK(hpu_queue_destroy(q) == 0);
    fx.check_clean();
}

TEST_CASE("a command buffer stays alive while jobs read it", "[libhpu][cmdlist]")
{
    Fixture fx;
    auto [q, cl] = fx.queue_and_nop();
    fx.m.auto_complete = false;
    REQUIRE(hpu_queue_submit(q, cl, nullptr, 0, nullptr) == 0);
    REQUIRE(hpu_queue_submit(q, cl, nullptr, 0, nullptr) == 0);
    const std::uint64_t cb_va = fx.m.jobs.at(0).req.cb_va;

    SECTION("destroy waits for the last submission, then unmaps")
    {
        bool mapped_during_wait = false;
        fx.m.on_wait = [&]() {
            mapped_during_wait = fx.m.vm.count(cb_va) == 1;
            fx.m.complete_jobs();
        };
        CHECK(hpu_cmdlist_destroy(cl) == 0);
        CHECK(mapped_during_wait);
        REQUIRE(fx.m.wait_deadlines.size() == 1);
        CHECK(fx.m.wait_deadlines[0] == INT64_MAX);
        CHECK(fx.m.request_calls[DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT] == 1);
        CHECK(fx.m.vm.empty());
    }
    SECTION("reset while busy retires the buffer; the next command gets a new one")
    {
        REQUIRE(hpu_cmdlist_reset(cl) == 0);
        CHECK(hpu_cmdlist_size(cl) == 0);
        CHECK(fx.m.vm.count(cb_va) == 1); // still mapped: jobs read it
        REQUIRE(hpu_cmd_write_value(cl, 0x1000, 5) == 0);
        CHECK(fx.m.vm.size() == 2);
        REQUIRE(hpu_queue_submit(q, cl, nullptr, 0, nullptr) == 0);
        CHECK(fx.m.jobs.at(2).req.cb_va != cb_va);
        CHECK(fx.m.cb(0) == spec_nop()); // the old job's bytes were not overwritten
        CHECK(fx.m.cb(2) == spec_write_value(5, 0x1000));
        // Once the jobs ended, a reset frees the retired buffer.
        fx.m.complete_jobs();
        REQUIRE(hpu_cmdlist_reset(cl) == 0);
        CHECK(fx.m.vm.size() == 1);
        CHECK(hpu_cmdlist_destroy(cl) == 0);
    }
    SECTION("growth while busy keeps the old buffer until the jobs end")
    {
        for (int i = 0; i < 600; ++i)
            REQUIRE(hpu_cmd_nop(cl) == 0);
        CHECK(fx.m.vm.size() == 2);
        CHECK(fx.m.vm.count(cb_va) == 1);
        fx.m.on_wait = [&]() { fx.m.complete_jobs(); };
        CHECK(hpu_cmdlist_destroy(cl) == 0);
    }
    CHECK(hpu_queue_destroy(q) == 0);
    fx.check_clean();
}

TEST_CASE("eager commands recycle their command lists", "[libhpu][eager]")
{
    Fixture fx;
    hpu_queue_t *q = nullptr;
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 2, &q) == 0);

    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_copy(q, 0x200000000ULL, 0x100000000ULL, 5 * kGiB, &f) == 0);
    CHECK(fx.m.cb(0) == cat({spec_lin_dma(0, 0x100000000ULL, 0x200000000ULL, 4 * kGiB),
                             spec_lin_dma(0, 0x100000000ULL + 4 * kGiB, 0x200000000ULL + 4 * kGiB, kGiB)}));
    CHECK(hpu_fence_wait(f, 0) == 0);
    CHECK(hpu_fence_destroy(f) == 0);
    REQUIRE(hpu_queue_memset(q, 0x200000000ULL, 0xffULL, 8, nullptr) == 0);
    CHECK(fx.m.cb(1) == spec_lin_dma(1, 0xff, 0x200000000ULL, 8));
    REQUIRE(hpu_queue_write_value(q, 0x200000008ULL, 77, nullptr) == 0);
    CHECK(fx.m.cb(2) == spec_write_value(77, 0x200000008ULL));
    CHECK(fx.m.request_calls[DRM_IOCTL_HPU_BO_CREATE] == 1); // one list, reused
    CHECK(fx.m.jobs.at(2).req.cb_va == fx.m.jobs.at(0).req.cb_va);
    CHECK(fx.m.jobs.at(2).req.cb_size == 16);

    SECTION("busy lists are not reused; at 64 in flight the oldest is waited for")
    {
        fx.m.auto_complete = false;
        const std::size_t polls = fx.m.wait_deadlines.size();
        for (int i = 0; i < 64; ++i)
            REQUIRE(hpu_queue_write_value(q, 0x200000000ULL, static_cast<std::uint32_t>(i), nullptr) == 0);
        // The first reuses the idle list, the other 63 each make a new one.
        CHECK(fx.m.request_calls[DRM_IOCTL_HPU_BO_CREATE] == 64);
        CHECK(fx.m.wait_deadlines.size() == polls + 64); // one poll of the front each time
        for (std::size_t i = polls; i < fx.m.wait_deadlines.size(); ++i)
            CHECK(fx.m.wait_deadlines[i] == 0);
        fx.m.on_wait = [&]() {
            if (fx.m.wait_deadlines.back() == INT64_MAX)
                fx.m.complete_jobs();
        };
        REQUIRE(hpu_queue_write_value(q, 0x200000000ULL, 64, nullptr) == 0);
        CHECK(fx.m.request_calls[DRM_IOCTL_HPU_BO_CREATE] == 64);
        CHECK(fx.m.wait_deadlines.back() == INT64_MAX);
    }
    SECTION("argument checks")
    {
        const int calls = fx.m.ioctl_calls;
        CHECK(hpu_queue_copy(q, 0x1000, 0x2000, 0, &f) == -EINVAL);
        CHECK(f == nullptr);
        CHECK(hpu_queue_copy(q, UINT64_MAX - 1, 0x2000, 8, &f) == -EINVAL);
        CHECK(hpu_queue_memset(q, 0x1000, 0, 0, &f) == -EINVAL);
        CHECK(hpu_queue_write_value(q, 0x1001, 0, &f) == -EINVAL);
        CHECK(hpu_queue_copy(nullptr, 0x1000, 0x2000, 8, &f) == -EINVAL);
        CHECK(hpu_queue_memset(nullptr, 0x1000, 0, 8, &f) == -EINVAL);
        CHECK(hpu_queue_write_value(nullptr, 0x1000, 0, &f) == -EINVAL);
        CHECK(fx.m.ioctl_calls == calls);
    }
    SECTION("a failed eager submission keeps the pool consistent")
    {
        fx.m.request_fail[DRM_IOCTL_HPU_SUBMIT] = -ENODEV;
        CHECK(hpu_queue_copy(q, 0x1000, 0x2000, 8, &f) == -ENODEV);
        CHECK(f == nullptr);
        fx.m.request_fail.clear();
        REQUIRE(hpu_queue_copy(q, 0x1000, 0x2000, 8, nullptr) == 0);
        CHECK(fx.m.request_calls[DRM_IOCTL_HPU_BO_CREATE] == 1);
    }
    fx.m.on_wait = [&]() { fx.m.complete_jobs(); };
    CHECK(hpu_queue_destroy(q) == 0);
    fx.check_clean();
}

// Runs a scenario that touches every kind of object with the k-th acquiring
// system call failing, for every k: whatever fails, every object the kernel
// handed out is released exactly once.
TEST_CASE("injected failures at every step leak nothing", "[libhpu][inject]")
{
    std::vector<std::uint8_t> user(8192);
    int total = 0;
    for (int k = 1;; ++k) {
        Fixture fx;
        fx.m.fail_at = k;
        fx.m.fail_errno = (k % 2 == 0) ? -ENOMEM : -EIO;
        hpu_buffer_t *dbuf = nullptr;
        hpu_buffer_t *hbuf = nullptr;
        hpu_buffer_t *ubuf = nullptr;
        hpu_buffer_t *ibuf = nullptr;
        hpu_queue_t *q = nullptr;
        hpu_cmdlist_t *cl = nullptr;
        hpu_fence_t *f1 = nullptr;
        hpu_fence_t *f2 = nullptr;
        hpu_fence_t *f3 = nullptr;
        int dmabuf = -1;
        int syncfile = -1;
        int failures = 0;
        auto step = [&](int r) {
            if (r < 0) {
                CHECK((r == fx.m.fail_errno || r == -EINVAL));
                ++failures;
            }
        };
        step(hpu_buffer_create(fx.dev, 2 * kMiB, HPU_MEM_DEVICE, &dbuf));
        step(hpu_buffer_create(fx.dev, 4096, HPU_MEM_HOST, &hbuf));
        step(hpu_buffer_from_user(fx.dev, user.data() + 10, 5000, 0, &ubuf)); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        if (dbuf != nullptr) {
            step(hpu_buffer_export_fd(dbuf, &dmabuf));
            if (dmabuf >= 0)
                step(hpu_buffer_import_fd(fx.dev, dmabuf, 2 * kMiB, &ibuf));
        }
        step(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &q));
        step(hpu_cmdlist_create(fx.dev, &cl));
        if (cl != nullptr) {
            step(hpu_cmd_copy(cl, 0x100000000ULL, 0x200000000ULL, 4096));
            for (int i = 0; i < 300; ++i) // grows once
                step(hpu_cmd_nop(cl));
        }
        if (q != nullptr && cl != nullptr && hpu_cmdlist_size(cl) > 0) {
            step(hpu_queue_submit(q, cl, nullptr, 0, &f1));
            if (f1 != nullptr) {
                step(hpu_fence_wait(f1, 1000));
                step(hpu_fence_export_fd(f1, &syncfile));
                if (syncfile >= 0)
                    step(hpu_fence_import_fd(fx.dev, syncfile, &f2));
                const hpu_fence_t *const w[] = {f1};
                step(hpu_queue_submit(q, cl, w, 1, nullptr));
            }
            step(hpu_cmdlist_reset(cl));
        }
        if (q != nullptr) {
            step(hpu_queue_copy(q, 0x100000000ULL, 0x200000000ULL, 64, &f3));
            step(hpu_queue_memset(q, 0x100000000ULL, 0, 64, nullptr));
        }
        // Tear down. Releases are never failed by the injection, but the
        // waits of a destroy may be: it reports that and frees all the same.
        auto down = [&](int r) { CHECK((r == 0 || r == fx.m.fail_errno)); };
        if (dmabuf >= 0)
            CHECK(fx.m.close(dmabuf) == 0);
        if (syncfile >= 0)
            CHECK(fx.m.close(syncfile) == 0);
        down(hpu_fence_destroy(f1));
        down(hpu_fence_destroy(f2));
        down(hpu_fence_destroy(f3));
        down(hpu_cmdlist_destroy(cl));
        down(hpu_queue_destroy(q));
        down(hpu_buffer_destroy(ibuf));
        down(hpu_buffer_destroy(ubuf));
        down(hpu_buffer_destroy(hbuf));
        down(hpu_buffer_destroy(dbuf));
        INFO("failing acquiring call " << k);
        fx.check_clean();
        if (failures == 0) {
            total = k - 1; // k went past the last acquiring call
            break;
        }
        REQUIRE(k < 1000);
    }
    CHECK(total > 30); // the scenario really made that many calls
}

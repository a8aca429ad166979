// SPDX-License-Identifier: MIT
// hpu_queue_copy_split() against the mock driver: which jobs reach which
// engine's queue in which order, what each copies, how the copy's fence
// reports a failed part, and when one engine does it all.
//
// Copyright (c) 2026 The hpu authors
#include <cerrno>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch_test_macros.hpp>

#include "fixture.h"
#include "hpu/hpu.h"
#include "mock_os.h"
#include "spec_bytes.h"

using hpu::test::Bytes;
using hpu::test::Fixture;
using hpu::test::MockOs;
using hpu::test::spec_lin_dma;
using hpu::test::spec_nop;

namespace {

constexpr std::uint64_t kMiB = 1ULL << 20;
constexpr std::uint64_t kSrc = 0x10000000000ULL;
constexpr std::uint64_t kDst = 0x20000000000ULL;

// The DMA engine of job j's queue.
std::uint32_t engine_of(const MockOs &m, const MockOs::Job &j)
{
    const auto &qe = m.queue_engines.at(j.req.queue_id);
    CHECK(qe.first == DRM_HPU_ENGINE_DMA);
    return qe.second;
}

// The handle of job j's binary out-fence (the caller's, point 0).
std::uint32_t fence_handle(const MockOs::Job &j)
{
    for (const auto &s : j.out) {
        if (s.point == 0)
            return s.handle;
    }
    FAIL("no binary out-fence");
    return 0;
}

std::set<std::uint32_t> in_handles(const MockOs::Job &j)
{
    std::set<std::uint32_t> s;
    for (const auto &i : j.in)
        s.insert(i.handle);
    return s;
}

// Closes the device (which destroys the helper queues), then checks the
// mock for leaks and misuse.
void close_and_check(Fixture &fx)
{
    CHECK(hpu_close(fx.dev) == 0);
    fx.dev = nullptr;
    CHECK(fx.m.queues.empty());
    fx.check_clean();
}

} // namespace

TEST_CASE("a split copy: a fork on the queue, parts on the next engines after it, its own part, a join",
          "[libhpu][split]")
{
    Fixture fx;
    hpu_queue_t *q = nullptr;
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 6, &q) == 0);
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_copy_split(q, kDst, kSrc, 64 * kMiB, 4, &f) == 0);
    REQUIRE(f != nullptr);

    const auto &jobs = fx.m.jobs;
    REQUIRE(jobs.size() == 6);
    // The fork: a NOP on the caller's queue.
    CHECK(engine_of(fx.m, jobs[0]) == 6);
    CHECK(jobs[0].cb == spec_nop());
    const std::uint32_t fork = fence_handle(jobs[0]);
    // Parts 1-3 on engines 7, 0 and 1, each after the fork.
    const std::uint32_t want[] = {7, 0, 1};
    std::set<std::uint32_t> parts;
    for (std::size_t i = 1; i <= 3; ++i) {
        INFO("part " << i);
        CHECK(engine_of(fx.m, jobs[i]) == want[i - 1]);
        CHECK(jobs[i].req.queue_id != jobs[0].req.queue_id);
        CHECK(jobs[i].cb == spec_lin_dma(0, kSrc + i * 16 * kMiB, kDst + i * 16 * kMiB, 16 * kMiB));
        CHECK(in_handles(jobs[i]) == std::set<std::uint32_t>{fork});
        parts.insert(fence_handle(jobs[i]));
    }
    // Part 0 on the caller's queue, waiting for nothing (the fork is ahead of it there).
    CHECK(jobs[4].req.queue_id == jobs[0].req.queue_id);
    CHECK(jobs[4].cb == spec_lin_dma(0, kSrc, kDst, 16 * kMiB));
    CHECK(jobs[4].in.empty());
    // The join: a NOP on the caller's queue after the three other parts.
    CHECK(jobs[5].req.queue_id == jobs[0].req.queue_id);
    CHECK(jobs[5].cb == spec_nop());
    CHECK(in_handles(jobs[5]) == parts);

    CHECK(hpu_fence_wait(f, 1000000000ULL) == 0);
    CHECK(hpu_fence_status(f) == 0);
    CHECK(hpu_fence_destroy(f) == 0);

    SECTION("a second copy reuses the helper queues")
    {
        const std::size_t queues = fx.m.queues.size();
        REQUIRE(hpu_queue_copy_split(q, kDst, kSrc, 64 * kMiB, 4, nullptr) == 0);
        CHECK(fx.m.queues.size() == queues);
        CHECK(fx.m.jobs.size() == 12);
    }
    CHECK(hpu_queue_destroy(q) == 0);
    close_and_check(fx);
}

TEST_CASE("a split copy: every engine by default, uneven sizes, the last part takes the rest", "[libhpu][split]")
{
    Fixture fx;
    hpu_queue_t *q = nullptr;
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &q) == 0);
    SECTION("0: all 8 engines for 64 MiB")
    {
        REQUIRE(hpu_queue_copy_split(q, kDst, kSrc, 64 * kMiB, 0, nullptr) == 0);
        REQUIRE(fx.m.jobs.size() == 10);
        std::set<std::uint32_t> engines;
        for (std::size_t i = 0; i < 8; ++i)
            engines.insert(engine_of(fx.m, fx.m.jobs[i == 0 ? 8 : i]));
        CHECK(engines.size() == 8);
    }
    SECTION("parts of at least 4 MiB: 12 MiB goes to 3 engines")
    {
        REQUIRE(hpu_queue_copy_split(q, kDst, kSrc, 12 * kMiB, 0, nullptr) == 0);
        CHECK(fx.m.jobs.size() == 5);
    }
    SECTION("10 MiB + 4 KiB on two engines: 64 KiB-aligned first part, the rest second")
    {
        const std::uint64_t size = 10 * kMiB + 4096;
        const std::uint64_t first = 5 * kMiB + 64 * 1024ULL;
        REQUIRE(hpu_queue_copy_split(q, kDst, kSrc, size, 2, nullptr) == 0);
        REQUIRE(fx.m.jobs.size() == 4);
        CHECK(fx.m.jobs[1].cb == spec_lin_dma(0, kSrc + first, kDst + first, size - first));
        CHECK(fx.m.jobs[2].cb == spec_lin_dma(0, kSrc, kDst, first));
    }
    CHECK(hpu_queue_destroy(q) == 0);
    close_and_check(fx);
}

TEST_CASE("a split copy takes one engine when it cannot be split, and checks its arguments", "[libhpu][split]")
{
    Fixture fx;
    hpu_queue_t *q = nullptr;
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 3, &q) == 0);
    const auto one_job = [&](std::uint64_t dst, std::uint64_t src, std::uint64_t size, std::uint32_t max) {
        fx.m.jobs.clear();
        REQUIRE(hpu_queue_copy_split(q, dst, src, size, max, nullptr) == 0);
        REQUIRE(fx.m.jobs.size() == 1);
        CHECK(fx.m.jobs[0].cb == spec_lin_dma(0, src, dst, size));
        CHECK(engine_of(fx.m, fx.m.jobs[0]) == 3);
    };
    SECTION("below HPU_COPY_SPLIT_MIN") { one_job(kDst, kSrc, HPU_COPY_SPLIT_MIN - 4096, 0); }
    SECTION("max_engines 1") { one_job(kDst, kSrc, 64 * kMiB, 1); }
    SECTION("overlapping ranges, either way")
    {
        one_job(kSrc + 4 * kMiB, kSrc, 64 * kMiB, 0);
        one_job(kSrc, kSrc + 4 * kMiB, 64 * kMiB, 0);
    }
    SECTION("bad arguments")
    {
        auto *f = reinterpret_cast<hpu_fence_t *>(8); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        CHECK(hpu_queue_copy_split(nullptr, kDst, kSrc, 64 * kMiB, 0, &f) == -EINVAL);
        CHECK(f == nullptr);
        CHECK(hpu_queue_copy_split(q, kDst, kSrc, 0, 0, nullptr) == -EINVAL);
        CHECK(hpu_queue_copy_split(q, 1ULL << 48, kSrc, 64 * kMiB, 0, nullptr) == -EINVAL);
        CHECK(hpu_queue_copy_split(q, kDst, (1ULL << 48) - kMiB, 64 * kMiB, 0, nullptr) == -EINVAL);
        hpu_queue_t *tpc = nullptr;
        REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_CLASS_TPC, 0, &tpc) == 0);
        CHECK(hpu_queue_copy_split(tpc, kDst, kSrc, 64 * kMiB, 0, nullptr) == -EINVAL);
        CHECK(hpu_queue_destroy(tpc) == 0);
        CHECK(fx.m.jobs.empty());
    }
    CHECK(hpu_queue_destroy(q) == 0);
    close_and_check(fx);
}

TEST_CASE("a split copy's fence waits for every part and has the error of a failed one", "[libhpu][split]")
{
    Fixture fx;
    fx.m.auto_complete = false;
    hpu_queue_t *q = nullptr;
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &q) == 0);
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_copy_split(q, kDst, kSrc, 32 * kMiB, 4, &f) == 0);
    REQUIRE(fx.m.jobs.size() == 6);
    const auto signal = [&](std::size_t i, int error) {
        fx.m.jobs.at(i).fence->signalled = true;
        fx.m.jobs.at(i).fence->error = error;
    };
    signal(0, 0); // the fork
    signal(4, 0); // q's own part
    signal(5, 0); // the join (the mock does not hold it back)
    signal(1, 0);
    signal(3, 0);
    CHECK(hpu_fence_status(f) == 1); // part 2 still runs
    CHECK(hpu_fence_wait(f, 0) == -ETIME);
    signal(2, -EFAULT);
    CHECK(hpu_fence_status(f) == -EFAULT);
    CHECK(hpu_fence_wait(f, 1000000000ULL) == -EFAULT);
    CHECK(hpu_fence_destroy(f) == 0);
    CHECK(hpu_queue_destroy(q) == 0);
    close_and_check(fx);
}

TEST_CASE("a split copy's fence fails when the caller's own part fails", "[libhpu][split]")
{
    Fixture fx;
    fx.m.auto_complete = false;
    hpu_queue_t *q = nullptr;
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &q) == 0);
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_copy_split(q, kDst, kSrc, 16 * kMiB, 2, &f) == 0);
    REQUIRE(fx.m.jobs.size() == 4);
    for (std::size_t i = 0; i < 4; ++i) {
        fx.m.jobs.at(i).fence->signalled = true;
        fx.m.jobs.at(i).fence->error = i == 2 ? -EFAULT : 0; // job 2: part 0, on q
    }
    CHECK(hpu_fence_wait(f, 1000000000ULL) == -EFAULT);
    CHECK(hpu_fence_destroy(f) == 0);
    CHECK(hpu_queue_destroy(q) == 0);
    close_and_check(fx);
}

TEST_CASE("two queues' split copies use helper queues of their own", "[libhpu][split]")
{
    Fixture fx;
    hpu_queue_t *q1 = nullptr;
    hpu_queue_t *q2 = nullptr;
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &q1) == 0);
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &q2) == 0);
    REQUIRE(hpu_queue_copy_split(q1, kDst, kSrc, 16 * kMiB, 2, nullptr) == 0);
    REQUIRE(hpu_queue_copy_split(q2, kDst, kSrc, 16 * kMiB, 2, nullptr) == 0);
    REQUIRE(fx.m.jobs.size() == 8);
    CHECK(engine_of(fx.m, fx.m.jobs[1]) == 1);
    CHECK(engine_of(fx.m, fx.m.jobs[5]) == 1);
    CHECK(fx.m.jobs[1].req.queue_id != fx.m.jobs[5].req.queue_id);
    const std::size_t before = fx.m.queues.size();
    CHECK(hpu_queue_destroy(q1) == 0); // and its helper
    CHECK(fx.m.queues.size() == before - 2);
    CHECK(hpu_queue_destroy(q2) == 0);
    close_and_check(fx);
}

TEST_CASE("a split copy: a part no helper queue takes is copied by the caller's queue", "[libhpu][split]")
{
    Fixture fx;
    hpu_queue_t *q = nullptr;
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_DMA, 0, &q) == 0);
    // The next QUEUE_CREATE (engine 1's helper) is refused.
    fx.m.request_fail[DRM_IOCTL_HPU_QUEUE_CREATE] = -ENOSPC;
    REQUIRE(hpu_queue_copy_split(q, kDst, kSrc, 16 * kMiB, 2, nullptr) == 0);
    fx.m.request_fail.clear();
    REQUIRE(fx.m.jobs.size() == 3); // fork, q's job with both parts, join
    CHECK(fx.m.jobs[1].cb == hpu::test::cat({spec_lin_dma(0, kSrc, kDst, 8 * kMiB),
                                             spec_lin_dma(0, kSrc + 8 * kMiB, kDst + 8 * kMiB, 8 * kMiB)}));
    CHECK(fx.m.jobs[2].in.empty());
    CHECK(std::string(hpu_last_error()).empty()); // the refusal is not the caller's error
    CHECK(hpu_queue_destroy(q) == 0);
    close_and_check(fx);
}

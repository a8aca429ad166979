// SPDX-License-Identifier: MIT
// Per-job timeouts (issue 4), raw ioctls:
//  - a job with timeout_ms 100 that never finishes (blocked in WAIT on a
//    sync object nobody sets) fails -ETIMEDOUT in roughly that time, with a
//    TIMEOUT error event, and its queue runs the next job;
//  - a thousand such jobs (short timeouts, on one queue per stream of every
//    DMA engine in parallel) all fail -ETIMEDOUT and leak nothing: device
//    HBM use, the context's host memory, open files, the driver's slab
//    objects and drm_sched fences are back where they were, and INFO ERRORS
//    counted exactly 1000 more timeouts.
//
// Copyright (c) 2026 The hpu authors
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch_test_macros.hpp>

#include "err_util.h"
#include "vm_util.h"

using namespace vmt;

namespace {

constexpr std::uint32_t kNeverSob = 31; // no test sets it

// The slab caches whose objects the driver creates per job or file.
const std::vector<std::string> kSlabs = {"hpu", "drm_sched_fence", "dma_fence", "sync_file"};

std::string slab_str(const std::map<std::string, long> &m)
{
    std::string s;
    for (const auto &[k, v] : m)
        s += k + "=" + std::to_string(v) + " ";
    return s.empty() ? "(no driver slab caches visible)" : s;
}

} // namespace

TEST_CASE("a job with timeout_ms 100 that never finishes fails -ETIMEDOUT in about 100 ms", "[timeouts]")
{
    const std::string path = node(0);
    const auto e0 = errors_now(path);
    Ctx c(path);
    REQUIRE(enable_events(c.fd()) == 0);
    std::uint32_t q = 0;
    REQUIRE(c.queue_create(0, q) == 0);
    const Cb stuck = Cb().wait(kNeverSob, 1);
    const std::uint64_t va = c.put_cb(stuck);
    std::uint32_t so = 0;
    REQUIRE(syncobj_create(c.fd(), so) == 0);
    const std::uint64_t t0 = now_ns();
    REQUIRE(c.submit(q, va, stuck.bytes(), so, {}, 100) == 0);
    REQUIRE(syncobj_wait(c.fd(), so, 10ULL * 1000000000ULL) == 0);
    const double ms = ms_since(t0);
    CHECK(syncobj_status(c.fd(), so) == -ETIMEDOUT);
    INFO("timed out after " << ms << " ms");
    CHECK(ms >= 95);
    CHECK(ms < 100 + 1500); // TCG guest: scheduling slack
    std::vector<Event> ev;
    CHECK(read_events_until(c.fd(), ev, 2000, [](const Event &e) {
        return e.type == DRM_HPU_EVENT_ERROR && e.err.kind == DRM_HPU_ERROR_TIMEOUT;
    }));
    INFO(describe(ev));
    for (const auto &e : ev) {
        if (e.type == DRM_HPU_EVENT_ERROR && e.err.kind == DRM_HPU_ERROR_TIMEOUT) {
            CHECK(e.err.queue_id == q);
            CHECK(e.err.errno_value == ETIMEDOUT);
            CHECK(e.err.engine == 0);
        }
    }
    // A timeout stops the job, not the queue: the next job runs.
    const auto buf = c.host_buf(4 * KiB);
    CHECK(c.run(q, Cb().write_value(buf.va, 5)) == 1);
    CHECK(buf.ptr[0] == 5);
    // A timeout over the limit is refused.
    CHECK(c.submit(q, va, stuck.bytes(), 0, {}, 3600001) == EINVAL);
    syncobj_destroy(c.fd(), so);
    const auto e1 = errors_now(path);
    CHECK(e1.job_timeouts == e0.job_timeouts + 1);
    CHECK(e1.soft_resets == e0.soft_resets);
    CHECK(e1.hard_resets == e0.hard_resets);
    report_recovery("job timeout 100 ms", ms, "fence -ETIMEDOUT, next job on the queue ok");
}

TEST_CASE("a thousand timeouts in a row leak nothing", "[timeouts]")
{
    const std::string path = node(0);
    const char *env_n = std::getenv("HPU_TIMEOUT_JOBS");
    const int total = env_n != nullptr ? std::atoi(env_n) : 1000;
    constexpr std::uint32_t kTimeoutMs = 20;
    const auto dev = device_now(path);
    const std::uint32_t nq = std::min<std::uint32_t>(dev.num_dma * 4U, 32U);

    auto round = [&](int jobs, double *took_ms, int *bad, int *worst_ms) {
        Ctx c(path);
        std::vector<std::uint32_t> qs(nq);
        for (std::uint32_t i = 0; i < nq; ++i)
            REQUIRE(c.queue_create(i % dev.num_dma, qs[i]) == 0);
        const Cb stuck = Cb().wait(kNeverSob, 1);
        const std::uint64_t va = c.put_cb(stuck);
        std::atomic<int> next{0};
        std::atomic<int> wrong{0};
        std::atomic<int> worst{0};
        const std::uint64_t t0 = now_ns();
        std::vector<std::thread> th;
        for (std::uint32_t i = 0; i < nq; ++i) {
            th.emplace_back([&, i] {
                std::uint32_t so = 0;
                if (syncobj_create(c.fd(), so) != 0) {
                    ++wrong;
                    return;
                }
                while (next.fetch_add(1) < jobs) {
                    const std::uint64_t s = now_ns();
                    int st = 1000 + c.submit(qs[i], va, stuck.bytes(), so, {}, kTimeoutMs);
                    if (st == 1000) {
                        const int w = syncobj_wait(c.fd(), so, 10ULL * 1000000000ULL);
                        st = w == 0 ? syncobj_status(c.fd(), so) : 2000 + w;
                    }
                    const int ms = static_cast<int>(ms_since(s));
                    int cur = worst.load();
                    while (ms > cur && !worst.compare_exchange_weak(cur, ms)) {
                    }
                    if (st != -ETIMEDOUT) {
                        if (wrong.fetch_add(1) < 5)
                            std::fprintf(stderr, "timeout job: status %d after %d ms\n", st, ms);
                    }
                }
                syncobj_destroy(c.fd(), so);
            });
        }
        for (auto &t : th)
            t.join();
        *took_ms = ms_since(t0);
        *bad = wrong.load();
        *worst_ms = worst.load();
        // The queues still run good jobs.
        const auto buf = c.host_buf(4 * KiB);
        for (std::uint32_t i = 0; i < nq; ++i)
            CHECK(c.run(qs[i], Cb().write_value(buf.va + 4ULL * i, i + 1)) == 1);
    };

    // Warm up (caches, per-CPU slabs), then take the baseline.
    double ms = 0;
    int bad = 0;
    int worst = 0;
    round(static_cast<int>(nq), &ms, &bad, &worst);
    REQUIRE(bad == 0);
    ::usleep(300000);
    const auto e0 = errors_now(path);
    const auto m0 = memory_now(path);
    const auto slab0 = slab_objects(kSlabs);
    const int fds0 = open_fds();

    round(total, &ms, &bad, &worst);
    INFO(total << " timeouts on " << nq << " queues took " << ms << " ms (slowest job " << worst << " ms)");
    std::printf("%d timeouts of %u ms on %u queues took %.0f ms (slowest job %d ms)\n", total, kTimeoutMs, nq, ms,
                worst);
    CHECK(bad == 0);

    const auto e1 = errors_now(path);
    CHECK(e1.job_timeouts == e0.job_timeouts + static_cast<std::uint64_t>(total));
    // A timeout stops its own stream: no reset of the device (a soft reset
    // would abort every other context's jobs).
    CHECK(e1.soft_resets == e0.soft_resets);
    CHECK(e1.hard_resets == e0.hard_resets);
    CHECK(e1.reset_generation == e0.reset_generation);
    CHECK(wait_hbm_used(path, m0.hbm_used) == m0.hbm_used);
    CHECK(open_fds() == fds0);
    // SLUB's counts of active objects move by a slab's worth without any
    // leak; a leak of one object per job would show 1000.
    const auto slab1 = slab_settled(kSlabs, slab0, 128);
    INFO("slab before: " << slab_str(slab0) << "after: " << slab_str(slab1));
    std::printf("slab before: %s\nslab after:  %s\n", slab_str(slab0).c_str(), slab_str(slab1).c_str());
    for (const auto &[k, v] : slab1) {
        INFO(k);
        CHECK(v <= (slab0.count(k) != 0U ? slab0.at(k) : 0) + 128);
    }
    report_recovery(std::to_string(total) + " job timeouts of " + std::to_string(kTimeoutMs) + " ms", ms,
                    std::to_string(nq) + " queues in parallel, slowest job " + std::to_string(worst) +
                        " ms, soft resets +" + std::to_string(e1.soft_resets - e0.soft_resets));
}

// SPDX-License-Identifier: MIT
// Process death and hard reset with many users (issue 4), raw ioctls:
//  [recovery]    kill -9 of a process with jobs blocked in WAIT and long
//                copies in flight: it dies promptly, its HBM is freed (INFO
//                MEMORY back to the baseline), and a new process that gets
//                its ASID reads zeros from that memory and runs correct jobs
//                on the same engines;
//  [hard-reset]  a hard reset (sysfs reset attribute) while ten processes
//                hold HBM and host buffers and have queued work: each sees
//                its blocked job fail (-ECANCELED or -ENODEV), the hard
//                RESET event, -ENODEV on its old file, reopens and runs a
//                job with correct data; nothing leaked after they exit.
//
// Copyright (c) 2026 The hpu authors
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "err_util.h"
#include "vm_util.h"

using namespace vmt;

namespace {

constexpr std::uint32_t kNeverSob = 31;
constexpr std::uint64_t kVictimHbm = 64 * MiB;

// Copies host -> HBM -> host through a fresh context and checks the bytes.
bool roundtrip_ok(Ctx &c, std::uint32_t q, std::uint64_t seed, std::uint64_t size = 1 * MiB)
{
    const auto src = c.host_buf(size);
    const auto dst = c.host_buf(size);
    const std::uint64_t hbm = c.hbm_buf(kHbmPage);
    fill_words(reinterpret_cast<std::uint64_t *>(src.ptr), size / 8, seed); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    std::memset(dst.ptr, 0, size);
    if (c.run(q, Cb().lin_dma(src.va, hbm, size).lin_dma(hbm, dst.va, size)) != 1)
        return false;
    return check_words(reinterpret_cast<const std::uint64_t *>(dst.ptr), size / 8, seed) == size / 8; // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
}

// The victim of kill -9: fills 64 MiB of HBM with 0xAB, leaves a job blocked
// in WAIT on engine 0 (with jobs queued behind it) and a long HBM -> HBM
// copy running on engine 1, reports its ASID and sleeps.
[[noreturn]] void victim(const std::string &path, int up)
{
    try {
        Ctx c(path);
        std::uint32_t q0 = 0;
        std::uint32_t q1 = 0;
        if (c.queue_create(0, q0) != 0 || c.queue_create(1, q1) != 0)
            ::_exit(1);
        std::uint32_t h = 0;
        if (c.bo_create(kVictimHbm, DRM_HPU_BO_HBM, h) != 0)
            ::_exit(2);
        std::uint64_t va = 0;
        if (c.map(h, 0, kVictimHbm, va) != 0)
            ::_exit(3);
        if (c.run(q1, Cb().memset(0xababababababababULL, va, kVictimHbm)) != 1)
            ::_exit(4);
        const Cb stuck = Cb().wait(kNeverSob, 1).memset(0, va, kVictimHbm);
        const std::uint64_t sva = c.put_cb(stuck);
        for (int i = 0; i < 4; ++i) {
            if (c.submit(q0, sva, stuck.bytes(), 0, {}, 60000) != 0)
                ::_exit(5);
        }
        Cb copy;
        for (int i = 0; i < 64; ++i)
            copy.lin_dma(va, va + kVictimHbm / 2, kVictimHbm / 2).lin_dma(va + kVictimHbm / 2, va, kVictimHbm / 2);
        const std::uint64_t cva = c.put_cb(copy);
        for (int i = 0; i < 4; ++i) {
            if (c.submit(q1, cva, copy.bytes(), 0, {}, 60000) != 0)
                ::_exit(6);
        }
        const std::uint32_t asid = c.mem().asid;
        std::ignore = ::write(up, &asid, sizeof(asid));
        for (;;)
            ::pause();
    } catch (...) {
        ::_exit(7);
    }
}

// The successor: opens contexts until it gets `asid` (at most 63 tries),
// checks that fresh HBM reads as zeros and that jobs on engines 0 and 1 run
// correctly. Exit status bits: 1 setup, 2 ASID never reused, 4 nonzero HBM,
// 8 job failed or wrong data, 0x10 exception.
[[noreturn]] void successor(const std::string &path, std::uint32_t asid)
{
    unsigned fails = 0;
    try {
        std::vector<std::unique_ptr<Ctx>> held;
        Ctx *mine = nullptr;
        for (int i = 0; i < 63 && mine == nullptr; ++i) {
            held.push_back(std::make_unique<Ctx>(path));
            if (held.back()->mem().asid == asid)
                mine = held.back().get();
        }
        if (mine == nullptr) {
            fails |= 2U;
            mine = held.front().get();
        }
        while (held.size() > 1 && held.back().get() != mine)
            held.pop_back();
        Ctx &c = *mine;
        std::uint32_t q0 = 0;
        std::uint32_t q1 = 0;
        if (c.queue_create(0, q0) != 0 || c.queue_create(1, q1) != 0)
            ::_exit(1);
        std::uint32_t h = 0;
        std::uint64_t va = 0;
        if (c.bo_create(kVictimHbm, DRM_HPU_BO_HBM, h) != 0 || c.map(h, 0, kVictimHbm, va) != 0)
            ::_exit(1);
        const auto out = c.host_buf(kVictimHbm / kHbmPage * 2 * 4 * KiB);
        Cb rd;
        for (std::uint64_t p = 0; p < kVictimHbm / kHbmPage; ++p) {
            rd.lin_dma(va + p * kHbmPage, out.va + p * 8 * KiB, 4 * KiB)
                .lin_dma(va + (p + 1) * kHbmPage - 4 * KiB, out.va + p * 8 * KiB + 4 * KiB, 4 * KiB);
        }
        std::memset(out.ptr, 0xff, kVictimHbm / kHbmPage * 8 * KiB);
        if (c.run(q0, rd) != 1)
            fails |= 8U;
        for (std::uint64_t i = 0; i < kVictimHbm / kHbmPage * 8 * KiB; ++i) {
            if (out.ptr[i] != 0) { // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
                fails |= 4U;
                break;
            }
        }
        for (int i = 0; i < 4; ++i) {
            if (!roundtrip_ok(c, i % 2 == 0 ? q0 : q1, 500 + static_cast<std::uint64_t>(i)))
                fails |= 8U;
        }
    } catch (...) {
        fails |= 0x10U;
    }
    ::_exit(static_cast<int>(fails));
}

} // namespace

TEST_CASE("kill -9 mid-job: dies promptly, memory freed, its ASID reused safely", "[recovery]")
{
    const std::string path = node(0);
    const std::uint64_t used0 = memory_now(path).hbm_used;
    const auto e0 = errors_now(path);
    int pfd[2] = {-1, -1};
    REQUIRE(::pipe(pfd) == 0); // NOLINT(cppcoreguidelines-pro-bounds-array-to-pointer-decay)
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(pfd[0]);
        victim(path, pfd[1]);
    }
    ::close(pfd[1]);
    std::uint32_t asid = 0;
    const bool ok = ::read(pfd[0], &asid, sizeof(asid)) == sizeof(asid);
    ::close(pfd[0]);
    if (!ok) {
        int st = 0;
        ::waitpid(pid, &st, 0);
        FAIL("victim setup failed, exit " << WEXITSTATUS(st));
    }
    CHECK(memory_now(path).hbm_used >= used0 + kVictimHbm);
    ::usleep(200000); // the copies are running, the WAIT jobs blocked
    const std::uint64_t t0 = now_ns();
    REQUIRE(::kill(pid, SIGKILL) == 0);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    const double die_ms = ms_since(t0);
    CHECK(WIFSIGNALED(status));
    INFO("the killed process took " << die_ms << " ms to die");
    CHECK(die_ms < 3000);
    const std::uint64_t used = wait_hbm_used(path, used0, 10000);
    const double freed_ms = ms_since(t0);
    CHECK(used == used0);

    const pid_t s = ::fork();
    REQUIRE(s >= 0);
    if (s == 0)
        successor(path, asid);
    REQUIRE(::waitpid(s, &status, 0) == s);
    REQUIRE(WIFEXITED(status));
    INFO("successor failures 0x" << std::hex << WEXITSTATUS(status)
                                 << " (1 setup, 2 ASID never reused, 4 HBM not zero, 8 job failed, 0x10 exception)");
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(wait_hbm_used(path, used0) == used0);
    const auto e1 = errors_now(path);
    CHECK(e1.hard_resets == e0.hard_resets);
    CHECK(e1.reset_generation == e0.reset_generation);
    report_recovery("kill -9 mid-job", freed_ms,
                    "process gone after " + std::to_string(static_cast<long>(die_ms)) + " ms, its 64 MiB freed; soft resets +" +
                        std::to_string(e1.soft_resets - e0.soft_resets) + ", job timeouts +" +
                        std::to_string(e1.job_timeouts - e0.job_timeouts));
}

namespace {

// Exit status bits of a child in the ten-process hard reset.
enum : unsigned {
    TF_SETUP = 1U << 0U,
    TF_JOB_STATUS = 1U << 1U,  // blocked job neither -ECANCELED nor -ENODEV
    TF_NO_EVENT = 1U << 2U,    // no hard RESET event on the old file
    TF_OLD_FD = 1U << 3U,      // an ioctl on the old file did not fail ENODEV
    TF_REOPEN = 1U << 4U,      // a job after reopening failed or had wrong data
    TF_EXCEPTION = 1U << 5U,
    TF_GENERATION = 1U << 6U,  // reset event's generation not the parent's + 1
};

[[noreturn]] void holder(const std::string &path, int idx, std::uint32_t engines, std::uint64_t gen0, int up)
{
    unsigned f = 0;
    try {
        auto old = std::make_unique<Ctx>(path);
        if (enable_events(old->fd()) != 0)
            ::_exit(TF_SETUP);
        std::uint32_t q = 0;
        if (old->queue_create(static_cast<std::uint32_t>(idx) % engines, q) != 0)
            ::_exit(TF_SETUP);
        const auto host = old->host_buf(1 * MiB);
        std::memset(host.ptr, idx, 1 * MiB);
        const std::uint64_t hbm = old->hbm_buf(4 * MiB);
        if (old->run(q, Cb().lin_dma(host.va, hbm, 1 * MiB)) != 1)
            ::_exit(TF_SETUP);
        std::uint32_t so = 0;
        if (syncobj_create(old->fd(), so) != 0)
            ::_exit(TF_SETUP);
        const Cb stuck = Cb().wait(kNeverSob, 1).lin_dma(hbm, host.va, 1 * MiB);
        const std::uint64_t sva = old->put_cb(stuck);
        if (old->submit(q, sva, stuck.bytes(), so, {}, 60000) != 0)
            ::_exit(TF_SETUP);
        const Cb more = Cb().lin_dma(host.va, hbm + 2 * MiB, 1 * MiB);
        const std::uint64_t mva = old->put_cb(more);
        (void)old->submit(q, mva, more.bytes(), 0, {}, 60000);
        const char r = 'r';
        std::ignore = ::write(up, &r, 1);
        ::close(up);

        if (syncobj_wait(old->fd(), so, 20ULL * 1000000000ULL) != 0)
            f |= TF_JOB_STATUS;
        const int st = syncobj_status(old->fd(), so);
        if (st != -ECANCELED && st != -ENODEV && st != 1000 + ENODEV)
            f |= TF_JOB_STATUS;
        std::vector<Event> ev;
        const bool got = read_events_until(old->fd(), ev, 10000, [](const Event &e) {
            return e.type == DRM_HPU_EVENT_RESET && e.rst.hard == 1;
        });
        if (!got)
            f |= TF_NO_EVENT;
        for (const auto &e : ev) {
            if (e.type == DRM_HPU_EVENT_RESET && e.rst.hard == 1 && e.rst.generation != gen0 + 1)
                f |= TF_GENERATION;
        }
        drm_hpu_info_errors er{};
        std::uint32_t h = 0;
        if (info_errors(old->fd(), er) != ENODEV || old->bo_create(kHbmPage, DRM_HPU_BO_HBM, h) != ENODEV)
            f |= TF_OLD_FD;
        old.reset();
        Ctx fresh(path);
        std::uint32_t fq = 0;
        if (fresh.queue_create(static_cast<std::uint32_t>(idx) % engines, fq) != 0 ||
            !roundtrip_ok(fresh, fq, 7000 + static_cast<std::uint64_t>(idx)))
            f |= TF_REOPEN;
    } catch (...) {
        f |= TF_EXCEPTION;
    }
    ::_exit(static_cast<int>(f));
}

} // namespace

TEST_CASE("hard reset while ten processes hold buffers and queued work", "[hard-reset]")
{
    const std::string path = node(0);
    const std::string attr = reset_attr(path);
    const auto e0 = errors_now(path);
    const std::uint64_t used0 = memory_now(path).hbm_used;
    const std::vector<std::string> slabs = {"hpu", "drm_sched_fence", "dma_fence", "sync_file"};
    const auto slab0 = slab_objects(slabs);
    const std::uint32_t engines = device_now(path).num_dma;
    constexpr int kKids = 10;
    std::vector<pid_t> kids;
    int pfd[2] = {-1, -1};
    REQUIRE(::pipe(pfd) == 0); // NOLINT(cppcoreguidelines-pro-bounds-array-to-pointer-decay)
    for (int i = 0; i < kKids; ++i) {
        const pid_t p = ::fork();
        REQUIRE(p >= 0);
        if (p == 0) {
            ::close(pfd[0]);
            holder(path, i, engines, e0.reset_generation, pfd[1]);
        }
        kids.push_back(p);
    }
    ::close(pfd[1]);
    int ready = 0;
    char c = 0;
    while (ready < kKids && ::read(pfd[0], &c, 1) == 1)
        ++ready;
    ::close(pfd[0]);
    CHECK(ready == kKids);
    CHECK(memory_now(path).hbm_used >= used0 + static_cast<std::uint64_t>(kKids) * 4 * MiB);

    const std::uint64_t t0 = now_ns();
    const int we = write_text(attr, "hard");
    const double write_ms = ms_since(t0);
    INFO("write 'hard' to " << attr << ": " << std::strerror(we));
    CHECK(we == 0);
    int clean = 0;
    for (int i = 0; i < kKids; ++i) {
        int status = 0;
        REQUIRE(::waitpid(kids[static_cast<std::size_t>(i)], &status, 0) == kids[static_cast<std::size_t>(i)]);
        INFO("child " << i << " failures 0x" << std::hex << (WIFEXITED(status) ? WEXITSTATUS(status) : 0xfff)
                      << " (1 setup, 2 job status, 4 no reset event, 8 old file not ENODEV, 0x10 reopen job,"
                         " 0x20 exception, 0x40 generation)");
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
        clean += WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 1 : 0;
    }
    const double all_ms = ms_since(t0);
    const auto e1 = errors_now(path);
    CHECK(e1.reset_generation == e0.reset_generation + 1);
    CHECK(e1.hard_resets == e0.hard_resets + 1);
    CHECK(wait_hbm_used(path, used0) == used0);
    const auto slab1 = slab_settled(slabs, slab0, 64);
    for (const auto &[k, v] : slab1) {
        INFO(k << ": " << (slab0.count(k) != 0U ? slab0.at(k) : 0) << " -> " << v);
        CHECK(v <= (slab0.count(k) != 0U ? slab0.at(k) : 0) + 64);
    }
    report_recovery("operator hard reset with 10 processes", all_ms,
                    "sysfs write returned after " + std::to_string(static_cast<long>(write_ms)) + " ms; " +
                        std::to_string(clean) + "/10 children saw the reset, reopened and ran a correct job");
}

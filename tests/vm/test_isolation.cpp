// SPDX-License-Identifier: MIT
// Isolation between contexts (open files) and processes:
//  - a second process aims DMA jobs at a device address only the first has
//    mapped: its own jobs fail with -EFAULT, reported to it alone, while the
//    first process's jobs, running at the same time, complete with correct
//    data and its memory is untouched;
//  - the same device address maps to different memory in each context;
//  - HBM freed by one context reads back as zeros to the next.
//
// Copyright (c) 2026 The hpu authors
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "err_util.h"
#include "vm_util.h"

using namespace vmt;

namespace {

// The child's checks, as bits of its exit status (0: all good).
enum ChildFail : unsigned {
    CF_SETUP = 1U << 0U,
    CF_READ_NOT_EFAULT = 1U << 1U,
    CF_WRITE_NOT_EFAULT = 1U << 2U,
    CF_NOP_FAILED = 1U << 3U,
    CF_OWN_DATA_WRONG = 1U << 4U,
    CF_CAUGHT = 1U << 5U,
};

// Runs in the forked child: opens its own context (a new ASID) and aims at
// `victim_va`, which only the parent has mapped. Never returns.
[[noreturn]] void child_attack(const std::string &path, std::uint64_t victim_va, int ready_fd)
{
    unsigned fails = 0;
    try {
        Ctx c(path);
        std::uint32_t q = 0;
        if (c.queue_create(1, q) != 0)
            ::_exit(CF_SETUP);
        const auto out = c.host_buf(64 * KiB);
        std::memset(out.ptr, 0x5a, 64 * KiB);
        const char go = 'g';
        std::ignore = ::write(ready_fd, &go, 1);
        for (int round = 0; round < 8; ++round) {
            if (c.run(q, Cb().lin_dma(victim_va, out.va, 64 * KiB)) != -EFAULT)
                fails |= CF_READ_NOT_EFAULT;
            if (c.run(q, Cb().memset(0xdeadbeefdeadbeefULL, victim_va, 64 * KiB)) != -EFAULT)
                fails |= CF_WRITE_NOT_EFAULT;
            if (c.run(q, Cb().nop()) != 1)
                fails |= CF_NOP_FAILED;
        }
        for (std::size_t i = 0; i < 64 * KiB; ++i) {
            if (out.ptr[i] != 0x5a) { // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
                fails |= CF_OWN_DATA_WRONG; // the parent's data leaked in
                break;
            }
        }
        // The same address mapped in this context reaches this context's memory.
        std::uint32_t h = 0;
        std::uint64_t va = victim_va;
        if (c.bo_create(kHbmPage, DRM_HPU_BO_HBM, h) != 0 || c.map(h, 0, kHbmPage, va, DRM_HPU_VM_FIXED) != 0)
            ::_exit(static_cast<int>(fails | CF_SETUP));
        Cb cb;
        cb.memset(0x1111111111111111ULL, victim_va, 4 * KiB).lin_dma(victim_va, out.va, 4 * KiB);
        if (c.run(q, cb) != 1 || out.ptr[0] != 0x11 || out.ptr[4095] != 0x11) // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
            fails |= CF_OWN_DATA_WRONG;
    } catch (...) {
        fails |= CF_CAUGHT;
    }
    ::_exit(static_cast<int>(fails));
}

} // namespace

TEST_CASE("a second process faulting on the first's address is isolated", "[isolation]")
{
    const std::string path = node();
    Ctx a(path);
    std::uint32_t qa = 0;
    REQUIRE(a.queue_create(0, qa) == 0);

    // The victim: 4 MiB of HBM at a fixed address, filled with a pattern.
    constexpr std::uint64_t kSize = 4 * MiB;
    std::uint32_t hv = 0;
    REQUIRE(a.bo_create(kSize, DRM_HPU_BO_HBM, hv) == 0);
    std::uint64_t victim = a.mem().va_start + 256 * MiB;
    REQUIRE(a.map(hv, 0, kSize, victim, DRM_HPU_VM_FIXED) == 0);
    const auto src = a.host_buf(kSize);
    const auto dst = a.host_buf(kSize);
    fill_words(reinterpret_cast<std::uint64_t *>(src.ptr), kSize / 8, 42); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    REQUIRE(a.run(qa, Cb().lin_dma(src.va, victim, kSize)) == 1);

    int pfd[2] = {-1, -1};
    REQUIRE(::pipe(pfd) == 0); // NOLINT(cppcoreguidelines-pro-bounds-array-to-pointer-decay)
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(pfd[0]);
        child_attack(path, victim, pfd[1]);
    }
    ::close(pfd[1]);
    char go = 0;
    CHECK(::read(pfd[0], &go, 1) == 1);
    ::close(pfd[0]);

    // While the child faults, this context keeps copying and checking.
    int good_jobs = 0;
    for (int round = 0; round < 8; ++round) {
        std::memset(dst.ptr, 0, kSize);
        const std::uint64_t off = static_cast<std::uint64_t>(round) * 64 * KiB;
        Cb cb;
        cb.lin_dma(victim + off, dst.va, kSize - off);
        const int st = a.run(qa, cb);
        CHECK(st == 1);
        const auto *got = reinterpret_cast<const std::uint64_t *>(dst.ptr); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        const std::uint64_t n = (kSize - off) / 8;
        const std::uint64_t bad = check_words(got, n, 42, off / 8);
        INFO("round " << round << ": first wrong word " << bad << " of " << n);
        CHECK(bad == n);
        if (st == 1 && bad == n)
            ++good_jobs;
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    const int cf = WEXITSTATUS(status);
    INFO("child failures 0x" << std::hex << cf
                             << " (1 setup, 2 read not EFAULT, 4 write not EFAULT, 8 NOP failed,"
                                " 0x10 own data wrong, 0x20 exception)");
    CHECK(cf == 0);
    CHECK(good_jobs == 8);

    // The child's memset never reached the victim.
    std::memset(dst.ptr, 0, kSize);
    REQUIRE(a.run(qa, Cb().lin_dma(victim, dst.va, kSize)) == 1);
    CHECK(check_words(reinterpret_cast<const std::uint64_t *>(dst.ptr), kSize / 8, 42) == kSize / 8); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
}

TEST_CASE("a fault in one context does not disturb another context of the same process", "[isolation]")
{
    const std::string path = node();
    Ctx a(path);
    Ctx b(path);
    REQUIRE(a.mem().asid != b.mem().asid);
    std::uint32_t qa = 0;
    std::uint32_t qb = 0;
    REQUIRE(a.queue_create(2, qa) == 0);
    REQUIRE(b.queue_create(2, qb) == 0); // the same engine
    // A host buffer a maps at a fixed address b never uses.
    const auto buf = a.host_buf(kHostPage);
    std::uint64_t only_a = a.mem().va_start + 1 * GiB;
    REQUIRE(a.map(buf.handle, 0, kHostPage, only_a, DRM_HPU_VM_FIXED) == 0);
    std::memset(buf.ptr, 0, 8);
    CHECK(b.run(qb, Cb().write_value(only_a, 99)) == -EFAULT);
    CHECK(b.run(qb, Cb().write_value(only_a + 2 * MiB, 99)) == -EFAULT);
    CHECK(a.run(qa, Cb().write_value(only_a + 4, 7)) == 1);
    std::uint32_t v[2] = {1, 1};
    std::memcpy(&v, buf.ptr, 8); // NOLINT(bugprone-sizeof-expression)
    CHECK(v[0] == 0); // b's write never landed
    CHECK(v[1] == 7);
}

TEST_CASE("HBM freed by one context reads back as zeros to the next", "[isolation]")
{
    const std::string path = node();
    std::uint64_t total = 0;
    // Context A takes all free HBM, fills it with 0xA5 and goes away.
    {
        Ctx a(path);
        std::uint32_t q = 0;
        REQUIRE(a.queue_create(3, q) == 0);
        // One memset job per buffer (each well inside the job timeout).
        Cb small;
        for (const std::uint64_t chunk : {256 * MiB, kHbmPage}) {
            std::uint32_t h = 0;
            while (a.bo_create(chunk, DRM_HPU_BO_HBM, h) == 0) {
                std::uint64_t va = 0;
                REQUIRE(a.map(h, 0, chunk, va) == 0);
                if (chunk == kHbmPage) {
                    small.memset(0xa5a5a5a5a5a5a5a5ULL, va, chunk);
                } else {
                    INFO("memset of 256 MiB at 0x" << std::hex << va);
                    REQUIRE(a.run(q, Cb().memset(0xa5a5a5a5a5a5a5a5ULL, va, chunk)) == 1);
                }
                total += chunk;
            }
        }
        INFO("context A took " << (total >> 20U) << " MiB");
        REQUIRE(total >= 256 * MiB);
        if (!small.words().empty())
            REQUIRE(a.run(q, small) == 1);
    }
    // Context B takes all free HBM too, so it gets A's pages, and samples
    // the first, last and a middle 4 KiB of every 2 MiB.
    Ctx b(path);
    std::uint32_t q = 0;
    REQUIRE(b.queue_create(4, q) == 0);
    std::vector<std::uint64_t> pages;
    for (const std::uint64_t chunk : {256 * MiB, kHbmPage}) {
        std::uint32_t h = 0;
        while (b.bo_create(chunk, DRM_HPU_BO_HBM, h) == 0) {
            std::uint64_t va = 0;
            REQUIRE(b.map(h, 0, chunk, va) == 0);
            for (std::uint64_t o = 0; o < chunk; o += kHbmPage)
                pages.push_back(va + o);
        }
    }
    CHECK(pages.size() * kHbmPage >= total);
    constexpr std::uint64_t kSample = 4 * KiB;
    const std::size_t per_cb = 8192; // 3 LIN_DMA packets each: 768 KiB of packets
    for (std::size_t first = 0; first < pages.size(); first += per_cb) {
        const std::size_t n = std::min(per_cb, pages.size() - first);
        const auto out = b.host_buf(n * 3 * kSample);
        std::memset(out.ptr, 0xff, n * 3 * kSample);
        Cb cb;
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint64_t p = pages[first + i];
            const std::uint64_t o = out.va + i * 3 * kSample;
            cb.lin_dma(p, o, kSample)
                .lin_dma(p + kHbmPage / 2 + ((i * 4096) % (kHbmPage / 2)), o + kSample, kSample)
                .lin_dma(p + kHbmPage - kSample, o + 2 * kSample, kSample);
        }
        REQUIRE(b.run(q, cb) == 1);
        const auto *w = reinterpret_cast<const std::uint64_t *>(out.ptr); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        std::size_t nonzero = 0;
        for (std::size_t k = 0; k < n * 3 * kSample / 8; ++k)
            nonzero += w[k] != 0 ? 1 : 0; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        INFO("pages " << first << " to " << first + n);
        CHECK(nonzero == 0);
    }
}

namespace {

// The ASID of a context, from its file's fdinfo (hpu-asid).
std::uint32_t fdinfo_asid(int fd)
{
    const auto t = read_text("/proc/self/fdinfo/" + std::to_string(fd));
    REQUIRE(t.has_value());
    const auto p = t->find("hpu-asid:");
    REQUIRE(p != std::string::npos);
    return static_cast<std::uint32_t>(std::stoul(t->substr(p + 9)));
}

// Holds the event queue's interrupt handler back (debugfs inject_eq_hold)
// for a scope, as if its interrupts came late; release() handles what
// waits in the ring before it returns.
class EqHold {
public:
    explicit EqHold(std::string path) : path_(std::move(path)) { inject(path_, "inject_eq_hold", "hold"); }
    EqHold(const EqHold &) = delete;
    EqHold &operator=(const EqHold &) = delete;
    EqHold(EqHold &&) = delete;
    EqHold &operator=(EqHold &&) = delete;
    ~EqHold()
    {
        if (held_)
            (void)write_text(debugfs_dir(path_) + "/inject_eq_hold", "release");
    }
    void release()
    {
        inject(path_, "inject_eq_hold", "release");
        held_ = false;
    }

private:
    std::string path_;
    bool held_ = true;
};

} // namespace

TEST_CASE("a context's device events that come late never reach the next owner of its ASID", "[isolation]")
{
    // Context A's DMA job faults: the device writes the MMU_FAULT event,
    // then the completion. The event's interrupt comes late (held): the
    // job's completion is handled first and waits for its event; A closes
    // and its ASID passes to B. When the interrupt comes, the event must
    // not be told to B (it names A's job, its queue and the address).
    const std::string path = node();
    const std::uint64_t faults0 = errors_now(path).mmu_faults;
    EqHold hold(path);
    std::uint32_t asid_a = 0;
    {
        Ctx a(path);
        asid_a = fdinfo_asid(a.fd());
        REQUIRE(enable_events(a.fd()) == 0);
        std::uint32_t q = 0;
        REQUIRE(a.queue_create(0, q) == 0);
        const auto src = a.host_buf(64 * KiB);
        const std::uint64_t nowhere = a.mem().va_start + 512 * MiB; // mapped by nobody
        CHECK(a.run(q, Cb().lin_dma(src.va, nowhere, 4 * KiB)) == -EFAULT);
    }
    Ctx b(path);
    INFO("ASID of A " << asid_a);
    REQUIRE(fdinfo_asid(b.fd()) == asid_a);
    REQUIRE(enable_events(b.fd()) == 0);
    hold.release();
    // The fault was handled (at A's close, or at the release at the latest).
    CHECK(errors_now(path).mmu_faults == faults0 + 1);
    // A device event that found A's job goes at once; one alone after
    // 100 ms: nothing may come.
    std::vector<Event> ev;
    (void)read_events_until(b.fd(), ev, 500, [](const Event &) { return true; });
    INFO("events of B: " << describe(ev));
    CHECK(ev.empty());
}

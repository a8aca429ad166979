// SPDX-License-Identifier: MIT
//
// The kernel path's speedups (Documentation/driver/submission.md, "Direct
// submission"): a job with nothing to wait for goes to its stream from the
// SUBMIT ioctl itself, without the scheduler's worker; DRM_IOCTL_HPU_
// SUBMIT_ARRAY queues up to 64 jobs in one call, all or nothing, with one
// doorbell per stream. Asserted here: the array runs every job in order per
// queue; every refused input queues nothing (no job ran, no out-sync got a
// fence, no sequence number was used); jobs behind one that waits for a
// syncobj wait behind it, direct path or not; a hung direct job is stopped
// by its timeout while other queues run; a soft reset with direct jobs on
// the rings puts them back and they finish. debugfs `streams` counts the
// direct jobs (its `direct` field), so the tests see which path a job took.

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <csignal>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "err_util.h"
#include "vm_util.h"

using namespace vmt;

namespace {

constexpr std::uint32_t kGateSob = 29;  // released by the tests that block on it
constexpr std::uint32_t kNeverSob = 31; // no test sets it
constexpr std::uint32_t kCbStride = 64; // bytes per command buffer in a Cbs block

// Jobs the SUBMIT ioctls put on the device's streams directly since probe:
// the sum of debugfs `streams`' "direct <n>" fields.
std::uint64_t direct_total(const std::string &path)
{
    const auto t = read_text(debugfs_dir(path) + "/streams");
    REQUIRE(t.has_value());
    std::istringstream in(*t);
    std::string line;
    std::uint64_t sum = 0;
    bool any = false;
    while (std::getline(in, line)) {
        std::istringstream l(line);
        std::string word;
        while (l >> word) {
            if (word != "direct")
                continue;
            std::uint64_t n = 0;
            if (l >> n) {
                sum += n;
                any = true;
            }
        }
    }
    INFO("debugfs streams: " << *t);
    REQUIRE(any); // a driver without direct submission has no such field
    return sum;
}

// A block of command buffers in one host buffer, kCbStride bytes apart.
class Cbs {
public:
    Cbs(Ctx &c, unsigned n) : buf_(c.host_buf(std::max<std::uint64_t>(kHostPage, std::uint64_t{n} * kCbStride))) {}
    // Writes cb at slot i; returns its VA.
    [[nodiscard]] std::uint64_t put(unsigned i, const Cb &cb) const
    {
        REQUIRE(cb.bytes() <= kCbStride);
        std::memcpy(buf_.ptr + std::uint64_t{i} * kCbStride, cb.data(), cb.bytes());
        return buf_.va + std::uint64_t{i} * kCbStride;
    }

private:
    Ctx::HostBuf buf_;
};

// Builds drm_hpu_submit entries whose sync arrays stay alive with it.
class Batch {
public:
    drm_hpu_submit &add(std::uint32_t queue, std::uint64_t cb_va, std::uint32_t cb_size, std::uint32_t out = 0,
                        std::uint32_t in = 0)
    {
        drm_hpu_submit s{};
        s.queue_id = queue;
        s.cb_va = cb_va;
        s.cb_size = cb_size;
        if (out != 0) {
            auto &o = syncs_.emplace_back();
            o.handle = out;
            s.num_out_syncs = 1;
            s.out_syncs = reinterpret_cast<std::uintptr_t>(&o); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        }
        if (in != 0) {
            auto &i = syncs_.emplace_back();
            i.handle = in;
            s.num_in_syncs = 1;
            s.in_syncs = reinterpret_cast<std::uintptr_t>(&i); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        }
        return subs_.emplace_back(s);
    }
    std::vector<drm_hpu_submit> &subs() { return subs_; }
    // DRM_IOCTL_HPU_SUBMIT_ARRAY of the entries; returns the errno.
    int submit(int fd, std::uint32_t flags = 0, std::uint32_t entry_size = sizeof(drm_hpu_submit))
    {
        drm_hpu_submit_array a{};
        a.count = static_cast<std::uint32_t>(subs_.size());
        a.flags = flags;
        a.entry_size = entry_size;
        a.submits = reinterpret_cast<std::uintptr_t>(subs_.data()); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        return xioctl(fd, DRM_IOCTL_HPU_SUBMIT_ARRAY, &a);
    }

private:
    std::deque<drm_hpu_sync> syncs_;
    std::vector<drm_hpu_submit> subs_;
};

// Sets kGateSob back to 0 when the test ends, however it ends (a failed
// REQUIRE included): opens the gate first, so no job is left blocked on
// it, then closes it for the next test.
class GateReset {
public:
    GateReset(Ctx &c, std::uint32_t queue) : c_(c), queue_(queue) {}
    GateReset(const GateReset &) = delete;
    GateReset &operator=(const GateReset &) = delete;
    GateReset(GateReset &&) = delete;
    GateReset &operator=(GateReset &&) = delete;
    ~GateReset()
    {
        std::ignore = c_.run(queue_, Cb().sob_update(kGateSob, 1));
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        std::ignore = c_.run(queue_, Cb().sob_update(kGateSob, 0));
    }

private:
    Ctx &c_;
    std::uint32_t queue_;
};

std::uint32_t new_syncobj(int fd, std::vector<std::uint32_t> &all)
{
    std::uint32_t so = 0;
    REQUIRE(syncobj_create(fd, so) == 0);
    all.push_back(so);
    return so;
}

std::uint64_t word64(const Ctx::HostBuf &b, unsigned i)
{
    return __atomic_load_n(reinterpret_cast<const std::uint64_t *>(b.ptr) + i, // NOLINT
                           __ATOMIC_ACQUIRE);
}

// Whether a binary syncobj has a fence (a job was queued for it): a wait
// without WAIT_FOR_SUBMIT fails EINVAL only when it has none.
bool has_fence(int fd, std::uint32_t so)
{
    drm_syncobj_wait w{};
    w.handles = reinterpret_cast<std::uintptr_t>(&so); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    w.count_handles = 1;
    w.timeout_nsec = 0;
    return xioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w) != EINVAL;
}

// A second DMA engine when the device has one, else the first.
std::uint32_t other_engine(const std::string &path)
{
    return device_now(path).num_dma > 1 ? 1 : 0;
}

void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }

// The driver is 1.1 or later (INFO DEVICE): it has SUBMIT_ARRAY. An older
// one answers the ioctl with EINVAL, which must not pass for a refusal.
void require_submit_array(int fd)
{
    drm_hpu_info_device d{};
    drm_hpu_info req{};
    req.op = DRM_HPU_INFO_DEVICE;
    req.ptr = reinterpret_cast<std::uintptr_t>(&d); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    req.size = sizeof(d);
    REQUIRE(xioctl(fd, DRM_IOCTL_HPU_INFO, &req) == 0);
    INFO("driver " << d.driver_major << "." << d.driver_minor);
    REQUIRE((d.driver_major > 1 || (d.driver_major == 1 && d.driver_minor >= 1)));
}

} // namespace

TEST_CASE("SUBMIT_ARRAY runs its jobs on several queues, each queue in array order", "[uapi-mem][submit-array]")
{
    const std::string path = node(0);
    Ctx c(path);
    require_submit_array(c.fd());
    constexpr unsigned kQueues = 3;
    constexpr unsigned kPerQueue = 16;
    constexpr unsigned kJobs = kQueues * kPerQueue;
    std::array<std::uint32_t, kQueues> q{};
    REQUIRE(c.queue_create(0, q[0]) == 0);
    REQUIRE(c.queue_create(other_engine(path), q[1]) == 0);
    REQUIRE(c.queue_create(0, q[2]) == 0);
    // Per queue a chain: its first job writes a magic to slot 0, job k
    // copies slot k-1 to slot k. A job run before the one ahead of it copies
    // a zero, which stays: every slot holds the magic only if the queue's
    // jobs ran in array order.
    std::array<Ctx::HostBuf, kQueues> slots{};
    for (auto &s : slots)
        s = c.host_buf(4 * KiB);
    Cbs cbs(c, kJobs);
    Batch b;
    std::vector<std::uint32_t> sos;
    for (unsigned k = 0; k < kPerQueue; ++k) {
        for (unsigned j = 0; j < kQueues; ++j) {
            const std::uint64_t slot = slots.at(j).va + 8ULL * k;
            const Cb cb = k == 0 ? Cb().write_value(slot, 0xc0de0000U | j) : Cb().lin_dma(slot - 8, slot, 8);
            b.add(q.at(j), cbs.put(k * kQueues + j, cb), cb.bytes(), new_syncobj(c.fd(), sos));
        }
    }
    const std::uint64_t direct0 = direct_total(path);
    REQUIRE(b.submit(c.fd()) == 0);
    // Each entry got its queue's next sequence number, in array order.
    for (unsigned i = 0; i < kJobs; ++i) {
        INFO("entry " << i);
        CHECK(b.subs()[i].seq == i / kQueues + 1);
    }
    for (unsigned i = 0; i < kJobs; ++i) {
        INFO("entry " << i);
        REQUIRE(syncobj_wait(c.fd(), sos[i]) == 0);
        CHECK(syncobj_status(c.fd(), sos[i]) == 1);
    }
    for (unsigned j = 0; j < kQueues; ++j) {
        for (unsigned k = 0; k < kPerQueue; ++k) {
            INFO("queue " << j << " slot " << k);
            CHECK(word64(slots.at(j), k) == (0xc0de0000U | j));
        }
    }
    // Nothing to wait for, fresh queues: every job went directly.
    CHECK(direct_total(path) >= direct0 + kJobs);
    // The queues go on with single SUBMITs after the array.
    drm_hpu_submit &one = b.add(q.at(1), cbs.put(0, Cb().nop()), 8);
    REQUIRE(xioctl(c.fd(), DRM_IOCTL_HPU_SUBMIT, &one) == 0);
    CHECK(one.seq == kPerQueue + 1);
    for (const std::uint32_t so : sos)
        syncobj_destroy(c.fd(), so);
}

TEST_CASE("SUBMIT_ARRAY refuses a bad call or a bad entry and then queues nothing", "[uapi-mem][submit-array]")
{
    const std::string path = node(0);
    Ctx c(path);
    require_submit_array(c.fd());
    std::uint32_t q = 0;
    std::uint32_t q2 = 0;
    REQUIRE(c.queue_create(0, q) == 0);
    REQUIRE(c.queue_create(other_engine(path), q2) == 0);
    const auto slots = c.host_buf(4 * KiB);
    Cbs cbs(c, 16);
    std::vector<std::uint32_t> sos;
    // Entries 0-3 write slots 0-3 (queues q and q2), each with an out-sync.
    auto good = [&](Batch &b) {
        for (unsigned i = 0; i < 4; ++i) {
            const Cb cb = Cb().write_value(slots.va + 8ULL * i, 0x600d0000U + i);
            b.add(i % 2 != 0 ? q2 : q, cbs.put(i, cb), cb.bytes(), new_syncobj(c.fd(), sos));
        }
    };
    std::uint32_t no_fence = 0; // a syncobj no job ever signalled
    REQUIRE(syncobj_create(c.fd(), no_fence) == 0);
    sos.push_back(no_fence);
    const Cb wv = Cb().write_value(slots.va + 64, 1);
    const std::uint64_t wv_va = cbs.put(8, wv);
    drm_hpu_sync bad_sync{};
    bad_sync.handle = 0xfffff;

    // Nothing of the call ran or was queued: no slot written, no out-sync
    // with a fence, and each queue's next job is its first (seq 1).
    auto nothing_queued = [&](Batch &b, std::size_t first_out) {
        settle();
        for (unsigned i = 0; i < 8; ++i) {
            INFO("slot " << i);
            CHECK(word64(slots, i) == 0);
        }
        for (std::size_t i = first_out; i < sos.size(); ++i) {
            INFO("out-sync " << i);
            CHECK_FALSE(has_fence(c.fd(), sos[i]));
        }
        for (const std::uint32_t queue : {q, q2}) {
            drm_hpu_submit &s = b.add(queue, wv_va, wv.bytes());
            REQUIRE(xioctl(c.fd(), DRM_IOCTL_HPU_SUBMIT, &s) == 0);
            CHECK(s.seq == 1);
        }
    };

    SECTION("count 0: EINVAL") {
        Batch b;
        drm_hpu_submit_array a{};
        a.entry_size = sizeof(drm_hpu_submit);
        a.submits = reinterpret_cast<std::uintptr_t>(&b); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_SUBMIT_ARRAY, &a) == EINVAL);
        nothing_queued(b, 0);
    }
    SECTION("entry_size below the first drm_hpu_submit's size: EINVAL") {
        Batch b;
        good(b);
        CHECK(b.submit(c.fd(), 0, DRM_HPU_SUBMIT_SIZE_V1 - 8) == EINVAL);
        CHECK(b.submit(c.fd(), 0, 0) == EINVAL);
        nothing_queued(b, 1);
    }
    SECTION("entry_size above the limit, or non-zero pad: EINVAL") {
        Batch b;
        good(b);
        CHECK(b.submit(c.fd(), 0, DRM_HPU_SUBMIT_ENTRY_MAX + 8) == EINVAL);
        drm_hpu_submit_array a{};
        a.count = static_cast<std::uint32_t>(b.subs().size());
        a.entry_size = sizeof(drm_hpu_submit);
        a.pad = 1;
        a.submits = reinterpret_cast<std::uintptr_t>(b.subs().data()); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_SUBMIT_ARRAY, &a) == EINVAL);
        nothing_queued(b, 1);
    }
    SECTION("a larger entry_size with a non-zero byte beyond the known entry: EINVAL") {
        Batch b;
        good(b);
        // Each entry followed by 8 bytes the driver does not know; the
        // last entry's are non-zero.
        constexpr std::size_t kStride = sizeof(drm_hpu_submit) + 8;
        std::vector<unsigned char> wide(b.subs().size() * kStride, 0);
        for (std::size_t i = 0; i < b.subs().size(); ++i)
            std::memcpy(&wide.at(i * kStride), &b.subs().at(i), sizeof(drm_hpu_submit));
        wide.back() = 1;
        drm_hpu_submit_array a{};
        a.count = static_cast<std::uint32_t>(b.subs().size());
        a.entry_size = kStride;
        a.submits = reinterpret_cast<std::uintptr_t>(wide.data()); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_SUBMIT_ARRAY, &a) == EINVAL);
        nothing_queued(b, 1);
    }
    SECTION("count above 64: EINVAL, nothing of the first 64 queued") {
        Batch b;
        for (unsigned i = 0; i < DRM_HPU_MAX_SUBMITS + 1; ++i)
            b.add(q, cbs.put(i % 4, Cb().write_value(slots.va + 8ULL * (i % 4), 1)), 16);
        CHECK(b.submit(c.fd()) == EINVAL);
        nothing_queued(b, 0);
    }
    SECTION("non-zero flags: EINVAL") {
        Batch b;
        good(b);
        CHECK(b.submit(c.fd(), 1) == EINVAL);
        nothing_queued(b, 1);
    }
    SECTION("submits pointing at nothing: EFAULT") {
        drm_hpu_submit_array a{};
        a.count = 4;
        a.entry_size = sizeof(drm_hpu_submit);
        a.submits = 8;
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_SUBMIT_ARRAY, &a) == EFAULT);
        Batch b;
        nothing_queued(b, 1);
    }
    SECTION("submits in a read-only mapping (seq cannot be written back): EFAULT") {
        Batch b;
        good(b);
        const std::size_t bytes = b.subs().size() * sizeof(drm_hpu_submit);
        void *ro = ::mmap(nullptr, kHostPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        REQUIRE(ro != MAP_FAILED);
        std::memcpy(ro, b.subs().data(), bytes);
        REQUIRE(::mprotect(ro, kHostPage, PROT_READ) == 0);
        drm_hpu_submit_array a{};
        a.count = static_cast<std::uint32_t>(b.subs().size());
        a.entry_size = sizeof(drm_hpu_submit);
        a.submits = reinterpret_cast<std::uintptr_t>(ro); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_SUBMIT_ARRAY, &a) == EFAULT);
        ::munmap(ro, kHostPage);
        nothing_queued(b, 1);
    }
    SECTION("the array running off a mapping after valid entries: EFAULT") {
        Batch b;
        good(b);
        const std::size_t bytes = b.subs().size() * sizeof(drm_hpu_submit);
        // The entries end a page; the next page is not mapped.
        auto *two = static_cast<unsigned char *>(
            ::mmap(nullptr, 2 * kHostPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        REQUIRE(two != MAP_FAILED);
        REQUIRE(::munmap(two + kHostPage, kHostPage) == 0);
        unsigned char *at = two + kHostPage - bytes;
        std::memcpy(at, b.subs().data(), bytes);
        drm_hpu_submit_array a{};
        a.count = static_cast<std::uint32_t>(b.subs().size()) + 1;
        a.entry_size = sizeof(drm_hpu_submit);
        a.submits = reinterpret_cast<std::uintptr_t>(at); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_SUBMIT_ARRAY, &a) == EFAULT);
        ::munmap(two, kHostPage);
        nothing_queued(b, 1);
    }

    SECTION("an entry waiting for a syncobj that an earlier entry of the call signals: EINVAL") {
        // In-syncs are looked up before anything of the call is queued:
        // the entry would wait for x's fence from before the call.
        std::uint32_t x = 0;
        REQUIRE(syncobj_create(c.fd(), x, DRM_SYNCOBJ_CREATE_SIGNALED) == 0);
        Batch b;
        good(b);
        const Cb w4 = Cb().write_value(slots.va + 8ULL * 4, 4);
        const Cb w5 = Cb().write_value(slots.va + 8ULL * 5, 5);
        b.add(q, cbs.put(10, w4), w4.bytes(), x);
        b.add(q2, cbs.put(11, w5), w5.bytes(), 0, x);
        CHECK(b.submit(c.fd()) == EINVAL);
        nothing_queued(b, 1);
        // The same two as two calls: the second waits for the first.
        Batch first;
        first.add(q, cbs.put(10, w4), w4.bytes(), x);
        REQUIRE(first.submit(c.fd()) == 0);
        Batch second;
        second.add(q2, cbs.put(11, w5), w5.bytes(), 0, x);
        REQUIRE(second.submit(c.fd()) == 0);
        REQUIRE(syncobj_wait(c.fd(), x) == 0);
        syncobj_destroy(c.fd(), x);
    }

    // A bad entry after four good ones (and a good one after it).
    struct Bad {
        const char *what;
        int err;
        void (*spoil)(drm_hpu_submit &, drm_hpu_sync *, std::uint32_t);
    };
    const std::vector<Bad> bads = {
        {"cb_size 7", EINVAL, [](drm_hpu_submit &s, drm_hpu_sync *, std::uint32_t) { s.cb_size = 7; }},
        {"entry flags", EINVAL, [](drm_hpu_submit &s, drm_hpu_sync *, std::uint32_t) { s.flags = 1; }},
        {"cb_va unaligned", EINVAL, [](drm_hpu_submit &s, drm_hpu_sync *, std::uint32_t) { s.cb_va += 4; }},
        {"timeout above an hour", EINVAL,
         [](drm_hpu_submit &s, drm_hpu_sync *, std::uint32_t) { s.timeout_ms = 3600001; }},
        {"65 in-syncs", EINVAL, [](drm_hpu_submit &s, drm_hpu_sync *, std::uint32_t) { s.num_in_syncs = 65; }},
        {"unknown queue", ENOENT, [](drm_hpu_submit &s, drm_hpu_sync *, std::uint32_t) { s.queue_id = 63; }},
        {"unknown in-sync", ENOENT,
         [](drm_hpu_submit &s, drm_hpu_sync *p, std::uint32_t) {
             s.num_in_syncs = 1;
             s.in_syncs = reinterpret_cast<std::uintptr_t>(p); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
         }},
        {"unknown out-sync", ENOENT,
         [](drm_hpu_submit &s, drm_hpu_sync *p, std::uint32_t) {
             s.num_out_syncs = 1;
             s.out_syncs = reinterpret_cast<std::uintptr_t>(p); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
         }},
        {"in-sync without a fence", EINVAL,
         [](drm_hpu_submit &s, drm_hpu_sync *p, std::uint32_t h) {
             p->handle = h;
             s.num_in_syncs = 1;
             s.in_syncs = reinterpret_cast<std::uintptr_t>(p); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
         }},
        {"in_syncs unreadable", EFAULT,
         [](drm_hpu_submit &s, drm_hpu_sync *, std::uint32_t) {
             s.num_in_syncs = 1;
             s.in_syncs = 8;
         }},
        {"out_syncs unreadable", EFAULT,
         [](drm_hpu_submit &s, drm_hpu_sync *, std::uint32_t) {
             s.num_out_syncs = 1;
             s.out_syncs = 8;
         }},
    };
    for (const Bad &bad : bads) {
        DYNAMIC_SECTION("a bad entry in the middle (" << bad.what << "): " << std::strerror(bad.err)) {
            Batch b;
            good(b);
            drm_hpu_submit &e = b.add(q, wv_va, wv.bytes());
            bad_sync.handle = 0xfffff;
            bad.spoil(e, &bad_sync, no_fence);
            b.add(q2, wv_va, wv.bytes(), new_syncobj(c.fd(), sos));
            CHECK(b.submit(c.fd()) == bad.err);
            nothing_queued(b, 1);
        }
    }
    for (const std::uint32_t so : sos)
        syncobj_destroy(c.fd(), so);
}

TEST_CASE("jobs with nothing to wait for stay behind a job of their queue that waits for a syncobj",
          "[uapi-mem][submit-array]")
{
    const std::string path = node(0);
    Ctx c(path);
    std::uint32_t qa = 0;
    std::uint32_t qgate = 0;
    std::uint32_t qfree = 0;
    REQUIRE(c.queue_create(0, qa) == 0);
    REQUIRE(c.queue_create(other_engine(path), qgate) == 0);
    REQUIRE(c.queue_create(0, qfree) == 0);
    std::uint32_t qopen = 0;
    REQUIRE(c.queue_create(other_engine(path), qopen) == 0);
    const GateReset gate_reset(c, qopen);
    const auto slots = c.host_buf(4 * KiB);
    const auto free_slots = c.host_buf(4 * KiB);
    Cbs cbs(c, 32);
    std::vector<std::uint32_t> sos;

    // The gate: a job blocked in WAIT until kGateSob is set; its out-sync
    // is the unsignalled fence the first job of qa waits for.
    const Cb gate_cb = Cb().wait(kGateSob, 1);
    const std::uint32_t gate = new_syncobj(c.fd(), sos);
    REQUIRE(c.submit(qgate, cbs.put(0, gate_cb), gate_cb.bytes(), gate) == 0);

    // qa: the waiting job writes the magic to slot 0, then single SUBMITs
    // of jobs with no dependency copy slot k-1 to slot k; then an array of
    // more of them, with jobs of another queue that does not wait.
    const std::uint64_t direct0 = direct_total(path);
    const Cb first = Cb().write_value(slots.va, 0xfeed);
    const std::uint32_t first_so = new_syncobj(c.fd(), sos);
    REQUIRE(c.submit(qa, cbs.put(1, first), first.bytes(), first_so, {gate}) == 0);
    std::vector<std::uint32_t> chain;
    constexpr unsigned kSingles = 6;
    constexpr unsigned kInArray = 6;
    for (unsigned k = 1; k <= kSingles; ++k) {
        const Cb cb = Cb().lin_dma(slots.va + 8ULL * (k - 1), slots.va + 8ULL * k, 8);
        const std::uint32_t so = new_syncobj(c.fd(), sos);
        chain.push_back(so);
        REQUIRE(c.submit(qa, cbs.put(1 + k, cb), cb.bytes(), so) == 0);
    }
    Batch b;
    std::vector<std::uint32_t> free_sos;
    for (unsigned k = kSingles + 1; k <= kSingles + kInArray; ++k) {
        const Cb cb = Cb().lin_dma(slots.va + 8ULL * (k - 1), slots.va + 8ULL * k, 8);
        const std::uint32_t so = new_syncobj(c.fd(), sos);
        chain.push_back(so);
        b.add(qa, cbs.put(1 + k, cb), cb.bytes(), so);
        const Cb fcb = Cb().write_value(free_slots.va + 8ULL * k, k);
        const std::uint32_t fso = new_syncobj(c.fd(), sos);
        free_sos.push_back(fso);
        b.add(qfree, cbs.put(16 + k, fcb), fcb.bytes(), fso);
    }
    REQUIRE(b.submit(c.fd()) == 0);

    // The other queue's jobs run at once, directly; qa's wait.
    for (const std::uint32_t so : free_sos) {
        REQUIRE(syncobj_wait(c.fd(), so) == 0);
        CHECK(syncobj_status(c.fd(), so) == 1);
    }
    // Device-wide: another client may submit directly meanwhile.
    const std::uint64_t direct1 = direct_total(path);
    CHECK(direct1 - direct0 >= kInArray);
    settle();
    for (unsigned k = 0; k <= kSingles + kInArray; ++k) {
        INFO("slot " << k);
        CHECK(word64(slots, k) == 0);
    }
    for (const std::uint32_t so : chain)
        CHECK(syncobj_wait(c.fd(), so, 1000000ULL) == ETIME);

    // Open the gate: everything of qa runs, in submission order.
    CHECK(c.run(qopen, Cb().sob_update(kGateSob, 1)) == 1);
    REQUIRE(syncobj_wait(c.fd(), first_so) == 0);
    CHECK(syncobj_status(c.fd(), first_so) == 1);
    for (const std::uint32_t so : chain) {
        REQUIRE(syncobj_wait(c.fd(), so) == 0);
        CHECK(syncobj_status(c.fd(), so) == 1);
    }
    for (unsigned k = 0; k <= kSingles + kInArray; ++k) {
        INFO("slot " << k);
        CHECK(word64(slots, k) == 0xfeed);
    }
    // The scheduler has run them all: qa's next job goes directly again.
    const std::uint64_t direct2 = direct_total(path);
    CHECK(c.run(qa, Cb().write_value(slots.va + 8ULL * 30, 3)) == 1);
    CHECK(direct_total(path) >= direct2 + 1);
    for (const std::uint32_t so : sos)
        syncobj_destroy(c.fd(), so);
}

TEST_CASE("a hung direct job is stopped by its timeout while other queues run", "[timeouts][submit-array]")
{
    const std::string path = node(0);
    const auto e0 = errors_now(path);
    Ctx c(path);
    std::uint32_t qa = 0;
    std::uint32_t qb = 0;
    REQUIRE(c.queue_create(0, qa) == 0);
    REQUIRE(c.queue_create(other_engine(path), qb) == 0);
    const auto slots = c.host_buf(4 * KiB);
    Cbs cbs(c, 40);
    std::vector<std::uint32_t> sos;

    // Long enough for the other queue's 32 jobs on a loaded TCG host.
    constexpr std::uint32_t kTimeoutMs = 10000;
    const std::uint64_t direct0 = direct_total(path);
    const Cb stuck = Cb().wait(kNeverSob, 1);
    const std::uint32_t stuck_so = new_syncobj(c.fd(), sos);
    const std::uint64_t t0 = now_ns();
    REQUIRE(c.submit(qa, cbs.put(0, stuck), stuck.bytes(), stuck_so, {}, kTimeoutMs) == 0);
    // Behind it on its queue, directly too: runs after the timeout.
    const Cb after = Cb().write_value(slots.va, 0xaf7e);
    const std::uint32_t after_so = new_syncobj(c.fd(), sos);
    REQUIRE(c.submit(qa, cbs.put(1, after), after.bytes(), after_so) == 0);
    CHECK(direct_total(path) >= direct0 + 2);

    // Another queue runs 32 jobs meanwhile, in one array.
    Batch b;
    std::vector<std::uint32_t> others;
    for (unsigned k = 0; k < 32; ++k) {
        const Cb cb = Cb().write_value(slots.va + 64 + 8ULL * k, k + 1);
        const std::uint32_t so = new_syncobj(c.fd(), sos);
        others.push_back(so);
        b.add(qb, cbs.put(2 + k, cb), cb.bytes(), so);
    }
    REQUIRE(b.submit(c.fd()) == 0);
    for (const std::uint32_t so : others) {
        REQUIRE(syncobj_wait(c.fd(), so) == 0);
        CHECK(syncobj_status(c.fd(), so) == 1);
    }
    const double others_ms = ms_since(t0);
    INFO("the other queue's 32 jobs done after " << others_ms << " ms");
    // Still running, if the others finished well before its timeout (on
    // a very slow host they may not have: then nothing is shown here).
    if (others_ms < kTimeoutMs - 1000)
        CHECK(syncobj_wait(c.fd(), stuck_so, 1000000ULL) == ETIME);

    REQUIRE(syncobj_wait(c.fd(), stuck_so) == 0);
    const double stuck_ms = ms_since(t0);
    INFO("hung job failed after " << stuck_ms << " ms");
    CHECK(syncobj_status(c.fd(), stuck_so) == -ETIMEDOUT);
    CHECK(stuck_ms >= kTimeoutMs - 5);
    REQUIRE(syncobj_wait(c.fd(), after_so) == 0);
    CHECK(syncobj_status(c.fd(), after_so) == 1);
    CHECK(word64(slots, 0) == 0xaf7e);
    for (unsigned k = 0; k < 32; ++k)
        CHECK(word64(slots, 8 + k) == k + 1);
    const auto e1 = errors_now(path);
    CHECK(e1.job_timeouts == e0.job_timeouts + 1);
    CHECK(e1.soft_resets == e0.soft_resets);
    for (const std::uint32_t so : sos)
        syncobj_destroy(c.fd(), so);
}

TEST_CASE("a soft reset with direct jobs on the rings puts them back and they finish", "[errors][submit-array]")
{
    const std::string path = node(0);
    const std::string attr = reset_attr(path);
    const auto e0 = errors_now(path);
    Ctx c(path);
    std::uint32_t qa = 0;
    std::uint32_t qb = 0;
    REQUIRE(c.queue_create(0, qa) == 0);
    REQUIRE(c.queue_create(other_engine(path), qb) == 0);
    std::uint32_t qopen = 0;
    REQUIRE(c.queue_create(0, qopen) == 0);
    const GateReset gate_reset(c, qopen);
    const auto slots = c.host_buf(4 * KiB);
    Cbs cbs(c, 16);
    std::vector<std::uint32_t> sos;

    // Direct jobs blocked in WAIT on both queues, with jobs behind them.
    const std::uint64_t direct0 = direct_total(path);
    Batch b;
    std::vector<std::uint32_t> jobs;
    const std::array<std::uint32_t, 2> queues{qa, qb};
    for (unsigned j = 0; j < 2; ++j) {
        const Cb w = Cb().wait(kGateSob, 1).write_value(slots.va + 8ULL * 4 * j, 0x1000 + j);
        jobs.push_back(new_syncobj(c.fd(), sos));
        b.add(queues.at(j), cbs.put(4 * j, w), w.bytes(), jobs.back());
        for (unsigned k = 1; k < 4; ++k) {
            const std::uint64_t slot = slots.va + 8ULL * (4ULL * j + k);
            const Cb cp = Cb().lin_dma(slot - 8, slot, 8);
            jobs.push_back(new_syncobj(c.fd(), sos));
            b.add(queues.at(j), cbs.put(4 * j + k, cp), cp.bytes(), jobs.back());
        }
    }
    REQUIRE(b.submit(c.fd()) == 0);
    CHECK(direct_total(path) >= direct0 + jobs.size());
    settle();
    for (const std::uint32_t so : jobs)
        CHECK(syncobj_wait(c.fd(), so, 1000000ULL) == ETIME);

    const int we = write_text(attr, "soft");
    INFO("write 'soft' to " << attr << ": " << std::strerror(we));
    REQUIRE(we == 0);
    // The reset cleared the sync objects; the jobs are back on their rings,
    // still waiting. Open the gate: all of them finish, in order.
    settle();
    for (const std::uint32_t so : jobs)
        CHECK(syncobj_wait(c.fd(), so, 1000000ULL) == ETIME);
    CHECK(c.run(qopen, Cb().sob_update(kGateSob, 1)) == 1);
    for (const std::uint32_t so : jobs) {
        REQUIRE(syncobj_wait(c.fd(), so) == 0);
        CHECK(syncobj_status(c.fd(), so) == 1);
    }
    for (unsigned j = 0; j < 2; ++j) {
        for (unsigned k = 0; k < 4; ++k)
            CHECK(word64(slots, 4 * j + k) == 0x1000 + j);
    }
    const auto e1 = errors_now(path);
    CHECK(e1.soft_resets == e0.soft_resets + 1);
    CHECK(e1.hard_resets == e0.hard_resets);
    for (const std::uint32_t so : sos)
        syncobj_destroy(c.fd(), so);
}

TEST_CASE("SUBMIT_ARRAY: a ready entry stays behind an entry of its queue that waits for a syncobj",
          "[uapi-mem][submit-array]")
{
    const std::string path = node(0);
    Ctx c(path);
    std::uint32_t qa = 0;
    std::uint32_t qgate = 0;
    REQUIRE(c.queue_create(0, qa) == 0);
    REQUIRE(c.queue_create(other_engine(path), qgate) == 0);
    std::uint32_t qopen = 0;
    REQUIRE(c.queue_create(other_engine(path), qopen) == 0);
    const GateReset gate_reset(c, qopen);
    const auto slots = c.host_buf(4 * KiB);
    Cbs cbs(c, 4);
    std::vector<std::uint32_t> sos;

    const Cb gate_cb = Cb().wait(kGateSob, 1);
    const std::uint32_t gate = new_syncobj(c.fd(), sos);
    REQUIRE(c.submit(qgate, cbs.put(0, gate_cb), gate_cb.bytes(), gate) == 0);

    // [waits for the gate: writes slot 0; ready: copies slot 0 to slot 1]
    Batch b;
    const Cb first = Cb().write_value(slots.va, 0xbeef);
    const std::uint32_t first_so = new_syncobj(c.fd(), sos);
    b.add(qa, cbs.put(1, first), first.bytes(), first_so, gate);
    const Cb second = Cb().lin_dma(slots.va, slots.va + 8, 8);
    const std::uint32_t second_so = new_syncobj(c.fd(), sos);
    b.add(qa, cbs.put(2, second), second.bytes(), second_so);
    REQUIRE(b.submit(c.fd()) == 0);
    CHECK(b.subs().at(0).seq + 1 == b.subs().at(1).seq);

    settle();
    CHECK(syncobj_wait(c.fd(), second_so, 1000000ULL) == ETIME);
    CHECK(word64(slots, 0) == 0);
    CHECK(word64(slots, 1) == 0);

    CHECK(c.run(qopen, Cb().sob_update(kGateSob, 1)) == 1);
    REQUIRE(syncobj_wait(c.fd(), second_so) == 0);
    CHECK(syncobj_status(c.fd(), first_so) == 1);
    CHECK(syncobj_status(c.fd(), second_so) == 1);
    CHECK(word64(slots, 1) == 0xbeef);
    for (const std::uint32_t so : sos)
        syncobj_destroy(c.fd(), so);
}

namespace {

// The killed process of the next test: a direct job blocked in WAIT on its
// queue, then a job of the same queue held by the scheduler (it waits for
// a blocked job of another queue). Killing the process kills the held
// job's fence at once; the direct job is still on the ring and the file
// must not go before it is off. Writes 1 to fd when set up.
[[noreturn]] void direct_victim(const std::string &path, int fd)
{
    try {
        Ctx c(path);
        std::uint32_t q = 0;
        std::uint32_t qother = 0;
        if (c.queue_create(0, q) != 0 || c.queue_create(other_engine(path), qother) != 0)
            ::_exit(2);
        Cbs cbs(c, 4);
        const Cb wait = Cb().wait(kGateSob, 1);
        std::uint32_t other_so = 0;
        std::uint32_t so = 0;
        if (syncobj_create(c.fd(), other_so) != 0 || syncobj_create(c.fd(), so) != 0)
            ::_exit(3);
        if (c.submit(q, cbs.put(0, wait), wait.bytes(), so) != 0 ||
            c.submit(qother, cbs.put(1, wait), wait.bytes(), other_so) != 0)
            ::_exit(4);
        const Cb held = Cb().sob_update(kGateSob, 0); // never runs
        if (c.submit(q, cbs.put(2, held), held.bytes(), 0, {other_so}) != 0)
            ::_exit(5);
        const std::uint8_t one = 1;
        std::ignore = ::write(fd, &one, 1);
        for (;;)
            ::pause();
    } catch (...) {
        ::_exit(6);
    }
}

} // namespace

TEST_CASE("kill -9 of a process with a direct job on the ring behind a scheduled one leaves the driver healthy",
          "[errors][submit-array]")
{
    const std::string path = node(0);
    int pfd[2] = {-1, -1};
    REQUIRE(::pipe(pfd) == 0); // NOLINT(cppcoreguidelines-pro-bounds-array-to-pointer-decay)
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(pfd[0]);
        direct_victim(path, pfd[1]);
    }
    ::close(pfd[1]);
    std::uint8_t ready = 0;
    const bool ok = ::read(pfd[0], &ready, 1) == 1;
    ::close(pfd[0]);
    if (!ok) {
        int st = 0;
        ::waitpid(pid, &st, 0);
        FAIL("victim setup failed, exit " << WEXITSTATUS(st));
    }
    ::usleep(200000); // the direct job blocked in WAIT on the ring
    REQUIRE(::kill(pid, SIGKILL) == 0);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status));

    // The module is healthy: a new file submits and its jobs complete,
    // directly and through the gate's queue alike.
    Ctx c(path);
    std::uint32_t q = 0;
    REQUIRE(c.queue_create(0, q) == 0);
    const GateReset gate_reset(c, q);
    const auto slots = c.host_buf(4 * KiB);
    CHECK(c.run(q, Cb().write_value(slots.va, 0x600d)) == 1);
    CHECK(word64(slots, 0) == 0x600d);
}

// SPDX-License-Identifier: MIT
// uq_util.h: helpers of the user-queue VM tests (test_uq.cpp,
// test_sec_uq.cpp; include/uapi/drm/hpu_accel.h, struct drm_hpu_uq_create
// and its neighbours): INFO_USER_QUEUES, a user queue whose ring,
// completion ring and command buffers are host buffers of the file mapped
// into its device address space and into this process, the doorbell
// mapping, descriptors, records, UQ_WAIT and UQ_FENCE through raw ioctls.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TESTS_VM_UQ_UTIL_H
#define HPU_TESTS_VM_UQ_UTIL_H

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "err_util.h"
#include "vm_util.h"

namespace vmt {

// Command-buffer bytes reserved per ring slot: the command buffer of
// descriptor n lives at cb + kUqCbSlot * (n % ring_size).
constexpr std::uint32_t kUqCbSlot = 256;
// INFO_USER_QUEUES of the spec-10 device (Documentation/hw/memory-and-queues.md).
constexpr std::uint32_t kUqPerEngine = 12;
constexpr std::uint32_t kUqRingMax = 4096;
constexpr std::uint32_t kUqCqeSize = 32;

inline int info_uq(int fd, drm_hpu_info_uq &out, std::uint32_t *size = nullptr)
{
    out = {};
    drm_hpu_info req{};
    req.op = DRM_HPU_INFO_USER_QUEUES;
    req.ptr = reinterpret_cast<std::uintptr_t>(&out); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    req.size = sizeof(out);
    const int e = xioctl(fd, DRM_IOCTL_HPU_INFO, &req);
    if (size != nullptr)
        *size = req.size;
    return e;
}

inline drm_hpu_info_device info_device(int fd)
{
    drm_hpu_info_device d{};
    drm_hpu_info req{};
    req.op = DRM_HPU_INFO_DEVICE;
    req.ptr = reinterpret_cast<std::uintptr_t>(&d); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    req.size = sizeof(d);
    REQUIRE(xioctl(fd, DRM_IOCTL_HPU_INFO, &req) == 0);
    return d;
}

// The device has user streams (spec version 10): then the driver must be
// 1.2 or later and offer DRM_HPU_CAP_USER_QUEUES. An older device has
// nothing to test here (skipped).
inline void require_uq(int fd)
{
    const drm_hpu_info_device d = info_device(fd);
    if (d.spec_version < 10)
        SKIP("spec version " << d.spec_version << ": no user streams");
    INFO("driver " << d.driver_major << "." << d.driver_minor << ", caps 0x" << std::hex << d.caps);
    REQUIRE((d.driver_major > 1 || (d.driver_major == 1 && d.driver_minor >= 2)));
    REQUIRE((d.caps & DRM_HPU_CAP_USER_QUEUES) != 0);
}

inline drm_hpu_info_uq uq_info(int fd)
{
    drm_hpu_info_uq u{};
    REQUIRE(info_uq(fd, u) == 0);
    return u;
}

// A 32-bit store to a doorbell mapping (no read: reads are refused).
inline void doorbell_store(void *db, std::uint32_t value, std::size_t offset = 0)
{
    std::atomic_thread_fence(std::memory_order_seq_cst); // descriptors before the doorbell
    auto *p = static_cast<volatile std::uint32_t *>(db); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    p[offset / 4] = value; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
}

// In a forked child: the default action for the fatal signals, so that a
// crash (expected or not) kills the child plainly instead of running
// Catch2's handler, which would report into the parent's results.
inline void child_default_signals()
{
    for (const int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT})
        ::signal(sig, SIG_DFL); // NOLINT(cert-err33-c)
}

inline int uq_create_raw(int fd, drm_hpu_uq_create &c) { return xioctl(fd, DRM_IOCTL_HPU_UQ_CREATE, &c); }

// UQ_WAIT; returns the errno of the call, *status and *done as answered.
inline int uq_wait_raw(int fd, std::uint32_t queue, std::uint64_t point, std::int64_t deadline_ns,
                       std::int32_t *status = nullptr, std::uint64_t *done = nullptr, std::uint32_t flags = 0,
                       std::uint32_t pad = 0)
{
    drm_hpu_uq_wait w{};
    w.queue_id = queue;
    w.flags = flags;
    w.point = point;
    w.timeout_nsec = deadline_ns;
    w.pad = pad;
    w.status = 0x7eadbeef; // must be overwritten
    int e = 0;
    do {
        e = xioctl(fd, DRM_IOCTL_HPU_UQ_WAIT, &w);
    } while (e == EINTR);
    if (status != nullptr)
        *status = w.status;
    if (done != nullptr)
        *done = w.done;
    return e;
}

inline int uq_fence_raw(int fd, std::uint32_t queue, std::uint64_t point, std::uint32_t handle,
                        std::uint64_t syncobj_point = 0, std::uint32_t flags = 0, std::uint32_t pad = 0)
{
    drm_hpu_uq_fence f{};
    f.queue_id = queue;
    f.flags = flags;
    f.point = point;
    f.handle = handle;
    f.pad = pad;
    f.syncobj_point = syncobj_point;
    return xioctl(fd, DRM_IOCTL_HPU_UQ_FENCE, &f);
}

struct UqParams {
    std::uint32_t engine = 0;
    std::uint32_t engine_class = DRM_HPU_ENGINE_DMA;
    std::uint32_t ring_size = 64;
    std::uint32_t cq_size = 0; // 0: ring_size
    std::uint32_t flags = 0;
    std::uint32_t signal_sob = 0;
    std::uint32_t timeout_ms = 0;
};

// A user queue of a context. The constructor makes its buffers (ring,
// completion ring, command buffers: host buffers mapped into the device
// and into this process); create() makes the queue, map_db() maps its
// doorbell. Descriptor n is the n-th put since creation; its point is n + 1.
class Uq {
public:
    Uq(Ctx &c, const UqParams &p) : c_(c), p_(p)
    {
        if (p_.cq_size == 0)
            p_.cq_size = p_.ring_size;
        const std::uint64_t ring_bytes = std::uint64_t{p_.ring_size} * sizeof(drm_hpu_uq_desc);
        const std::uint64_t cq_bytes = std::uint64_t{p_.cq_size} * sizeof(drm_hpu_uq_cqe);
        ring_ = c_.host_buf(std::max<std::uint64_t>(ring_bytes, kHostPage));
        cq_ = c_.host_buf(std::max<std::uint64_t>(cq_bytes, kHostPage));
        cb_ = c_.host_buf(std::max<std::uint64_t>(std::uint64_t{p_.ring_size} * kUqCbSlot, kHostPage));
    }
    Uq(const Uq &) = delete;
    Uq &operator=(const Uq &) = delete;
    Uq(Uq &&) = delete;
    Uq &operator=(Uq &&) = delete;
    ~Uq()
    {
        if (db_ != nullptr)
            ::munmap(db_, DRM_HPU_UQ_DB_SIZE);
    }

    // The UQ_CREATE arguments this queue is made with.
    [[nodiscard]] drm_hpu_uq_create args() const
    {
        drm_hpu_uq_create a{};
        a.engine_class = p_.engine_class;
        a.engine = p_.engine;
        a.flags = p_.flags;
        a.ring_size = p_.ring_size;
        a.ring_va = ring_.va;
        a.cq_va = cq_.va;
        a.cq_size = p_.cq_size;
        a.signal_sob = p_.signal_sob;
        a.timeout_ms = p_.timeout_ms;
        return a;
    }
    // UQ_CREATE; returns the errno.
    int create()
    {
        drm_hpu_uq_create a = args();
        const int e = uq_create_raw(c_.fd(), a);
        if (e == 0) {
            created_ = a;
            id_ = a.queue_id;
        }
        return e;
    }
    // UQ_CREATE and mmap of the doorbell, both required to succeed.
    Uq &make()
    {
        REQUIRE(create() == 0);
        map_db();
        return *this;
    }
    void map_db()
    {
        void *p = ::mmap(nullptr, DRM_HPU_UQ_DB_SIZE, PROT_WRITE, MAP_SHARED, c_.fd(),
                         static_cast<off_t>(created_.db_mmap_offset));
        INFO("mmap of the doorbell at offset 0x" << std::hex << created_.db_mmap_offset << ": "
                                                 << std::strerror(errno));
        REQUIRE(p != MAP_FAILED);
        db_ = p;
    }
    [[nodiscard]] std::uint32_t id() const { return id_; }
    [[nodiscard]] const drm_hpu_uq_create &created() const { return created_; }
    [[nodiscard]] std::uint16_t asid() const { return static_cast<std::uint16_t>(created_.asid); }
    [[nodiscard]] void *db() const { return db_; }
    [[nodiscard]] std::uint64_t submitted() const { return submitted_; }
    [[nodiscard]] const UqParams &params() const { return p_; }
    [[nodiscard]] const Ctx::HostBuf &ring_buf() const { return ring_; }
    [[nodiscard]] const Ctx::HostBuf &cq_buf() const { return cq_; }

    // Writes descriptor number submitted() as given (any field, bad ones
    // included); returns its number. Waits for its ring slot first (rings
    // what was written, then UQ_WAIT).
    std::uint64_t put_desc(const drm_hpu_uq_desc &d)
    {
        const std::uint64_t n = submitted_;
        make_room(n);
        auto *slot = ring_.ptr + sizeof(drm_hpu_uq_desc) * (n % p_.ring_size); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        std::memcpy(slot, &d, sizeof(d));
        ++submitted_;
        return n;
    }
    // Writes a command buffer into the slot of the next descriptor and the
    // descriptor pointing at it (this queue's asid); returns its number.
    std::uint64_t put(const Cb &cb, std::uint64_t seq)
    {
        REQUIRE(cb.bytes() <= kUqCbSlot);
        REQUIRE(cb.bytes() >= 8);
        const std::uint64_t n = submitted_;
        make_room(n); // the slot's earlier command buffer must be done too
        const std::uint64_t off = std::uint64_t{kUqCbSlot} * (n % p_.ring_size);
        std::memcpy(cb_.ptr + off, cb.data(), cb.bytes()); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        drm_hpu_uq_desc d{};
        d.cb_va = cb_.va + off;
        d.cb_size = cb.bytes();
        d.asid = asid();
        d.seq = seq;
        return put_desc(d);
    }
    // Rings the doorbell with every descriptor written so far.
    void ring() const
    {
        REQUIRE(db_ != nullptr);
        doorbell_store(db_, static_cast<std::uint32_t>(submitted_));
    }
    // put() and ring(); returns the descriptor's point (number + 1).
    std::uint64_t submit(const Cb &cb, std::uint64_t seq)
    {
        const std::uint64_t n = put(cb, seq);
        ring();
        return n + 1;
    }

    // The completion record of descriptor n (where it is in the completion
    // ring now: a later descriptor may have overwritten it).
    [[nodiscard]] drm_hpu_uq_cqe record(std::uint64_t n) const
    {
        const auto *p = reinterpret_cast<const std::uint64_t *>( // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
            cq_.ptr + sizeof(drm_hpu_uq_cqe) * (n % p_.cq_size)); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        std::uint64_t w[4];
        for (unsigned i = 0; i < 4; ++i)
            w[i] = __atomic_load_n(p + i, __ATOMIC_ACQUIRE); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic,cppcoreguidelines-pro-bounds-constant-array-index)
        drm_hpu_uq_cqe r{};
        std::memcpy(&r, w, sizeof(r)); // NOLINT(bugprone-sizeof-expression)
        return r;
    }

    // UQ_WAIT until point, with a relative timeout; returns the errno.
    int wait(std::uint64_t point, std::int32_t *status = nullptr, std::uint64_t *done = nullptr,
             std::uint64_t timeout_ns = 60ULL * 1000000000ULL) const
    {
        return uq_wait_raw(c_.fd(), id_, point, static_cast<std::int64_t>(now_ns() + timeout_ns), status, done);
    }
    // The outcome of a point: its UQ_WAIT status, or 1000 + errno when the
    // wait itself failed.
    [[nodiscard]] int outcome(std::uint64_t point, std::uint64_t timeout_ns = 60ULL * 1000000000ULL) const
    {
        std::int32_t st = 0;
        const int e = wait(point, &st, nullptr, timeout_ns);
        return e == 0 ? st : 1000 + e;
    }
    // QUEUE_DESTROY; returns the errno.
    [[nodiscard]] int destroy() const { return c_.queue_destroy(id_); }

private:
    // Descriptor n may be written once descriptor n - ring_size is done:
    // rings what was written, then waits for that point.
    void make_room(std::uint64_t n) const
    {
        if (n < p_.ring_size)
            return;
        ring();
        const int e = uq_wait_raw(c_.fd(), id_, n - p_.ring_size + 1,
                                  static_cast<std::int64_t>(now_ns() + 60ULL * 1000000000ULL));
        INFO("waiting for the ring slot of descriptor " << n);
        REQUIRE(e == 0);
    }

    Ctx &c_;
    UqParams p_;
    Ctx::HostBuf ring_;
    Ctx::HostBuf cq_;
    Ctx::HostBuf cb_;
    drm_hpu_uq_create created_{};
    std::uint32_t id_ = 0;
    void *db_ = nullptr;
    std::uint64_t submitted_ = 0;
};

// A device limit (sysfs limits/, Documentation/driver/limits.md) set for a
// scope and put back after it.
class UqLimit {
public:
    UqLimit(const std::string &node, std::string name, std::uint64_t value)
        : file_(sysfs_dir(node) + "/limits/" + std::move(name))
    {
        const auto old = read_u64(file_);
        INFO("reading " << file_);
        REQUIRE(old.has_value());
        old_ = *old;
        set(value);
    }
    UqLimit(const UqLimit &) = delete;
    UqLimit &operator=(const UqLimit &) = delete;
    UqLimit(UqLimit &&) = delete;
    UqLimit &operator=(UqLimit &&) = delete;
    ~UqLimit() { (void)write_text(file_, std::to_string(old_)); }
    void set(std::uint64_t value) const
    {
        INFO("writing " << value << " to " << file_);
        REQUIRE(write_text(file_, std::to_string(value)) == 0);
        REQUIRE(read_u64(file_) == value);
    }

private:
    std::string file_;
    std::uint64_t old_ = 0;
};

inline std::optional<std::uint64_t> uq_limit(const std::string &node, const std::string &name)
{
    return read_u64(sysfs_dir(node) + "/limits/" + name);
}

// A key of this process's fdinfo of fd (the number before any unit), or
// nullopt when the key is missing.
inline std::optional<std::uint64_t> fdinfo_value(int fd, const std::string &key)
{
    const auto t = read_text("/proc/self/fdinfo/" + std::to_string(fd));
    if (!t)
        return std::nullopt;
    std::istringstream in(*t);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key + ":", 0) != 0)
            continue;
        std::istringstream v(line.substr(key.size() + 1));
        std::uint64_t n = 0;
        if (v >> n)
            return n;
        return std::nullopt;
    }
    return std::nullopt;
}

// A 64-bit word of a host buffer, read as the device left it.
inline std::uint64_t hb_word64(const Ctx::HostBuf &b, std::uint64_t i)
{
    return __atomic_load_n(reinterpret_cast<const std::uint64_t *>(b.ptr) + i, // NOLINT
                           __ATOMIC_ACQUIRE);
}
inline std::uint32_t hb_word32(const Ctx::HostBuf &b, std::uint64_t i)
{
    return __atomic_load_n(reinterpret_cast<const std::uint32_t *>(b.ptr) + i, // NOLINT
                           __ATOMIC_ACQUIRE);
}

// Files holding user queues on one engine: opens files and creates queues
// (ring_size 2) in each until the engine refuses with EBUSY; a file at its
// own limit (ENOSPC) makes room for the next file. count() is how many
// queues the engine still had free.
class EngineFill {
public:
    EngineFill(const std::string &path, std::uint32_t engine, unsigned max_files = 40)
    {
        for (unsigned f = 0; f < max_files && !full_; ++f) {
            auto &h = holders_.emplace_back();
            h.ctx = std::make_unique<Ctx>(path);
            for (;;) {
                auto uq = std::make_unique<Uq>(*h.ctx, UqParams{engine, DRM_HPU_ENGINE_DMA, 2, 0, 0, 0, 0});
                const int e = uq->create();
                if (e == 0) {
                    h.uqs.push_back(std::move(uq));
                    ++count_;
                    continue;
                }
                if (e == EBUSY) {
                    full_ = true;
                } else if (e != ENOSPC) {
                    other_ = e;
                }
                break;
            }
            if (other_ != 0 || (h.uqs.empty() && !full_))
                break; // not a per-file limit: stop rather than loop
        }
    }
    [[nodiscard]] unsigned count() const { return count_; }
    [[nodiscard]] bool full() const { return full_; }
    [[nodiscard]] int other_errno() const { return other_; }
    struct Holder {
        std::unique_ptr<Ctx> ctx;
        std::vector<std::unique_ptr<Uq>> uqs; // destroyed before ctx (declared after it)
    };
    std::vector<Holder> &holders() { return holders_; }

private:
    std::vector<Holder> holders_;
    unsigned count_ = 0;
    bool full_ = false;
    int other_ = 0;
};

// User streams of an engine free right now (creates and closes them).
inline unsigned free_user_streams(const std::string &path, std::uint32_t engine)
{
    const EngineFill f(path, engine);
    INFO("filling engine " << engine << ": " << f.count() << " queues, other errno " << f.other_errno());
    REQUIRE(f.full());
    return f.count();
}

} // namespace vmt

#endif // HPU_TESTS_VM_UQ_UTIL_H

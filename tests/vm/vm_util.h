// SPDX-License-Identifier: MIT
// vm_util.h: helpers shared by the issue-3 VM tests (memory, DMA, isolation):
// raw ioctl wrappers that return the errno, a per-open-file context with
// buffers, mappings and queues, command-buffer packet builders (the layouts of
// Documentation/hw/memory-and-queues.md), drm_syncobj helpers and the fence
// status read through a sync_file.
//
// Everything here talks to the kernel directly (no libhpu), so the raw tests
// check the uapi itself; the libhpu tests use only the wait/status helpers.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TESTS_VM_UTIL_H
#define HPU_TESTS_VM_UTIL_H

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <linux/sync_file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "hpu_cb.h"
#include "drm/hpu_accel.h"
#include "hpu/hpu.hpp"

namespace vmt {

constexpr std::uint64_t KiB = 1024;
constexpr std::uint64_t MiB = 1024 * KiB;
constexpr std::uint64_t GiB = 1024 * MiB;
constexpr std::uint64_t kHbmPage = 2 * MiB;
constexpr std::uint64_t kHostPage = 4 * KiB;

// Packet opcodes and completion-record statuses of the hardware spec.
enum : std::uint32_t {
    OP_NOP = 0x00,
    OP_LIN_DMA = 0x01,
    OP_WRITE_VALUE = 0x02,
    OP_SOB_UPDATE = 0x03,
    OP_WAIT = 0x04,
    OP_WREG = 0x05,
};
enum : std::uint32_t { SOB_SET = 0, SOB_ADD = 1 };
enum : std::uint32_t { WAIT_GE = 0, WAIT_EQ = 1 };
constexpr std::uint32_t kLinDmaMemset = 1;

// Issues an ioctl; returns 0 or the errno (retrying EINTR/EAGAIN as libdrm does).
inline int xioctl(int fd, unsigned long req, void *arg)
{
    int r = 0;
    do {
        r = ::ioctl(fd, req, arg); // NOLINT(cppcoreguidelines-pro-type-vararg)
    } while (r < 0 && (errno == EINTR || errno == EAGAIN));
    return r < 0 ? errno : 0;
}

// The HPU device nodes in PCI address order (the order of HPU_EXPECT).
inline std::vector<hpu::DeviceEntry> nodes_by_pci()
{
    auto list = hpu::list_devices();
    std::sort(list.begin(), list.end(),
              [](const hpu::DeviceEntry &a, const hpu::DeviceEntry &b) { return a.pci_addr < b.pci_addr; });
    return list;
}

inline std::string node(std::size_t i = 0)
{
    const auto list = nodes_by_pci();
    if (list.size() <= i)
        FAIL("HPU " << i << " not found (" << list.size() << " present)");
    return list[i].node;
}

inline std::uint64_t now_ns()
{
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

// A command buffer under construction (tests/common/hpu_cb.h).
using Cb = hpu_test::CmdBuf;

// drm_syncobj helpers (standard DRM ioctls from drm.h).
inline int syncobj_create(int fd, std::uint32_t &handle, std::uint32_t flags = 0)
{
    drm_syncobj_create c{};
    c.flags = flags;
    const int e = xioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);
    handle = c.handle;
    return e;
}
inline void syncobj_destroy(int fd, std::uint32_t handle)
{
    drm_syncobj_destroy d{};
    d.handle = handle;
    (void)xioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
}
// Waits for a binary syncobj until an absolute CLOCK_MONOTONIC deadline;
// returns 0 or the errno (ETIME on timeout). No EINTR retry: the kernel
// restarts it.
inline int syncobj_wait_abs(int fd, std::uint32_t handle, std::int64_t deadline_ns, std::uint32_t flags = 0)
{
    drm_syncobj_wait w{};
    w.handles = reinterpret_cast<std::uintptr_t>(&handle); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    w.count_handles = 1;
    w.timeout_nsec = deadline_ns;
    w.flags = flags | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
    const int r = ::ioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w); // NOLINT(cppcoreguidelines-pro-type-vararg)
    return r < 0 ? errno : 0;
}
inline int syncobj_wait(int fd, std::uint32_t handle, std::uint64_t timeout_ns = 30ULL * 1000000000ULL)
{
    const auto deadline = static_cast<std::int64_t>(now_ns() + timeout_ns);
    int e = 0;
    do {
        e = syncobj_wait_abs(fd, handle, deadline);
    } while (e == EINTR);
    return e;
}
inline int timeline_wait(int fd, std::uint32_t handle, std::uint64_t point,
                         std::uint64_t timeout_ns = 30ULL * 1000000000ULL)
{
    drm_syncobj_timeline_wait w{};
    w.handles = reinterpret_cast<std::uintptr_t>(&handle); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    w.points = reinterpret_cast<std::uintptr_t>(&point);   // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    w.count_handles = 1;
    w.timeout_nsec = static_cast<std::int64_t>(now_ns() + timeout_ns);
    w.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
    return xioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w);
}

// Status of a sync_file: 1 signalled OK, 0 pending, < 0 the fence's error.
inline int sync_file_status(int sync_fd)
{
    sync_file_info info{};
    if (xioctl(sync_fd, SYNC_IOC_FILE_INFO, &info) != 0)
        return 1000 + errno; // impossible as a fence status: shows up in the failure message
    return info.status;
}

// Status of the fence a binary syncobj holds (exported as a sync_file):
// 1 OK, 0 pending, negative errno of a failed job; 1000 + errno when the
// export fails.
inline int syncobj_status(int fd, std::uint32_t handle)
{
    drm_syncobj_handle h{};
    h.handle = handle;
    h.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE;
    h.fd = -1;
    const int e = xioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h);
    if (e != 0)
        return 1000 + e;
    const int st = sync_file_status(h.fd);
    ::close(h.fd);
    return st;
}

// One open file of the device: a context with its own address space.
class Ctx {
public:
    explicit Ctx(const std::string &path) : fd_(::open(path.c_str(), O_RDWR | O_CLOEXEC)) // NOLINT(cppcoreguidelines-pro-type-vararg)
    {
        REQUIRE(fd_ >= 0);
        drm_hpu_info req{};
        req.op = DRM_HPU_INFO_MEMORY;
        req.ptr = reinterpret_cast<std::uintptr_t>(&mem_); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        req.size = sizeof(mem_);
        REQUIRE(xioctl(fd_, DRM_IOCTL_HPU_INFO, &req) == 0);
        REQUIRE(mem_.va_end > mem_.va_start);
    }
    Ctx(const Ctx &) = delete;
    Ctx &operator=(const Ctx &) = delete;
    Ctx(Ctx &&) = delete;
    Ctx &operator=(Ctx &&) = delete;
    ~Ctx()
    {
        for (auto &m : maps_)
            ::munmap(m.first, m.second);
        if (fd_ >= 0)
            ::close(fd_);
    }
    [[nodiscard]] int fd() const { return fd_; }
    [[nodiscard]] const drm_hpu_info_memory &mem() const { return mem_; }

    // Returns the errno of BO_CREATE; on success handle and size are set.
    int bo_create(std::uint64_t size, std::uint32_t flags, std::uint32_t &handle,
                  std::uint64_t page_size = 0, std::uint64_t *out_size = nullptr) const
    {
        drm_hpu_bo_create c{};
        c.size = size;
        c.flags = flags;
        c.page_size = page_size;
        const int e = xioctl(fd_, DRM_IOCTL_HPU_BO_CREATE, &c);
        handle = c.handle;
        if (out_size != nullptr)
            *out_size = c.size;
        return e;
    }
    int userptr(const void *addr, std::uint64_t size, std::uint32_t &handle, std::uint32_t flags = 0) const
    {
        drm_hpu_bo_userptr u{};
        u.addr = reinterpret_cast<std::uintptr_t>(addr); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        u.size = size;
        u.flags = flags;
        const int e = xioctl(fd_, DRM_IOCTL_HPU_BO_USERPTR, &u);
        handle = u.handle;
        return e;
    }
    int map(std::uint32_t handle, std::uint64_t bo_offset, std::uint64_t size, std::uint64_t &va,
            std::uint32_t flags = 0) const
    {
        drm_hpu_vm_bind b{};
        b.op = DRM_HPU_VM_MAP;
        b.flags = flags;
        b.handle = handle;
        b.bo_offset = bo_offset;
        b.size = size;
        b.va = va;
        const int e = xioctl(fd_, DRM_IOCTL_HPU_VM_BIND, &b);
        if (e == 0)
            va = b.va;
        return e;
    }
    [[nodiscard]] int unmap(std::uint64_t va) const
    {
        drm_hpu_vm_bind b{};
        b.op = DRM_HPU_VM_UNMAP;
        b.va = va;
        return xioctl(fd_, DRM_IOCTL_HPU_VM_BIND, &b);
    }
    [[nodiscard]] int gem_close(std::uint32_t handle) const
    {
        drm_gem_close c{};
        c.handle = handle;
        return xioctl(fd_, DRM_IOCTL_GEM_CLOSE, &c);
    }
    int queue_create(std::uint32_t engine, std::uint32_t &id, std::uint32_t engine_class = DRM_HPU_ENGINE_DMA,
                     std::uint32_t flags = 0) const
    {
        drm_hpu_queue_create q{};
        q.engine_class = engine_class;
        q.engine = engine;
        q.flags = flags;
        const int e = xioctl(fd_, DRM_IOCTL_HPU_QUEUE_CREATE, &q);
        id = q.queue_id;
        return e;
    }
    [[nodiscard]] int queue_destroy(std::uint32_t id, std::uint32_t pad = 0) const
    {
        drm_hpu_queue_destroy d{};
        d.queue_id = id;
        d.pad = pad;
        return xioctl(fd_, DRM_IOCTL_HPU_QUEUE_DESTROY, &d);
    }

    // A host (shmem) buffer created, mmapped and mapped into the device.
    struct HostBuf {
        std::uint32_t handle = 0;
        std::uint64_t size = 0;
        std::uint64_t va = 0;
        unsigned char *ptr = nullptr;
    };
    HostBuf host_buf(std::uint64_t size)
    {
        HostBuf b;
        REQUIRE(bo_create(size, DRM_HPU_BO_HOST, b.handle, 0, &b.size) == 0);
        drm_hpu_bo_mmap_offset o{};
        o.handle = b.handle;
        REQUIRE(xioctl(fd_, DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == 0);
        void *p = ::mmap(nullptr, b.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, static_cast<off_t>(o.offset));
        REQUIRE(p != MAP_FAILED);
        maps_.emplace_back(p, b.size);
        b.ptr = static_cast<unsigned char *>(p);
        REQUIRE(map(b.handle, 0, b.size, b.va) == 0);
        return b;
    }
    // An HBM buffer mapped into the device; returns its VA.
    std::uint64_t hbm_buf(std::uint64_t size, std::uint32_t *handle_out = nullptr) const
    {
        std::uint32_t h = 0;
        std::uint64_t sz = 0;
        REQUIRE(bo_create(size, DRM_HPU_BO_HBM, h, 0, &sz) == 0);
        std::uint64_t va = 0;
        REQUIRE(map(h, 0, sz, va) == 0);
        if (handle_out != nullptr)
            *handle_out = h;
        return va;
    }

    // Writes a command buffer into a fresh host buffer and returns its VA.
    std::uint64_t put_cb(const Cb &cb)
    {
        const HostBuf b = host_buf(std::max<std::uint64_t>(cb.bytes(), kHostPage));
        std::memcpy(b.ptr, cb.data(), cb.bytes());
        return b.va;
    }

    // Submits; returns the errno. out: binary syncobj to signal (0: none).
    [[nodiscard]] int submit(std::uint32_t queue, std::uint64_t cb_va, std::uint32_t cb_size, std::uint32_t out = 0,
               const std::vector<std::uint32_t> &in = {}, std::uint32_t timeout_ms = 0) const
    {
        std::vector<drm_hpu_sync> ins;
        for (const std::uint32_t h : in) {
            drm_hpu_sync s{};
            s.handle = h;
            ins.push_back(s);
        }
        drm_hpu_sync o{};
        o.handle = out;
        drm_hpu_submit s{};
        s.queue_id = queue;
        s.cb_va = cb_va;
        s.cb_size = cb_size;
        s.num_in_syncs = static_cast<std::uint32_t>(ins.size());
        s.in_syncs = reinterpret_cast<std::uintptr_t>(ins.data()); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        s.num_out_syncs = out != 0 ? 1 : 0;
        s.out_syncs = reinterpret_cast<std::uintptr_t>(&o); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        s.timeout_ms = timeout_ms;
        return xioctl(fd_, DRM_IOCTL_HPU_SUBMIT, &s);
    }

    // Runs a command buffer on a queue and waits: returns the fence status
    // (1 OK, negative errno when the device failed it), or 1000 + errno when
    // the submission itself was refused (-(errno) is reported via *submit_err).
    // timeout_ms is the job's own timeout (0: the driver's default, 10 s).
    // The wait outlasts it by kRunSlackMs, so a job that runs too long shows
    // as the driver failing it (-ETIMEDOUT), not as the two timeouts racing;
    // 2000 + ETIME means the driver did not end the job in time.
    int run(std::uint32_t queue, const Cb &cb, int *submit_err = nullptr, std::uint32_t timeout_ms = 0)
    {
        constexpr std::uint64_t kRunSlackMs = 30000;
        const std::uint64_t va = put_cb(cb);
        std::uint32_t so = 0;
        REQUIRE(syncobj_create(fd_, so) == 0);
        const int e = submit(queue, va, cb.bytes(), so, {}, timeout_ms);
        if (submit_err != nullptr)
            *submit_err = e;
        int st = 1000 + e;
        if (e == 0) {
            const std::uint64_t wait_ms = (timeout_ms != 0 ? timeout_ms : 10000) + kRunSlackMs;
            const int w = syncobj_wait(fd_, so, wait_ms * 1000000ULL);
            st = w == 0 ? syncobj_status(fd_, so) : 2000 + w;
        }
        syncobj_destroy(fd_, so);
        return st;
    }

private:
    int fd_;
    drm_hpu_info_memory mem_{};
    std::vector<std::pair<void *, std::size_t>> maps_;
};

// A fast deterministic pattern: 64-bit word i of stream `seed`.
inline std::uint64_t pattern_word(std::uint64_t seed, std::uint64_t i)
{
    std::uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ULL ^ seed;
    x ^= x >> 29U;
    return x * 0xBF58476D1CE4E5B9ULL;
}
// Fills bytes [0, n) of p with the pattern as seen from byte offset `from`.
inline void fill_pattern(unsigned char *p, std::uint64_t n, std::uint64_t seed, std::uint64_t from = 0)
{
    for (std::uint64_t k = 0; k < n; ++k) {
        const std::uint64_t b = from + k;
        p[k] = static_cast<unsigned char>(pattern_word(seed, b / 8) >> (8 * (b % 8))); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    }
}
// Fast version for 8-byte aligned whole words.
inline void fill_words(std::uint64_t *p, std::uint64_t nwords, std::uint64_t seed, std::uint64_t first = 0)
{
    for (std::uint64_t k = 0; k < nwords; ++k)
        p[k] = pattern_word(seed, first + k); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
}
// Index of the first word that differs from the pattern, or nwords.
inline std::uint64_t check_words(const std::uint64_t *p, std::uint64_t nwords, std::uint64_t seed,
                                 std::uint64_t first = 0)
{
    for (std::uint64_t k = 0; k < nwords; ++k) {
        if (p[k] != pattern_word(seed, first + k)) // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
            return k;
    }
    return nwords;
}

// A file descriptor closed on scope exit: one already open, or a device
// file opened read-write.
class Fd {
public:
    explicit Fd(int fd = -1) : fd_(fd) {}
    explicit Fd(const std::string &path)
        : fd_(::open(path.c_str(), O_RDWR | O_CLOEXEC)) {} // NOLINT(cppcoreguidelines-pro-type-vararg)
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    Fd(Fd &&) = delete;
    Fd &operator=(Fd &&) = delete;
    ~Fd()
    {
        if (fd_ >= 0)
            ::close(fd_);
    }
    int &ref() { return fd_; }
    [[nodiscard]] int get() const { return fd_; }
    int close()
    {
        const int r = ::close(fd_);
        fd_ = -1;
        return r;
    }

private:
    int fd_;
};

} // namespace vmt

#endif // HPU_TESTS_VM_UTIL_H

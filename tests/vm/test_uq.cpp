// SPDX-License-Identifier: MIT
//
// User queues (driver 1.2, hardware spec version 10; the kernel-doc of
// struct drm_hpu_uq_create and its neighbours in include/uapi/drm/
// hpu_accel.h, Documentation/hw/memory-and-queues.md "User streams",
// Documentation/design/user-queues.md sections 3 and 7): a process writes
// descriptors to a ring in its own device address space and rings a
// doorbell page with no system call; the device writes 32-byte completion
// records. Asserted here, through raw ioctls and the mapped rings:
//  - INFO: the capability bit on the spec-10 device, INFO_USER_QUEUES's
//    values, neither on an older device;
//  - UQ_CREATE refuses each bad input with its documented errno and leaves
//    nothing behind; ctx_user_queues and ctx_queues bound a file (ENOSPC),
//    the 12 user streams of an engine bound all files (EBUSY);
//  - jobs run in ring order, records carry seq, index, where and a device
//    time that converts to CLOCK_MONOTONIC; the ring and the completion
//    ring wrap; the doorbell needs no system call (ioctl blocked by
//    seccomp);
//  - UQ_WAIT: EINVAL beyond the doorbell, ETIME with timeout 0, sleeps
//    until the point, each point's own outcome, ENODATA past the kept 256
//    failures, ECANCELED for a destroyed queue;
//  - a failed job (MMU fault, privileged packet, malformed descriptor)
//    fails alone: its record, its point's error, an error event, the next
//    job runs;
//  - UQ_FENCE puts a point into a syncobj a kernel SUBMIT waits for, that
//    exports as a sync_file with the point's status; DRM_HPU_UQ_SIGNAL
//    counts completions in a sync object a kernel job can WAIT for;
//  - an operator soft reset re-runs the paused descriptor and keeps the
//    SIGNAL count; a hard reset ends the queues; fdinfo counts their time.
// The isolation and robustness rules are in test_sec_uq.cpp.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "err_util.h"
#include "uq_util.h"
#include "vm_util.h"

using namespace vmt;

namespace {

constexpr std::uint32_t kGateSob = 5; // user-queue jobs WAIT for it; a kernel job sets it
constexpr std::uint64_t kSec = 1000000000ULL;

// DMA engine `want` when the device has it, else engine 0.
std::uint32_t dma_engine(int fd, std::uint32_t want)
{
    const drm_hpu_info_device d = info_device(fd);
    return d.class_engines[DRM_HPU_ENGINE_DMA] > want ? want : 0;
}

// The where field of a record: [23:0] offset, [27:24] engine, [31:28] stream.
std::uint32_t where_offset(std::uint32_t where) { return where & HPU_CQE_OFFSET_MASK; }
std::uint32_t where_engine(std::uint32_t where) { return (where & HPU_CQE_ENGINE_MASK) >> HPU_CQE_ENGINE_SHIFT; }
std::uint32_t where_stream(std::uint32_t where) { return (where & HPU_CQE_STREAM_MASK) >> HPU_CQE_STREAM_SHIFT; }

// A kernel queue of the context that opens a gate: sets sob to value.
void set_sob(Ctx &c, std::uint32_t kq, std::uint32_t sob, std::uint32_t value)
{
    REQUIRE(c.run(kq, Cb().sob_update(sob, value)) == 1);
}

#if defined(__x86_64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
constexpr std::uint32_t kAuditArch = 0;
#endif

// From now on every ioctl(2) of this process fails ENOSYS. Returns false
// when the filter could not be installed.
bool block_ioctl()
{
    sock_filter prog[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog fprog{};
    fprog.len = static_cast<unsigned short>(sizeof(prog) / sizeof(prog[0]));
    fprog.filter = prog; // NOLINT(cppcoreguidelines-pro-bounds-array-to-pointer-decay)
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) // NOLINT(cppcoreguidelines-pro-type-vararg)
        return false;
    return ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) == 0; // NOLINT(cppcoreguidelines-pro-type-vararg)
}

// The child of the no-system-call test, as bits of its exit status.
enum NoSyscallFail : unsigned {
    NS_SETUP = 1U << 0U,
    NS_FILTER = 1U << 1U,
    NS_IOCTL_WORKED = 1U << 2U,
    NS_NO_RECORD = 1U << 3U,
    NS_BAD_RECORD = 1U << 4U,
    NS_NOT_WRITTEN = 1U << 5U,
    NS_CAUGHT = 1U << 6U,
};

[[noreturn]] void no_syscall_child(const std::string &path, std::uint32_t engine)
{
    child_default_signals();
    unsigned fails = 0;
    try {
        Ctx c(path);
        Uq uq(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 16, 0, 0, 0, 0});
        uq.make();
        const auto out = c.host_buf(4 * KiB);
        if (!block_ioctl())
            ::_exit(NS_FILTER);
        // Proof that the filter holds: the driver is out of reach now.
        std::int32_t st = 0;
        if (uq_wait_raw(c.fd(), uq.id(), 1, 0, &st) != ENOSYS)
            fails |= NS_IOCTL_WORKED;
        constexpr unsigned kJobs = 8;
        for (unsigned k = 0; k < kJobs; ++k)
            uq.submit(Cb().write_value(out.va + 4ULL * k, 0xab00 + k), 0x900 + k);
        const std::uint64_t t0 = now_ns();
        for (unsigned k = 0; k < kJobs; ++k) {
            while (uq.record(k).seq != 0x900 + k && ms_since(t0) < 30000)
                ::usleep(1000);
            ::usleep(1000); // the rest of the 32 bytes, should seq land first
            const drm_hpu_uq_cqe r = uq.record(k);
            if (r.seq != 0x900 + k) {
                fails |= NS_NO_RECORD;
            } else if (r.status != 0 || r.index != k) {
                fails |= NS_BAD_RECORD;
            }
            if (hb_word32(out, k) != 0xab00 + k)
                fails |= NS_NOT_WRITTEN;
        }
    } catch (...) {
        fails |= NS_CAUGHT;
    }
    ::_exit(static_cast<int>(fails));
}

} // namespace

TEST_CASE("user queues: INFO has the capability and INFO_USER_QUEUES on a spec-10 device, neither on older ones",
          "[uq]")
{
    const auto list = nodes_by_pci();
    REQUIRE(!list.empty());
    unsigned v10 = 0;
    for (const auto &n : list) {
        Fd fd(n.node);
        REQUIRE(fd.get() >= 0);
        const drm_hpu_info_device d = info_device(fd.get());
        INFO(n.node << ": spec version " << d.spec_version << ", driver " << d.driver_major << "."
                    << d.driver_minor << ", caps 0x" << std::hex << d.caps);
        drm_hpu_info_uq u{};
        std::uint32_t size = 0;
        const int e = info_uq(fd.get(), u, &size);
        if (d.spec_version < 10) {
            CHECK((d.caps & DRM_HPU_CAP_USER_QUEUES) == 0);
            CHECK(e == EOPNOTSUPP);
            drm_hpu_uq_create c{};
            c.ring_size = 2;
            c.cq_size = 2;
            CHECK(uq_create_raw(fd.get(), c) == EOPNOTSUPP);
            continue;
        }
        ++v10;
        CHECK((d.driver_major > 1 || (d.driver_major == 1 && d.driver_minor >= 2)));
        CHECK((d.caps & DRM_HPU_CAP_USER_QUEUES) != 0);
        REQUIRE(e == 0);
        CHECK(size == sizeof(drm_hpu_info_uq));
        CHECK(u.per_engine == kUqPerEngine);
        CHECK(u.ring_max == kUqRingMax);
        CHECK(u.cqe_size == kUqCqeSize);
        CHECK(u.cqe_size == sizeof(drm_hpu_uq_cqe));
        const auto lim = uq_limit(n.node, "ctx_user_queues");
        CHECK(lim.has_value());
        if (lim)
            CHECK(u.ctx_max == *lim);
        CHECK(u.ctx_max >= 1); // root, the default limit (4)
        // The offset is a property of the device's clock: two answers
        // agree to within a few milliseconds (a loaded emulated guest).
        drm_hpu_info_uq u2{};
        REQUIRE(info_uq(fd.get(), u2) == 0);
        const std::int64_t drift = u2.time_offset_ns - u.time_offset_ns;
        INFO("time_offset_ns " << u.time_offset_ns << " then " << u2.time_offset_ns);
        CHECK(std::abs(drift) < 5000000);
        // A short buffer gets a prefix and the full size.
        std::uint64_t prefix[2] = {~0ULL, ~0ULL};
        drm_hpu_info req{};
        req.op = DRM_HPU_INFO_USER_QUEUES;
        req.ptr = reinterpret_cast<std::uintptr_t>(&prefix[0]); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        req.size = 8;
        REQUIRE(xioctl(fd.get(), DRM_IOCTL_HPU_INFO, &req) == 0);
        CHECK(req.size == sizeof(drm_hpu_info_uq));
        CHECK(static_cast<std::uint32_t>(prefix[0]) == kUqPerEngine);
        CHECK(prefix[1] == ~0ULL);
    }
    if (v10 == 0)
        SKIP("no device of spec version 10");
}

TEST_CASE("UQ_CREATE refuses each bad input with its errno and leaves no queue behind", "[uq]")
{
    const std::string path = node(0);
    Ctx c(path);
    require_uq(c.fd());
    const drm_hpu_info_device dev = info_device(c.fd());
    const drm_hpu_info_uq info = uq_info(c.fd());
    REQUIRE(info.ctx_max >= 1);
    const std::uint32_t engine = dma_engine(c.fd(), 1);
    Uq uq(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 64, 0, 0, 0, 0});

    // Memory for the EFAULT cases, at fixed addresses with nothing mapped
    // after them: a page whose end a ring or completion ring runs past, and
    // a page the device may only read.
    const std::uint64_t base = c.mem().va_start + 5 * GiB;
    REQUIRE(base + 8 * GiB < c.mem().va_end);
    std::uint32_t edge_bo = 0;
    REQUIRE(c.bo_create(kHostPage, DRM_HPU_BO_HOST, edge_bo) == 0);
    std::uint64_t edge = base;
    REQUIRE(c.map(edge_bo, 0, kHostPage, edge, DRM_HPU_VM_FIXED) == 0);
    std::uint32_t ro_bo = 0;
    REQUIRE(c.bo_create(kHostPage, DRM_HPU_BO_HOST, ro_bo) == 0);
    std::uint64_t ro = base + 1 * GiB;
    REQUIRE(c.map(ro_bo, 0, kHostPage, ro, DRM_HPU_VM_FIXED | DRM_HPU_VM_READONLY) == 0);
    const std::uint64_t unmapped = base + 3 * GiB;

    struct Bad {
        const char *what;
        int err;
        void (*spoil)(drm_hpu_uq_create &, std::uint64_t edge, std::uint64_t ro, std::uint64_t unmapped,
                      std::uint32_t num_dma);
    };
    const std::vector<Bad> bads = {
        {"unknown flag bit 1", EINVAL, [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.flags = 2; }},
        {"unknown flag bit 31", EINVAL, [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.flags = 1U << 31U; }},
        {"signal_sob without DRM_HPU_UQ_SIGNAL", EINVAL,
         [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.signal_sob = 3; }},
        {"signal_sob 32", EINVAL,
         [](drm_hpu_uq_create &a, auto, auto, auto, auto) {
             a.flags = DRM_HPU_UQ_SIGNAL;
             a.signal_sob = 32;
         }},
        {"pad", EINVAL, [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.pad = 1; }},
        {"reserved[0]", EINVAL, [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.reserved[0] = 1; }},
        {"reserved[1]", EINVAL, [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.reserved[1] = 1ULL << 63U; }},
        {"unknown engine class", EINVAL, [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.engine_class = 3; }},
        {"engine class 7", EINVAL, [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.engine_class = 7; }},
        {"DMA engine past the last", EINVAL,
         [](drm_hpu_uq_create &a, auto, auto, auto, std::uint32_t n) { a.engine = n; }},
        {"engine 0xffffffff", EINVAL, [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.engine = ~0U; }},
        {"TPC engine 1 (the class has one)", EINVAL,
         [](drm_hpu_uq_create &a, auto, auto, auto, auto) {
             a.engine_class = DRM_HPU_ENGINE_TPC;
             a.engine = 1;
         }},
        {"ring_size 0", EINVAL, [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.ring_size = 0; }},
        {"ring_size 1", EINVAL, [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.ring_size = 1; }},
        {"ring_size 3", EINVAL, [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.ring_size = 3; }},
        {"ring_size 48", EINVAL, [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.ring_size = 48; }},
        {"ring_size 8192 (above ring_max)", EINVAL,
         [](drm_hpu_uq_create &a, auto, auto, auto, auto) {
             a.ring_size = 8192;
             a.cq_size = 8192;
         }},
        {"cq_size 0", EINVAL, [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.cq_size = 0; }},
        {"cq_size 96", EINVAL, [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.cq_size = 96; }},
        {"cq_size 8192 (above ring_max)", EINVAL,
         [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.cq_size = 8192; }},
        {"cq_size below ring_size", EINVAL, [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.cq_size = 32; }},
        {"ring_va 32-byte aligned only", EINVAL,
         [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.ring_va += 32; }},
        {"ring_va 8-byte aligned only", EINVAL, [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.ring_va += 8; }},
        {"cq_va 16-byte aligned only", EINVAL, [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.cq_va += 16; }},
        {"cq_va 4-byte aligned only", EINVAL, [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.cq_va += 4; }},
        {"timeout_ms 3600001", EINVAL,
         [](drm_hpu_uq_create &a, auto, auto, auto, auto) { a.timeout_ms = 3600001; }},
        {"ring not mapped", EFAULT,
         [](drm_hpu_uq_create &a, auto, auto, std::uint64_t u, auto) { a.ring_va = u; }},
        {"ring running past its mapping", EFAULT,
         [](drm_hpu_uq_create &a, std::uint64_t e, auto, auto, auto) {
             a.ring_va = e + kHostPage - 64; // 64 descriptors: 2 KiB from here
         }},
        {"completion ring not mapped", EFAULT,
         [](drm_hpu_uq_create &a, auto, auto, std::uint64_t u, auto) { a.cq_va = u; }},
        {"completion ring running past its mapping", EFAULT,
         [](drm_hpu_uq_create &a, std::uint64_t e, auto, auto, auto) { a.cq_va = e + kHostPage - 32; }},
        {"completion ring read-only for the device", EFAULT,
         [](drm_hpu_uq_create &a, auto, std::uint64_t r, auto, auto) { a.cq_va = r; }},
    };
    for (const Bad &bad : bads) {
        INFO(bad.what);
        drm_hpu_uq_create a = uq.args();
        bad.spoil(a, edge, ro, unmapped, dev.class_engines[DRM_HPU_ENGINE_DMA]);
        a.queue_id = 0x5a5a;
        CHECK(uq_create_raw(c.fd(), a) == bad.err);
    }
    // The read-only page is fine for a ring (the device only reads it).
    {
        drm_hpu_uq_create a = uq.args();
        a.ring_va = ro;
        a.ring_size = 2;
        a.cq_size = 2;
        REQUIRE(uq_create_raw(c.fd(), a) == 0);
        CHECK(c.queue_destroy(a.queue_id) == 0);
    }
    // Root may ask for the largest timeout.
    {
        drm_hpu_uq_create a = uq.args();
        a.timeout_ms = 3600000;
        REQUIRE(uq_create_raw(c.fd(), a) == 0);
        CHECK(c.queue_destroy(a.queue_id) == 0);
    }
    // No refused call left a queue: the file still has all of ctx_max.
    std::vector<std::unique_ptr<Uq>> all;
    for (std::uint32_t i = 0; i < info.ctx_max; ++i) {
        INFO("user queue " << i << " of " << info.ctx_max);
        auto &q = all.emplace_back(std::make_unique<Uq>(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 2, 0, 0, 0, 0}));
        REQUIRE(q->create() == 0);
    }
    Uq extra(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 2, 0, 0, 0, 0});
    CHECK(extra.create() == ENOSPC);
    // Each of them is a queue of its own that runs.
    const auto out = c.host_buf(4 * KiB);
    for (std::size_t i = 0; i < all.size(); ++i) {
        all[i]->map_db();
        const std::uint64_t p = all[i]->submit(Cb().write_value(out.va + 4 * i, 0x77000 + i), i);
        CHECK(all[i]->outcome(p) == 0);
        CHECK(hb_word32(out, i) == 0x77000 + i);
    }
}

TEST_CASE("UQ_CREATE: a file has at most ctx_user_queues user queues, apart from ctx_queues", "[uq]")
{
    const std::string path = node(0);
    {
        Ctx c(path);
        require_uq(c.fd());
    }
    const std::uint32_t engine = 0;
    SECTION("the default limit: the next one is ENOSPC, a destroyed one makes room") {
        Ctx c(path);
        const drm_hpu_info_uq info = uq_info(c.fd());
        REQUIRE(info.ctx_max >= 1);
        std::vector<std::unique_ptr<Uq>> qs;
        for (std::uint32_t i = 0; i < info.ctx_max; ++i) {
            auto &q = qs.emplace_back(std::make_unique<Uq>(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 2, 0, 0, 0, 0}));
            REQUIRE(q->create() == 0);
        }
        Uq more(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 2, 0, 0, 0, 0});
        CHECK(more.create() == ENOSPC);
        // Another file is not affected.
        {
            Ctx other(path);
            Uq o(other, UqParams{engine, DRM_HPU_ENGINE_DMA, 2, 0, 0, 0, 0});
            CHECK(o.create() == 0);
        }
        REQUIRE(qs.front()->destroy() == 0);
        CHECK(more.create() == 0);
        Uq again(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 2, 0, 0, 0, 0});
        CHECK(again.create() == ENOSPC);
    }
    SECTION("root sets ctx_user_queues to 2") {
        const UqLimit lim(path, "ctx_user_queues", 2);
        Ctx c(path);
        CHECK(uq_info(c.fd()).ctx_max == 2);
        Uq a(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 2, 0, 0, 0, 0});
        Uq b(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 2, 0, 0, 0, 0});
        Uq d(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 2, 0, 0, 0, 0});
        CHECK(a.create() == 0);
        CHECK(b.create() == 0);
        CHECK(d.create() == ENOSPC);
        // Kernel queues are not user queues.
        std::uint32_t kq = 0;
        CHECK(c.queue_create(engine, kq) == 0);
    }
    SECTION("user queues take no kernel queue's place") {
        const UqLimit lim(path, "ctx_queues", 3);
        const UqLimit ulim(path, "ctx_user_queues", 2);
        Ctx c(path);
        std::uint32_t k[4] = {};
        Uq a(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 2, 0, 0, 0, 0});
        Uq b(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 2, 0, 0, 0, 0});
        REQUIRE(a.create() == 0);
        REQUIRE(b.create() == 0);
        // All three kernel queues still fit, the fourth is over ctx_queues.
        for (int i = 0; i < 3; ++i)
            REQUIRE(c.queue_create(engine, k[i]) == 0);
        CHECK(c.queue_create(engine, k[3]) == ENOSPC);
        // User queue ids are above the kernel queues' (65 to 128).
        CHECK(a.id() > 64);
        CHECK(a.id() <= 128);
        CHECK(b.id() > 64);
        for (int i = 0; i < 3; ++i)
            CHECK(k[i] <= 64);
    }
    SECTION("ctx_user_queues 0: user queues are off for a caller without CAP_SYS_ADMIN") {
        const UqLimit lim(path, "ctx_user_queues", 0);
        Ctx c(path);
        Uq a(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 2, 0, 0, 0, 0});
        // On this root-opened file, as uid 65534 (capabilities are checked
        // at the call).
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            child_default_signals();
            int rc = 0;
            if (::setgid(65534) != 0 || ::setuid(65534) != 0)
                ::_exit(0x40);
            drm_hpu_info_uq u{};
            if (info_uq(c.fd(), u) != 0 || u.ctx_max != 0)
                rc |= 1;
            drm_hpu_uq_create args = a.args();
            if (uq_create_raw(c.fd(), args) != ENOSPC)
                rc |= 2;
            std::uint32_t kq = 0;
            if (c.queue_create(engine, kq) != 0)
                rc |= 4;
            ::_exit(rc);
        }
        int st = 0;
        REQUIRE(::waitpid(pid, &st, 0) == pid);
        REQUIRE(WIFEXITED(st));
        INFO("child failures 0x" << std::hex << WEXITSTATUS(st)
                                 << " (1 INFO ctx_max not 0, 2 UQ_CREATE not ENOSPC, 4 QUEUE_CREATE failed)");
        CHECK(WEXITSTATUS(st) == 0);
    }
}

TEST_CASE("UQ_CREATE: EBUSY once the 12 user streams of an engine are taken, the kernel path still runs", "[uq]")
{
    const std::string path = node(0);
    Ctx c(path);
    require_uq(c.fd());
    const std::uint32_t engine = dma_engine(c.fd(), 3);
    const std::uint32_t other = engine == 0 ? dma_engine(c.fd(), 1) : 0;
    {
        EngineFill fill(path, engine);
        INFO("queues made " << fill.count() << " in " << fill.holders().size() << " files, other errno "
                            << fill.other_errno());
        REQUIRE(fill.full());
        CHECK(fill.count() == kUqPerEngine);
        CHECK(fill.holders().size() > 1); // the default ctx_user_queues is below 12

        Uq refused(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 2, 0, 0, 0, 0});
        CHECK(refused.create() == EBUSY);
        // Another engine still has its own.
        if (other != engine) {
            Uq elsewhere(c, UqParams{other, DRM_HPU_ENGINE_DMA, 2, 0, 0, 0, 0});
            CHECK(elsewhere.create() == 0);
        }
        // The kernel path on the full engine.
        std::uint32_t kq = 0;
        REQUIRE(c.queue_create(engine, kq) == 0);
        const auto out = c.host_buf(4 * KiB);
        CHECK(c.run(kq, Cb().write_value(out.va, 0x4b)) == 1);
        CHECK(hb_word32(out, 0) == 0x4b);
        // A user queue destroyed elsewhere frees its stream for this file.
        auto &h = fill.holders().front();
        REQUIRE(!h.uqs.empty());
        REQUIRE(h.uqs.back()->destroy() == 0);
        CHECK(refused.create() == 0);
        Uq refused2(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 2, 0, 0, 0, 0});
        CHECK(refused2.create() == EBUSY);
        REQUIRE(refused.destroy() == 0);
    }
    // Closing the files gave every stream back.
    CHECK(free_user_streams(path, engine) == kUqPerEngine);
}

TEST_CASE("user-queue jobs run in ring order and write records with seq, index, where and time", "[uq]")
{
    const std::string path = node(0);
    Ctx c(path);
    require_uq(c.fd());
    const std::uint32_t engine = dma_engine(c.fd(), 1);
    Uq uq(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 64, 0, 0, 0, 0});
    uq.make();
    CHECK(uq.asid() == c.mem().asid);
    const auto out = c.host_buf(4 * KiB);
    constexpr unsigned kJobs = 20;
    const std::uint64_t t0 = now_ns();
    // Job k copies the word job k-1 wrote (or writes the first): every word
    // holds the magic only if the jobs ran in ring order.
    for (unsigned k = 0; k < kJobs; ++k) {
        const Cb cb = k == 0 ? Cb().write_value(out.va, 0x0dde) : Cb().lin_dma(out.va + 8ULL * (k - 1), out.va + 8ULL * k, 8);
        CHECK(uq.submit(cb, 0x5e90000ULL + k) == k + 1);
    }
    std::int32_t st = 1;
    std::uint64_t done = 0;
    REQUIRE(uq.wait(kJobs, &st, &done) == 0);
    const std::uint64_t t1 = now_ns();
    CHECK(st == 0);
    CHECK(done == kJobs);
    for (unsigned k = 0; k < kJobs; ++k) {
        INFO("word " << k);
        CHECK(hb_word64(out, k) == 0x0dde);
    }
    const drm_hpu_info_uq info = uq_info(c.fd());
    std::uint64_t prev_time = 0;
    for (unsigned k = 0; k < kJobs; ++k) {
        INFO("record " << k);
        const drm_hpu_uq_cqe r = uq.record(k);
        CHECK(r.seq == 0x5e90000ULL + k);
        CHECK(r.status == 0);
        CHECK(r.index == k);
        CHECK(where_offset(r.where) == 0);
        CHECK(where_engine(r.where) == engine);
        CHECK(where_stream(r.where) >= HPU_QS_USER_FIRST);
        CHECK(r.time >= prev_time);
        prev_time = r.time;
        // Device time plus the offset is CLOCK_MONOTONIC of the completion.
        const auto mono = static_cast<std::int64_t>(r.time) + info.time_offset_ns;
        const std::int64_t slack = 50000000; // a loaded emulated guest
        CHECK(mono >= static_cast<std::int64_t>(t0) - slack);
        CHECK(mono <= static_cast<std::int64_t>(t1) + slack);
    }
    CHECK(uq.record(kJobs - 1).time > uq.record(0).time);
    // Nothing beyond: the slots of descriptors not written are still zero.
    for (unsigned k = kJobs; k < 64; ++k) {
        const drm_hpu_uq_cqe r = uq.record(k);
        INFO("record slot " << k);
        CHECK(r.seq == 0);
        CHECK(r.time == 0);
    }
    // Every point reached reports its own outcome, the oldest too.
    CHECK(uq.outcome(1) == 0);
    CHECK(uq.outcome(kJobs / 2) == 0);
}

TEST_CASE("a user-queue job runs with no system call", "[uq]")
{
    const std::string path = node(0);
    {
        Ctx c(path);
        require_uq(c.fd());
    }
    if (kAuditArch == 0)
        SKIP("no seccomp architecture constant for this build");
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0)
        no_syscall_child(path, 0);
    int st = 0;
    REQUIRE(::waitpid(pid, &st, 0) == pid);
    REQUIRE(WIFEXITED(st));
    INFO("child failures 0x" << std::hex << WEXITSTATUS(st)
                             << " (1 setup, 2 seccomp, 4 an ioctl still worked, 8 no record, 0x10 bad record,"
                                " 0x20 memory not written, 0x40 exception)");
    CHECK(WEXITSTATUS(st) == 0);
}

TEST_CASE("user-queue jobs wrap a ring of 4 descriptors, records wrap their completion ring", "[uq]")
{
    const std::string path = node(0);
    Ctx c(path);
    require_uq(c.fd());
    const std::uint32_t cq_size = GENERATE(4U, 16U);
    INFO("cq_size " << cq_size);
    Uq uq(c, UqParams{0, DRM_HPU_ENGINE_DMA, 4, cq_size, 0, 0, 0});
    uq.make();
    const auto out = c.host_buf(4 * KiB);
    constexpr unsigned kJobs = 50;
    for (unsigned k = 0; k < kJobs; ++k)
        uq.submit(Cb().write_value(out.va + 4ULL * k, 0xa000 + k), 0x1000 + k);
    std::int32_t st = 1;
    std::uint64_t done = 0;
    REQUIRE(uq.wait(kJobs, &st, &done) == 0);
    CHECK(st == 0);
    CHECK(done == kJobs);
    for (unsigned k = 0; k < kJobs; ++k) {
        INFO("word " << k);
        CHECK(hb_word32(out, k) == 0xa000 + k);
    }
    // The completion ring holds the last cq_size records, record n at
    // slot n % cq_size.
    for (unsigned k = kJobs - cq_size; k < kJobs; ++k) {
        INFO("record " << k);
        const drm_hpu_uq_cqe r = uq.record(k);
        CHECK(r.index == k);
        CHECK(r.seq == 0x1000 + k);
        CHECK(r.status == 0);
    }
}

TEST_CASE("UQ_WAIT: EINVAL beyond the doorbell, ETIME with no time, then it sleeps until the point", "[uq]")
{
    const std::string path = node(0);
    Ctx c(path);
    require_uq(c.fd());
    std::uint32_t kq = 0;
    REQUIRE(c.queue_create(1, kq) == 0);
    Uq uq(c, UqParams{0, DRM_HPU_ENGINE_DMA, 8, 0, 0, 0, 0});
    uq.make();
    const auto out = c.host_buf(4 * KiB);
    const int fd = c.fd();

    // Written, not rung: no point exists yet.
    uq.put(Cb().wait(kGateSob, 1).write_value(out.va, 0x6a7e), 1);
    std::int32_t st = 0;
    std::uint64_t done = ~0ULL;
    CHECK(uq_wait_raw(fd, uq.id(), 1, 0, &st) == EINVAL);
    std::uint32_t so = 0;
    REQUIRE(syncobj_create(fd, so) == 0);
    CHECK(uq_fence_raw(fd, uq.id(), 1, so) == EINVAL);
    uq.ring();
    // Rung: a deadline already past answers at once.
    CHECK(uq_wait_raw(fd, uq.id(), 1, 0, &st, &done) == ETIME);
    CHECK(done == 0);
    CHECK(uq_wait_raw(fd, uq.id(), 2, 0, &st) == EINVAL); // one beyond
    // Bad calls.
    CHECK(uq_wait_raw(fd, uq.id(), 0, 0, &st) == EINVAL);
    CHECK(uq_wait_raw(fd, uq.id(), 1, 0, &st, nullptr, 1) == EINVAL);
    CHECK(uq_wait_raw(fd, uq.id(), 1, 0, &st, nullptr, 0, 1) == EINVAL);
    CHECK(uq_wait_raw(fd, uq.id() + 1000, 1, 0, &st) == ENOENT);
    CHECK(uq_wait_raw(fd, kq, 1, 0, &st) == ENOENT); // a kernel queue
    // Another file does not see this file's queue.
    {
        Ctx other(path);
        CHECK(uq_wait_raw(other.fd(), uq.id(), 1, 0, &st) == ENOENT);
    }

    // A sleeping wait returns when a kernel job opens the gate 300 ms later.
    const Cb open = Cb().sob_update(kGateSob, 1);
    const std::uint64_t open_va = c.put_cb(open);
    std::thread opener([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        std::ignore = c.submit(kq, open_va, open.bytes());
    });
    const std::uint64_t t0 = now_ns();
    const int e = uq_wait_raw(fd, uq.id(), 1, static_cast<std::int64_t>(now_ns() + 30 * kSec), &st, &done);
    const double waited = ms_since(t0);
    opener.join();
    INFO("waited " << waited << " ms");
    REQUIRE(e == 0);
    CHECK(st == 0);
    CHECK(done >= 1);
    CHECK(waited >= 250);
    CHECK(hb_word32(out, 0) == 0x6a7e);
    // Destroyed: the id is gone at once.
    REQUIRE(uq.destroy() == 0);
    CHECK(uq_wait_raw(fd, uq.id(), 1, 0, &st) == ENOENT);
    syncobj_destroy(fd, so);
}

TEST_CASE("a user-queue job that faults fails alone: MMU_FAULT record, -EFAULT point, an error event, the next runs",
          "[uq]")
{
    const std::string path = node(0);
    const auto e0 = errors_now(path);
    Ctx c(path);
    require_uq(c.fd());
    REQUIRE(enable_events(c.fd()) == 0);
    const std::uint32_t engine = dma_engine(c.fd(), 2);
    Uq uq(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 16, 0, 0, 0, 0});
    uq.make();
    const auto out = c.host_buf(4 * KiB);
    const std::uint64_t nowhere = c.mem().va_start + 7 * GiB; // mapped by nobody

    uq.submit(Cb().write_value(out.va, 1), 100);
    // The fault is in the packet at offset 8.
    uq.submit(Cb().nop().write_value(nowhere, 0xbad).write_value(out.va + 4, 2), 101);
    uq.submit(Cb().write_value(out.va + 8, 3), 102);
    std::int32_t st = 1;
    std::uint64_t done = 0;
    REQUIRE(uq.wait(3, &st, &done) == 0);
    CHECK(st == 0); // point 3 is the third job's, which ran
    CHECK(done == 3);
    CHECK(uq.outcome(1) == 0);
    CHECK(uq.outcome(2) == -EFAULT);
    CHECK(hb_word32(out, 0) == 1);
    CHECK(hb_word32(out, 1) == 0); // the faulting job stopped at the fault
    CHECK(hb_word32(out, 2) == 3);
    const drm_hpu_uq_cqe r = uq.record(1);
    CHECK(r.status == HPU_CQ_MMU_FAULT);
    CHECK(where_offset(r.where) == 8);
    CHECK(r.index == 1);
    CHECK(r.seq == 101);
    CHECK(uq.record(2).status == 0);
    // The queue goes on after it.
    CHECK(uq.outcome(uq.submit(Cb().write_value(out.va + 12, 4), 103)) == 0);
    CHECK(hb_word32(out, 3) == 4);

    std::vector<Event> evs;
    const bool got = read_events_until(c.fd(), evs, 10000, [&](const Event &e) {
        return e.type == DRM_HPU_EVENT_ERROR && e.err.queue_id == uq.id();
    });
    INFO("events: " << describe(evs));
    REQUIRE(got);
    for (const Event &e : evs) {
        if (e.type != DRM_HPU_EVENT_ERROR || e.err.queue_id != uq.id())
            continue;
        CHECK(e.err.kind == DRM_HPU_ERROR_MMU_FAULT);
        CHECK(e.err.errno_value == EFAULT);
        CHECK(e.err.seq == 2); // the failed point
        CHECK(e.err.engine == engine);
    }
    CHECK(errors_now(path).mmu_faults > e0.mmu_faults);
}

TEST_CASE("a user queue whose ring the device cannot read dies -EFAULT; the points before it keep their success",
          "[uq]")
{
    const std::string path = node(0);
    Ctx c(path);
    require_uq(c.fd());
    REQUIRE(enable_events(c.fd()) == 0);
    Uq uq(c, UqParams{0, DRM_HPU_ENGINE_DMA, 8, 0, 0, 0, 0});
    uq.make();
    const auto out = c.host_buf(4 * KiB);
    CHECK(uq.outcome(uq.submit(Cb().write_value(out.va, 1), 1)) == 0);
    CHECK(uq.outcome(uq.submit(Cb().write_value(out.va + 4, 2), 2)) == 0);
    // The ring's mapping goes: fetching the next descriptor faults.
    REQUIRE(c.unmap(uq.ring_buf().va) == 0);
    const std::uint64_t p3 = uq.submit(Cb().write_value(out.va + 8, 3), 3);
    CHECK(uq.outcome(p3) == -EFAULT);
    CHECK(hb_word32(out, 2) == 0);
    // The queue fault is no descriptor's failure: the last point that ran
    // is not blamed for it.
    CHECK(uq.outcome(2) == 0);
    CHECK(uq.outcome(1) == 0);
    CHECK(hb_word32(out, 0) == 1);
    CHECK(hb_word32(out, 1) == 2);
    std::vector<Event> evs;
    (void)read_events_until(c.fd(), evs, 1000, [](const Event &) { return false; });
    INFO("events: " << describe(evs));
    for (const Event &e : evs)
        CHECK_FALSE((e.type == DRM_HPU_EVENT_ERROR && e.err.queue_id == uq.id() && e.err.seq <= 2));
}

TEST_CASE("a privileged packet on a user queue fails its job -EPERM, the queue goes on", "[uq]")
{
    const std::string path = node(0);
    const auto e0 = errors_now(path);
    Ctx c(path);
    require_uq(c.fd());
    Uq uq(c, UqParams{0, DRM_HPU_ENGINE_DMA, 8, 0, 0, 0, 0});
    uq.make();
    const auto out = c.host_buf(4 * KiB);
    const std::uint64_t p = uq.submit(Cb().write_value(out.va, 1).wreg(HPU_REG_SCRATCH, 0x5c).write_value(out.va + 4, 2), 7);
    const std::uint64_t next = uq.submit(Cb().write_value(out.va + 8, 3), 8);
    CHECK(uq.outcome(next) == 0);
    CHECK(uq.outcome(p) == -EPERM);
    const drm_hpu_uq_cqe r = uq.record(p - 1);
    CHECK(r.status == HPU_CQ_PRIV);
    CHECK(where_offset(r.where) == 16);
    CHECK(hb_word32(out, 0) == 1);
    CHECK(hb_word32(out, 1) == 0);
    CHECK(hb_word32(out, 2) == 3);
    CHECK(errors_now(path).priv_violations == e0.priv_violations + 1);
}

TEST_CASE("a malformed user-queue descriptor fails -EIO without running, the next one runs", "[uq]")
{
    const std::string path = node(0);
    Ctx c(path);
    require_uq(c.fd());
    Uq uq(c, UqParams{0, DRM_HPU_ENGINE_DMA, 4, 0, 0, 0, 0});
    uq.make();
    const auto out = c.host_buf(4 * KiB);
    const auto cbs = c.host_buf(4 * KiB);

    struct Bad {
        const char *what;
        void (*spoil)(drm_hpu_uq_desc &);
    };
    const std::vector<Bad> bads = {
        {"another asid", [](drm_hpu_uq_desc &d) { d.asid = static_cast<std::uint16_t>(d.asid + 1); }},
        {"asid 0 (the kernel's)", [](drm_hpu_uq_desc &d) { d.asid = 0; }},
        {"flags", [](drm_hpu_uq_desc &d) { d.flags = 1; }},
        {"reserved", [](drm_hpu_uq_desc &d) { d.reserved = 1; }},
        {"cb_size 0", [](drm_hpu_uq_desc &d) { d.cb_size = 0; }},
        {"cb_size not a multiple of 8", [](drm_hpu_uq_desc &d) { d.cb_size = 12; }},
        {"cb_size above 1 MiB", [](drm_hpu_uq_desc &d) { d.cb_size = 0x100008; }},
        {"cb_va not 8-byte aligned", [](drm_hpu_uq_desc &d) { d.cb_va += 4; }},
        {"cb_va + cb_size beyond 2^64", [](drm_hpu_uq_desc &d) { d.cb_va = ~0ULL - 7; }},
    };
    for (std::size_t i = 0; i < bads.size(); ++i) {
        INFO(bads[i].what);
        // A command buffer that would write word i if it ran: 8 bytes of
        // NOP first, so that cb_va + 4 still decodes as packets.
        const Cb cb = Cb().nop().write_value(out.va + 8 * i, 0xbad0 + static_cast<std::uint32_t>(i));
        std::memcpy(cbs.ptr + 64 * i, cb.data(), cb.bytes()); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        drm_hpu_uq_desc d{};
        d.cb_va = cbs.va + 64 * i;
        d.cb_size = cb.bytes();
        d.asid = uq.asid();
        d.seq = 0xd000 + i;
        bads[i].spoil(d);
        const std::uint64_t n = uq.put_desc(d);
        uq.ring();
        const std::uint64_t good = uq.submit(Cb().write_value(out.va + 8 * i + 4, 0x600d), 0xe000 + i);
        CHECK(uq.outcome(good) == 0);
        CHECK(uq.outcome(n + 1) == -EIO);
        const drm_hpu_uq_cqe r = uq.record(n);
        CHECK(r.status == HPU_CQ_BAD_DESC);
        CHECK(r.index == n);
        CHECK(hb_word32(out, 2 * i) == 0);
        CHECK(hb_word32(out, 2 * i + 1) == 0x600d);
    }
}

TEST_CASE("UQ_WAIT keeps each failed point's error for the last 256 failures, -ENODATA before them", "[uq]")
{
    const std::string path = node(0);
    Ctx c(path);
    require_uq(c.fd());
    Uq uq(c, UqParams{0, DRM_HPU_ENGINE_DMA, 64, 0, 0, 0, 0});
    uq.make();
    const auto out = c.host_buf(4 * KiB);
    // Point 1 fails (a WRITE_VALUE to an unaligned address: BAD_PACKET,
    // -EINVAL), then 299 more failures, one good job at point 151.
    constexpr unsigned kJobs = 301;
    for (unsigned k = 0; k < kJobs; ++k) {
        const Cb cb = k == 150 ? Cb().write_value(out.va, 0x151) : Cb().write_value(out.va + 2, k);
        uq.put(cb, k);
    }
    uq.ring();
    std::int32_t st = 0;
    std::uint64_t done = 0;
    REQUIRE(uq.wait(kJobs, &st, &done) == 0);
    CHECK(done == kJobs);
    CHECK(st == -EINVAL);
    CHECK(hb_word32(out, 0) == 0x151);
    CHECK(uq.record(kJobs - 1).status == HPU_CQ_BAD_PACKET);
    // 300 failures: the first 44 are forgotten, the rest are kept.
    CHECK(uq.outcome(1) == -ENODATA);
    CHECK(uq.outcome(kJobs - 255) == -EINVAL);
    CHECK(uq.outcome(kJobs - 1) == -EINVAL);
}

TEST_CASE("destroying a user queue drops its descriptors not yet run and cancels its waiter", "[uq]")
{
    const std::string path = node(0);
    Ctx c(path);
    require_uq(c.fd());
    std::uint32_t kq = 0;
    REQUIRE(c.queue_create(1, kq) == 0);
    Uq uq(c, UqParams{0, DRM_HPU_ENGINE_DMA, 8, 0, 0, 0, 0});
    uq.make();
    const auto out = c.host_buf(4 * KiB);
    uq.submit(Cb().wait(kGateSob, 1).write_value(out.va, 1), 1);
    uq.submit(Cb().write_value(out.va + 4, 2), 2);
    std::int32_t st = 0;
    int werr = -1;
    std::thread waiter([&] {
        werr = uq_wait_raw(c.fd(), uq.id(), 2, static_cast<std::int64_t>(now_ns() + 60 * kSec), &st);
    });
    // Should QUEUE_DESTROY wait for the blocked job (wrong), the gate
    // opens after 15 s, so that the test fails rather than hangs.
    const Cb open = Cb().sob_update(kGateSob, 1);
    const std::uint64_t open_va = c.put_cb(open);
    std::atomic<bool> destroyed{false};
    std::thread rescue([&] {
        for (int i = 0; i < 150 && !destroyed.load(); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (!destroyed.load())
            std::ignore = c.submit(kq, open_va, open.bytes());
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const std::uint64_t t0 = now_ns();
    const int de = uq.destroy();
    const double took = ms_since(t0);
    destroyed = true;
    rescue.join();
    waiter.join();
    INFO("QUEUE_DESTROY took " << took << " ms");
    CHECK(de == 0);
    CHECK(took < 10000); // it does not wait for the blocked job
    CHECK(werr == 0);
    CHECK(st == -ECANCELED);
    // The gate opens: nothing of the queue runs any more.
    set_sob(c, kq, kGateSob, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK(hb_word32(out, 0) == 0);
    CHECK(hb_word32(out, 1) == 0);
    // The doorbell page is still mapped here: a store does not crash.
    doorbell_store(uq.db(), 3);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(hb_word32(out, 1) == 0);
}

TEST_CASE("UQ_FENCE: a kernel SUBMIT waits for a user-queue point, the fence exports with the point's status",
          "[uq]")
{
    const std::string path = node(0);
    Ctx c(path);
    require_uq(c.fd());
    const int fd = c.fd();
    std::uint32_t kq = 0;
    std::uint32_t kgate = 0;
    REQUIRE(c.queue_create(1, kq) == 0);
    REQUIRE(c.queue_create(2, kgate) == 0);
    Uq uq(c, UqParams{0, DRM_HPU_ENGINE_DMA, 8, 0, 0, 0, 0});
    uq.make();
    const auto out = c.host_buf(4 * KiB);
    std::vector<std::uint32_t> sos;
    auto new_so = [&](std::uint32_t flags = 0) {
        std::uint32_t h = 0;
        REQUIRE(syncobj_create(fd, h, flags) == 0);
        sos.push_back(h);
        return h;
    };

    // The user queue's job waits for the gate, then writes word 0; the
    // kernel job copies word 0 to word 1 once the point's fence signals.
    const std::uint64_t p = uq.submit(Cb().wait(kGateSob, 1).write_value(out.va, 0xfe7c), 1);
    const std::uint32_t in = new_so();
    REQUIRE(uq_fence_raw(fd, uq.id(), p, in) == 0);
    const std::uint32_t tl = new_so();
    REQUIRE(uq_fence_raw(fd, uq.id(), p, tl, 5) == 0); // timeline point 5
    const Cb copy = Cb().lin_dma(out.va, out.va + 8, 8);
    const std::uint32_t kdone = new_so();
    REQUIRE(c.submit(kq, c.put_cb(copy), copy.bytes(), kdone, {in}) == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK(syncobj_status(fd, in) == 0); // pending
    CHECK(syncobj_wait(fd, kdone, 1000000ULL) == ETIME);
    CHECK(hb_word64(out, 1) == 0);
    set_sob(c, kgate, kGateSob, 1);
    REQUIRE(syncobj_wait(fd, kdone) == 0);
    CHECK(syncobj_status(fd, kdone) == 1);
    CHECK(hb_word64(out, 1) == 0xfe7c);
    CHECK(syncobj_status(fd, in) == 1);
    CHECK(timeline_wait(fd, tl, 5) == 0);

    // A failed point's fence carries its error.
    const std::uint64_t bad = uq.submit(Cb().write_value(c.mem().va_start + 7 * GiB, 1), 2);
    const std::uint64_t after = uq.submit(Cb().write_value(out.va + 16, 3), 3);
    const std::uint32_t bad_so = new_so();
    REQUIRE(uq_fence_raw(fd, uq.id(), bad, bad_so) == 0);
    REQUIRE(syncobj_wait(fd, bad_so) == 0);
    CHECK(syncobj_status(fd, bad_so) == -EFAULT);
    const std::uint32_t after_so = new_so();
    REQUIRE(uq_fence_raw(fd, uq.id(), after, after_so) == 0);
    REQUIRE(syncobj_wait(fd, after_so) == 0);
    CHECK(syncobj_status(fd, after_so) == 1);
    // A point long reached still makes a signalled fence.
    const std::uint32_t old_so = new_so();
    REQUIRE(uq_fence_raw(fd, uq.id(), 1, old_so) == 0);
    CHECK(syncobj_status(fd, old_so) == 1);

    // Refused calls.
    const std::uint32_t spare = new_so();
    CHECK(uq_fence_raw(fd, uq.id(), 0, spare) == EINVAL);
    CHECK(uq_fence_raw(fd, uq.id(), uq.submitted() + 1, spare) == EINVAL);
    CHECK(uq_fence_raw(fd, uq.id(), 1, spare, 0, 1) == EINVAL);
    CHECK(uq_fence_raw(fd, uq.id(), 1, spare, 0, 0, 1) == EINVAL);
    CHECK(uq_fence_raw(fd, uq.id(), 1, 0xfffff) == ENOENT);
    CHECK(uq_fence_raw(fd, uq.id() + 1000, 1, spare) == ENOENT);
    CHECK(uq_fence_raw(fd, kq, 1, spare) == ENOENT);
    for (const std::uint32_t h : sos)
        syncobj_destroy(fd, h);
}

TEST_CASE("DRM_HPU_UQ_SIGNAL: the sob counts every completion, failed ones too, and a kernel job waits for it", "[uq]")
{
    const std::string path = node(0);
    Ctx c(path);
    require_uq(c.fd());
    constexpr std::uint32_t kSignal = 7;
    constexpr unsigned kJobs = 10;
    std::uint32_t kq = 0;
    std::uint32_t kq2 = 0;
    REQUIRE(c.queue_create(1, kq) == 0);
    REQUIRE(c.queue_create(2, kq2) == 0);
    Uq uq(c, UqParams{0, DRM_HPU_ENGINE_DMA, 16, 0, DRM_HPU_UQ_SIGNAL, kSignal, 0});
    uq.make();
    const auto out = c.host_buf(4 * KiB);
    // Kernel jobs: one waits for the count to reach 10 (GE), one for it to
    // be exactly 10 (EQ: fails by its timeout if more were counted).
    const Cb ge = Cb().wait(kSignal, kJobs).write_value(out.va + 256, 0x6e);
    const Cb eq = Cb().wait(kSignal, kJobs, WAIT_EQ).write_value(out.va + 260, 0x0e);
    std::uint32_t ge_so = 0;
    REQUIRE(syncobj_create(c.fd(), ge_so) == 0);
    REQUIRE(c.submit(kq, c.put_cb(ge), ge.bytes(), ge_so) == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK(syncobj_wait(c.fd(), ge_so, 1000000ULL) == ETIME);
    // Ten jobs, the fifth failing (MMU fault).
    for (unsigned k = 0; k < kJobs; ++k) {
        const std::uint64_t va = k == 4 ? c.mem().va_start + 7 * GiB : out.va + 4ULL * k;
        uq.put(Cb().write_value(va, k + 1), k);
        if (k == kJobs - 2) {
            uq.ring();
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            // Nine completions: the kernel job still waits.
            CHECK(syncobj_wait(c.fd(), ge_so, 1000000ULL) == ETIME);
        }
    }
    uq.ring();
    REQUIRE(syncobj_wait(c.fd(), ge_so) == 0);
    CHECK(syncobj_status(c.fd(), ge_so) == 1);
    CHECK(hb_word32(out, 64) == 0x6e);
    CHECK(uq.outcome(kJobs) == 0);
    CHECK(uq.outcome(5) == -EFAULT);
    CHECK(c.run(kq2, eq, nullptr, 5000) == 1);
    CHECK(hb_word32(out, 65) == 0x0e);
}

TEST_CASE("a soft reset with a live user queue: the paused descriptor runs again, the rest follow, the SIGNAL "
          "count survives",
          "[uq]")
{
    const std::string path = node(0);
    const std::string attr = reset_attr(path);
    const auto e0 = errors_now(path);
    Ctx c(path);
    require_uq(c.fd());
    constexpr std::uint32_t kSignal = 9;
    std::uint32_t kq = 0;
    std::uint32_t kq2 = 0;
    REQUIRE(c.queue_create(1, kq) == 0);
    REQUIRE(c.queue_create(2, kq2) == 0);
    Uq uq(c, UqParams{0, DRM_HPU_ENGINE_DMA, 16, 0, DRM_HPU_UQ_SIGNAL, kSignal, 0});
    uq.make();
    const auto out = c.host_buf(4 * KiB);
    for (unsigned k = 0; k < 5; ++k)
        uq.submit(Cb().write_value(out.va + 4ULL * k, 0x100 + k), k);
    REQUIRE(uq.outcome(5) == 0);
    // Point 6 blocks at the gate, point 7 is behind it.
    uq.submit(Cb().wait(kGateSob, 1).write_value(out.va + 20, 0x105), 5);
    uq.submit(Cb().write_value(out.va + 24, 0x106), 6);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::int32_t st = 0;
    CHECK(uq_wait_raw(c.fd(), uq.id(), 6, 0, &st) == ETIME);

    const int we = write_text(attr, "soft");
    INFO("write 'soft' to " << attr << ": " << std::strerror(we));
    REQUIRE(we == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    // Still at the gate (the reset cleared the sync objects, the gate's
    // too), nothing lost, nothing run twice.
    std::uint64_t done = 0;
    CHECK(uq_wait_raw(c.fd(), uq.id(), 6, 0, &st, &done) == ETIME);
    CHECK(done == 5);
    CHECK(hb_word32(out, 5) == 0);
    CHECK(hb_word32(out, 6) == 0);
    // The SIGNAL sync object holds the 5 completions again.
    CHECK(c.run(kq2, Cb().wait(kSignal, 5, WAIT_EQ), nullptr, 5000) == 1);
    set_sob(c, kq, kGateSob, 1);
    CHECK(uq.outcome(7) == 0);
    CHECK(uq.outcome(6) == 0);
    CHECK(hb_word32(out, 5) == 0x105);
    CHECK(hb_word32(out, 6) == 0x106);
    const drm_hpu_uq_cqe r = uq.record(5);
    CHECK(r.index == 5);
    CHECK(r.seq == 5);
    CHECK(r.status == 0);
    // A doorbell rung after the reset works, and the count goes on.
    CHECK(uq.outcome(uq.submit(Cb().write_value(out.va + 28, 0x107), 7)) == 0);
    CHECK(hb_word32(out, 7) == 0x107);
    CHECK(c.run(kq2, Cb().wait(kSignal, 8, WAIT_EQ), nullptr, 5000) == 1);
    const auto e1 = errors_now(path);
    CHECK(e1.soft_resets == e0.soft_resets + 1);
    CHECK(e1.hard_resets == e0.hard_resets);
}

TEST_CASE("a hard reset ends user queues: the waiter is cancelled, the stale doorbell does not crash, a reopened "
          "file's queue works",
          "[uq][hard-reset]")
{
    const std::string path = node(0);
    const std::string attr = reset_attr(path);
    const auto e0 = errors_now(path);
    auto c = std::make_unique<Ctx>(path);
    require_uq(c->fd());
    auto uq = std::make_unique<Uq>(*c, UqParams{0, DRM_HPU_ENGINE_DMA, 8, 0, 0, 0, 0});
    uq->make();
    const auto out = c->host_buf(4 * KiB);
    uq->submit(Cb().wait(kGateSob, 1).write_value(out.va, 1), 1);
    std::int32_t st = 0;
    int werr = -1;
    std::thread waiter([&] {
        werr = uq_wait_raw(c->fd(), uq->id(), 1, static_cast<std::int64_t>(now_ns() + 60 * kSec), &st);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const int we = write_text(attr, "hard");
    waiter.join();
    INFO("write 'hard' to " << attr << ": " << std::strerror(we) << "; the waiter: errno " << werr << ", status "
                            << st);
    REQUIRE(we == 0);
    // The wait ended with the queue: -ECANCELED, or the stale file's ENODEV.
    CHECK(((werr == 0 && st == -ECANCELED) || werr == ENODEV));
    CHECK(hb_word32(out, 0) == 0);
    // The mapping is stale: stores vanish.
    doorbell_store(uq->db(), 1);
    doorbell_store(uq->db(), 2);
    CHECK(uq_wait_raw(c->fd(), uq->id(), 1, 0, &st) == ENODEV);
    uq.reset();
    c.reset();
    // A new file works, user queues included.
    Ctx n(path);
    Uq fresh(n, UqParams{0, DRM_HPU_ENGINE_DMA, 8, 0, 0, 0, 0});
    fresh.make();
    const auto nout = n.host_buf(4 * KiB);
    CHECK(fresh.outcome(fresh.submit(Cb().write_value(nout.va, 0x4e), 1)) == 0);
    CHECK(hb_word32(nout, 0) == 0x4e);
    const auto e1 = errors_now(path);
    CHECK(e1.hard_resets == e0.hard_resets + 1);
}

TEST_CASE("fdinfo counts a user queue's time on its engine, and keeps it once the queue is destroyed", "[uq]")
{
    const std::string path = node(0);
    Ctx c(path);
    require_uq(c.fd());
    Ctx idle(path);
    const std::uint32_t engine = dma_engine(c.fd(), 3);
    const std::string key = "drm-engine-dma" + std::to_string(engine);
    const auto before = fdinfo_value(c.fd(), key);
    INFO("fdinfo key " << key);
    REQUIRE(before.has_value());
    auto uq = std::make_unique<Uq>(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 8, 0, 0, 0, 0});
    uq->make();
    constexpr std::uint64_t kSize = 8 * MiB;
    const auto src = c.host_buf(kSize);
    const auto dst = c.host_buf(kSize);
    for (unsigned k = 0; k < 4; ++k)
        uq->submit(Cb().lin_dma(src.va, dst.va, kSize), k);
    REQUIRE(uq->outcome(4) == 0);
    const auto busy = fdinfo_value(c.fd(), key);
    REQUIRE(busy.has_value());
    INFO("engine time " << *before << " ns, then " << *busy << " ns with the queue's copies");
    CHECK(*busy > *before);
    REQUIRE(uq->destroy() == 0);
    uq.reset();
    const auto after = fdinfo_value(c.fd(), key);
    REQUIRE(after.has_value());
    INFO("after the destroy " << *after << " ns");
    CHECK(*after >= *busy);
    // Another file's account is its own.
    CHECK(fdinfo_value(idle.fd(), key) == std::optional<std::uint64_t>(0));
}

// SPDX-License-Identifier: MIT
// Raw-ioctl tests of the issue-3 uapi (buffers, VM_BIND, queues, SUBMIT):
// every rejected input has its own SECTION and checks the exact errno, and
// malformed packets check that the device's error reaches the caller
// through the fence status.
//
// The errno each rejection must give (where the uapi header does not spell
// it out, the usual DRM convention):
//   EINVAL  a flags/pad/reserved field not zero, a zero, unaligned or
//           overflowing size or offset, an unknown op/engine, too many
//           syncs, a command buffer outside the context's range
//   ERANGE  a VM_BIND address (FIXED map, unmap) outside the context's range
//   ENOENT  an unknown GEM handle, queue id, syncobj handle or mapping
//   EFAULT  a user pointer (userptr memory, sync arrays) that cannot be read
//   ENOMEM  more HBM than the device has
//   EBUSY   a fixed mapping over an address already mapped
// (ERANGE and EBUSY as the driver documents them in kernel/hpu_vm.c.)
// A malformed packet is either refused by SUBMIT or run and failed by the
// device; both are allowed, each with one exact errno (submit: EINVAL or
// EPERM; fence: -EINVAL bad packet, -EPERM privileged, -EFAULT MMU fault).
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "bind_util.h"
#include "err_util.h"
#include "vm_util.h"

using namespace vmt;

namespace {

constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();

// An anonymous mapping of n pages, unmapped on scope exit.
class Anon {
public:
    explicit Anon(std::size_t pages, int prot = PROT_READ | PROT_WRITE)
        : size_(pages * kHostPage),
          p_(::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
    {
        REQUIRE(p_ != MAP_FAILED);
        std::memset(p_, 0x42, size_); // real pages, not the shared zero page
        REQUIRE(::mprotect(p_, size_, prot) == 0);
    }
    Anon(const Anon &) = delete;
    Anon &operator=(const Anon &) = delete;
    Anon(Anon &&) = delete;
    Anon &operator=(Anon &&) = delete;
    ~Anon() { ::munmap(p_, size_); }
    [[nodiscard]] unsigned char *at(std::size_t off) const { return static_cast<unsigned char *>(p_) + off; } // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)

private:
    std::size_t size_;
    void *p_;
};

// A job that must fail: either SUBMIT refuses it with submit_errno, or the
// device runs it and its fence carries -fence_errno. Then the same queue
// must still run a good job.
void expect_job_error(Ctx &c, std::uint32_t q, const Cb &cb, int submit_errno, int fence_errno)
{
    int serr = 0;
    const int st = c.run(q, cb, &serr);
    INFO("submit errno " << serr << ", fence status " << st);
    if (serr != 0) {
        CHECK(serr == submit_errno);
    } else {
        CHECK(st == -fence_errno);
    }
    Cb ok;
    ok.nop();
    CHECK(c.run(q, ok) == 1);
}

std::uint32_t make_queue(const Ctx &c, std::uint32_t engine = 0)
{
    std::uint32_t q = 0;
    REQUIRE(c.queue_create(engine, q) == 0);
    return q;
}

std::uint64_t memory_used(const Ctx &c, __u64 drm_hpu_info_memory::*field)
{
    drm_hpu_info_memory m{};
    drm_hpu_info req{};
    req.op = DRM_HPU_INFO_MEMORY;
    req.ptr = reinterpret_cast<std::uintptr_t>(&m); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    req.size = sizeof(m);
    REQUIRE(xioctl(c.fd(), DRM_IOCTL_HPU_INFO, &req) == 0);
    return m.*field;
}

std::uint64_t device_caps(const Ctx &c)
{
    drm_hpu_info_device d{};
    drm_hpu_info req{};
    req.op = DRM_HPU_INFO_DEVICE;
    req.ptr = reinterpret_cast<std::uintptr_t>(&d); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    req.size = sizeof(d);
    REQUIRE(xioctl(c.fd(), DRM_IOCTL_HPU_INFO, &req) == 0);
    REQUIRE(req.size >= sizeof(d));
    return d.caps;
}

// A shared read-write CPU mapping of a buffer through BO_MMAP_OFFSET,
// unmapped on scope exit.
class BoMap {
public:
    BoMap(const Ctx &c, std::uint32_t handle, std::size_t size) : size_(size)
    {
        drm_hpu_bo_mmap_offset o{};
        o.handle = handle;
        REQUIRE(xioctl(c.fd(), DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == 0);
        p_ = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, c.fd(), static_cast<off_t>(o.offset));
        REQUIRE(p_ != MAP_FAILED);
    }
    BoMap(const BoMap &) = delete;
    BoMap &operator=(const BoMap &) = delete;
    BoMap(BoMap &&) = delete;
    BoMap &operator=(BoMap &&) = delete;
    ~BoMap() { ::munmap(p_, size_); }
    [[nodiscard]] std::uint64_t *words(std::size_t byte_off) const
    {
        return reinterpret_cast<std::uint64_t *>(static_cast<unsigned char *>(p_) + byte_off); // NOLINT
    }

private:
    std::size_t size_;
    void *p_;
};

// The fake offset of a buffer's CPU mapping.
std::uint64_t mmap_offset(const Ctx &c, std::uint32_t handle)
{
    drm_hpu_bo_mmap_offset o{};
    o.handle = handle;
    REQUIRE(xioctl(c.fd(), DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == 0);
    return o.offset;
}

// The page faults the calling thread takes to read the word at p: 0 when
// the page has its page-table entry. (/proc/self/pagemap cannot tell: the
// kernel's page walker skips VM_PFNMAP mappings.) A first pass reads a
// word of its own, so that nothing else between the two counts faults.
long faults_to_read(const volatile std::uint64_t *p)
{
    static volatile std::uint64_t warm = 0;
    rusage a{};
    rusage b{};
    for (int pass = 0; pass < 2; ++pass) {
        const volatile std::uint64_t *q = pass == 0 ? &warm : p;
        ::getrusage(RUSAGE_THREAD, &a);
        (void)*q;
        ::getrusage(RUSAGE_THREAD, &b);
    }
    return b.ru_minflt - a.ru_minflt + b.ru_majflt - a.ru_majflt;
}

// How a child that reads the word at p ends: 0 if it read want, 1 if
// another value, minus the signal that killed it. The child does nothing
// else (no Catch2 there).
int child_reads(const volatile std::uint64_t *p, std::uint64_t want)
{
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0)
        ::_exit(*p == want ? 0 : 1);
    int st = 0;
    REQUIRE(::waitpid(pid, &st, 0) == pid);
    return WIFSIGNALED(st) ? -WTERMSIG(st) : WEXITSTATUS(st);
}

std::string trim_nl(std::string s)
{
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
        s.pop_back();
    return s;
}

} // namespace

TEST_CASE("INFO MEMORY describes the context", "[uapi-mem]")
{
    Ctx c(node());
    const auto &m = c.mem();
    CHECK(m.hbm_total > 0);
    CHECK(m.hbm_total <= 32 * GiB);
    CHECK(m.hbm_used <= m.hbm_total);
    CHECK(m.hbm_ctx_used == 0);
    CHECK(m.host_ctx_used == 0);
    CHECK(m.asid >= 1);
    CHECK(m.asid <= 63);
    CHECK(m.num_sobs == 32);
    CHECK(m.va_end <= (1ULL << 48U));
    CHECK(m.va_start % kHbmPage == 0);
    CHECK(m.va_end % kHbmPage == 0);
    Ctx d(node());
    CHECK(d.mem().asid != m.asid);
}

TEST_CASE("BO_CREATE accounts per context and frees on close", "[uapi-mem]")
{
    Ctx c(node());
    const std::uint64_t used0 = memory_used(c, &drm_hpu_info_memory::hbm_used);
    std::uint32_t h = 0;
    std::uint64_t sz = 0;
    REQUIRE(c.bo_create(3 * MiB, DRM_HPU_BO_HBM, h, 0, &sz) == 0);
    CHECK(sz == 4 * MiB);
    CHECK(memory_used(c, &drm_hpu_info_memory::hbm_ctx_used) == 4 * MiB);
    CHECK(memory_used(c, &drm_hpu_info_memory::hbm_used) == used0 + 4 * MiB);
    std::uint32_t hh = 0;
    REQUIRE(c.bo_create(5000, DRM_HPU_BO_HOST, hh, 0, &sz) == 0);
    CHECK(sz == 8 * KiB);
    CHECK(memory_used(c, &drm_hpu_info_memory::host_ctx_used) == 8 * KiB);
    CHECK(c.gem_close(h) == 0);
    CHECK(c.gem_close(hh) == 0);
    CHECK(memory_used(c, &drm_hpu_info_memory::hbm_ctx_used) == 0);
    CHECK(memory_used(c, &drm_hpu_info_memory::hbm_used) == used0);
    CHECK(memory_used(c, &drm_hpu_info_memory::host_ctx_used) == 0);
    CHECK(c.gem_close(h) == EINVAL); // DRM core: unknown handle on GEM_CLOSE
}

TEST_CASE("BO_CREATE rejects bad input", "[uapi-mem]")
{
    Ctx c(node());
    std::uint32_t h = 0;
    SECTION("valid HBM and host buffers") {
        CHECK(c.bo_create(2 * MiB, DRM_HPU_BO_HBM, h) == 0);
        CHECK(c.bo_create(4 * MiB, DRM_HPU_BO_HBM | DRM_HPU_BO_CONTIGUOUS, h) == 0);
        CHECK(c.bo_create(kHostPage, DRM_HPU_BO_HOST, h) == 0);
        CHECK(c.bo_create(1 * GiB, DRM_HPU_BO_HBM, h, 1 * GiB) == 0);
    }
    SECTION("size 0: EINVAL") {
        CHECK(c.bo_create(0, DRM_HPU_BO_HBM, h) == EINVAL);
        CHECK(c.bo_create(0, DRM_HPU_BO_HOST, h) == EINVAL);
    }
    SECTION("size that overflows when rounded up: EINVAL") {
        CHECK(c.bo_create(kU64Max, DRM_HPU_BO_HBM, h) == EINVAL);
        CHECK(c.bo_create(kU64Max - 100, DRM_HPU_BO_HOST, h) == EINVAL);
    }
    SECTION("neither HBM nor HOST: EINVAL") { CHECK(c.bo_create(2 * MiB, 0, h) == EINVAL); }
    SECTION("both HBM and HOST: EINVAL") {
        CHECK(c.bo_create(2 * MiB, DRM_HPU_BO_HBM | DRM_HPU_BO_HOST, h) == EINVAL);
    }
    SECTION("unknown flag bits: EINVAL") {
        CHECK(c.bo_create(2 * MiB, DRM_HPU_BO_HBM | (1U << 3U), h) == EINVAL);
        CHECK(c.bo_create(2 * MiB, DRM_HPU_BO_HOST | (1U << 31U), h) == EINVAL);
    }
    SECTION("CONTIGUOUS on a host buffer: EINVAL") {
        CHECK(c.bo_create(kHostPage, DRM_HPU_BO_HOST | DRM_HPU_BO_CONTIGUOUS, h) == EINVAL);
    }
    SECTION("page_size on a host buffer: EINVAL") {
        CHECK(c.bo_create(kHostPage, DRM_HPU_BO_HOST, h, kHostPage) == EINVAL);
    }
    SECTION("HBM page_size below 2 MiB, above 1 GiB or not a power of two: EINVAL") {
        CHECK(c.bo_create(2 * MiB, DRM_HPU_BO_HBM, h, kHostPage) == EINVAL);
        CHECK(c.bo_create(2 * MiB, DRM_HPU_BO_HBM, h, 1 * MiB) == EINVAL);
        CHECK(c.bo_create(2 * GiB, DRM_HPU_BO_HBM, h, 2 * GiB) == EINVAL);
        CHECK(c.bo_create(6 * MiB, DRM_HPU_BO_HBM, h, 3 * MiB) == EINVAL);
    }
    SECTION("more HBM than the device has: ENOMEM, nothing leaked") {
        const std::uint64_t used0 = memory_used(c, &drm_hpu_info_memory::hbm_used);
        CHECK(c.bo_create(c.mem().hbm_total + kHbmPage, DRM_HPU_BO_HBM, h) == ENOMEM);
        CHECK(c.bo_create(1ULL << 50U, DRM_HPU_BO_HBM, h) == ENOMEM);
        CHECK(memory_used(c, &drm_hpu_info_memory::hbm_used) == used0);
        CHECK(memory_used(c, &drm_hpu_info_memory::hbm_ctx_used) == 0);
    }
    SECTION("filling HBM then one more page: ENOMEM, freeing makes room") {
        std::vector<std::uint32_t> hs;
        const std::uint64_t chunk = 256 * MiB;
        int e = 0;
        while ((e = c.bo_create(chunk, DRM_HPU_BO_HBM, h)) == 0)
            hs.push_back(h);
        CHECK(e == ENOMEM);
        while (c.bo_create(kHbmPage, DRM_HPU_BO_HBM, h) == 0)
            hs.push_back(h);
        CHECK(c.bo_create(kHbmPage, DRM_HPU_BO_HBM, h) == ENOMEM);
        REQUIRE_FALSE(hs.empty());
        CHECK(c.gem_close(hs.back()) == 0);
        hs.pop_back();
        CHECK(c.bo_create(kHbmPage, DRM_HPU_BO_HBM, h) == 0);
        hs.push_back(h);
        for (const auto x : hs)
            CHECK(c.gem_close(x) == 0);
        CHECK(memory_used(c, &drm_hpu_info_memory::hbm_ctx_used) == 0);
    }
}

TEST_CASE("BO_USERPTR rejects bad input", "[uapi-mem]")
{
    Ctx c(node());
    const Anon mem(4);
    std::uint32_t h = 0;
    SECTION("valid, and read-only memory with READONLY") {
        CHECK(c.userptr(mem.at(0), 4 * kHostPage, h) == 0);
        const Anon ro(2, PROT_READ);
        CHECK(c.userptr(ro.at(0), 2 * kHostPage, h, DRM_HPU_USERPTR_READONLY) == 0);
    }
    SECTION("size 0: EINVAL") { CHECK(c.userptr(mem.at(0), 0, h) == EINVAL); }
    SECTION("unaligned size: EINVAL") { CHECK(c.userptr(mem.at(0), kHostPage + 8, h) == EINVAL); }
    SECTION("unaligned address: EINVAL") { CHECK(c.userptr(mem.at(64), kHostPage, h) == EINVAL); }
    SECTION("unknown flags: EINVAL") { CHECK(c.userptr(mem.at(0), kHostPage, h, 1U << 1U) == EINVAL); }
    SECTION("address plus size overflows: EINVAL") {
        drm_hpu_bo_userptr u{};
        u.addr = kU64Max & ~(kHostPage - 1);
        u.size = 2 * kHostPage;
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_BO_USERPTR, &u) == EINVAL);
    }
    SECTION("unmapped memory: EFAULT") {
        void *p = ::mmap(nullptr, 2 * kHostPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        REQUIRE(p != MAP_FAILED);
        REQUIRE(::munmap(p, 2 * kHostPage) == 0);
        CHECK(c.userptr(p, 2 * kHostPage, h) == EFAULT);
    }
    SECTION("range running into an unmapped page: EFAULT") {
        auto *p = static_cast<unsigned char *>(
            ::mmap(nullptr, 2 * kHostPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        REQUIRE(p != MAP_FAILED);
        REQUIRE(::munmap(p + kHostPage, kHostPage) == 0); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        CHECK(c.userptr(p, 2 * kHostPage, h) == EFAULT);
        ::munmap(p, kHostPage);
    }
    SECTION("kernel address: EFAULT") {
        drm_hpu_bo_userptr u{};
        u.addr = 0xffff888000000000ULL;
        u.size = kHostPage;
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_BO_USERPTR, &u) == EFAULT);
    }
    SECTION("read-only memory without READONLY: EFAULT") {
        const Anon ro(1, PROT_READ);
        CHECK(c.userptr(ro.at(0), kHostPage, h) == EFAULT);
    }
}

TEST_CASE("BO_MMAP_OFFSET rejects bad input", "[uapi-mem]")
{
    Ctx c(node());
    std::uint32_t host = 0;
    std::uint32_t hbm = 0;
    REQUIRE(c.bo_create(kHostPage, DRM_HPU_BO_HOST, host) == 0);
    REQUIRE(c.bo_create(kHbmPage, DRM_HPU_BO_HBM, hbm) == 0);
    drm_hpu_bo_mmap_offset o{};
    SECTION("valid host buffer") {
        o.handle = host;
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == 0);
        CHECK(o.offset != 0);
        CHECK(o.offset % kHostPage == 0);
    }
    SECTION("unknown handle: ENOENT") {
        o.handle = 0xdead;
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == ENOENT);
        o.handle = 0;
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == ENOENT);
    }
    SECTION("HBM buffer: an offset (the device's BAR4 covers HBM, spec version 8)") {
        REQUIRE((device_caps(c) & DRM_HPU_CAP_HBM_MMAP) != 0);
        o.handle = hbm;
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == 0);
        CHECK(o.offset % kHostPage == 0);
    }
    SECTION("user-pointer buffer: EINVAL") {
        const Anon mem(1, PROT_READ | PROT_WRITE);
        std::uint32_t up = 0;
        REQUIRE(c.userptr(mem.at(0), kHostPage, up) == 0);
        o.handle = up;
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == EINVAL);
    }
    SECTION("non-zero pad: EINVAL") {
        o.handle = host;
        o.pad = 1;
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == EINVAL);
    }
    SECTION("another file's handle: ENOENT") {
        const Ctx d(node()); // has no buffers: c's handle means nothing there
        o.handle = host;
        CHECK(xioctl(d.fd(), DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == ENOENT);
    }
    SECTION("mmap beyond the buffer fails") {
        o.handle = host;
        REQUIRE(xioctl(c.fd(), DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == 0);
        void *p = ::mmap(nullptr, 2 * kHostPage, PROT_READ, MAP_SHARED, c.fd(), static_cast<off_t>(o.offset));
        CHECK(p == MAP_FAILED);
        if (p != MAP_FAILED)
            ::munmap(p, 2 * kHostPage);
    }
}

TEST_CASE("HBM buffers map into the process through BAR4", "[uapi-mem][hbm-mmap]")
{
    Ctx c(node());
    REQUIRE((device_caps(c) & DRM_HPU_CAP_HBM_MMAP) != 0);
    constexpr std::uint64_t kSize = 4 * MiB;
    // A run of words on each side of the 2 MiB page boundary (each CPU
    // access is an MMIO access of the emulated BAR: keep them few).
    constexpr std::uint64_t kRun = 64 * KiB;
    constexpr std::uint64_t kAt = 2 * MiB - kRun;
    std::uint32_t hbm = 0;
    std::uint64_t sz = 0;
    REQUIRE(c.bo_create(kSize, DRM_HPU_BO_HBM, hbm, 0, &sz) == 0);
    std::uint64_t dva = 0;
    REQUIRE(c.map(hbm, 0, kSize, dva) == 0);
    const std::uint32_t q = make_queue(c);
    const auto host = c.host_buf(2 * kRun);

    SECTION("what the CPU writes the engine reads, and the other way round") {
        const BoMap m(c, hbm, kSize);
        fill_words(m.words(kAt), 2 * kRun / 8, 0x11);
        Cb out;
        out.lin_dma(dva + kAt, host.va, 2 * kRun);
        REQUIRE(c.run(q, out) == 1);
        CHECK(check_words(reinterpret_cast<const std::uint64_t *>(host.ptr), 2 * kRun / 8, 0x11) == // NOLINT
              2 * kRun / 8);

        fill_words(reinterpret_cast<std::uint64_t *>(host.ptr), 2 * kRun / 8, 0x22); // NOLINT
        Cb in;
        in.lin_dma(host.va, dva + 3 * MiB, 2 * kRun);
        REQUIRE(c.run(q, in) == 1);
        CHECK(check_words(m.words(3 * MiB), 2 * kRun / 8, 0x22) == 2 * kRun / 8);
        // A fresh buffer reads zero through the mapping too.
        CHECK(*m.words(kSize - 8) == 0);
    }
    SECTION("the CPU mapping alone holds the buffer once its handle and device mapping are gone") {
        auto m = std::make_unique<BoMap>(c, hbm, kSize);
        *m->words(4096) = 0x0123456789abcdefULL;
        const std::uint64_t used = memory_used(c, &drm_hpu_info_memory::hbm_ctx_used);
        REQUIRE(c.unmap(dva) == 0);
        REQUIRE(c.gem_close(hbm) == 0);
        // Nothing but the CPU mapping refers to it: still allocated, and
        // its bytes still there (also in a page not touched before).
        CHECK(memory_used(c, &drm_hpu_info_memory::hbm_ctx_used) == used);
        CHECK(*m->words(4096) == 0x0123456789abcdefULL);
        CHECK(*m->words(3 * MiB) == 0);
        m.reset();
        CHECK(memory_used(c, &drm_hpu_info_memory::hbm_ctx_used) == used - kSize);
    }
    SECTION("the second half of a mapping whose first half was unmapped maps the right bytes") {
        fill_words(reinterpret_cast<std::uint64_t *>(host.ptr), 2 * kRun / 8, 0x33); // NOLINT
        Cb in;
        in.lin_dma(host.va, dva + 3 * MiB, 2 * kRun);
        REQUIRE(c.run(q, in) == 1);
        drm_hpu_bo_mmap_offset o{};
        o.handle = hbm;
        REQUIRE(xioctl(c.fd(), DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == 0);
        auto *p = static_cast<unsigned char *>(
            ::mmap(nullptr, kSize, PROT_READ, MAP_SHARED, c.fd(), static_cast<off_t>(o.offset)));
        REQUIRE(p != MAP_FAILED);
        REQUIRE(::munmap(p, 2 * MiB + kHostPage) == 0);
        const auto *w = reinterpret_cast<const std::uint64_t *>(p + 3 * MiB); // NOLINT
        CHECK(check_words(w, 2 * kRun / 8, 0x33) == 2 * kRun / 8);
        ::munmap(p + 2 * MiB + kHostPage, kSize - 2 * MiB - kHostPage); // NOLINT
    }
    SECTION("a mapping that starts inside the buffer: EINVAL") {
        drm_hpu_bo_mmap_offset o{};
        o.handle = hbm;
        REQUIRE(xioctl(c.fd(), DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == 0);
        void *p = ::mmap(nullptr, 2 * MiB, PROT_READ, MAP_SHARED, c.fd(), static_cast<off_t>(o.offset + 2 * MiB));
        CHECK(p == MAP_FAILED);
        CHECK(errno == EINVAL);
        if (p != MAP_FAILED)
            ::munmap(p, 2 * MiB);
    }
    SECTION("private mappings are refused: EINVAL") {
        drm_hpu_bo_mmap_offset o{};
        o.handle = hbm;
        REQUIRE(xioctl(c.fd(), DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == 0);
        void *p = ::mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE, c.fd(), static_cast<off_t>(o.offset));
        CHECK(p == MAP_FAILED);
        CHECK(errno == EINVAL);
        if (p != MAP_FAILED)
            ::munmap(p, kSize);
    }
    SECTION("a mapping larger than the buffer fails") {
        drm_hpu_bo_mmap_offset o{};
        o.handle = hbm;
        REQUIRE(xioctl(c.fd(), DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == 0);
        void *p = ::mmap(nullptr, kSize + kHostPage, PROT_READ, MAP_SHARED, c.fd(), static_cast<off_t>(o.offset));
        CHECK(p == MAP_FAILED);
        CHECK(errno == EINVAL);
        if (p != MAP_FAILED)
            ::munmap(p, kSize + kHostPage);
    }
    SECTION("another file cannot map it through the offset") {
        drm_hpu_bo_mmap_offset o{};
        o.handle = hbm;
        REQUIRE(xioctl(c.fd(), DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == 0);
        const Ctx d(node());
        void *p = ::mmap(nullptr, kSize, PROT_READ, MAP_SHARED, d.fd(), static_cast<off_t>(o.offset));
        CHECK(p == MAP_FAILED);
        CHECK(errno == EACCES);
        if (p != MAP_FAILED)
            ::munmap(p, kSize);
    }
}

TEST_CASE("HBM mappings: buffers of several blocks, partial, moved and inherited mappings, the VM_PFNMAP rules",
          "[uapi-mem][hbm-mmap]")
{
    Ctx c(node());
    REQUIRE((device_caps(c) & DRM_HPU_CAP_HBM_MMAP) != 0);
    const std::uint32_t q = make_queue(c);
    constexpr std::uint64_t kWords = 8; // per probe: each CPU access is an MMIO exit of the model
    auto host = c.host_buf(kHostPage);
    auto *hw = reinterpret_cast<std::uint64_t *>(host.ptr); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)

    SECTION("6 MiB (blocks of 4 and 2 MiB) and 8 MiB of 4 MiB pages: CPU and engine agree in every 2 MiB") {
        struct Shape {
            std::uint64_t size;
            std::uint64_t page_size;
        };
        for (const Shape sh : {Shape{6 * MiB, 0}, Shape{8 * MiB, 4 * MiB}}) {
            INFO("buffer of " << sh.size / MiB << " MiB, page size " << sh.page_size / MiB << " MiB");
            std::uint32_t h = 0;
            std::uint64_t sz = 0;
            REQUIRE(c.bo_create(sh.size, DRM_HPU_BO_HBM, h, sh.page_size, &sz) == 0);
            REQUIRE(sz == sh.size);
            std::uint64_t dva = 0;
            REQUIRE(c.map(h, 0, sz, dva) == 0);
            const BoMap m(c, h, sz);
            for (std::uint64_t at = 0; at < sz; at += 2 * MiB) {
                INFO("at " << at / MiB << " MiB");
                // CPU -> engine, at the chunk's last words.
                const std::uint64_t end = at + 2 * MiB - kWords * 8;
                fill_words(m.words(end), kWords, 0x100 + at / MiB);
                Cb out;
                out.lin_dma(dva + end, host.va, kWords * 8);
                REQUIRE(c.run(q, out) == 1);
                CHECK(check_words(hw, kWords, 0x100 + at / MiB) == kWords);
                // Engine -> CPU, at the chunk's first words.
                fill_words(hw, kWords, 0x200 + at / MiB);
                Cb in;
                in.lin_dma(host.va, dva + at, kWords * 8);
                REQUIRE(c.run(q, in) == 1);
                CHECK(check_words(m.words(at), kWords, 0x200 + at / MiB) == kWords);
            }
        }
    }
    SECTION("a mapping of the first 8 KiB of a 2 MiB buffer reads and writes the right bytes") {
        std::uint32_t h = 0;
        REQUIRE(c.bo_create(2 * MiB, DRM_HPU_BO_HBM, h) == 0);
        std::uint64_t dva = 0;
        REQUIRE(c.map(h, 0, 2 * MiB, dva) == 0);
        fill_words(hw, kWords, 0x31);
        Cb in;
        in.lin_dma(host.va, dva + 8, kWords * 8);
        REQUIRE(c.run(q, in) == 1);
        auto *p = static_cast<std::uint64_t *>(::mmap(nullptr, 2 * kHostPage, PROT_READ | PROT_WRITE, MAP_SHARED,
                                                      c.fd(), static_cast<off_t>(mmap_offset(c, h))));
        REQUIRE(p != MAP_FAILED);
        CHECK(check_words(p + 1, kWords, 0x31) == kWords); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        // That fault mapped the second page too (the span cut to the mapping).
        CHECK(faults_to_read(p + kHostPage / 8) == 0);     // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        fill_words(p + kHostPage / 8 + 3, kWords, 0x32);    // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        Cb out;
        out.lin_dma(dva + kHostPage + 24, host.va, kWords * 8);
        REQUIRE(c.run(q, out) == 1);
        CHECK(check_words(hw, kWords, 0x32) == kWords);
        CHECK(::munmap(p, 2 * kHostPage) == 0);
    }
    SECTION("mremap moves the mapping with its bytes; growing it: EFAULT; MREMAP_DONTUNMAP: EINVAL") {
        constexpr std::uint64_t kSize = 4 * MiB;
        std::uint32_t h = 0;
        REQUIRE(c.bo_create(kSize, DRM_HPU_BO_HBM, h) == 0);
        std::uint64_t dva = 0;
        REQUIRE(c.map(h, 0, kSize, dva) == 0);
        fill_words(hw, kWords, 0x41);
        Cb in;
        in.lin_dma(host.va, dva + 3 * MiB, kWords * 8);
        REQUIRE(c.run(q, in) == 1);
        auto *p = static_cast<unsigned char *>(::mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, c.fd(),
                                                      static_cast<off_t>(mmap_offset(c, h))));
        REQUIRE(p != MAP_FAILED);
        fill_words(reinterpret_cast<std::uint64_t *>(p + 8), kWords, 0x42); // NOLINT
        // A free range to move to.
        void *dst = ::mmap(nullptr, kSize, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        REQUIRE(dst != MAP_FAILED);
        void *moved = ::mremap(p, kSize, kSize, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
        REQUIRE(moved == dst);
        auto *n = static_cast<unsigned char *>(moved);
        CHECK(check_words(reinterpret_cast<const std::uint64_t *>(n + 8), kWords, 0x42) == kWords); // NOLINT
        // A page not touched before the move faults in at its new address.
        CHECK(check_words(reinterpret_cast<const std::uint64_t *>(n + 3 * MiB), kWords, 0x41) == kWords); // NOLINT
        errno = 0;
        CHECK(::mremap(n, kSize, kSize + kHostPage, MREMAP_MAYMOVE) == MAP_FAILED);
        CHECK(errno == EFAULT);
        errno = 0;
        CHECK(::mremap(n, kSize, kSize, MREMAP_MAYMOVE | MREMAP_DONTUNMAP) == MAP_FAILED);
        CHECK(errno == EINVAL);
        CHECK(::munmap(n, kSize) == 0);
    }
    SECTION("fork: the child reads the parent's bytes, and its mapping holds the buffer once the parent let go") {
        constexpr std::uint64_t kSize = 2 * MiB;
        constexpr std::uint64_t kWant = 0xfeedface01020304ULL;
        std::uint32_t h = 0;
        REQUIRE(c.bo_create(kSize, DRM_HPU_BO_HBM, h) == 0);
        const std::uint64_t used0 = memory_used(c, &drm_hpu_info_memory::hbm_ctx_used);
        auto *p = static_cast<std::uint64_t *>(::mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, c.fd(),
                                                      static_cast<off_t>(mmap_offset(c, h))));
        REQUIRE(p != MAP_FAILED);
        p[100] = kWant; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        CHECK(child_reads(p + 100, kWant) == 0); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)

        // A child that outlives the parent's mapping and handle.
        std::array<int, 2> go{};
        std::array<int, 2> result{};
        REQUIRE(::pipe(go.data()) == 0);
        REQUIRE(::pipe(result.data()) == 0);
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            ::close(go[1]);
            ::close(result[0]);
            char b = 0;
            if (::read(go[0], &b, 1) != 1)
                ::_exit(2);
            const char r = p[100] == kWant ? 'y' : 'n'; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
            if (::write(result[1], &r, 1) != 1)
                ::_exit(3);
            if (::read(go[0], &b, 1) != 1) // until the parent has looked
                ::_exit(4);
            ::_exit(0);
        }
        // Only this side's ends stay open: a child that dies reads as EOF,
        // and if a check below throws, closing go[1] ends the child.
        ::close(go[0]);
        ::close(result[1]);
        struct Reap {
            pid_t pid;
            int go_w;
            Reap(pid_t p, int w) : pid(p), go_w(w) {}
            Reap(const Reap &) = delete;
            Reap &operator=(const Reap &) = delete;
            Reap(Reap &&) = delete;
            Reap &operator=(Reap &&) = delete;
            ~Reap()
            {
                if (go_w >= 0)
                    ::close(go_w);
                if (pid > 0) {
                    ::kill(pid, SIGKILL);
                    ::waitpid(pid, nullptr, 0);
                }
            }
        } reap{pid, go[1]};
        CHECK(::munmap(p, kSize) == 0);
        CHECK(c.gem_close(h) == 0);
        CHECK(memory_used(c, &drm_hpu_info_memory::hbm_ctx_used) == used0); // the child's mapping holds it
        char b = 'g';
        REQUIRE(::write(go[1], &b, 1) == 1);
        char r = 0;
        const ssize_t got = ::read(result[0], &r, 1);
        ::close(result[0]);
        CHECK(got == 1); // 0: the child died before it could read (waitpid below says how)
        CHECK(r == 'y');
        CHECK(memory_used(c, &drm_hpu_info_memory::hbm_ctx_used) == used0);
        std::ignore = ::write(go[1], &b, 1);
        ::close(go[1]);
        reap.go_w = -1;
        int st = 0;
        REQUIRE(::waitpid(pid, &st, 0) == pid);
        reap.pid = -1;
        INFO("child wait status " << st);
        CHECK(WIFEXITED(st));
        CHECK(WEXITSTATUS(st) == 0);
        CHECK(memory_used(c, &drm_hpu_info_memory::hbm_ctx_used) == used0 - kSize);
    }
    SECTION("MADV_DONTNEED: EINVAL; process_vm_readv of the range: EFAULT (VM_IO | VM_PFNMAP)") {
        std::uint32_t h = 0;
        REQUIRE(c.bo_create(2 * MiB, DRM_HPU_BO_HBM, h) == 0);
        auto *p = static_cast<std::uint64_t *>(::mmap(nullptr, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, c.fd(),
                                                      static_cast<off_t>(mmap_offset(c, h))));
        REQUIRE(p != MAP_FAILED);
        p[0] = 0x77;
        errno = 0;
        CHECK(::madvise(p, 2 * MiB, MADV_DONTNEED) == -1);
        CHECK(errno == EINVAL);
        CHECK(p[0] == 0x77); // nothing was dropped
        std::array<std::uint64_t, 4> local{};
        iovec l{local.data(), sizeof(local)};
        iovec r{p, sizeof(local)};
        errno = 0;
        CHECK(::process_vm_readv(::getpid(), &l, 1, &r, 1, 0) == -1);
        CHECK(errno == EFAULT);
        CHECK(::munmap(p, 2 * MiB) == 0);
    }
}

TEST_CASE("unbind while a process maps HBM: no page-table entry of the BAR is left, an access gets SIGBUS",
          "[uapi-mem][hbm-mmap]")
{
    const auto devs = nodes_by_pci();
    REQUIRE(!devs.empty());
    const std::string bdf = devs[0].pci_addr;
    const BindGuard guard(bdf);
    REQUIRE(is_bound(bdf));
    {
        Ctx c(devs[0].node);
        REQUIRE((device_caps(c) & DRM_HPU_CAP_HBM_MMAP) != 0);
        std::uint32_t h = 0;
        REQUIRE(c.bo_create(2 * MiB, DRM_HPU_BO_HBM, h) == 0);
        auto *p = static_cast<std::uint64_t *>(::mmap(nullptr, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, c.fd(),
                                                      static_cast<off_t>(mmap_offset(c, h))));
        REQUIRE(p != MAP_FAILED);
        p[1] = 0x5151;               // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        REQUIRE(p[1] == 0x5151);     // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        // The fault mapped its 2 MiB: these pages have their entries.
        REQUIRE(faults_to_read(p + 1024) == 0); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        REQUIRE(child_reads(p + 1, 0x5151) == 0); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)

        REQUIRE(write_text(std::string(kHpuDriverDir) + "/unbind", bdf) == 0);
        CHECK(!is_bound(bdf));
        // A child gets a copy of this process's entries (fork copies those
        // of a VM_PFNMAP mapping): its SIGBUS on a page this process had
        // mapped shows the entry is gone (a stale one would read the BAR).
        CHECK(child_reads(p + 1, 0x5151) == -SIGBUS); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        CHECK(child_reads(p + 1024, 0) == -SIGBUS);   // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        CHECK(child_reads(p + 4096, 0) == -SIGBUS);   // in the faulted 2 MiB too // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        CHECK(::munmap(p, 2 * MiB) == 0);
    } // the file closes on the unbound device
    REQUIRE(write_text(std::string(kHpuDriverDir) + "/bind", bdf) == 0);
    REQUIRE(is_bound(bdf));
    const std::string n = accel_node_of(bdf);
    REQUIRE(!n.empty());
    Ctx c(n);
    CHECK((device_caps(c) & DRM_HPU_CAP_HBM_MMAP) != 0);
    std::uint32_t h = 0;
    REQUIRE(c.bo_create(2 * MiB, DRM_HPU_BO_HBM, h) == 0);
    const BoMap m(c, h, 2 * MiB);
    *m.words(8) = 0x6262;
    CHECK(*m.words(8) == 0x6262);
}

TEST_CASE("FLR while a process maps HBM: its page-table entries are zapped, and it maps again after the reset",
          "[uapi-mem][hbm-mmap]")
{
    const auto devs = nodes_by_pci();
    REQUIRE(!devs.empty());
    const std::string bdf = devs[0].pci_addr;
    const std::string dir = pci_dir(bdf);
    const std::string methods = trim_nl(read_text(dir + "/reset_method").value_or(""));
    REQUIRE(methods.find("flr") != std::string::npos);
    Ctx c(devs[0].node);
    REQUIRE((device_caps(c) & DRM_HPU_CAP_HBM_MMAP) != 0);
    std::uint32_t h = 0;
    REQUIRE(c.bo_create(2 * MiB, DRM_HPU_BO_HBM, h) == 0);
    const BoMap m(c, h, 2 * MiB);
    *m.words(16) = 0x7373;
    REQUIRE(*m.words(16) == 0x7373);
    REQUIRE(faults_to_read(m.words(16)) == 0);
    const std::uint64_t hard0 = errors_now(devs[0].node).hard_resets;

    REQUIRE(write_text(dir + "/reset_method", "flr") == 0);
    const int reset = write_text(dir + "/reset", "1");
    write_text(dir + "/reset_method", methods);
    REQUIRE(reset == 0);
    CHECK(errors_now(devs[0].node).hard_resets == hard0 + 1);
    // The reset has returned: the mapping faults in again (HBM content
    // after an FLR is undefined: no value is checked), no SIGBUS.
    const int r = child_reads(m.words(16), 0);
    CHECK((r == 0 || r == 1));
    // Zapped when the reset began (no entry may outlive memory decoding):
    // this process's read faults, and the next one does not.
    CHECK(faults_to_read(m.words(16)) >= 1);
    CHECK(faults_to_read(m.words(16)) == 0);
}

namespace {

// On a device that maps no HBM: a 2 MiB HBM buffer's BO_MMAP_OFFSET fails
// EOPNOTSUPP while a host buffer's still succeeds. Returns the HBM buffer.
std::uint32_t hbm_refused_host_maps(Ctx &c)
{
    std::uint32_t hbm = 0;
    std::uint32_t host = 0;
    REQUIRE(c.bo_create(2 * MiB, DRM_HPU_BO_HBM, hbm) == 0);
    REQUIRE(c.bo_create(kHostPage, DRM_HPU_BO_HOST, host) == 0);
    drm_hpu_bo_mmap_offset o{};
    o.handle = hbm;
    CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == EOPNOTSUPP);
    o = {};
    o.handle = host;
    CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == 0); // host buffers still map
    return hbm;
}

} // namespace

TEST_CASE("a device whose BAR4 does not cover HBM (hbm-bar=64M) maps none of it", "[uapi-mem][hbm-mmap]")
{
    // The VM suite's second HPU has spec version 7's BAR4 (tests/run-tests.py).
    const auto devs = nodes_by_pci();
    const hpu::DeviceEntry *small = nullptr;
    for (const auto &d : devs) {
        const Ctx c(d.node);
        if ((device_caps(c) & DRM_HPU_CAP_HBM_MMAP) == 0)
            small = &d;
    }
    REQUIRE(small != nullptr);
    Ctx c(small->node);
    const drm_hpu_info_device info = device_now(small->node);
    CHECK(info.spec_version == 7);
    CHECK(info.caps == 0);
    // BAR4 is 64 MiB: the fifth line of sysfs "resource" is start, end, flags.
    const std::string res = read_text(pci_dir(small->pci_addr) + "/resource").value_or("");
    std::size_t pos = 0;
    for (int line = 0; line < 4 && pos != std::string::npos; ++line)
        pos = res.find('\n', pos) == std::string::npos ? std::string::npos : res.find('\n', pos) + 1;
    REQUIRE(pos != std::string::npos);
    unsigned long long start = 0;
    unsigned long long end = 0;
    REQUIRE(std::sscanf(res.c_str() + pos, "%llx %llx", &start, &end) == 2); // NOLINT(cppcoreguidelines-pro-type-vararg,cert-err34-c)
    CHECK(end - start + 1 == 64 * MiB);

    const std::uint32_t hbm = hbm_refused_host_maps(c);

    // libhpu: no caps bit, hpu_buffer_map() -EOPNOTSUPP, hpu::Buffer::map() throws.
    const hpu::Device dev = hpu::Device::open(small->index);
    CHECK(dev.info().caps == 0);
    const auto buf = hpu::Buffer::create(dev, 2 * MiB, HPU_MEM_DEVICE);
    int marker = 0;
    void *p = &marker;
    CHECK(hpu_buffer_map(buf.get(), &p) == -EOPNOTSUPP);
    CHECK(p == nullptr);
    try {
        (void)buf.map();
        FAIL("hpu::Buffer::map() of device memory did not throw");
    } catch (const hpu::Error &e) {
        CHECK(e.errnum() == EOPNOTSUPP);
    }
    CHECK(buf.host_ptr() == nullptr);
    // The device still works: its engines reach the buffer.
    std::uint64_t dva = 0;
    REQUIRE(c.map(hbm, 0, 2 * MiB, dva) == 0);
    const std::uint32_t q = make_queue(c);
    CHECK(c.run(q, Cb().lin_dma(dva, dva + MiB, 4096)) == 1);
}

namespace {

// tests/vm/bar4-squat.sh: the HPU it rebinds (HPU_BAR4_BDF) with part of
// its BAR4 taken by hpu_test_squat.ko, then with all of it free again.
std::string bar4_squat_node()
{
    const char *bdf = std::getenv("HPU_BAR4_BDF"); // NOLINT(concurrency-mt-unsafe)
    REQUIRE(bdf != nullptr);
    REQUIRE(is_bound(bdf));
    std::string n = accel_node_of(bdf);
    REQUIRE(!n.empty());
    return n;
}

// A job through HBM: the DMA engine sets 64 KiB at 1 MiB into a 2 MiB HBM
// buffer to a pattern, then copies them to a host buffer, read there.
void bar4_squat_job(Ctx &c, std::uint32_t hbm, std::uint64_t pattern)
{
    constexpr std::uint64_t kLen = 64 * KiB;
    std::uint64_t dva = 0;
    REQUIRE(c.map(hbm, 0, 2 * MiB, dva) == 0);
    const std::uint32_t q = make_queue(c);
    const auto host = c.host_buf(kLen);
    REQUIRE(c.run(q, Cb().memset(pattern, dva + MiB, kLen)) == 1);
    REQUIRE(c.run(q, Cb().lin_dma(dva + MiB, host.va, kLen)) == 1);
    std::vector<std::uint64_t> got(kLen / 8);
    std::memcpy(got.data(), host.ptr, kLen);
    CHECK(std::count(got.begin(), got.end(), pattern) == static_cast<std::ptrdiff_t>(got.size()));
}

} // namespace

TEST_CASE("a BAR4 claimed only up to its page tables maps no HBM, and jobs through HBM still run", "[.bar4-partial]")
{
    Ctx c(bar4_squat_node());
    CHECK((device_caps(c) & DRM_HPU_CAP_HBM_MMAP) == 0);
    const std::uint32_t hbm = hbm_refused_host_maps(c);
    bar4_squat_job(c, hbm, 0x5157a77e12345678ULL);
}

TEST_CASE("a BAR4 claimed whole maps HBM: the CPU reads what a job wrote", "[.bar4-full]")
{
    constexpr std::uint64_t kPattern = 0xf0112233c0ffee00ULL;
    Ctx c(bar4_squat_node());
    REQUIRE((device_caps(c) & DRM_HPU_CAP_HBM_MMAP) != 0);
    std::uint32_t hbm = 0;
    REQUIRE(c.bo_create(2 * MiB, DRM_HPU_BO_HBM, hbm) == 0);
    bar4_squat_job(c, hbm, kPattern);
    const BoMap m(c, hbm, 2 * MiB);
    CHECK(*m.words(MiB) == kPattern);
    CHECK(*m.words(MiB + 64 * KiB - 8) == kPattern);
    CHECK(*m.words(MiB + 64 * KiB) == 0); // beyond the job's bytes: a fresh buffer's zeros
}

TEST_CASE("VM_BIND rejects bad input", "[uapi-mem]")
{
    Ctx c(node());
    const auto &m = c.mem();
    std::uint32_t hbm = 0;
    std::uint32_t host = 0;
    REQUIRE(c.bo_create(4 * MiB, DRM_HPU_BO_HBM, hbm) == 0);
    REQUIRE(c.bo_create(4 * kHostPage, DRM_HPU_BO_HOST, host) == 0);
    const std::uint64_t fixed = m.va_start + 64 * MiB;
    REQUIRE(fixed + 4 * MiB <= m.va_end);
    std::uint64_t va = 0;

    auto bind = [&](drm_hpu_vm_bind b) { return xioctl(c.fd(), DRM_IOCTL_HPU_VM_BIND, &b); };
    auto map_req = [&](std::uint32_t handle, std::uint64_t off, std::uint64_t size, std::uint64_t at,
                       std::uint32_t flags) {
        drm_hpu_vm_bind b{};
        b.op = DRM_HPU_VM_MAP;
        b.handle = handle;
        b.bo_offset = off;
        b.size = size;
        b.va = at;
        b.flags = flags;
        return b;
    };

    SECTION("valid maps: chosen, fixed, read-only, partial; unmap") {
        CHECK(c.map(hbm, 0, 4 * MiB, va) == 0);
        CHECK(va >= m.va_start);
        CHECK(va + 4 * MiB <= m.va_end);
        CHECK(va % kHbmPage == 0);
        std::uint64_t fva = fixed;
        CHECK(c.map(hbm, 2 * MiB, 2 * MiB, fva, DRM_HPU_VM_FIXED) == 0);
        CHECK(fva == fixed);
        std::uint64_t hva = 0;
        CHECK(c.map(host, kHostPage, 2 * kHostPage, hva, DRM_HPU_VM_READONLY) == 0);
        CHECK(c.unmap(fva) == 0);
        CHECK(c.unmap(va) == 0);
        CHECK(c.unmap(hva) == 0);
    }
    SECTION("unknown op: EINVAL") {
        auto b = map_req(hbm, 0, 2 * MiB, 0, 0);
        b.op = 2;
        CHECK(bind(b) == EINVAL);
    }
    SECTION("unknown flags: EINVAL") { CHECK(bind(map_req(hbm, 0, 2 * MiB, 0, 1U << 2U)) == EINVAL); }
    SECTION("non-zero pad: EINVAL") {
        auto b = map_req(hbm, 0, 2 * MiB, 0, 0);
        b.pad = 1;
        CHECK(bind(b) == EINVAL);
    }
    SECTION("unknown handle: ENOENT") {
        CHECK(bind(map_req(0x7777, 0, 2 * MiB, 0, 0)) == ENOENT);
        CHECK(bind(map_req(0, 0, 2 * MiB, 0, 0)) == ENOENT);
    }
    SECTION("size 0: EINVAL") { CHECK(bind(map_req(hbm, 0, 0, 0, 0)) == EINVAL); }
    SECTION("size not a multiple of the page size: EINVAL") {
        CHECK(bind(map_req(hbm, 0, 1 * MiB, 0, 0)) == EINVAL);
        CHECK(bind(map_req(host, 0, 100, 0, 0)) == EINVAL);
    }
    SECTION("unaligned bo_offset: EINVAL") {
        CHECK(bind(map_req(hbm, 1 * MiB, 2 * MiB, 0, 0)) == EINVAL);
        CHECK(bind(map_req(host, 8, kHostPage, 0, 0)) == EINVAL);
    }
    SECTION("range beyond the buffer: EINVAL") {
        CHECK(bind(map_req(hbm, 2 * MiB, 4 * MiB, 0, 0)) == EINVAL);
        CHECK(bind(map_req(hbm, 0, 6 * MiB, 0, 0)) == EINVAL);
        CHECK(bind(map_req(host, 4 * kHostPage, kHostPage, 0, 0)) == EINVAL);
    }
    SECTION("bo_offset plus size overflows: EINVAL") {
        CHECK(bind(map_req(hbm, kU64Max - kHbmPage + 1, 2 * kHbmPage, 0, 0)) == EINVAL);
        CHECK(bind(map_req(host, kHostPage, kU64Max - kHostPage + 1, 0, 0)) == EINVAL);
    }
    SECTION("fixed address not aligned to the buffer's page size: EINVAL") {
        CHECK(bind(map_req(hbm, 0, 2 * MiB, fixed + kHostPage, DRM_HPU_VM_FIXED)) == EINVAL);
        CHECK(bind(map_req(host, 0, kHostPage, fixed + 16, DRM_HPU_VM_FIXED)) == EINVAL);
    }
    SECTION("fixed address outside the context's range: ERANGE") {
        if (m.va_start >= kHbmPage)
            CHECK(bind(map_req(hbm, 0, 2 * MiB, m.va_start - kHbmPage, DRM_HPU_VM_FIXED)) == ERANGE);
        CHECK(bind(map_req(hbm, 0, 4 * MiB, m.va_end - kHbmPage, DRM_HPU_VM_FIXED)) == ERANGE);
        CHECK(bind(map_req(hbm, 0, 2 * MiB, m.va_end, DRM_HPU_VM_FIXED)) == ERANGE);
        CHECK(bind(map_req(hbm, 0, 2 * MiB, 1ULL << 48U, DRM_HPU_VM_FIXED)) == ERANGE);
        CHECK(bind(map_req(hbm, 0, 2 * MiB, 0x8000000000000000ULL, DRM_HPU_VM_FIXED)) == ERANGE);
        CHECK(bind(map_req(hbm, 0, 4 * MiB, kU64Max - kHbmPage + 1, DRM_HPU_VM_FIXED)) == ERANGE);
    }
    SECTION("UNMAP address outside the context's range: ERANGE") {
        CHECK(c.unmap(m.va_end) == ERANGE);
        CHECK(c.unmap(1ULL << 60U) == ERANGE);
    }
    SECTION("address without FIXED: EINVAL") { CHECK(bind(map_req(hbm, 0, 2 * MiB, fixed, 0)) == EINVAL); }
    SECTION("read-only user pointer mapped writable: EINVAL") {
        const Anon ro(1, PROT_READ);
        std::uint32_t u = 0;
        REQUIRE(c.userptr(ro.at(0), kHostPage, u, DRM_HPU_USERPTR_READONLY) == 0);
        CHECK(bind(map_req(u, 0, kHostPage, 0, 0)) == EINVAL);
        CHECK(bind(map_req(u, 0, kHostPage, 0, DRM_HPU_VM_READONLY)) == 0);
    }
    SECTION("fixed address over an existing mapping: EBUSY") {
        std::uint64_t a = fixed;
        REQUIRE(c.map(hbm, 0, 4 * MiB, a, DRM_HPU_VM_FIXED) == 0);
        CHECK(bind(map_req(hbm, 0, 2 * MiB, fixed + 2 * MiB, DRM_HPU_VM_FIXED)) == EBUSY);
        CHECK(bind(map_req(host, 0, kHostPage, fixed, DRM_HPU_VM_FIXED)) == EBUSY);
    }
    SECTION("UNMAP of an address with no mapping: ENOENT") {
        CHECK(c.unmap(fixed) == ENOENT);
        std::uint64_t a = fixed;
        REQUIRE(c.map(hbm, 0, 4 * MiB, a, DRM_HPU_VM_FIXED) == 0);
        CHECK(c.unmap(fixed + 2 * MiB) == ENOENT); // inside, not at the start
        CHECK(c.unmap(fixed) == 0);
        CHECK(c.unmap(fixed) == ENOENT); // twice
    }
    SECTION("UNMAP with a handle, offset, size or flags: EINVAL") {
        std::uint64_t a = fixed;
        REQUIRE(c.map(hbm, 0, 4 * MiB, a, DRM_HPU_VM_FIXED) == 0);
        drm_hpu_vm_bind b{};
        b.op = DRM_HPU_VM_UNMAP;
        b.va = fixed;
        b.handle = hbm;
        CHECK(bind(b) == EINVAL);
        b.handle = 0;
        b.size = 4 * MiB;
        CHECK(bind(b) == EINVAL);
        b.size = 0;
        b.bo_offset = 2 * MiB;
        CHECK(bind(b) == EINVAL);
        b.bo_offset = 0;
        b.flags = DRM_HPU_VM_READONLY;
        CHECK(bind(b) == EINVAL);
        b.flags = 0;
        CHECK(bind(b) == 0);
    }
    SECTION("a buffer stays alive while mapped after its handle is closed") {
        std::uint64_t a = 0;
        REQUIRE(c.map(hbm, 0, 4 * MiB, a) == 0);
        CHECK(c.gem_close(hbm) == 0);
        CHECK(memory_used(c, &drm_hpu_info_memory::hbm_ctx_used) >= 4 * MiB);
        CHECK(c.unmap(a) == 0);
    }
}

TEST_CASE("QUEUE_CREATE and QUEUE_DESTROY reject bad input", "[uapi-mem][queue]")
{
    Ctx c(node());
    std::uint32_t q = 0;
    hpu::Device dev = hpu::Device::open(nodes_by_pci().front().index);
    const unsigned int num_dma = dev.info().num_dma;
    SECTION("a queue on every DMA engine") {
        for (unsigned int e = 0; e < num_dma; ++e) {
            CHECK(c.queue_create(e, q) == 0);
            CHECK(c.queue_destroy(q) == 0);
        }
    }
    SECTION("unknown engine class: EINVAL")
    {
        // 0 DMA, 1 TPC and 2 MME are the classes (test_compute.cpp has the last two).
        CHECK(c.queue_create(0, q, 3) == EINVAL);
        CHECK(c.queue_create(0, q, DRM_HPU_MAX_ENGINE_CLASSES) == EINVAL);
        CHECK(c.queue_create(0, q, 0xffffffffU) == EINVAL);
    }
    SECTION("engine index out of range: EINVAL") {
        CHECK(c.queue_create(num_dma, q) == EINVAL);
        CHECK(c.queue_create(0xffffffffU, q) == EINVAL);
    }
    SECTION("non-zero flags: EINVAL") { CHECK(c.queue_create(0, q, DRM_HPU_ENGINE_DMA, 1) == EINVAL); }
    SECTION("destroy an unknown queue: ENOENT") { CHECK(c.queue_destroy(0x1234) == ENOENT); }
    SECTION("destroy twice: ENOENT") {
        REQUIRE(c.queue_create(0, q) == 0);
        CHECK(c.queue_destroy(q) == 0);
        CHECK(c.queue_destroy(q) == ENOENT);
    }
    SECTION("destroy with non-zero pad: EINVAL") {
        REQUIRE(c.queue_create(0, q) == 0);
        CHECK(c.queue_destroy(q, 1) == EINVAL);
        CHECK(c.queue_destroy(q) == 0);
    }
    SECTION("another file's queue: ENOENT") {
        REQUIRE(c.queue_create(0, q) == 0);
        Ctx d(node());
        CHECK(d.queue_destroy(q) == ENOENT);
        CHECK(d.submit(q, c.mem().va_start, 8) == ENOENT);
        CHECK(c.queue_destroy(q) == 0);
    }
}

TEST_CASE("SUBMIT rejects bad input", "[uapi-mem][submit]")
{
    Ctx c(node());
    const std::uint32_t q = make_queue(c);
    Cb nop;
    nop.nop().nop();
    const std::uint64_t cb = c.put_cb(nop);
    std::uint32_t so = 0;
    REQUIRE(syncobj_create(c.fd(), so) == 0);
    drm_hpu_sync out{};
    out.handle = so;

    auto base = [&] {
        drm_hpu_submit s{};
        s.queue_id = q;
        s.cb_va = cb;
        s.cb_size = nop.bytes();
        s.num_out_syncs = 1;
        s.out_syncs = reinterpret_cast<std::uintptr_t>(&out); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        return s;
    };
    auto submit = [&](drm_hpu_submit s) { return xioctl(c.fd(), DRM_IOCTL_HPU_SUBMIT, &s); };

    SECTION("valid submission signals its out-sync with seq from 1") {
        auto s = base();
        REQUIRE(xioctl(c.fd(), DRM_IOCTL_HPU_SUBMIT, &s) == 0);
        CHECK(s.seq == 1);
        CHECK(syncobj_wait(c.fd(), so) == 0);
        CHECK(syncobj_status(c.fd(), so) == 1);
        auto s2 = base();
        REQUIRE(xioctl(c.fd(), DRM_IOCTL_HPU_SUBMIT, &s2) == 0);
        CHECK(s2.seq == 2);
        CHECK(syncobj_wait(c.fd(), so) == 0);
    }
    SECTION("non-zero flags: EINVAL") {
        auto s = base();
        s.flags = 1;
        CHECK(submit(s) == EINVAL);
    }
    SECTION("timeout_ms above one hour: EINVAL") {
        auto s = base();
        s.timeout_ms = 3600001;
        CHECK(submit(s) == EINVAL);
        s.timeout_ms = 0xffffffffU;
        CHECK(submit(s) == EINVAL);
    }
    SECTION("unknown queue: ENOENT") {
        auto s = base();
        s.queue_id = q + 1000;
        CHECK(submit(s) == ENOENT);
    }
    SECTION("destroyed queue: ENOENT") {
        std::uint32_t q2 = 0;
        REQUIRE(c.queue_create(1, q2) == 0);
        REQUIRE(c.queue_destroy(q2) == 0);
        auto s = base();
        s.queue_id = q2;
        CHECK(submit(s) == ENOENT);
    }
    SECTION("cb_size 0: EINVAL") {
        auto s = base();
        s.cb_size = 0;
        CHECK(submit(s) == EINVAL);
    }
    SECTION("cb_size not a multiple of 8: EINVAL") {
        auto s = base();
        s.cb_size = 12;
        CHECK(submit(s) == EINVAL);
        s.cb_size = 4;
        CHECK(submit(s) == EINVAL);
    }
    SECTION("cb_size above 1 MiB: EINVAL") {
        auto s = base();
        s.cb_size = 1 * MiB + 8;
        CHECK(submit(s) == EINVAL);
        s.cb_size = 0xfffffff8U;
        CHECK(submit(s) == EINVAL);
    }
    SECTION("cb_va not 8-byte aligned: EINVAL") {
        auto s = base();
        s.cb_va = cb + 4;
        CHECK(submit(s) == EINVAL);
    }
    SECTION("cb_va outside the context's range: EINVAL") {
        auto s = base();
        s.cb_va = 1ULL << 48U;
        CHECK(submit(s) == EINVAL);
        s.cb_va = kU64Max - 7;
        CHECK(submit(s) == EINVAL);
        s.cb_va = 0x8000000000000000ULL;
        CHECK(submit(s) == EINVAL);
    }
    SECTION("too many in-syncs or out-syncs: EINVAL") {
        std::vector<drm_hpu_sync> many(DRM_HPU_MAX_SYNCS + 1);
        for (auto &x : many)
            x.handle = so;
        auto s = base();
        s.num_in_syncs = DRM_HPU_MAX_SYNCS + 1;
        s.in_syncs = reinterpret_cast<std::uintptr_t>(many.data()); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        CHECK(submit(s) == EINVAL);
        auto t = base();
        t.num_out_syncs = DRM_HPU_MAX_SYNCS + 1;
        t.out_syncs = reinterpret_cast<std::uintptr_t>(many.data()); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        CHECK(submit(t) == EINVAL);
        t.num_out_syncs = 0xffffffffU;
        CHECK(submit(t) == EINVAL);
    }
    SECTION("sync arrays at unreadable addresses: EFAULT") {
        void *p = ::mmap(nullptr, kHostPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        REQUIRE(p != MAP_FAILED);
        auto s = base();
        s.num_in_syncs = 1;
        s.in_syncs = reinterpret_cast<std::uintptr_t>(p); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        CHECK(submit(s) == EFAULT);
        auto t = base();
        t.out_syncs = reinterpret_cast<std::uintptr_t>(p); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        CHECK(submit(t) == EFAULT);
        t.out_syncs = 0;
        CHECK(submit(t) == EFAULT);
        ::munmap(p, kHostPage);
    }
    SECTION("unknown syncobj handles: ENOENT") {
        drm_hpu_sync bad{};
        bad.handle = so + 1000;
        auto s = base();
        s.num_in_syncs = 1;
        s.in_syncs = reinterpret_cast<std::uintptr_t>(&bad); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        CHECK(submit(s) == ENOENT);
        auto t = base();
        t.out_syncs = reinterpret_cast<std::uintptr_t>(&bad); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        CHECK(submit(t) == ENOENT);
        bad.handle = 0;
        CHECK(submit(t) == ENOENT);
    }
    SECTION("non-zero sync flags: EINVAL") {
        drm_hpu_sync bad{};
        bad.handle = so;
        bad.flags = 1;
        auto t = base();
        t.out_syncs = reinterpret_cast<std::uintptr_t>(&bad); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        CHECK(submit(t) == EINVAL);
        std::uint32_t in = 0;
        REQUIRE(syncobj_create(c.fd(), in, DRM_SYNCOBJ_CREATE_SIGNALED) == 0);
        bad.handle = in;
        auto s = base();
        s.num_in_syncs = 1;
        s.in_syncs = reinterpret_cast<std::uintptr_t>(&bad); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        CHECK(submit(s) == EINVAL);
    }
    SECTION("a refused submission leaves its out-sync unsignalled") {
        auto s = base();
        s.flags = 1;
        REQUIRE(submit(s) == EINVAL);
        // No fence was ever attached: a wait without WAIT_FOR_SUBMIT fails.
        drm_syncobj_wait w{};
        w.handles = reinterpret_cast<std::uintptr_t>(&so); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        w.count_handles = 1;
        w.timeout_nsec = 0;
        CHECK(xioctl(c.fd(), DRM_IOCTL_SYNCOBJ_WAIT, &w) == EINVAL);
    }
    syncobj_destroy(c.fd(), so);
}

TEST_CASE("timeline syncobjs: a job adds its point", "[uapi-mem][submit]")
{
    Ctx c(node());
    const std::uint32_t q = make_queue(c);
    Cb nop;
    nop.nop();
    const std::uint64_t cb = c.put_cb(nop);
    std::uint32_t tl = 0;
    REQUIRE(syncobj_create(c.fd(), tl) == 0);
    for (std::uint64_t pt = 1; pt <= 3; ++pt) {
        drm_hpu_sync out{};
        out.handle = tl;
        out.point = pt * 10;
        drm_hpu_submit s{};
        s.queue_id = q;
        s.cb_va = cb;
        s.cb_size = nop.bytes();
        s.num_out_syncs = 1;
        s.out_syncs = reinterpret_cast<std::uintptr_t>(&out); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        REQUIRE(xioctl(c.fd(), DRM_IOCTL_HPU_SUBMIT, &s) == 0);
    }
    CHECK(timeline_wait(c.fd(), tl, 30) == 0);
    std::uint64_t value = 0;
    drm_syncobj_timeline_array a{};
    a.handles = reinterpret_cast<std::uintptr_t>(&tl); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    a.points = reinterpret_cast<std::uintptr_t>(&value); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    a.count_handles = 1;
    CHECK(xioctl(c.fd(), DRM_IOCTL_SYNCOBJ_QUERY, &a) == 0);
    CHECK(value == 30);
    syncobj_destroy(c.fd(), tl);
}

TEST_CASE("malformed packets fail the job with the device's error", "[uapi-mem][packet]")
{
    Ctx c(node());
    const std::uint32_t q = make_queue(c);
    const auto buf = c.host_buf(kHostPage);
    SECTION("a good command buffer of every packet type runs") {
        Cb cb;
        cb.nop().write_value(buf.va, 0x12345678).sob_update(3, 5).sob_update(3, 2, SOB_ADD).wait(3, 7, WAIT_EQ)
            .memset(0x0807060504030201ULL, buf.va + 64, 16).lin_dma(buf.va + 64, buf.va + 128, 16);
        CHECK(c.run(q, cb) == 1);
        std::uint32_t v = 0;
        std::memcpy(&v, buf.ptr, 4);
        CHECK(v == 0x12345678U);
        CHECK(buf.ptr[64] == 1);   // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        CHECK(buf.ptr[72] == 1);   // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        CHECK(buf.ptr[143] == 8);  // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    }
    SECTION("unknown opcode: EINVAL") { expect_job_error(c, q, Cb().nop().raw(0x7f, 0), EINVAL, EINVAL); }
    SECTION("header reserved bits set: EINVAL") {
        expect_job_error(c, q, Cb().raw(OP_NOP | 0x100U, 0), EINVAL, EINVAL);
    }
    SECTION("NOP reserved word set: EINVAL") { expect_job_error(c, q, Cb().nop(1), EINVAL, EINVAL); }
    SECTION("packet running past cb_size: EINVAL") {
        Cb cb;
        cb.raw(OP_LIN_DMA, 0).raw(0, 0); // 16 of LIN_DMA's 32 bytes
        expect_job_error(c, q, cb, EINVAL, EINVAL);
    }
    SECTION("LIN_DMA unknown flags: EINVAL") {
        expect_job_error(c, q, Cb().lin_dma(buf.va, buf.va + 2048, 64, 2), EINVAL, EINVAL);
    }
    SECTION("LIN_DMA size 0: EINVAL") { expect_job_error(c, q, Cb().lin_dma(buf.va, buf.va + 2048, 0), EINVAL, EINVAL); }
    SECTION("LIN_DMA size above 4 GiB: EINVAL") {
        expect_job_error(c, q, Cb().lin_dma(buf.va, buf.va + 2048, (4 * GiB) + 1), EINVAL, EINVAL);
    }
    SECTION("WRITE_VALUE to an unaligned address: EINVAL") {
        expect_job_error(c, q, Cb().write_value(buf.va + 2, 1), EINVAL, EINVAL);
    }
    SECTION("SOB_UPDATE beyond the context's 32 sync objects: EINVAL") {
        expect_job_error(c, q, Cb().sob_update(32, 1), EINVAL, EINVAL);
    }
    SECTION("SOB_UPDATE unknown op: EINVAL") { expect_job_error(c, q, Cb().sob_update(0, 1, 2), EINVAL, EINVAL); }
    SECTION("WAIT unknown condition: EINVAL") { expect_job_error(c, q, Cb().wait(0, 0, 3), EINVAL, EINVAL); }
    SECTION("WREG from a user context: EPERM") { expect_job_error(c, q, Cb().wreg(0x0, 1), EPERM, EPERM); }
    SECTION("LIN_DMA to an unmapped address: EFAULT fence") {
        const std::uint64_t hole = c.mem().va_end - 64 * MiB;
        int serr = 0;
        CHECK(c.run(q, Cb().lin_dma(buf.va, hole, 64), &serr) == -EFAULT);
        CHECK(serr == 0);
        CHECK(c.run(q, Cb().lin_dma(hole, buf.va, 64)) == -EFAULT);
        CHECK(c.run(q, Cb().write_value(hole, 1)) == -EFAULT);
        CHECK(c.run(q, Cb().nop()) == 1);
    }
    SECTION("LIN_DMA with address bits 63:48 set: EFAULT fence") {
        CHECK(c.run(q, Cb().lin_dma(buf.va, buf.va | (1ULL << 60U), 64)) == -EFAULT);
        CHECK(c.run(q, Cb().nop()) == 1);
    }
    SECTION("write through a read-only mapping: EFAULT fence, data untouched") {
        std::uint32_t h = 0;
        REQUIRE(c.bo_create(kHostPage, DRM_HPU_BO_HOST, h) == 0);
        std::uint64_t ro = 0;
        REQUIRE(c.map(h, 0, kHostPage, ro, DRM_HPU_VM_READONLY) == 0);
        CHECK(c.run(q, Cb().write_value(ro, 7)) == -EFAULT);
        CHECK(c.run(q, Cb().lin_dma(buf.va, ro, 64)) == -EFAULT);
        CHECK(c.run(q, Cb().lin_dma(ro, buf.va + 1024, 64)) == 1); // reading is fine
    }
    SECTION("packets before the failing one take effect, later ones do not") {
        std::memset(buf.ptr, 0, 16);
        Cb cb;
        cb.write_value(buf.va, 1).raw(0x7e, 0).write_value(buf.va + 8, 2);
        int serr = 0;
        const int st = c.run(q, cb, &serr);
        if (serr == 0) {
            CHECK(st == -EINVAL);
            std::uint32_t a = 0;
            std::uint32_t b = 0;
            std::memcpy(&a, buf.ptr, 4);
            std::memcpy(&b, buf.ptr + 8, 4); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
            CHECK(a == 1);
            CHECK(b == 0);
        } else {
            CHECK(serr == EINVAL);
        }
    }
    SECTION("command buffer at an unmapped address: refused (EINVAL) or EFAULT fence") {
        const std::uint64_t hole = c.mem().va_end - 64 * MiB;
        std::uint32_t so = 0;
        REQUIRE(syncobj_create(c.fd(), so) == 0);
        const int e = c.submit(q, hole, 64, so);
        if (e == 0) {
            CHECK(syncobj_wait(c.fd(), so) == 0);
            CHECK(syncobj_status(c.fd(), so) == -EFAULT);
        } else {
            CHECK(e == EINVAL);
        }
        syncobj_destroy(c.fd(), so);
        CHECK(c.run(q, Cb().nop()) == 1);
    }
    SECTION("job that exceeds its own timeout: ETIMEDOUT fence, queue still works") {
        // SOB 9 of this context is never raised to 1000.
        CHECK(c.run(q, Cb().sob_update(9, 0)) == 1);
        CHECK(c.run(q, Cb().wait(9, 1000), nullptr, 200) == -ETIMEDOUT);
        CHECK(c.run(q, Cb().write_value(buf.va + 256, 77)) == 1);
        std::uint32_t v = 0;
        std::memcpy(&v, buf.ptr + 256, 4); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        CHECK(v == 77);
    }
}

// SPDX-License-Identifier: MIT
//
// User queues against a hostile or careless process (include/uapi/drm/
// hpu_accel.h, struct drm_hpu_uq_create; Documentation/design/
// user-queues.md section 3 "Doorbell mmap", "Teardown / kill -9", and the
// VM list of section 7; Documentation/hw/memory-and-queues.md "Doorbell
// pages"):
//  - a doorbell page maps only into the file that created the queue, as
//    exactly 4096 shared, non-executable bytes that neither grow nor pass
//    to a forked child;
//  - the doorbell of a destroyed queue rings nothing, not even the next
//    owner of its stream, and does not crash the process;
//  - garbage stores to one's own doorbell (values far ahead, 8-, 16- and
//    64-bit stores, other offsets, reads) disturb no other file's queue;
//  - descriptors, command buffers and rings aimed at another context's
//    memory fault in their own context only, the other's data intact;
//  - UNMAP of a buffer a queue copies into: later copies fault, the freed
//    pages are never written;
//  - a hung descriptor fails -ETIMEDOUT after the queue's timeout_ms and
//    the queue goes on; without CAP_SYS_ADMIN timeout_ms is capped;
//  - kill -9 of a process streaming jobs through a user queue frees its
//    user stream and its memory.
//
// Copyright (c) 2026 The hpu authors
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "err_util.h"
#include "uq_util.h"
#include "vm_util.h"

using namespace vmt;

namespace {

constexpr std::uint32_t kNeverSob = 30; // no test sets it

std::uint32_t dma_engine(int fd, std::uint32_t want)
{
    const drm_hpu_info_device d = info_device(fd);
    return d.class_engines[DRM_HPU_ENGINE_DMA] > want ? want : 0;
}

// mmap(2) of the device file; returns 0 (and unmaps) or the errno.
int try_mmap(int fd, std::size_t len, int prot, int flags, std::uint64_t off)
{
    void *p = ::mmap(nullptr, len, prot, flags, fd, static_cast<off_t>(off));
    if (p == MAP_FAILED)
        return errno;
    ::munmap(p, len);
    return 0;
}

// A pipe pair for a forked helper: one byte at a time each way.
struct Chan {
    int up[2] = {-1, -1};   // child -> parent
    int down[2] = {-1, -1}; // parent -> child
    Chan()
    {
        REQUIRE(::pipe(up) == 0);   // NOLINT(cppcoreguidelines-pro-bounds-array-to-pointer-decay)
        REQUIRE(::pipe(down) == 0); // NOLINT(cppcoreguidelines-pro-bounds-array-to-pointer-decay)
    }
    Chan(const Chan &) = delete;
    Chan &operator=(const Chan &) = delete;
    Chan(Chan &&) = delete;
    Chan &operator=(Chan &&) = delete;
    ~Chan()
    {
        for (const int f : {up[0], up[1], down[0], down[1]}) {
            if (f >= 0)
                ::close(f);
        }
    }
    void in_child()
    {
        ::close(up[0]);
        ::close(down[1]);
        up[0] = down[1] = -1;
    }
    void in_parent()
    {
        ::close(up[1]);
        ::close(down[0]);
        up[1] = down[0] = -1;
    }
    // Child side.
    void tell(char c) const { std::ignore = ::write(up[1], &c, 1); }
    [[nodiscard]] char heard() const
    {
        char c = 0;
        return ::read(down[0], &c, 1) == 1 ? c : '\0';
    }
    // Parent side: the child's next byte within timeout_ms, or '\0'.
    [[nodiscard]] char from_child(int timeout_ms) const
    {
        pollfd p{up[0], POLLIN, 0};
        char c = 0;
        if (::poll(&p, 1, timeout_ms) != 1 || ::read(up[0], &c, 1) != 1)
            return '\0';
        return c;
    }
    void to_child(char c) const { std::ignore = ::write(down[1], &c, 1); }
};

int wait_child(pid_t pid, int *status)
{
    int st = 0;
    const pid_t r = ::waitpid(pid, &st, 0);
    *status = st;
    return r == pid ? 0 : errno;
}

// The child of the destroyed-doorbell test: makes a queue on the engine,
// maps its doorbell, destroys the queue ('d'), and on 'g' stores to the
// stale mapping every way it can; exits 0 ('s' first) unless a store kills it.
[[noreturn]] void stale_child(const std::string &path, std::uint32_t engine, Chan &ch)
{
    child_default_signals();
    int rc = 0;
    try {
        Ctx c(path);
        Uq uq(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 8, 0, 0, 0, 0});
        uq.make();
        if (uq.destroy() != 0)
            ::_exit(3);
        ch.tell('d');
        if (ch.heard() != 'g')
            ::_exit(4);
        auto *b = static_cast<volatile std::uint8_t *>(uq.db());
        for (std::uint32_t v : {1U, 2U, 4U, 8U})
            doorbell_store(uq.db(), v);
        b[0] = 1;                                                          // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        *reinterpret_cast<volatile std::uint64_t *>(uq.db()) = 0x100000001ULL; // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        std::ignore = *reinterpret_cast<volatile std::uint32_t *>(uq.db());   // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        ch.tell('s');
    } catch (...) {
        rc = 5;
    }
    ::_exit(rc);
}

// The flooding child: its own queue on the engine; on 'g' it stores
// garbage to its own doorbell page until 'x', then runs one real job on
// its queue. Exit status: 0, or bits of what went wrong.
enum FloodFail : unsigned {
    FL_SETUP = 1U << 0U,
    FL_OWN_JOB = 1U << 1U,
    FL_CAUGHT = 1U << 2U,
    FL_NO_GO = 1U << 3U,
};

void flood_once(void *db, std::uint32_t round)
{
    auto *b8 = static_cast<volatile std::uint8_t *>(db);
    auto *b16 = static_cast<volatile std::uint16_t *>(db);
    auto *b32 = static_cast<volatile std::uint32_t *>(db);
    auto *b64 = static_cast<volatile std::uint64_t *>(db);
    // Far ahead of a queue with nothing done (more than ring_size).
    for (const std::uint32_t v : {0x40000000U + round, 0x80000000U, 0xffffffffU, 17U + round})
        b32[0] = v; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    for (unsigned i = 0; i < 8; ++i)
        b8[i] = static_cast<std::uint8_t>(1 + i); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    b16[0] = 1; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    b16[1] = 2; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    b64[0] = 0x4000000040000000ULL; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    b64[1] = 0x4000000140000001ULL; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    for (const std::size_t off : {4U, 8U, 0x800U, 0xffcU})
        b32[off / 4] = 1; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    std::ignore = b32[0]; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    std::ignore = b8[3];  // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
}

[[noreturn]] void flood_child(const std::string &path, std::uint32_t engine, Chan &ch)
{
    child_default_signals();
    unsigned fails = 0;
    try {
        Ctx c(path);
        Uq uq(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 16, 0, 0, 0, 0});
        uq.make();
        const auto out = c.host_buf(4 * KiB);
        ch.tell('r');
        if (ch.heard() != 'g')
            ::_exit(FL_NO_GO);
        pollfd p{ch.down[0], POLLIN, 0};
        for (std::uint32_t round = 0; ::poll(&p, 1, 0) == 0; ++round)
            flood_once(uq.db(), round);
        // Its own queue took none of it: the next real descriptor is
        // number 0 and runs as soon as it is rung.
        if (uq.outcome(uq.submit(Cb().write_value(out.va, 0x0f), 1), 30ULL * 1000000000ULL) != 0 ||
            hb_word32(out, 0) != 0x0f)
            fails |= FL_OWN_JOB;
    } catch (...) {
        fails |= FL_CAUGHT;
    }
    ::_exit(static_cast<int>(fails));
}

// The killed process: streams 4 MiB host -> HBM -> host copies through a
// user queue, for ever; 'r' once eight of them are done.
[[noreturn]] void streaming_child(const std::string &path, std::uint32_t engine, Chan &ch)
{
    child_default_signals();
    try {
        Ctx c(path);
        Uq uq(c, UqParams{engine, DRM_HPU_ENGINE_DMA, 64, 0, 0, 0, 0});
        uq.make();
        constexpr std::uint64_t kSize = 4 * MiB;
        const auto src = c.host_buf(kSize);
        const auto dst = c.host_buf(kSize);
        const std::uint64_t hbm = c.hbm_buf(kSize);
        const Cb cb = Cb().lin_dma(src.va, hbm, kSize).lin_dma(hbm, dst.va, kSize);
        for (std::uint64_t k = 0;; ++k) {
            uq.put(cb, k);
            if (k % 4 == 3)
                uq.ring();
            if (k == 8) {
                uq.ring();
                if (uq.outcome(8) != 0)
                    ::_exit(2);
                ch.tell('r');
            }
        }
    } catch (...) {
        ::_exit(3);
    }
}

} // namespace

TEST_CASE("a doorbell page maps only into its own file, as 4096 shared non-executable bytes that cannot grow",
          "[security][uq]")
{
    const std::string path = node(0);
    Ctx a(path);
    require_uq(a.fd());
    Ctx b(path);
    Uq ua(a, UqParams{0, DRM_HPU_ENGINE_DMA, 8, 0, 0, 0, 0});
    ua.make();
    const std::uint64_t off = ua.created().db_mmap_offset;
    INFO("doorbell offset 0x" << std::hex << off);
    CHECK(off % kHostPage == 0);

    // Another file of this process, without and with a queue of its own.
    CHECK(try_mmap(b.fd(), DRM_HPU_UQ_DB_SIZE, PROT_WRITE, MAP_SHARED, off) == EACCES);
    Uq ub(b, UqParams{0, DRM_HPU_ENGINE_DMA, 8, 0, 0, 0, 0});
    ub.make();
    CHECK(ub.created().db_mmap_offset != off);
    CHECK(try_mmap(b.fd(), DRM_HPU_UQ_DB_SIZE, PROT_WRITE, MAP_SHARED, off) == EACCES);
    CHECK(try_mmap(a.fd(), DRM_HPU_UQ_DB_SIZE, PROT_WRITE, MAP_SHARED, ub.created().db_mmap_offset) == EACCES);
    // Another process, with its own open file.
    {
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            child_default_signals();
            const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
            if (fd < 0)
                ::_exit(0xff);
            ::_exit(try_mmap(fd, DRM_HPU_UQ_DB_SIZE, PROT_WRITE, MAP_SHARED, off));
        }
        int st = 0;
        REQUIRE(wait_child(pid, &st) == 0);
        REQUIRE(WIFEXITED(st));
        CHECK(WEXITSTATUS(st) == EACCES);
    }
    // Its own file, but not as the queue's page.
    CHECK(try_mmap(a.fd(), std::size_t{2} * DRM_HPU_UQ_DB_SIZE, PROT_WRITE, MAP_SHARED, off) == EINVAL);
    {
        const int e = try_mmap(a.fd(), DRM_HPU_UQ_DB_SIZE, PROT_WRITE, MAP_SHARED, off + DRM_HPU_UQ_DB_SIZE);
        INFO("the next page: " << std::strerror(e));
        CHECK((e == EINVAL || e == EACCES));
    }
    {
        const int e = try_mmap(a.fd(), DRM_HPU_UQ_DB_SIZE, PROT_WRITE, MAP_SHARED, off - DRM_HPU_UQ_DB_SIZE);
        INFO("the page before: " << std::strerror(e));
        CHECK((e == EINVAL || e == EACCES));
    }
    {
        // On a noexec mount of the node the VFS refuses first (EPERM);
        // elsewhere the driver must (EINVAL).
        struct statvfs vfs {};
        REQUIRE(::statvfs(path.c_str(), &vfs) == 0);
        const int want = (vfs.f_flag & ST_NOEXEC) != 0 ? EPERM : EINVAL;
        INFO("noexec mount: " << ((vfs.f_flag & ST_NOEXEC) != 0));
        CHECK(try_mmap(a.fd(), DRM_HPU_UQ_DB_SIZE, PROT_WRITE | PROT_EXEC, MAP_SHARED, off) == want);
        CHECK(try_mmap(a.fd(), DRM_HPU_UQ_DB_SIZE, PROT_READ | PROT_EXEC, MAP_SHARED, off) == want);
    }
    CHECK(try_mmap(a.fd(), DRM_HPU_UQ_DB_SIZE, PROT_WRITE, MAP_PRIVATE, off) == EINVAL);
    // A good mapping neither becomes executable nor grows.
    void *p = ::mmap(nullptr, DRM_HPU_UQ_DB_SIZE, PROT_WRITE, MAP_SHARED, a.fd(), static_cast<off_t>(off));
    REQUIRE(p != MAP_FAILED);
    CHECK(::mprotect(p, DRM_HPU_UQ_DB_SIZE, PROT_WRITE | PROT_EXEC) != 0);
    void *grown = ::mremap(p, DRM_HPU_UQ_DB_SIZE, std::size_t{2} * DRM_HPU_UQ_DB_SIZE, MREMAP_MAYMOVE);
    CHECK(grown == MAP_FAILED);
    if (grown != MAP_FAILED)
        p = grown;
    // A second mapping of the same page rings the same queue.
    const auto out = a.host_buf(4 * KiB);
    ua.put(Cb().write_value(out.va, 0x2d), 1);
    doorbell_store(p, 1);
    CHECK(ua.outcome(1) == 0);
    CHECK(hb_word32(out, 0) == 0x2d);
    ::munmap(p, grown != MAP_FAILED ? std::size_t{2} * DRM_HPU_UQ_DB_SIZE : DRM_HPU_UQ_DB_SIZE);
    // And the original mapping still does.
    CHECK(ua.outcome(ua.submit(Cb().write_value(out.va + 4, 0x2e), 2)) == 0);
    CHECK(hb_word32(out, 1) == 0x2e);
}

TEST_CASE("a forked child does not inherit the doorbell mapping", "[security][uq]")
{
    const std::string path = node(0);
    Ctx a(path);
    require_uq(a.fd());
    Uq ua(a, UqParams{0, DRM_HPU_ENGINE_DMA, 8, 0, 0, 0, 0});
    ua.make();
    const auto out = a.host_buf(4 * KiB);
    ua.put(Cb().write_value(out.va, 0xc1), 1);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        child_default_signals();
        const rlimit no_core{0, 0};
        ::setrlimit(RLIMIT_CORE, &no_core); // the expected crash dumps nothing
        doorbell_store(ua.db(), 1);         // no mapping here: SIGSEGV
        ::_exit(0);
    }
    int st = 0;
    REQUIRE(wait_child(pid, &st) == 0);
    CHECK(WIFSIGNALED(st));
    if (WIFSIGNALED(st))
        CHECK(WTERMSIG(st) == SIGSEGV);
    // The child rang nothing: the descriptor is still not announced.
    std::int32_t s = 0;
    CHECK(uq_wait_raw(a.fd(), ua.id(), 1, 0, &s) == EINVAL);
    CHECK(hb_word32(out, 0) == 0);
    ua.ring();
    CHECK(ua.outcome(1) == 0);
    CHECK(hb_word32(out, 0) == 0xc1);
}

TEST_CASE("the doorbell of a destroyed queue rings nothing, not even the stream's next owner, and does not crash",
          "[security][uq]")
{
    const std::string path = node(0);
    std::uint32_t engine = 0;
    {
        Ctx c(path);
        require_uq(c.fd());
        engine = dma_engine(c.fd(), 4);
    }
    Chan ch;
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ch.in_child();
        stale_child(path, engine, ch);
    }
    ch.in_parent();
    REQUIRE(ch.from_child(30000) == 'd');
    // Every free user stream of the engine, the destroyed queue's included,
    // now belongs to a queue of this process with descriptor 0 written
    // (a job that writes a word) and not rung.
    EngineFill fill(path, engine);
    REQUIRE(fill.full());
    CHECK(fill.count() >= 1);
    // Each holds descriptor 0 (a job that writes its own word), not rung.
    struct Victim {
        int fd;
        Uq *uq;
        Ctx::HostBuf out;
        std::size_t word;
    };
    std::vector<Victim> victims;
    for (auto &h : fill.holders()) {
        if (h.uqs.empty())
            continue;
        const auto out = h.ctx->host_buf(4 * KiB);
        for (std::size_t k = 0; k < h.uqs.size(); ++k) {
            h.uqs[k]->put(Cb().write_value(out.va + 4 * k, 0x5ed), 1);
            victims.push_back({h.ctx->fd(), h.uqs[k].get(), out, k});
        }
    }
    ch.to_child('g');
    CHECK(ch.from_child(30000) == 's');
    int st = 0;
    REQUIRE(wait_child(pid, &st) == 0);
    INFO("child status 0x" << std::hex << st);
    CHECK(WIFEXITED(st));
    CHECK((WIFEXITED(st) && WEXITSTATUS(st) == 0));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    for (std::size_t i = 0; i < victims.size(); ++i) {
        const Victim &v = victims[i];
        INFO("queue " << i << " of " << victims.size());
        // Not announced (UQ_WAIT refuses the point) and not run.
        std::int32_t s = 0;
        CHECK(uq_wait_raw(v.fd, v.uq->id(), 1, 0, &s) == EINVAL);
        CHECK(hb_word32(v.out, v.word) == 0);
    }
    // The set-up would have shown a doorbell: each queue rung by its own
    // file runs its descriptor.
    for (std::size_t i = 0; i < victims.size(); ++i) {
        const Victim &v = victims[i];
        INFO("queue " << i);
        v.uq->map_db();
        v.uq->ring();
        CHECK(v.uq->outcome(1) == 0);
        CHECK(hb_word32(v.out, v.word) == 0x5ed);
    }
}

TEST_CASE("garbage stores to one's own doorbell page disturb no other file's queue", "[security][uq]")
{
    const std::string path = node(0);
    std::uint32_t engine = 0;
    {
        Ctx c(path);
        require_uq(c.fd());
        engine = dma_engine(c.fd(), 5);
    }
    const auto e0 = errors_now(path);
    Chan ch;
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ch.in_child();
        flood_child(path, engine, ch);
    }
    ch.in_parent();
    REQUIRE(ch.from_child(30000) == 'r');

    Ctx a(path);
    Uq uq(a, UqParams{engine, DRM_HPU_ENGINE_DMA, 16, 0, 0, 0, 0});
    uq.make();
    const auto out = a.host_buf(4 * KiB);
    ch.to_child('g');
    // 200 jobs while the other process floods its page: each copies the
    // word before it, so all of them hold the magic only if every job ran,
    // in order.
    constexpr unsigned kJobs = 200;
    for (unsigned k = 0; k < kJobs; ++k) {
        const Cb cb = k == 0 ? Cb().write_value(out.va, 0xf1d) : Cb().lin_dma(out.va + 8ULL * (k - 1), out.va + 8ULL * k, 8);
        uq.submit(cb, 0xf000 + k);
        if (k % 16 == 15) {
            // The records of the last 16, before the ring reuses their slots.
            REQUIRE(uq.wait(k + 1) == 0);
            for (unsigned j = k - 15; j <= k; ++j) {
                INFO("record " << j);
                const drm_hpu_uq_cqe r = uq.record(j);
                CHECK(r.status == 0);
                CHECK(r.index == j);
                CHECK(r.seq == 0xf000 + j);
            }
        }
    }
    std::int32_t st = 1;
    std::uint64_t done = 0;
    REQUIRE(uq.wait(kJobs, &st, &done) == 0);
    CHECK(st == 0);
    CHECK(done == kJobs);
    ch.to_child('x');
    int cs = 0;
    REQUIRE(wait_child(pid, &cs) == 0);
    REQUIRE(WIFEXITED(cs));
    INFO("flooding child failures 0x" << std::hex << WEXITSTATUS(cs)
                                      << " (1 setup, 2 its own job after the flood, 4 exception, 8 no go)");
    CHECK(WEXITSTATUS(cs) == 0);
    for (unsigned k = 0; k < kJobs; ++k) {
        INFO("word " << k);
        CHECK(hb_word64(out, k) == 0xf1d);
    }
    // The refused stores set no error state and caused no reset.
    const auto e1 = errors_now(path);
    CHECK(e1.bad_packets == e0.bad_packets);
    CHECK(e1.priv_violations == e0.priv_violations);
    CHECK(e1.mmu_faults == e0.mmu_faults);
    CHECK(e1.engine_hangs == e0.engine_hangs);
    CHECK(e1.soft_resets == e0.soft_resets);
    CHECK(e1.hard_resets == e0.hard_resets);
}

TEST_CASE("descriptors, command buffers and rings aimed at another context's memory fault in their own context only",
          "[security][uq]")
{
    const std::string path = node(0);
    Ctx a(path);
    require_uq(a.fd());
    Ctx b(path);
    REQUIRE(a.mem().asid != b.mem().asid);
    REQUIRE(enable_events(a.fd()) == 0);
    REQUIRE(enable_events(b.fd()) == 0);
    // b's buffer at an address a never maps, holding b's pattern (and a
    // command buffer of b's: a WRITE_VALUE into b's own buffer).
    const auto bbuf = b.host_buf(4 * KiB);
    std::uint64_t x = b.mem().va_start + 6 * GiB;
    REQUIRE(b.map(bbuf.handle, 0, kHostPage, x, DRM_HPU_VM_FIXED) == 0);
    fill_words(reinterpret_cast<std::uint64_t *>(bbuf.ptr), 256, 77); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    const Cb bcb = Cb().write_value(x + 2048, 0xb0b);
    std::memcpy(bbuf.ptr + 3072, bcb.data(), bcb.bytes()); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    const std::vector<std::uint8_t> b_before(bbuf.ptr, bbuf.ptr + kHostPage); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)

    Uq ua(a, UqParams{0, DRM_HPU_ENGINE_DMA, 8, 0, 0, 0, 0});
    ua.make();
    Uq ub(b, UqParams{0, DRM_HPU_ENGINE_DMA, 8, 0, 0, 0, 0}); // the same engine
    ub.make();
    const auto aout = a.host_buf(4 * KiB);
    std::memset(aout.ptr, 0x5a, kHostPage);

    // a's descriptor runs b's command buffer (b's address): a fault in a.
    drm_hpu_uq_desc d{};
    d.cb_va = x + 3072;
    d.cb_size = bcb.bytes();
    d.asid = ua.asid();
    d.seq = 1;
    const std::uint64_t n1 = ua.put_desc(d);
    ua.ring();
    CHECK(ua.outcome(n1 + 1) == -EFAULT);
    CHECK(ua.record(n1).status == HPU_CQ_MMU_FAULT);
    // a's command buffers write to and read from b's address.
    CHECK(ua.outcome(ua.submit(Cb().write_value(x, 0xdead), 2)) == -EFAULT);
    CHECK(ua.outcome(ua.submit(Cb().memset(0xdeaddeaddeaddeadULL, x, 4 * KiB), 3)) == -EFAULT);
    CHECK(ua.outcome(ua.submit(Cb().lin_dma(x, aout.va, 4 * KiB), 4)) == -EFAULT);
    for (std::size_t k = 0; k < kHostPage; ++k) {
        if (aout.ptr[k] != 0x5a) { // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
            FAIL_CHECK("a read b's byte " << k);
            break;
        }
    }
    // Addresses no context has: the kernel's host-address form (bit 63)
    // and beyond 48 bits, as command buffer addresses.
    for (const std::uint64_t bad : {d.cb_va | (1ULL << 63U), 1ULL << 48U, (1ULL << 63U) + 0x1000}) {
        INFO("cb_va 0x" << std::hex << bad);
        drm_hpu_uq_desc e = d;
        e.cb_va = bad;
        const std::uint64_t n = ua.put_desc(e);
        ua.ring();
        const int o = ua.outcome(n + 1);
        CHECK((o == -EFAULT || o == -EIO));
        const std::uint32_t s = ua.record(n).status;
        CHECK((s == HPU_CQ_MMU_FAULT || s == HPU_CQ_BAD_DESC));
    }
    // a cannot make a queue whose rings are b's memory.
    {
        drm_hpu_uq_create args = ua.args();
        args.ring_va = x;
        CHECK(uq_create_raw(a.fd(), args) == EFAULT);
        args = ua.args();
        args.cq_va = x;
        CHECK(uq_create_raw(a.fd(), args) == EFAULT);
    }
    // a's queue goes on.
    CHECK(ua.outcome(ua.submit(Cb().write_value(aout.va, 1), 9)) == 0);

    // b's memory is as b left it, and b's queue runs b's command buffer.
    CHECK(std::memcmp(bbuf.ptr, b_before.data(), kHostPage) == 0);
    drm_hpu_uq_desc bd{};
    bd.cb_va = x + 3072;
    bd.cb_size = bcb.bytes();
    bd.asid = ub.asid();
    bd.seq = 1;
    const std::uint64_t bn = ub.put_desc(bd);
    ub.ring();
    CHECK(ub.outcome(bn + 1) == 0);
    CHECK(hb_word32(bbuf, 512) == 0xb0b);
    // The errors went to a only.
    std::vector<Event> aev;
    CHECK(read_events_until(a.fd(), aev, 10000, [&](const Event &e) {
        return e.type == DRM_HPU_EVENT_ERROR && e.err.queue_id == ua.id();
    }));
    std::vector<Event> bev;
    CHECK_FALSE(read_events_until(b.fd(), bev, 500, [](const Event &e) { return e.type == DRM_HPU_EVENT_ERROR; }));
    INFO("b's events: " << describe(bev));
    CHECK(bev.empty());
}

TEST_CASE("UNMAP of the buffer a user queue copies into: later copies fault, the freed pages are never written",
          "[security][uq]")
{
    const std::string path = node(0);
    Ctx c(path);
    require_uq(c.fd());
    Uq uq(c, UqParams{0, DRM_HPU_ENGINE_DMA, 64, 0, 0, 0, 0});
    uq.make();
    constexpr std::uint64_t kSize = 16 * MiB;
    const auto src = c.host_buf(kSize);
    fill_words(reinterpret_cast<std::uint64_t *>(src.ptr), kSize / 8, 5); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    // The destination: mapped into the device only, so that UNMAP and
    // GEM_CLOSE free its pages.
    std::uint32_t dh = 0;
    REQUIRE(c.bo_create(kSize, DRM_HPU_BO_HOST, dh) == 0);
    std::uint64_t dva = 0;
    REQUIRE(c.map(dh, 0, kSize, dva) == 0);
    constexpr unsigned kJobs = 24;
    for (unsigned k = 0; k < kJobs; ++k)
        uq.put(Cb().lin_dma(src.va, dva, kSize), k);
    uq.ring();
    REQUIRE(uq.wait(1) == 0);
    REQUIRE(c.unmap(dva) == 0);
    REQUIRE(c.gem_close(dh) == 0);
    // Fresh memory, likely on the freed pages, holding a pattern.
    constexpr std::uint64_t kFresh = 128 * MiB;
    void *fresh = ::mmap(nullptr, kFresh, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    REQUIRE(fresh != MAP_FAILED);
    auto *words = static_cast<std::uint64_t *>(fresh);
    fill_words(words, kFresh / 8, 9);
    std::int32_t st = 0;
    REQUIRE(uq.wait(kJobs, &st) == 0);
    // Each copy ran before the UNMAP or faulted; none after a fault ran.
    bool faulted = false;
    for (unsigned p = 1; p <= kJobs; ++p) {
        const int o = uq.outcome(p);
        INFO("point " << p);
        CHECK((o == 0 || o == -EFAULT));
        if (faulted)
            CHECK(o == -EFAULT);
        faulted = faulted || o == -EFAULT;
    }
    CHECK(uq.outcome(kJobs) == -EFAULT);
    const std::uint64_t bad = check_words(words, kFresh / 8, 9);
    INFO("first changed word " << bad << " of " << kFresh / 8);
    CHECK(bad == kFresh / 8);
    ::munmap(fresh, kFresh);
    // The queue goes on.
    const auto out = c.host_buf(4 * KiB);
    CHECK(uq.outcome(uq.submit(Cb().write_value(out.va, 0x11), 99)) == 0);
    CHECK(hb_word32(out, 0) == 0x11);
}

TEST_CASE("a hung user-queue descriptor fails -ETIMEDOUT after the queue's timeout_ms, later ones run",
          "[security][uq]")
{
    const std::string path = node(0);
    const auto e0 = errors_now(path);
    Ctx a(path);
    require_uq(a.fd());
    REQUIRE(enable_events(a.fd()) == 0);
    const std::uint32_t engine = dma_engine(a.fd(), 6);
    Uq uq(a, UqParams{engine, DRM_HPU_ENGINE_DMA, 16, 0, 0, 0, 200});
    uq.make();
    const auto out = a.host_buf(4 * KiB);
    // Another context's queue on the same engine.
    Ctx o(path);
    Uq other(o, UqParams{engine, DRM_HPU_ENGINE_DMA, 32, 0, 0, 0, 0});
    other.make();
    const auto oout = o.host_buf(4 * KiB);

    const std::uint64_t t0 = now_ns();
    const std::uint64_t hung = uq.submit(Cb().wait(kNeverSob, 1), 1);
    for (unsigned k = 0; k < 5; ++k)
        uq.submit(Cb().write_value(out.va + 4ULL * k, 0x700 + k), 2 + k);
    for (unsigned k = 0; k < 20; ++k)
        other.submit(Cb().write_value(oout.va + 4ULL * k, 0x800 + k), k);
    std::int32_t st = 0;
    REQUIRE(uq.wait(hung, &st) == 0);
    const double ms = ms_since(t0);
    INFO("the hung descriptor failed after " << ms << " ms");
    CHECK(st == -ETIMEDOUT);
    CHECK(ms >= 195);
    CHECK(ms < 20000);
    CHECK(uq.record(hung - 1).status == HPU_CQ_ABORTED);
    CHECK(uq.outcome(hung + 5) == 0);
    for (unsigned k = 0; k < 5; ++k)
        CHECK(hb_word32(out, k) == 0x700 + k);
    CHECK(other.outcome(20) == 0);
    for (unsigned k = 0; k < 20; ++k)
        CHECK(hb_word32(oout, k) == 0x800 + k);
    std::vector<Event> evs;
    const bool got = read_events_until(a.fd(), evs, 10000, [&](const Event &e) {
        return e.type == DRM_HPU_EVENT_ERROR && e.err.queue_id == uq.id();
    });
    INFO("events: " << describe(evs));
    CHECK(got);
    for (const Event &e : evs) {
        if (e.type == DRM_HPU_EVENT_ERROR && e.err.queue_id == uq.id()) {
            CHECK(e.err.kind == DRM_HPU_ERROR_TIMEOUT);
            CHECK(e.err.errno_value == ETIMEDOUT);
            CHECK(e.err.seq == hung);
        }
    }
    const auto e1 = errors_now(path);
    CHECK(e1.job_timeouts == e0.job_timeouts + 1);
    CHECK(e1.hard_resets == e0.hard_resets);
}

TEST_CASE("without CAP_SYS_ADMIN a user queue's timeout_ms may not exceed user_timeout_ms", "[security][uq]")
{
    const std::string path = node(0);
    Ctx c(path);
    require_uq(c.fd());
    const std::uint64_t ceiling = uq_limit(path, "user_timeout_ms").value_or(60000);
    REQUIRE(ceiling < 3600000);
    Uq uq(c, UqParams{0, DRM_HPU_ENGINE_DMA, 2, 0, 0, 0, 0});
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        child_default_signals();
        int rc = 0;
        if (::setgid(65534) != 0 || ::setuid(65534) != 0)
            ::_exit(0x40);
        drm_hpu_uq_create a = uq.args();
        a.timeout_ms = static_cast<std::uint32_t>(ceiling + 1);
        if (uq_create_raw(c.fd(), a) != EINVAL)
            rc |= 1;
        a = uq.args();
        a.timeout_ms = 3600000;
        if (uq_create_raw(c.fd(), a) != EINVAL)
            rc |= 2;
        a = uq.args();
        a.timeout_ms = static_cast<std::uint32_t>(ceiling);
        if (uq_create_raw(c.fd(), a) != 0)
            rc |= 4;
        ::_exit(rc);
    }
    int st = 0;
    REQUIRE(wait_child(pid, &st) == 0);
    REQUIRE(WIFEXITED(st));
    INFO("child failures 0x" << std::hex << WEXITSTATUS(st)
                             << " (1 ceiling + 1 taken, 2 3600000 taken, 4 the ceiling refused)");
    CHECK(WEXITSTATUS(st) == 0);
    // Root may.
    drm_hpu_uq_create a = uq.args();
    a.timeout_ms = static_cast<std::uint32_t>(ceiling + 1);
    CHECK(uq_create_raw(c.fd(), a) == 0);
}

TEST_CASE("kill -9 of a process streaming jobs through a user queue frees its user stream and its memory",
          "[security][uq]")
{
    const std::string path = node(0);
    std::uint32_t engine = 0;
    {
        Ctx c(path);
        require_uq(c.fd());
        engine = dma_engine(c.fd(), 7);
    }
    const unsigned free0 = free_user_streams(path, engine);
    CHECK(free0 == kUqPerEngine);
    const std::uint64_t hbm0 = memory_now(path).hbm_used;
    const auto e0 = errors_now(path);

    Chan ch;
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ch.in_child();
        streaming_child(path, engine, ch);
    }
    ch.in_parent();
    const char ready = ch.from_child(60000);
    if (ready != 'r') {
        ::kill(pid, SIGKILL);
        int st = 0;
        std::ignore = wait_child(pid, &st);
        FAIL("the streaming child did not start: status 0x" << std::hex << st);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const std::uint64_t t0 = now_ns();
    REQUIRE(::kill(pid, SIGKILL) == 0);
    int st = 0;
    REQUIRE(wait_child(pid, &st) == 0);
    const double took = ms_since(t0);
    INFO("the child was gone after " << took << " ms");
    CHECK(WIFSIGNALED(st));
    CHECK(took < 10000);

    // Its memory and its user stream are back, and the engine works.
    CHECK(wait_hbm_used(path, hbm0, 10000) == hbm0);
    CHECK(eventually([&] { return free_user_streams(path, engine) == free0; }, 5000));
    {
        EngineFill fill(path, engine);
        CHECK(fill.count() == free0);
        // Every one of them runs.
        unsigned n = 0;
        for (auto &h : fill.holders()) {
            if (h.uqs.empty())
                continue;
            const auto out = h.ctx->host_buf(4 * KiB);
            for (std::size_t k = 0; k < h.uqs.size(); ++k) {
                h.uqs[k]->map_db();
                CHECK(h.uqs[k]->outcome(h.uqs[k]->submit(Cb().write_value(out.va + 4 * k, 0x900 + n), n)) == 0);
                CHECK(hb_word32(out, k) == 0x900 + n);
                ++n;
            }
        }
        CHECK(n == free0);
    }
    const auto e1 = errors_now(path);
    CHECK(e1.hard_resets == e0.hard_resets);
}

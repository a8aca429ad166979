// SPDX-License-Identifier: MIT
// DMA data paths, fences and command lists through libhpu's C ABI:
// host -> HBM -> HBM -> host round trips at random sizes and offsets on every
// DMA engine at once, memset, write-value, sync-object waits between queues,
// fences gating submissions (also through exported sync_file fds), recorded
// command lists submitted many times, a 1 GiB transfer, dma-buf sharing
// between two opens and (a host buffer, bound in either order) with the
// second HPU, waits that time out and waits interrupted by signals.
//
// HPU_DMA_SEED sets the random seed (printed on failure).
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <linux/udmabuf.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "bind_util.h"
#include "hpu/hpu.hpp"
#include "uq_util.h"
#include "vm_util.h"

using namespace vmt;

namespace {

// libhpu's own owners of its handles (hpu/hpu.hpp); the tests call the C
// API on .get() to check each return code.
using Dev = hpu::Device;
using Buf = hpu::Buffer;
using Queue = hpu::Queue;
using Cl = hpu::CommandList;
using Fence = hpu::Fence;

constexpr std::uint64_t kSec = 1000000000ULL;
constexpr std::uint64_t kWait = 60 * kSec;

// Opens the HPU at position i in PCI order.
Dev open_dev(std::size_t i = 0)
{
    const auto list = nodes_by_pci();
    REQUIRE(list.size() > i);
    hpu_device_t *d = nullptr;
    REQUIRE(hpu_open_by_index(list[i].index, &d) == 0);
    return Dev{d};
}

// Opens the HPU with the most HBM.
Dev open_biggest()
{
    const auto list = nodes_by_pci();
    REQUIRE_FALSE(list.empty());
    Dev best;
    std::uint64_t best_size = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
        Dev d = open_dev(i);
        hpu_device_info info{};
        info.size = sizeof(info);
        REQUIRE(hpu_device_get_info(d.get(), &info) == 0);
        if (info.hbm_size > best_size) {
            best_size = info.hbm_size;
            best = std::move(d);
        }
    }
    return best;
}

Buf buffer(hpu_device_t *d, std::uint64_t size, std::uint32_t flags)
{
    hpu_buffer_t *b = nullptr;
    const int e = hpu_buffer_create(d, size, flags, &b);
    INFO("hpu_buffer_create(" << size << ", 0x" << std::hex << flags << "): " << std::dec << e);
    REQUIRE(e == 0);
    return Buf{b};
}

unsigned char *host(const Buf &b) { return static_cast<unsigned char *>(hpu_buffer_host_ptr(b.get())); }
std::uint64_t va(const Buf &b) { return hpu_buffer_va(b.get()); }

Queue queue(hpu_device_t *d, std::uint32_t engine)
{
    hpu_queue_t *q = nullptr;
    REQUIRE(hpu_queue_create(d, HPU_ENGINE_DMA, engine, &q) == 0);
    return Queue{q};
}

Cl cmdlist(hpu_device_t *d)
{
    hpu_cmdlist_t *c = nullptr;
    REQUIRE(hpu_cmdlist_create(d, &c) == 0);
    return Cl{c};
}

Fence submit(hpu_queue_t *q, hpu_cmdlist_t *cl, const std::vector<hpu_fence_t *> &waits = {})
{
    hpu_fence_t *f = nullptr;
    std::vector<const hpu_fence_t *> w(waits.begin(), waits.end());
    const int e = hpu_queue_submit(q, cl, w.empty() ? nullptr : w.data(), w.size(), &f);
    INFO("hpu_queue_submit: " << e);
    REQUIRE(e == 0);
    return Fence{f};
}

int num_engines(hpu_device_t *d)
{
    const int n = hpu_device_dma_engines(d);
    REQUIRE(n >= 4);
    return n;
}

std::uint64_t seed()
{
    const char *s = std::getenv("HPU_DMA_SEED"); // NOLINT(concurrency-mt-unsafe)
    return s != nullptr ? std::strtoull(s, nullptr, 0) : 0x5eed0003ULL;
}

// A job on `q` that blocks until sync object `sob` reaches `value`, then
// writes `marker` at `marker_va`. Its command list lives as long as the
// job (destroying a list waits for the jobs that read it).
struct Job {
    Cl cl;
    Fence fence;
    [[nodiscard]] hpu_fence_t *get() const { return fence.get(); }
};
Job blocked_job(hpu_device_t *d, hpu_queue_t *q, std::uint32_t sob, std::uint32_t value,
                std::uint64_t marker_va, std::uint32_t marker)
{
    Job j{cmdlist(d), Fence{}};
    REQUIRE(hpu_cmd_wait_sob(j.cl.get(), sob, value, HPU_WAIT_GE) == 0);
    REQUIRE(hpu_cmd_write_value(j.cl.get(), marker_va, marker) == 0);
    j.fence = submit(q, j.cl.get());
    return j;
}

// Sets sync object `sob` to `value` from queue `q` and waits for that job.
void set_sob(hpu_device_t *d, hpu_queue_t *q, std::uint32_t sob, std::uint32_t value)
{
    Cl cl = cmdlist(d);
    REQUIRE(hpu_cmd_sob_update(cl.get(), sob, HPU_SOB_SET, value) == 0);
    Fence f = submit(q, cl.get());
    REQUIRE(hpu_fence_wait(f.get(), kWait) == 0);
}

std::uint32_t load32(const unsigned char *p)
{
    std::uint32_t v = 0;
    std::memcpy(&v, p, 4);
    return v;
}

} // namespace

TEST_CASE("round trips host -> HBM -> HBM -> host at random sizes and offsets on all engines at once",
          "[dma]")
{
    Dev d = open_dev(0);
    const int n = num_engines(d.get());
    constexpr std::uint64_t kBuf = 4 * MiB;
    struct Lane {
        Queue q;
        Buf src, hbm1, hbm2, dst;
        Cl cl;
        std::uint64_t so = 0, o1 = 0, o2 = 0, doff = 0, size = 0;
    };
    std::vector<Lane> lanes(static_cast<std::size_t>(n));
    for (int e = 0; e < n; ++e) {
        auto &l = lanes[static_cast<std::size_t>(e)];
        l.q = queue(d.get(), static_cast<std::uint32_t>(e));
        l.src = buffer(d.get(), kBuf, HPU_MEM_HOST);
        l.dst = buffer(d.get(), kBuf, HPU_MEM_HOST);
        l.hbm1 = buffer(d.get(), kBuf, HPU_MEM_DEVICE);
        l.hbm2 = buffer(d.get(), kBuf, HPU_MEM_DEVICE);
        l.cl = cmdlist(d.get());
    }
    const std::uint64_t s0 = seed();
    std::mt19937_64 rng(s0);
    auto pick = [&rng](std::uint64_t lo, std::uint64_t hi) { // inclusive
        return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
    };
    for (int round = 0; round < 6; ++round) {
        for (auto &l : lanes) {
            // Mostly small and odd sizes, some large; offsets anywhere they fit.
            const int kind = static_cast<int>(pick(0, 3));
            l.size = kind == 0 ? pick(1, 64) : kind == 1 ? pick(65, 64 * KiB) : pick(64 * KiB, kBuf - 4096);
            l.so = pick(0, kBuf - l.size);
            l.o1 = pick(0, kBuf - l.size);
            l.o2 = pick(0, kBuf - l.size);
            l.doff = pick(0, kBuf - l.size);
            fill_words(reinterpret_cast<std::uint64_t *>(host(l.src)), kBuf / 8, s0 + static_cast<std::uint64_t>(round)); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
            std::memset(host(l.dst), 0xee, kBuf);
            REQUIRE(hpu_cmdlist_reset(l.cl.get()) == 0);
            REQUIRE(hpu_cmd_copy(l.cl.get(), va(l.hbm1) + l.o1, va(l.src) + l.so, l.size) == 0);
            REQUIRE(hpu_cmd_copy(l.cl.get(), va(l.hbm2) + l.o2, va(l.hbm1) + l.o1, l.size) == 0);
            REQUIRE(hpu_cmd_copy(l.cl.get(), va(l.dst) + l.doff, va(l.hbm2) + l.o2, l.size) == 0);
        }
        std::vector<Fence> fences;
        fences.reserve(lanes.size());
        for (auto &l : lanes) // every engine busy at once
            fences.push_back(submit(l.q.get(), l.cl.get()));
        for (std::size_t e = 0; e < lanes.size(); ++e) {
            const auto &l = lanes[e];
            INFO("seed " << s0 << " round " << round << " engine " << e << " size " << l.size << " src+"
                         << l.so << " hbm1+" << l.o1 << " hbm2+" << l.o2 << " dst+" << l.doff);
            REQUIRE(hpu_fence_wait(fences[e].get(), kWait) == 0);
            const unsigned char *s = host(l.src) + l.so;   // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
            const unsigned char *g = host(l.dst) + l.doff; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
            CHECK(std::memcmp(g, s, l.size) == 0);
            // Nothing written outside the destination range.
            const unsigned char *dst = host(l.dst);
            CHECK(std::all_of(dst, g, [](unsigned char c) { return c == 0xee; }));
            CHECK(std::all_of(g + l.size, dst + kBuf, [](unsigned char c) { return c == 0xee; })); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        }
    }
}

TEST_CASE("user-pointer buffers: any range works, unmapped memory is EFAULT", "[dma]")
{
    Dev d = open_dev(0);
    Queue q = queue(d.get(), 0);
    std::vector<unsigned char> src(100000);
    std::vector<unsigned char> dst(100000, 0);
    for (std::size_t i = 0; i < src.size(); ++i)
        src[i] = static_cast<unsigned char>(i * 7 + 3);
    hpu_buffer_t *bs = nullptr;
    hpu_buffer_t *bd = nullptr;
    REQUIRE(hpu_buffer_from_user(d.get(), src.data() + 3, src.size() - 3, HPU_MEM_READONLY, &bs) == 0);
    const Buf s(bs);
    REQUIRE(hpu_buffer_from_user(d.get(), dst.data() + 5, dst.size() - 5, 0, &bd) == 0);
    const Buf t(bd);
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_copy(q.get(), va(t), va(s), 90000, &f) == 0);
    const Fence ff(f);
    REQUIRE(hpu_fence_wait(f, kWait) == 0);
    CHECK(std::memcmp(dst.data() + 5, src.data() + 3, 90000) == 0);
    CHECK(dst[4] == 0);
    CHECK(dst[90005] == 0);

    void *p = ::mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    REQUIRE(::munmap(p, 8192) == 0);
    hpu_buffer_t *bad = nullptr;
    CHECK(hpu_buffer_from_user(d.get(), p, 8192, 0, &bad) == -EFAULT);
}

// Two user-pointer buffers over the same pages are legal (a runtime may
// register a range twice, or a larger one around it): the debug kernel's
// DMA-API checks once refused the second writable mapping of a page
// ("overlapping mappings"), which make test-debug reports.
TEST_CASE("user-pointer buffers over the same pages both reach them", "[dma]")
{
    Dev d = open_dev(0);
    Queue q = queue(d.get(), 0);
    constexpr std::size_t kLen = std::size_t{3} * 4096;
    std::vector<unsigned char> mem(kLen + 4096, 0);
    unsigned char *base = mem.data() + (4096 - reinterpret_cast<std::uintptr_t>(mem.data()) % 4096) % 4096; // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast,cppcoreguidelines-pro-bounds-pointer-arithmetic)
    std::vector<unsigned char> src(kLen);
    for (std::size_t i = 0; i < src.size(); ++i)
        src[i] = static_cast<unsigned char>(i * 13 + 1);
    hpu_buffer_t *bs = nullptr;
    hpu_buffer_t *b1 = nullptr;
    hpu_buffer_t *b2 = nullptr;
    REQUIRE(hpu_buffer_from_user(d.get(), src.data(), src.size(), HPU_MEM_READONLY, &bs) == 0);
    const Buf s(bs);
    REQUIRE(hpu_buffer_from_user(d.get(), base, kLen, 0, &b1) == 0);
    const Buf w1(b1);
    // the middle page again, writable: it overlaps the first buffer
    REQUIRE(hpu_buffer_from_user(d.get(), base + 4096, 4096, 0, &b2) == 0); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    const Buf w2(b2);
    hpu_fence_t *f1 = nullptr;
    REQUIRE(hpu_queue_copy(q.get(), va(w1), va(s), kLen, &f1) == 0);
    const Fence ff1(f1);
    REQUIRE(hpu_fence_wait(f1, kWait) == 0);
    CHECK(std::memcmp(base, src.data(), kLen) == 0);
    // through the second buffer: the first page of the source lands in the middle page
    hpu_fence_t *f2 = nullptr;
    REQUIRE(hpu_queue_copy(q.get(), va(w2), va(s), 4096, &f2) == 0);
    const Fence ff2(f2);
    REQUIRE(hpu_fence_wait(f2, kWait) == 0);
    CHECK(std::memcmp(base + 4096, src.data(), 4096) == 0); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    CHECK(std::memcmp(base, src.data(), 4096) == 0);
}

namespace {

// Copies `size` bytes from src_va to dst_va on `q` and waits.
void copy_wait(hpu_queue_t *q, std::uint64_t dst_va, std::uint64_t src_va, std::uint64_t size)
{
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_copy(q, dst_va, src_va, size, &f) == 0);
    const Fence ff(f);
    REQUIRE(hpu_fence_wait(f, kWait) == 0);
}

// HPU A's host buffer shared with HPU B through its dma-buf, bound by B
// first (importer_first) or by A first. B's mapping is made by the
// exporter's dma-buf op with DMA_ATTR_SKIP_CPU_SYNC; A's own, made at
// A's first VM_BIND of the buffer, once had no flag, and when it came
// second the debug kernel's DMA-API checks refused it ("cacheline
// tracking EEXIST, overlapping mappings aren't supported"; found by make
// test-debug's fuzzer run). The buffer is created and exported through
// A's device file directly: libhpu maps a buffer into the device as it
// creates it, and here A's mapping must be able to come last. A's libhpu
// open imports the dma-buf back, which gives the same buffer (the
// driver's own object), and maps it: A's mapping. Each device writes its
// own pattern into the buffer (the CPU checks it through the dma-buf's
// mapping) and reads the other's back.
void shared_host_buffer_both_write(bool importer_first)
{
    constexpr std::uint64_t kSize = 64 * KiB;
    constexpr std::uint64_t kWords = kSize / 8;
    constexpr std::uint64_t kSeedA = 0xa11ceULL;
    constexpr std::uint64_t kSeedB = 0xb0bULL;
    KmsgTail klog;

    Ctx raw(node(0));
    std::uint32_t handle = 0;
    REQUIRE(raw.bo_create(kSize, DRM_HPU_BO_HOST, handle) == 0);
    drm_prime_handle ph{};
    ph.handle = handle;
    ph.flags = DRM_CLOEXEC | DRM_RDWR;
    ph.fd = -1;
    REQUIRE(xioctl(raw.fd(), DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph) == 0);
    const Fd dmabuf(ph.fd);
    void *cpu_map = ::mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, dmabuf.get(), 0);
    REQUIRE(cpu_map != MAP_FAILED);
    const std::unique_ptr<void, void (*)(void *)> unmap_cpu(cpu_map, [](void *p) { ::munmap(p, kSize); });
    const auto *cpu = static_cast<const std::uint64_t *>(cpu_map);

    Dev a = open_dev(0);
    Dev b = open_dev(1);
    Queue qa = queue(a.get(), 0);
    Queue qb = queue(b.get(), 0);
    // Each side's pattern, and where it reads the shared buffer back to.
    Buf src_a = buffer(a.get(), kSize, HPU_MEM_HOST);
    Buf src_b = buffer(b.get(), kSize, HPU_MEM_HOST);
    Buf back_a = buffer(a.get(), kSize, HPU_MEM_HOST);
    Buf back_b = buffer(b.get(), kSize, HPU_MEM_HOST);
    fill_words(reinterpret_cast<std::uint64_t *>(host(src_a)), kWords, kSeedA); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    fill_words(reinterpret_cast<std::uint64_t *>(host(src_b)), kWords, kSeedB); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)

    struct Side {
        const char *name;
        hpu_device_t *dev;
        hpu_queue_t *q;
        const Buf &src;
        const Buf &back;
        std::uint64_t seed;
        Buf shared;
    };
    std::array<Side, 2> sides{{{"A", a.get(), qa.get(), src_a, back_a, kSeedA, Buf{}},
                               {"B", b.get(), qb.get(), src_b, back_b, kSeedB, Buf{}}}};
    Side &first = importer_first ? sides[1] : sides[0];
    Side &second = importer_first ? sides[0] : sides[1];

    // The first side maps the buffer and writes its pattern into it.
    INFO("first to bind: HPU " << first.name);
    hpu_buffer_t *imp = nullptr;
    REQUIRE(hpu_buffer_import_fd(first.dev, dmabuf.get(), kSize, &imp) == 0);
    first.shared = Buf{imp};
    copy_wait(first.q, va(first.shared), va(first.src), kSize);
    CHECK(check_words(cpu, kWords, first.seed) == kWords);

    // The second maps it too (the overlapping mapping), reads the first's
    // pattern, and writes its own.
    REQUIRE(hpu_buffer_import_fd(second.dev, dmabuf.get(), kSize, &imp) == 0);
    second.shared = Buf{imp};
    copy_wait(second.q, va(second.back), va(second.shared), kSize);
    CHECK(check_words(reinterpret_cast<const std::uint64_t *>(host(second.back)), kWords, first.seed) == // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
          kWords);
    copy_wait(second.q, va(second.shared), va(second.src), kSize);
    CHECK(check_words(cpu, kWords, second.seed) == kWords);

    // The first reads the second's pattern through its own mapping.
    copy_wait(first.q, va(first.back), va(first.shared), kSize);
    CHECK(check_words(reinterpret_cast<const std::uint64_t *>(host(first.back)), kWords, second.seed) == // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
          kWords);

    // Under the debug kernel (make test-debug) the DMA API's checks find
    // nothing to report (the guest suite's final log check would too).
    const std::string log = klog.read_new();
    INFO("kernel log:\n" << log);
    CHECK(log.find("DMA-API") == std::string::npos);
}

} // namespace

TEST_CASE("a host buffer shared with the second HPU through its dma-buf: the importer binds it first, "
          "then its own device; both write it and read each other's data",
          "[dma][prime]")
{
    shared_host_buffer_both_write(true);
}

TEST_CASE("a host buffer shared with the second HPU through its dma-buf: its own device binds it first, "
          "then the importer; both write it and read each other's data",
          "[dma][prime]")
{
    shared_host_buffer_both_write(false);
}

TEST_CASE("memset and write-value", "[dma]")
{
    Dev d = open_dev(0);
    Queue q = queue(d.get(), 1);
    Buf h = buffer(d.get(), 64 * KiB, HPU_MEM_HOST);
    Buf m = buffer(d.get(), 2 * MiB, HPU_MEM_DEVICE);
    std::memset(host(h), 0, 64 * KiB);
    const std::uint64_t pattern = 0x8877665544332211ULL;
    Cl cl = cmdlist(d.get());
    REQUIRE(hpu_cmd_memset(cl.get(), va(m), 0, 2 * MiB) == 0);
    REQUIRE(hpu_cmd_memset(cl.get(), va(m) + 13, pattern, 1001) == 0);
    REQUIRE(hpu_cmd_write_value(cl.get(), va(m) + 2048, 0xcafef00dU) == 0);
    REQUIRE(hpu_cmd_copy(cl.get(), va(h), va(m), 4096) == 0);
    REQUIRE(hpu_cmd_memset(cl.get(), va(h) + 8192 + 3, pattern, 37) == 0);
    REQUIRE(hpu_cmd_write_value(cl.get(), va(h) + 16384, 0x01020304U) == 0);
    Fence f = submit(q.get(), cl.get());
    REQUIRE(hpu_fence_wait(f.get(), kWait) == 0);
    const unsigned char *p = host(h);
    CHECK(p[12] == 0);
    for (std::size_t i = 0; i < 1001; ++i) {
        INFO("memset byte " << i);
        REQUIRE(p[13 + i] == static_cast<unsigned char>(pattern >> (8 * (i % 8)))); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    }
    CHECK(p[1014] == 0);
    CHECK(load32(p + 2048) == 0xcafef00dU); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    CHECK(load32(p + 2052) == 0);           // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    CHECK(p[8192 + 2] == 0);
    for (std::size_t i = 0; i < 37; ++i)
        CHECK(p[8195 + i] == static_cast<unsigned char>(pattern >> (8 * (i % 8)))); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    CHECK(p[8195 + 37] == 0);
    CHECK(load32(p + 16384) == 0x01020304U); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)

    // Eager forms.
    hpu_fence_t *e1 = nullptr;
    REQUIRE(hpu_queue_memset(q.get(), va(h) + 32768, 0xababababababababULL, 100, &e1) == 0);
    const Fence fe1(e1);
    hpu_fence_t *e2 = nullptr;
    REQUIRE(hpu_queue_write_value(q.get(), va(h) + 40000, 99, &e2) == 0);
    const Fence fe2(e2);
    CHECK(hpu_fence_wait(e1, kWait) == 0);
    CHECK(hpu_fence_wait(e2, kWait) == 0);
    CHECK(p[32768] == 0xab);
    CHECK(p[32867] == 0xab);
    CHECK(p[32868] == 0);
    CHECK(load32(p + 40000) == 99); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
}

TEST_CASE("a queue waits on a sync object that another queue sets later", "[dma][sync]")
{
    Dev d = open_dev(0);
    Queue qa = queue(d.get(), 2);
    Queue qb = queue(d.get(), 3);
    Buf h = buffer(d.get(), 4096, HPU_MEM_HOST);
    std::memset(host(h), 0, 4096);
    set_sob(d.get(), qb.get(), 5, 0);
    Job fa = blocked_job(d.get(), qa.get(), 5, 1, va(h), 0xa);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    CHECK(hpu_fence_status(fa.get()) == 1); // still blocked
    CHECK(load32(host(h)) == 0);

    // Queue A's own later work waits behind it; queue B runs meanwhile.
    Cl cl = cmdlist(d.get());
    REQUIRE(hpu_cmd_write_value(cl.get(), va(h) + 4, 0xb) == 0);
    REQUIRE(hpu_cmd_sob_update(cl.get(), 5, HPU_SOB_ADD, 1) == 0);
    Fence fb = submit(qb.get(), cl.get());
    REQUIRE(hpu_fence_wait(fb.get(), kWait) == 0);
    REQUIRE(hpu_fence_wait(fa.get(), kWait) == 0);
    CHECK(load32(host(h)) == 0xa);
    CHECK(load32(host(h) + 4) == 0xb); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
}

TEST_CASE("fences gate later submissions, also through exported sync_file fds", "[dma][sync]")
{
    Dev d = open_dev(0);
    Queue qa = queue(d.get(), 0);
    Queue qb = queue(d.get(), 1);
    Queue qc = queue(d.get(), 2);
    Buf h = buffer(d.get(), 4096, HPU_MEM_HOST);
    std::memset(host(h), 0, 4096);
    set_sob(d.get(), qc.get(), 6, 0);
    // A: blocked until SOB 6 = 1, then writes 0x11 at +0.
    Job fa = blocked_job(d.get(), qa.get(), 6, 1, va(h), 0x11);
    // B: gated on A's fence; copies what A wrote from +0 to +8.
    Cl cb = cmdlist(d.get());
    REQUIRE(hpu_cmd_copy(cb.get(), va(h) + 8, va(h), 4) == 0);
    Fence fb = submit(qb.get(), cb.get(), {fa.get()});
    // C: gated on B's fence exported as a sync_file and imported again.
    int fd = -1;
    REQUIRE(hpu_fence_export_fd(fb.get(), &fd) == 0);
    REQUIRE(fd >= 0);
    CHECK(sync_file_status(fd) == 0); // pending
    hpu_fence_t *imp = nullptr;
    REQUIRE(hpu_fence_import_fd(d.get(), fd, &imp) == 0);
    const Fence fimp(imp);
    Cl cc = cmdlist(d.get());
    REQUIRE(hpu_cmd_copy(cc.get(), va(h) + 16, va(h) + 8, 4) == 0);
    Fence fc = submit(qc.get(), cc.get(), {imp});

    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    CHECK(hpu_fence_status(fb.get()) == 1);
    CHECK(hpu_fence_status(fc.get()) == 1);
    CHECK(hpu_fence_wait(fc.get(), 0) == -ETIME);

    // Release A from a fourth queue.
    Queue qd = queue(d.get(), 3);
    set_sob(d.get(), qd.get(), 6, 1);
    CHECK(hpu_fence_wait(fc.get(), kWait) == 0);
    CHECK(hpu_fence_status(fa.get()) == 0);
    CHECK(hpu_fence_status(fb.get()) == 0);
    CHECK(sync_file_status(fd) == 1);
    ::close(fd);
    CHECK(load32(host(h)) == 0x11);
    CHECK(load32(host(h) + 8) == 0x11);  // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    CHECK(load32(host(h) + 16) == 0x11); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
}

TEST_CASE("a failed job's error reaches its fence and its sync_file", "[dma][sync]")
{
    Dev d = open_dev(0);
    Queue q = queue(d.get(), 0);
    hpu_memory_info mi{};
    mi.size = sizeof(mi);
    REQUIRE(hpu_device_memory_info(d.get(), &mi) == 0);
    Buf h = buffer(d.get(), 4096, HPU_MEM_HOST);
    const std::uint64_t hole = mi.va_end - 64 * MiB;
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_copy(q.get(), va(h), hole, 64, &f) == 0);
    const Fence ff(f);
    CHECK(hpu_fence_wait(f, kWait) == -EFAULT);
    CHECK(hpu_fence_status(f) == -EFAULT);
    int fd = -1;
    REQUIRE(hpu_fence_export_fd(f, &fd) == 0);
    CHECK(sync_file_status(fd) == -EFAULT);
    ::close(fd);
    // The queue keeps working.
    hpu_fence_t *g = nullptr;
    REQUIRE(hpu_queue_write_value(q.get(), va(h), 5, &g) == 0);
    const Fence fg(g);
    CHECK(hpu_fence_wait(g, kWait) == 0);
    CHECK(load32(host(h)) == 5);
}

TEST_CASE("a recorded command list is submitted many times", "[dma][cmdlist]")
{
    Dev d = open_dev(0);
    Queue q = queue(d.get(), 4);
    Queue q2 = queue(d.get(), 5);
    Buf src = buffer(d.get(), 64 * KiB, HPU_MEM_HOST);
    Buf dst = buffer(d.get(), 64 * KiB, HPU_MEM_HOST);
    Buf m = buffer(d.get(), 2 * MiB, HPU_MEM_DEVICE);
    set_sob(d.get(), q.get(), 7, 0);

    // Counting: 200 submissions of one list that adds 1, checked by the device.
    Cl add = cmdlist(d.get());
    REQUIRE(hpu_cmd_sob_update(add.get(), 7, HPU_SOB_ADD, 1) == 0);
    constexpr int kTimes = 200;
    for (int i = 0; i < kTimes; ++i)
        REQUIRE(hpu_queue_submit(q.get(), add.get(), nullptr, 0, nullptr) == 0);
    Job done = blocked_job(d.get(), q2.get(), 7, kTimes, va(dst), 0x600d);
    REQUIRE(hpu_fence_wait(done.get(), kWait) == 0);
    CHECK(load32(host(dst)) == 0x600d);
    Cl eq = cmdlist(d.get());
    REQUIRE(hpu_cmd_wait_sob(eq.get(), 7, kTimes, HPU_WAIT_EQ) == 0);
    Fence feq = submit(q.get(), eq.get());
    CHECK(hpu_fence_wait(feq.get(), 5 * kSec) == 0); // exactly kTimes, not more

    // Data: the same list moves whatever the source holds at run time.
    Cl rt = cmdlist(d.get());
    REQUIRE(hpu_cmd_copy(rt.get(), va(m) + 4096, va(src), 64 * KiB) == 0);
    REQUIRE(hpu_cmd_copy(rt.get(), va(dst), va(m) + 4096, 64 * KiB) == 0);
    const std::size_t before = hpu_cmdlist_size(rt.get());
    CHECK(before > 0);
    for (std::uint64_t i = 0; i < 20; ++i) {
        fill_words(reinterpret_cast<std::uint64_t *>(host(src)), 8 * KiB, 1000 + i); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        Fence f = submit(q.get(), rt.get());
        REQUIRE(hpu_fence_wait(f.get(), kWait) == 0);
        INFO("submission " << i);
        CHECK(check_words(reinterpret_cast<const std::uint64_t *>(host(dst)), 8 * KiB, 1000 + i) == 8 * KiB); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    }
    CHECK(hpu_cmdlist_size(rt.get()) == before);
    // A list destroyed right after submission still runs.
    {
        Cl once = cmdlist(d.get());
        REQUIRE(hpu_cmd_write_value(once.get(), va(dst) + 4, 0x1234) == 0);
        Fence f = submit(q.get(), once.get());
        once.reset();
        REQUIRE(hpu_fence_wait(f.get(), kWait) == 0);
        CHECK(load32(host(dst) + 4) == 0x1234); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    }
}

namespace {

// /proc/meminfo's ShmemHugePages (shmem and tmpfs memory in 2 MiB pages,
// the driver's own mount included), in bytes; nothing when the kernel
// has no transparent huge pages (no such line).
std::optional<std::uint64_t> shmem_huge_bytes()
{
    std::ifstream in("/proc/meminfo");
    std::string key;
    std::uint64_t kib = 0;
    std::string unit;
    while (in >> key >> kib) {
        std::getline(in, unit);
        if (key == "ShmemHugePages:")
            return kib * 1024;
    }
    return std::nullopt;
}

} // namespace

TEST_CASE("a 64 MiB host buffer comes in 2 MiB pages (huge_host_bo), copies through it are exact, and "
          "its pages go back when it is destroyed",
          "[dma][huge]")
{
    std::ifstream p("/sys/module/hpu/parameters/huge_host_bo");
    std::string param;
    REQUIRE(std::getline(p, param));
    const std::optional<std::uint64_t> before = shmem_huge_bytes();
    // With THP in the kernel and the parameter on, the driver's host
    // buffers live on its huge=within_size mount (only an out-of-memory
    // probe would fail to mount it); without THP they are in 4 KiB pages,
    // and only the copies are checked.
    const bool huge = param == "Y" && before.has_value();
    INFO("huge_host_bo " << param << ", transparent huge pages " << (before.has_value() ? "yes" : "no"));
    // Free 2 MiB blocks first: the earlier tests (1 GiB transfers) may
    // have left memory fragmented, and a huge page is taken only when one
    // is free at once (no reclaim).
    {
        std::ofstream compact("/proc/sys/vm/compact_memory");
        compact << "1\n";
    }
    Dev d = open_biggest();
    Queue q = queue(d.get(), 0);
    constexpr std::uint64_t kSize = 64 * MiB;
    const std::uint64_t base = shmem_huge_bytes().value_or(0);
    const int dfd = hpu_device_get_fd(d.get());
    const std::optional<std::uint64_t> pt0 = fdinfo_value(dfd, "hpu-page-tables");
    REQUIRE(pt0.has_value());
    {
        Buf h = buffer(d.get(), kSize, HPU_MEM_HOST); // created, mapped and mmapped: pages allocated
        const std::uint64_t with = shmem_huge_bytes().value_or(0);
        const std::optional<std::uint64_t> pt1 = fdinfo_value(dfd, "hpu-page-tables");
        REQUIRE(pt1.has_value());
        INFO("ShmemHugePages " << base << " -> " << with << " bytes; page tables " << *pt0 << " -> " << *pt1);
        // 4 KiB leaves take a table per 2 MiB (32), each 2 MiB page one
        // leaf in its L2 table and none; at most 3 tables above them.
        // (Without huge pages there is no lower bound to check: 4 KiB
        // pages that happen to be contiguous, or an IOMMU's contiguous
        // addresses, take 2 MiB leaves too.)
        const std::uint64_t blocks = kSize / (2 * MiB);
        CHECK(*pt1 - *pt0 <= blocks + 3);
        if (huge) {
            REQUIRE(with >= base + kSize / 2);
            const std::uint64_t huge_blocks = std::min(blocks, (with - base) / (2 * MiB));
            CHECK(*pt1 - *pt0 <= blocks - huge_blocks + 3);
        } else {
            CHECK(with < base + 2 * MiB);
        }
        Buf m = buffer(d.get(), kSize, HPU_MEM_DEVICE);
        auto *w = reinterpret_cast<std::uint64_t *>(host(h)); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        fill_words(w, kSize / 8, 0x2d0b);
        for (const bool back : {false, true}) {
            const Cl cl = cmdlist(d.get());
            if (back) {
                REQUIRE(hpu_cmd_memset(cl.get(), va(h), 0, kSize) == 0);
                REQUIRE(hpu_cmd_copy(cl.get(), va(h), va(m), kSize) == 0);
            } else {
                REQUIRE(hpu_cmd_copy(cl.get(), va(m), va(h), kSize) == 0);
            }
            const Fence f = submit(q.get(), cl.get());
            REQUIRE(hpu_fence_wait(f.get(), kWait) == 0);
        }
        CHECK(check_words(w, kSize / 8, 0x2d0b) == kSize / 8);
    }
    // The file's last reference goes with the buffer (its last fput runs
    // before close(2) returns): its 2 MiB pages are free again.
    CHECK(shmem_huge_bytes().value_or(0) < base + 2 * MiB);
}

namespace {

// /sys/kernel/mm/transparent_hugepage/shmem_enabled set for a scope (the
// memfd of a test in 2 MiB pages), the old choice put back after; nothing
// without THP in the kernel.
class ShmemThp {
public:
    explicit ShmemThp(const char *mode)
    {
        std::ifstream in(kPath);
        std::string line;
        if (!std::getline(in, line))
            return;
        const auto open = line.find('[');
        const auto close = line.find(']');
        if (open == std::string::npos || close == std::string::npos || close < open)
            return;
        old_ = line.substr(open + 1, close - open - 1);
        std::ofstream(kPath) << mode << "\n";
    }
    ShmemThp(const ShmemThp &) = delete;
    ShmemThp &operator=(const ShmemThp &) = delete;
    ShmemThp(ShmemThp &&) = delete;
    ShmemThp &operator=(ShmemThp &&) = delete;
    ~ShmemThp()
    {
        if (!old_.empty())
            std::ofstream(kPath) << old_ << "\n";
    }

private:
    static constexpr const char *kPath = "/sys/kernel/mm/transparent_hugepage/shmem_enabled";
    std::string old_;
};

} // namespace

TEST_CASE("a udmabuf over a memfd in 2 MiB pages imports with every byte where it belongs", "[dma][prime]")
{
    // udmabuf lists each 4 KiB page as an entry of its 2 MiB folio at an
    // offset: the device must map every page once, at its own place.
    const int ud = ::open("/dev/udmabuf", O_RDWR | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
    INFO("/dev/udmabuf: " << std::strerror(errno) << " (the kernel needs CONFIG_UDMABUF)");
    REQUIRE(ud >= 0);
    constexpr std::uint64_t kSize = 8 * MiB;
    const ShmemThp thp("always");
    {
        std::ofstream compact("/proc/sys/vm/compact_memory");
        compact << "1\n";
    }
    const std::uint64_t base = shmem_huge_bytes().value_or(0);
    const int mfd = ::memfd_create("hpu-udmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
    REQUIRE(mfd >= 0);
    REQUIRE(::ftruncate(mfd, static_cast<off_t>(kSize)) == 0);
    REQUIRE(::fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK) == 0); // NOLINT(cppcoreguidelines-pro-type-vararg)
    void *p = ::mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    REQUIRE(p != MAP_FAILED);
    auto *w = static_cast<std::uint64_t *>(p);
    fill_words(w, kSize / 8, 91);
    INFO("ShmemHugePages " << base << " -> " << shmem_huge_bytes().value_or(0) << " bytes");
    udmabuf_create c{};
    c.memfd = static_cast<__u32>(mfd);
    c.flags = UDMABUF_FLAGS_CLOEXEC;
    c.size = kSize;
    const int dfd = ::ioctl(ud, UDMABUF_CREATE, &c); // NOLINT(cppcoreguidelines-pro-type-vararg)
    INFO("UDMABUF_CREATE: " << std::strerror(errno));
    REQUIRE(dfd >= 0);
    {
        Dev d = open_dev(0);
        Queue q = queue(d.get(), 0);
        hpu_buffer_t *imp = nullptr;
        REQUIRE(hpu_buffer_import_fd(d.get(), dfd, kSize, &imp) == 0);
        const Buf u(imp);
        Buf out = buffer(d.get(), kSize, HPU_MEM_HOST);
        std::memset(host(out), 0, kSize);
        hpu_fence_t *f = nullptr;
        REQUIRE(hpu_queue_copy(q.get(), va(out), va(u), kSize, &f) == 0);
        Fence ff(f);
        REQUIRE(hpu_fence_wait(f, kWait) == 0);
        CHECK(check_words(reinterpret_cast<const std::uint64_t *>(host(out)), kSize / 8, 91) == kSize / 8); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        // A write through the device lands at its own offset of the memfd.
        constexpr std::uint64_t kAt = 5 * MiB + 12 * KiB + 8;
        REQUIRE(hpu_queue_write_value(q.get(), va(u) + kAt, 0xabcdU, &f) == 0);
        ff.reset(f);
        REQUIRE(hpu_fence_wait(f, kWait) == 0);
        CHECK(load32(static_cast<std::uint8_t *>(p) + kAt) == 0xabcdU); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        // Nothing else changed: with that word as filled, all is the pattern.
        fill_words(w + kAt / 8, 1, 91, kAt / 8); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        CHECK(check_words(w, kSize / 8, 91) == kSize / 8);
    }
    ::close(dfd);
    ::munmap(p, kSize);
    ::close(mfd);
    ::close(ud);
}

namespace {

// drm-engine-dma<e> of the file's fdinfo (busy time of its jobs on DMA
// engine e, ns), for e = 0..n-1.
std::vector<std::uint64_t> dma_busy_ns(int fd, int n)
{
    std::vector<std::uint64_t> ns;
    ns.reserve(static_cast<std::size_t>(n));
    for (int e = 0; e < n; ++e)
        ns.push_back(fdinfo_value(fd, "drm-engine-dma" + std::to_string(e)).value_or(0));
    return ns;
}

} // namespace

TEST_CASE("a copy split among DMA engines: every byte, in the queue's order, on every engine it names",
          "[dma][split]")
{
    Dev d = open_biggest();
    const int engines = num_engines(d.get());
    Queue q = queue(d.get(), 2);
    constexpr std::uint64_t kSize = 64 * MiB;
    Buf h = buffer(d.get(), kSize, HPU_MEM_HOST);
    Buf back = buffer(d.get(), kSize, HPU_MEM_HOST);
    Buf a = buffer(d.get(), kSize, HPU_MEM_DEVICE);
    Buf b = buffer(d.get(), kSize, HPU_MEM_DEVICE);
    auto *w = reinterpret_cast<std::uint64_t *>(host(h)); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    auto *r = reinterpret_cast<std::uint64_t *>(host(back)); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    fill_words(w, kSize / 8, 0x5917);
    const std::vector<std::uint64_t> busy0 = dma_busy_ns(hpu_device_get_fd(d.get()), engines);

    // Fill a on q, split a -> b (its parts on other engines start only
    // after that fill), then on q again b -> back (after every part).
    REQUIRE(hpu_queue_copy(q.get(), va(a), va(h), kSize, nullptr) == 0);
    hpu_fence_t *split = nullptr;
    REQUIRE(hpu_queue_copy_split(q.get(), va(b), va(a), kSize, 4, &split) == 0);
    const Fence fs(split);
    hpu_fence_t *last = nullptr;
    REQUIRE(hpu_queue_copy(q.get(), va(back), va(b), kSize, &last) == 0);
    const Fence fl(last);
    REQUIRE(hpu_fence_wait(last, kWait) == 0);
    CHECK(hpu_fence_status(split) == 0);
    CHECK(check_words(r, kSize / 8, 0x5917) == kSize / 8);

    // Engines 2 to 5 each copied a part.
    const std::vector<std::uint64_t> busy1 = dma_busy_ns(hpu_device_get_fd(d.get()), engines);
    for (int e = 2; e < 6; ++e) {
        INFO("DMA engine " << e << ": " << busy0.at(static_cast<std::size_t>(e)) << " -> "
                           << busy1.at(static_cast<std::size_t>(e)) << " ns");
        CHECK(busy1.at(static_cast<std::size_t>(e)) > busy0.at(static_cast<std::size_t>(e)));
    }

    SECTION("parts that fault fail the copy's fence")
    {
        // From the addresses of a buffer destroyed since: every part
        // faults (an MMU fault each, as the kernel log shows).
        std::uint64_t gone = 0;
        {
            const Buf t = buffer(d.get(), kSize, HPU_MEM_DEVICE);
            gone = va(t);
        }
        hpu_fence_t *bad = nullptr;
        REQUIRE(hpu_queue_copy_split(q.get(), va(a), gone, kSize, 4, &bad) == 0);
        const Fence fb(bad);
        CHECK(hpu_fence_wait(bad, kWait) == -EFAULT);
        CHECK(hpu_fence_status(bad) == -EFAULT);
        // The queue goes on: a copy after it on q works.
        hpu_fence_t *after = nullptr;
        REQUIRE(hpu_queue_copy(q.get(), va(back), va(a), 4096, &after) == 0);
        const Fence fa(after);
        CHECK(hpu_fence_wait(after, kWait) == 0);
    }
}

TEST_CASE("a 1 GiB transfer host -> HBM -> HBM -> host", "[dma][big]")
{
    Dev d = open_biggest();
    Queue q = queue(d.get(), 0);
    constexpr std::uint64_t kBig = 1 * GiB;
    constexpr std::uint32_t kBigTimeoutMs = 60000;
    Buf h = buffer(d.get(), kBig, HPU_MEM_HOST);
    Buf m1 = buffer(d.get(), kBig, HPU_MEM_DEVICE);
    Buf m2 = buffer(d.get(), kBig, HPU_MEM_DEVICE);
    auto *w = reinterpret_cast<std::uint64_t *>(host(h)); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    fill_words(w, kBig / 8, 0xb16);
    // One job per 1 GiB step, timed; the device itself clears the host
    // buffer before the way back. Each job carries a 60 s timeout (the
    // unprivileged ceiling) instead of the driver's 10 s default: a step
    // takes 1-3 s here, but a host busy with other work can stretch the
    // emulated engine past 10 s, and then the job would time out.
    struct Step {
        const char *what;
        std::uint64_t dst, src;
        bool clear;
    };
    const Step steps[] = {
        {"host -> HBM", va(m1), va(h), false},
        {"HBM -> HBM", va(m2), va(m1), false},
        {"memset host", va(h), 0, true},
        {"HBM -> host", va(h), va(m2), false},
    };
    for (const auto &st : steps) {
        hpu_fence_t *f = nullptr;
        const Cl cl = cmdlist(d.get());
        REQUIRE((st.clear ? hpu_cmd_memset(cl.get(), st.dst, 0, kBig)
                          : hpu_cmd_copy(cl.get(), st.dst, st.src, kBig)) == 0);
        const std::uint64_t t0 = now_ns();
        REQUIRE(hpu_queue_submit_timeout(q.get(), cl.get(), nullptr, 0, kBigTimeoutMs, &f) == 0);
        const Fence ff(f);
        const int r = hpu_fence_wait(f, HPU_TIMEOUT_INFINITE);
        const double ms = static_cast<double>(now_ns() - t0) / 1e6;
        std::printf("1 GiB %s: %.0f ms (%.2f GB/s)\n", st.what, ms, static_cast<double>(kBig) / ms / 1e6); // NOLINT(cppcoreguidelines-pro-type-vararg)
        INFO("1 GiB " << st.what << " took " << ms << " ms");
        REQUIRE(r == 0);
        if (st.clear) {
            CHECK(w[0] == 0);
            CHECK(w[kBig / 8 - 1] == 0); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        }
    }
    // Compare in 64 MiB chunks so a failure names where.
    constexpr std::uint64_t kChunk = 64 * MiB / 8;
    for (std::uint64_t c = 0; c < kBig / 8; c += kChunk) {
        const std::uint64_t bad = check_words(w + c, kChunk, 0xb16, c); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        INFO("chunk at byte " << c * 8 << ": first wrong word " << bad);
        REQUIRE(bad == kChunk);
    }
}

TEST_CASE("dma-buf export and import between two opens of the device", "[dma][prime]")
{
    Dev a = open_dev(0);
    Dev b = open_dev(0);
    Queue qa = queue(a.get(), 0);
    Queue qb = queue(b.get(), 1);
    Buf ma = buffer(a.get(), 2 * MiB, HPU_MEM_DEVICE);
    Buf ha = buffer(a.get(), 64 * KiB, HPU_MEM_HOST);
    Buf hb = buffer(b.get(), 64 * KiB, HPU_MEM_HOST);
    fill_words(reinterpret_cast<std::uint64_t *>(host(ha)), 8 * KiB, 77); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    hpu_fence_t *f = nullptr;
    REQUIRE(hpu_queue_copy(qa.get(), va(ma), va(ha), 64 * KiB, &f) == 0);
    Fence ff(f);
    REQUIRE(hpu_fence_wait(f, kWait) == 0);

    int fd = -1;
    REQUIRE(hpu_buffer_export_fd(ma.get(), &fd) == 0);
    hpu_buffer_t *imp = nullptr;
    REQUIRE(hpu_buffer_import_fd(b.get(), fd, hpu_buffer_size(ma.get()), &imp) == 0);
    ::close(fd);
    const Buf mb(imp);
    // B reads what A wrote.
    REQUIRE(hpu_queue_copy(qb.get(), va(hb), va(mb), 64 * KiB, &f) == 0);
    ff.reset(f);
    REQUIRE(hpu_fence_wait(f, kWait) == 0);
    CHECK(check_words(reinterpret_cast<const std::uint64_t *>(host(hb)), 8 * KiB, 77) == 8 * KiB); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    // A reads what B writes.
    REQUIRE(hpu_queue_write_value(qb.get(), va(mb) + 1 * MiB, 0xfeedU, &f) == 0);
    ff.reset(f);
    REQUIRE(hpu_fence_wait(f, kWait) == 0);
    REQUIRE(hpu_queue_copy(qa.get(), va(ha), va(ma) + 1 * MiB, 8, &f) == 0);
    ff.reset(f);
    REQUIRE(hpu_fence_wait(f, kWait) == 0);
    CHECK(load32(host(ha)) == 0xfeedU);

    // A host buffer exported by A is visible to B too.
    int hfd = -1;
    REQUIRE(hpu_buffer_export_fd(ha.get(), &hfd) == 0);
    hpu_buffer_t *himp = nullptr;
    REQUIRE(hpu_buffer_import_fd(b.get(), hfd, hpu_buffer_size(ha.get()), &himp) == 0);
    ::close(hfd);
    const Buf hbi(himp);
    REQUIRE(hpu_queue_write_value(qb.get(), va(hbi) + 12, 0xabcU, &f) == 0);
    ff.reset(f);
    REQUIRE(hpu_fence_wait(f, kWait) == 0);
    CHECK(load32(host(ha) + 12) == 0xabcU); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
}

namespace {

std::atomic<int> g_signals{0};
std::atomic<int> g_signal_limit{0};
// Counts signals; stops the timer after g_signal_limit of them, so a wait
// that never honours its deadline cannot hang the suite.
extern "C" void on_alarm(int /*sig*/)
{
    if (g_signals.fetch_add(1, std::memory_order_relaxed) + 1 >= g_signal_limit.load()) {
        const itimerval off{};
        ::setitimer(ITIMER_REAL, &off, nullptr);
    }
}

// A 1 ms interval timer delivering SIGALRM to this thread (other threads
// block it), with or without SA_RESTART; undone on scope exit.
class SignalStorm {
public:
    explicit SignalStorm(bool restart)
    {
        struct sigaction sa {};
        sa.sa_handler = on_alarm;
        sa.sa_flags = restart ? SA_RESTART : 0;
        sigemptyset(&sa.sa_mask);
        g_signal_limit.store(g_signals.load() + 5000); // at most about 5 s of signals
        REQUIRE(::sigaction(SIGALRM, &sa, &old_) == 0);
        itimerval it{};
        it.it_interval.tv_usec = 1000;
        it.it_value.tv_usec = 1000;
        REQUIRE(::setitimer(ITIMER_REAL, &it, nullptr) == 0);
    }
    SignalStorm(const SignalStorm &) = delete;
    SignalStorm &operator=(const SignalStorm &) = delete;
    SignalStorm(SignalStorm &&) = delete;
    SignalStorm &operator=(SignalStorm &&) = delete;
    ~SignalStorm()
    {
        const itimerval off{};
        ::setitimer(ITIMER_REAL, &off, nullptr);
        ::sigaction(SIGALRM, &old_, nullptr);
    }

private:
    struct sigaction old_ {};
};

// Starts a thread (with SIGALRM blocked) that sets SOB `sob` to 1 from `q`
// after `delay`.
std::thread releaser(hpu_device_t *d, hpu_queue_t *q, std::uint32_t sob, std::chrono::milliseconds delay)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    sigset_t old;
    pthread_sigmask(SIG_BLOCK, &set, &old);
    std::thread t([d, q, sob, delay] {
        std::this_thread::sleep_for(delay);
        hpu_cmdlist_t *cl = nullptr;
        if (hpu_cmdlist_create(d, &cl) == 0) {
            hpu_cmd_sob_update(cl, sob, HPU_SOB_SET, 1);
            hpu_fence_t *f = nullptr;
            if (hpu_queue_submit(q, cl, nullptr, 0, &f) == 0) {
                hpu_fence_wait(f, kWait);
                hpu_fence_destroy(f);
            }
            hpu_cmdlist_destroy(cl);
        }
    });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return t;
}

} // namespace

TEST_CASE("a fence wait times out with ETIME", "[dma][wait]")
{
    Dev d = open_dev(0);
    Queue qa = queue(d.get(), 6);
    Queue qb = queue(d.get(), 7);
    Buf h = buffer(d.get(), 4096, HPU_MEM_HOST);
    set_sob(d.get(), qb.get(), 8, 0);
    Job f = blocked_job(d.get(), qa.get(), 8, 1, va(h), 1);
    for (const std::uint64_t ms : {0ULL, 1ULL, 50ULL, 300ULL}) {
        const std::uint64_t t0 = now_ns();
        CHECK(hpu_fence_wait(f.get(), ms * 1000000ULL) == -ETIME);
        const std::uint64_t took = now_ns() - t0;
        INFO("timeout " << ms << " ms took " << took / 1000 << " us");
        CHECK(took >= ms * 1000000ULL);
        CHECK(took < ms * 1000000ULL + 3 * kSec);
    }
    CHECK(hpu_fence_status(f.get()) == 1);
    set_sob(d.get(), qb.get(), 8, 1);
    CHECK(hpu_fence_wait(f.get(), kWait) == 0);
}

TEST_CASE("a fence wait interrupted by signals resumes and keeps its deadline", "[dma][wait]")
{
    const bool restart = GENERATE(true, false);
    INFO((restart ? "SA_RESTART" : "no SA_RESTART (EINTR reaches libhpu)"));
    Dev d = open_dev(0);
    Queue qa = queue(d.get(), 6);
    Queue qb = queue(d.get(), 7);
    Queue qc = queue(d.get(), 5);
    Buf h = buffer(d.get(), 4096, HPU_MEM_HOST);
    std::memset(host(h), 0, 4096);
    set_sob(d.get(), qb.get(), 9, 0);
    set_sob(d.get(), qb.get(), 10, 0);

    SECTION("the job ends while signals arrive: the wait returns 0") {
        Job f = blocked_job(d.get(), qa.get(), 9, 1, va(h), 0x77);
        std::thread t = releaser(d.get(), qc.get(), 9, std::chrono::milliseconds(400));
        const int before = g_signals.load();
        int r = 0;
        std::uint64_t took = 0;
        {
            const SignalStorm storm(restart);
            const std::uint64_t t0 = now_ns();
            r = hpu_fence_wait(f.get(), 20 * kSec);
            took = now_ns() - t0;
        }
        t.join();
        INFO("wait took " << took / 1000000 << " ms, " << g_signals.load() - before << " signals");
        CHECK(r == 0);
        CHECK(g_signals.load() - before > 10);
        CHECK(took >= 300 * 1000000ULL);
        CHECK(load32(host(h)) == 0x77);
    }
    SECTION("the job never ends while signals arrive: ETIME at the deadline") {
        Job f = blocked_job(d.get(), qa.get(), 10, 1, va(h) + 8, 0x88);
        const int before = g_signals.load();
        int r = 0;
        std::uint64_t took = 0;
        {
            const SignalStorm storm(restart);
            const std::uint64_t t0 = now_ns();
            r = hpu_fence_wait(f.get(), 300 * 1000000ULL);
            took = now_ns() - t0;
        }
        INFO("wait took " << took / 1000000 << " ms, " << g_signals.load() - before << " signals");
        CHECK(r == -ETIME);
        CHECK(g_signals.load() - before > 10);
        // Each restart turns the absolute deadline into jiffies again, from
        // a jiffies value that can lag the clock: the kernel's wait may end
        // early (once 25 ms of 300), libhpu then waits again (never -ETIME
        // before the deadline).
        CHECK(took >= 300 * 1000000ULL);
        CHECK(took < 3 * kSec); // a restart with a fresh relative timeout would never end
        set_sob(d.get(), qb.get(), 10, 1);
        CHECK(hpu_fence_wait(f.get(), kWait) == 0);
        CHECK(load32(host(h) + 8) == 0x88); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    }
}

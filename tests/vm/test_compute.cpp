// SPDX-License-Identifier: MIT
// The compute engines' queues (issue 11, spec version 6): queues on the TPC
// engine and the MMEs through the raw uapi and libhpu, the packets they run
// and refuse, cross-engine sync with the DMA engines, the completion errors
// of TPC_LAUNCH and MME_GEMM with their events (to the guilty context only;
// a GEMM descriptor the device refuses while another context's GEMMs run),
// a hung compute stream recovered by disabling it (no reset), engine counts
// in INFO DEVICE, and the MME's busy time in INFO TELEMETRY and fdinfo.
//
//   [compute]   everything here (hpu-vm-tests-compute in guest-suite.sh)
//
// TPC_LAUNCH here is only refused (a zeroed or a misaligned launch
// descriptor: rule DESC_MAGIC of Documentation/hw/tpc.md); real kernels run
// in the device model's unit tests and, through libhpu, in later tests.
//
// Copyright (c) 2026 The hpu authors
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "err_util.h"
#include "hw/hpu_mme.h"
#include "hw/hpu_tpc.h"
#include "vm_util.h"

using namespace vmt;

namespace {

constexpr std::uint32_t kTpcIndex = DRM_HPU_ENGINE_INDEX_TPC;

bool is_error(const Event &e, std::uint32_t kind) { return e.type == DRM_HPU_EVENT_ERROR && e.err.kind == kind; }

drm_hpu_info_telemetry telemetry_of(int fd)
{
    drm_hpu_info_telemetry t{};
    drm_hpu_info req{};
    req.op = DRM_HPU_INFO_TELEMETRY;
    req.ptr = reinterpret_cast<std::uintptr_t>(&t); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    req.size = sizeof(t);
    REQUIRE(xioctl(fd, DRM_IOCTL_HPU_INFO, &req) == 0);
    REQUIRE(req.size == sizeof(t));
    return t;
}

// "drm-engine-<name>" of fdinfo of one of this process's files, in ns.
std::uint64_t fdinfo_engine_ns(int fd, const std::string &name)
{
    const auto t = read_text("/proc/self/fdinfo/" + std::to_string(fd));
    REQUIRE(t.has_value());
    std::istringstream in(*t);
    std::string line;
    const std::string key = "drm-engine-" + name + ":";
    while (std::getline(in, line)) {
        if (line.rfind(key, 0) == 0)
            return std::stoull(line.substr(key.size()));
    }
    FAIL("fdinfo has no key " << key);
    return 0;
}

// A TPC_LAUNCH or MME_GEMM packet naming a descriptor.
Cb &desc_packet(Cb &cb, std::uint32_t opcode, std::uint64_t desc)
{
    return cb.raw(opcode, 0).raw(static_cast<std::uint32_t>(desc), static_cast<std::uint32_t>(desc >> 32));
}

std::uint32_t f32_bits(float f)
{
    std::uint32_t u = 0;
    std::memcpy(&u, &f, sizeof(u));
    return u;
}

// Writes an FP32 GEMM descriptor D = A x B (m x k times k x n, row-major,
// dense) at p.
void put_gemm_desc(unsigned char *p, std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint64_t a,
                   std::uint64_t b, std::uint64_t d)
{
    std::memset(p, 0, HPU_MME_DESC_SIZE);
    auto u32 = [p](std::size_t off, std::uint32_t v) { std::memcpy(p + off, &v, 4); }; // NOLINT
    auto u64 = [p](std::size_t off, std::uint64_t v) { std::memcpy(p + off, &v, 8); }; // NOLINT
    u32(HPU_MME_D_M, m);
    u32(HPU_MME_D_N, n);
    u32(HPU_MME_D_K, k);
    u32(HPU_MME_D_BATCH, 1);
    u64(HPU_MME_D_A, a);
    u64(HPU_MME_D_B, b);
    u64(HPU_MME_D_D, d);
    u32(HPU_MME_D_LDA, k);
    u32(HPU_MME_D_LDB, n);
    u32(HPU_MME_D_LDD, n);
    u32(HPU_MME_D_ALPHA, f32_bits(1.0F));
    u32(HPU_MME_D_BETA, 0);
}

struct EngineRef {
    std::uint32_t klass;
    std::uint32_t engine;
    std::uint32_t index; // engine index of the spec
    const char *name;
};
constexpr std::array<EngineRef, 3> kCompute = {{
    {DRM_HPU_ENGINE_TPC, 0, DRM_HPU_ENGINE_INDEX_TPC, "tpc"},
    {DRM_HPU_ENGINE_MME, 0, DRM_HPU_ENGINE_INDEX_MME(0), "mme0"},
    {DRM_HPU_ENGINE_MME, 1, DRM_HPU_ENGINE_INDEX_MME(1), "mme1"},
}};

} // namespace

TEST_CASE("INFO DEVICE: engine counts per class", "[compute]")
{
    const std::string path = node(0);
    const drm_hpu_info_device d = device_now(path);
    CHECK(d.spec_version == 10);
    CHECK(d.num_tpc == 8);
    CHECK(d.num_mme == 2);
    CHECK(d.class_engines[DRM_HPU_ENGINE_DMA] == d.num_dma);
    CHECK(d.class_engines[DRM_HPU_ENGINE_TPC] == 1); // the cluster
    CHECK(d.class_engines[DRM_HPU_ENGINE_MME] == d.num_mme);
    for (std::uint32_t c = 3; c < DRM_HPU_MAX_ENGINE_CLASSES; ++c)
        CHECK(d.class_engines[c] == 0); // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)

    // The size of the answer includes the new field.
    Fd fd(path);
    drm_hpu_info req{};
    req.op = DRM_HPU_INFO_DEVICE;
    REQUIRE(xioctl(fd.get(), DRM_IOCTL_HPU_INFO, &req) == 0);
    CHECK(req.size == sizeof(drm_hpu_info_device));

    // libhpu says the same.
    hpu::Device dev = hpu::Device::open(nodes_by_pci().front().index);
    CHECK(dev.engines(HPU_ENGINE_CLASS_DMA) == d.num_dma);
    CHECK(dev.engines(HPU_ENGINE_CLASS_TPC) == 1);
    CHECK(dev.engines(HPU_ENGINE_CLASS_MME) == 2);
    CHECK(dev.info().class_engines[HPU_ENGINE_CLASS_MME] == 2);
}

TEST_CASE("QUEUE_CREATE on the compute classes: every rejected input", "[compute]")
{
    Ctx c(node());
    std::uint32_t q = 0;
    SECTION("TPC engine 0 and both MMEs")
    {
        for (const auto &e : kCompute) {
            INFO(e.name);
            CHECK(c.queue_create(e.engine, q, e.klass) == 0);
            CHECK(c.queue_destroy(q) == 0);
        }
    }
    SECTION("TPC engine index out of range: EINVAL")
    {
        CHECK(c.queue_create(1, q, DRM_HPU_ENGINE_TPC) == EINVAL);
        CHECK(c.queue_create(0xffffffffU, q, DRM_HPU_ENGINE_TPC) == EINVAL);
    }
    SECTION("MME engine index out of range: EINVAL")
    {
        CHECK(c.queue_create(2, q, DRM_HPU_ENGINE_MME) == EINVAL);
        CHECK(c.queue_create(0xffffffffU, q, DRM_HPU_ENGINE_MME) == EINVAL);
    }
    SECTION("unknown class after MME: EINVAL")
    {
        CHECK(c.queue_create(0, q, DRM_HPU_ENGINE_MME + 1) == EINVAL);
    }
    SECTION("non-zero flags on a compute class: EINVAL")
    {
        CHECK(c.queue_create(0, q, DRM_HPU_ENGINE_TPC, 1) == EINVAL);
        CHECK(c.queue_create(0, q, DRM_HPU_ENGINE_MME, 0x80000000U) == EINVAL);
    }
    SECTION("libhpu: an unknown class and an engine beyond the class")
    {
        hpu::Device dev = hpu::Device::open(nodes_by_pci().front().index);
        hpu_queue_t *hq = nullptr;
        CHECK(hpu_queue_create(dev.get(), 3, 0, &hq) == -EINVAL);
        CHECK(hpu_queue_create(dev.get(), HPU_ENGINE_CLASS_TPC, 1, &hq) == -EINVAL);
        CHECK(hpu_queue_create(dev.get(), HPU_ENGINE_CLASS_MME, 2, &hq) == -EINVAL);
        CHECK(hq == nullptr);
    }
}

TEST_CASE("TPC and MME queues run NOP, WRITE_VALUE, SOB_UPDATE and WAIT", "[compute]")
{
    Ctx c(node());
    const auto buf = c.host_buf(4 * KiB);
    std::uint32_t n = 0;
    for (const auto &e : kCompute) {
        INFO(e.name);
        std::uint32_t q = 0;
        REQUIRE(c.queue_create(e.engine, q, e.klass) == 0);
        const std::uint32_t sob = 4 + n;
        const std::uint32_t value = 0xC0DE0000U + n;
        Cb cb;
        cb.nop().sob_update(sob, 5).wait(sob, 5, WAIT_EQ).sob_update(sob, 2, SOB_ADD).wait(sob, 7).write_value(
            buf.va + 4ULL * n, value);
        CHECK(c.run(q, cb) == 1);
        std::uint32_t got = 0;
        std::memcpy(&got, buf.ptr + std::size_t{4} * n, 4); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        CHECK(got == value);
        CHECK(c.queue_destroy(q) == 0);
        ++n;
    }

    // Through libhpu: a queue of each compute class runs recorded commands.
    hpu::Device dev = hpu::Device::open(nodes_by_pci().front().index);
    hpu::Buffer hb = hpu::Buffer::create(dev, 4 * KiB, HPU_MEM_HOST);
    for (const auto &e : kCompute) {
        INFO("libhpu " << e.name);
        hpu::Queue q = hpu::Queue::create(dev, e.engine, e.klass);
        hpu::CommandList cl = hpu::CommandList::create(dev);
        REQUIRE(hpu_cmd_nop(cl.get()) == 0);
        REQUIRE(hpu_cmd_write_value(cl.get(), hb.va() + 4ULL * e.index, 0xAB00U + e.index) == 0);
        hpu_fence_t *f = nullptr;
        REQUIRE(hpu_queue_submit(q.get(), cl.get(), nullptr, 0, &f) == 0);
        hpu::Fence fence{f};
        CHECK(hpu_fence_wait(f, 10ULL * 1000000000ULL) == 0);
        CHECK(hpu_fence_status(f) == 0);
        std::uint32_t got = 0;
        std::memcpy(&got, static_cast<unsigned char *>(hb.host_ptr()) + std::size_t{4} * e.index, 4); // NOLINT
        CHECK(got == 0xAB00U + e.index);
    }
}

TEST_CASE("cross-engine sync: a DMA job waits for a TPC job's sync object", "[compute]")
{
    Ctx c(node());
    const auto buf = c.host_buf(64 * KiB);
    std::uint32_t qd = 0;
    std::uint32_t qt = 0;
    std::uint32_t qm = 0;
    REQUIRE(c.queue_create(0, qd) == 0);
    REQUIRE(c.queue_create(0, qt, DRM_HPU_ENGINE_TPC) == 0);
    REQUIRE(c.queue_create(1, qm, DRM_HPU_ENGINE_MME) == 0);
    constexpr std::uint32_t kSob = 9;
    REQUIRE(c.run(qd, Cb().sob_update(kSob, 0)) == 1);

    // DMA: wait for the TPC job, then memset 32 KiB and write a marker.
    Cb dma;
    dma.wait(kSob, 1).memset(0x1111222233334444ULL, buf.va, 32 * KiB).write_value(buf.va + 40 * KiB, 0xD0D0);
    const std::uint64_t dma_cb = c.put_cb(dma);
    std::uint32_t so_dma = 0;
    REQUIRE(syncobj_create(c.fd(), so_dma) == 0);
    REQUIRE(c.submit(qd, dma_cb, static_cast<std::uint32_t>(dma.bytes()), so_dma) == 0);
    // The DMA job is blocked in its WAIT: nothing written yet.
    ::usleep(200000);
    CHECK(syncobj_status(c.fd(), so_dma) == 0);
    std::uint32_t marker = 0;
    std::memcpy(&marker, buf.ptr + 40 * KiB, 4); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    CHECK(marker == 0);

    // TPC: write its own value, then release the DMA job.
    CHECK(c.run(qt, Cb().write_value(buf.va + 48 * KiB, 0x7C7C).sob_update(kSob, 1)) == 1);
    CHECK(syncobj_wait(c.fd(), so_dma) == 0);
    CHECK(syncobj_status(c.fd(), so_dma) == 1);
    std::memcpy(&marker, buf.ptr + 40 * KiB, 4); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    CHECK(marker == 0xD0D0);
    std::uint64_t w = 0;
    std::memcpy(&w, buf.ptr + 32 * KiB - 8, 8); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    CHECK(w == 0x1111222233334444ULL);
    std::memcpy(&marker, buf.ptr + 48 * KiB, 4); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    CHECK(marker == 0x7C7C);
    syncobj_destroy(c.fd(), so_dma);

    // And the other way, with drm_syncobj fences: an MME job after a DMA job.
    std::uint32_t so1 = 0;
    REQUIRE(syncobj_create(c.fd(), so1) == 0);
    const std::uint64_t cb1 = c.put_cb(Cb().write_value(buf.va + 52 * KiB, 1));
    const std::uint64_t cb2 = c.put_cb(Cb().write_value(buf.va + 56 * KiB, 2));
    REQUIRE(c.submit(qd, cb1, 16, so1) == 0);
    std::uint32_t so2 = 0;
    REQUIRE(syncobj_create(c.fd(), so2) == 0);
    REQUIRE(c.submit(qm, cb2, 16, so2, {so1}) == 0);
    CHECK(syncobj_wait(c.fd(), so2) == 0);
    CHECK(syncobj_status(c.fd(), so1) == 1);
    CHECK(syncobj_status(c.fd(), so2) == 1);
    syncobj_destroy(c.fd(), so1);
    syncobj_destroy(c.fd(), so2);
}

TEST_CASE("packets a compute engine does not run fail -EINVAL with BAD_PACKET", "[compute]")
{
    Ctx c(node());
    REQUIRE(enable_events(c.fd()) == 0);
    const auto buf = c.host_buf(64 * KiB);
    const auto desc = c.host_buf(4 * KiB);
    std::uint32_t qt = 0;
    std::uint32_t qm = 0;
    std::uint32_t qd = 0;
    REQUIRE(c.queue_create(0, qt, DRM_HPU_ENGINE_TPC) == 0);
    REQUIRE(c.queue_create(0, qm, DRM_HPU_ENGINE_MME) == 0);
    REQUIRE(c.queue_create(0, qd) == 0);

    struct Case {
        const char *what;
        std::uint32_t queue;
        std::uint32_t engine;
        Cb cb;
    };
    std::vector<Case> cases;
    cases.push_back({"LIN_DMA on TPC", qt, kTpcIndex, Cb().nop().memset(0, buf.va, 4 * KiB)});
    cases.push_back({"LIN_DMA on MME0", qm, DRM_HPU_ENGINE_INDEX_MME(0), Cb().lin_dma(buf.va, buf.va + 8 * KiB, 64)});
    Cb gemm_on_tpc;
    cases.push_back({"MME_GEMM on TPC", qt, kTpcIndex, desc_packet(gemm_on_tpc, HPU_PKT_MME_GEMM, desc.va)});
    Cb launch_on_mme;
    cases.push_back(
        {"TPC_LAUNCH on MME0", qm, DRM_HPU_ENGINE_INDEX_MME(0), desc_packet(launch_on_mme, HPU_PKT_TPC_LAUNCH, desc.va)});
    Cb launch_on_dma;
    cases.push_back({"TPC_LAUNCH on DMA0", qd, 0, desc_packet(launch_on_dma, HPU_PKT_TPC_LAUNCH, desc.va)});
    for (const auto &k : cases) {
        INFO(k.what);
        CHECK(c.run(k.queue, k.cb) == -EINVAL);
        std::vector<Event> ev;
        CHECK(read_events_until(c.fd(), ev, 3000, [&](const Event &e) {
            return is_error(e, DRM_HPU_ERROR_BAD_PACKET) && e.err.queue_id == k.queue;
        }));
        INFO("events: " << describe(ev));
        bool seen = false;
        for (const auto &e : ev) {
            if (is_error(e, DRM_HPU_ERROR_BAD_PACKET) && e.err.queue_id == k.queue) {
                seen = true;
                CHECK(e.err.engine == k.engine);
                CHECK(e.err.errno_value == EINVAL);
            }
        }
        CHECK(seen);
    }
    // The queues still work.
    CHECK(c.run(qt, Cb().write_value(buf.va, 5)) == 1);
    CHECK(c.run(qm, Cb().write_value(buf.va, 6)) == 1);
}

TEST_CASE("TPC_LAUNCH with a bad descriptor: BAD_LAUNCH to the guilty context only", "[compute]")
{
    const std::string path = node(0);
    const auto e0 = errors_now(path);
    Ctx a(path);
    Ctx b(path);
    REQUIRE(enable_events(a.fd(), DRM_HPU_EVENTS_ENABLE | DRM_HPU_EVENTS_ERROR_INFO) == 0);
    REQUIRE(enable_events(b.fd(), DRM_HPU_EVENTS_ENABLE | DRM_HPU_EVENTS_ERROR_INFO) == 0);
    const auto desc = a.host_buf(4 * KiB); // page aligned: 64-byte aligned
    const auto out = a.host_buf(4 * KiB);
    const auto bbuf = b.host_buf(4 * KiB);
    std::uint32_t qa = 0;
    std::uint32_t qb = 0;
    REQUIRE(a.queue_create(0, qa, DRM_HPU_ENGINE_TPC) == 0);
    REQUIRE(b.queue_create(0, qb, DRM_HPU_ENGINE_TPC) == 0);

    struct Case {
        std::uint64_t desc;
        std::uint32_t rule;
    };
    for (const Case k : {Case{desc.va, HPU_TPC_BL_DESC_MAGIC}, Case{desc.va + 8, HPU_TPC_BL_DESC_MAGIC}}) {
        INFO("descriptor 0x" << std::hex << k.desc << std::dec << ", rule " << k.rule);
        Cb cb;
        // The write after the launch must not run: a failed launch stops the buffer.
        desc_packet(cb.write_value(out.va, 1), HPU_PKT_TPC_LAUNCH, k.desc).write_value(out.va + 4, 2);
        CHECK(a.run(qa, cb) == -ENOEXEC);
        std::uint32_t before = 0;
        std::uint32_t after = 0;
        std::memcpy(&before, out.ptr, 4);
        std::memcpy(&after, out.ptr + 4, 4); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        CHECK(before == 1);
        CHECK(after == 0);

        // Two events: the job's (queue, seq, errno) and the device's
        // (descriptor, rule), which names the job it failed.
        std::vector<Event> ev;
        bool job_ev = false;
        bool dev_ev = false;
        read_events_until(a.fd(), ev, 3000, [&](const Event &e) {
            if (is_error(e, DRM_HPU_ERROR_BAD_LAUNCH) && e.err.queue_id == qa)
                job_ev = true;
            if (is_error(e, DRM_HPU_ERROR_BAD_LAUNCH) && e.err.queue_id == 0)
                dev_ev = true;
            return job_ev && dev_ev;
        });
        INFO("events: " << describe(ev));
        CHECK(job_ev);
        CHECK(dev_ev);
        std::uint64_t job_seq = 0;
        for (const auto &e : ev) {
            if (is_error(e, DRM_HPU_ERROR_BAD_LAUNCH) && e.err.queue_id == qa)
                job_seq = e.err.seq;
        }
        for (const auto &e : ev) {
            if (!is_error(e, DRM_HPU_ERROR_BAD_LAUNCH))
                continue;
            CHECK(e.length == sizeof(drm_hpu_event_error));
            CHECK(e.err.engine == kTpcIndex);
            CHECK(e.err.errno_value == ENOEXEC);
            if (e.err.queue_id == 0) {
                CHECK(e.err.address == k.desc);
                CHECK(e.err.info == k.rule);
                CHECK(e.err.seq == 0);
                CHECK(e.err.job_queue_id == qa);
                CHECK(e.err.job_seq == job_seq);
            } else {
                CHECK(e.err.seq >= 1);
                CHECK(e.err.info == 0);
                CHECK(e.err.job_queue_id == 0);
                CHECK(e.err.job_seq == 0);
            }
        }
    }
    // The other context's TPC queue runs, and it heard nothing.
    CHECK(b.run(qb, Cb().write_value(bbuf.va, 42)) == 1);
    std::vector<Event> bev;
    CHECK_FALSE(read_events_until(b.fd(), bev, 500, [](const Event &) { return true; }));
    INFO("other context's events: " << describe(bev));
    CHECK(bev.empty());
    // The guilty context's queue runs the next job.
    CHECK(a.run(qa, Cb().write_value(out.va + 8, 3)) == 1);
    const auto e1 = errors_now(path);
    CHECK(e1.soft_resets == e0.soft_resets);
    CHECK(e1.bad_packets == e0.bad_packets);

}

TEST_CASE("MME GEMM: the result, and the engine's busy time in INFO TELEMETRY and fdinfo", "[compute]")
{
    Ctx c(node());
    constexpr std::uint32_t kN = 256; // 256 x 256 x 256 FP32
    constexpr std::uint64_t kBytes = static_cast<std::uint64_t>(kN) * kN * 4;
    const auto a = c.host_buf(kBytes);
    const auto b = c.host_buf(kBytes);
    const auto d = c.host_buf(kBytes);
    const auto desc = c.host_buf(4 * KiB);
    // A = 2 * identity, B(i, j) = i - j: D = 2 * B exactly.
    std::vector<float> av(static_cast<std::size_t>(kN) * kN, 0.0F);
    std::vector<float> bv(static_cast<std::size_t>(kN) * kN, 0.0F);
    for (std::uint32_t i = 0; i < kN; ++i) {
        av[static_cast<std::size_t>(i) * kN + i] = 2.0F;
        for (std::uint32_t j = 0; j < kN; ++j)
            bv[static_cast<std::size_t>(i) * kN + j] = static_cast<float>(static_cast<int>(i) - static_cast<int>(j));
    }
    std::memcpy(a.ptr, av.data(), kBytes);
    std::memcpy(b.ptr, bv.data(), kBytes);
    std::memset(d.ptr, 0xff, kBytes);
    put_gemm_desc(desc.ptr, kN, kN, kN, a.va, b.va, d.va);

    for (const std::uint32_t mme : {0U, 1U}) {
        INFO("MME" << mme);
        const std::uint32_t index = DRM_HPU_ENGINE_INDEX_MME(mme);
        const std::string name = "mme" + std::to_string(mme);
        std::uint32_t q = 0;
        REQUIRE(c.queue_create(mme, q, DRM_HPU_ENGINE_MME) == 0);
        const drm_hpu_info_telemetry t0 = telemetry_of(c.fd());
        const std::uint64_t fd0 = fdinfo_engine_ns(c.fd(), name);
        REQUIRE(t0.num_engines == 11);
        Cb cb;
        CHECK(c.run(q, desc_packet(cb, HPU_PKT_MME_GEMM, desc.va)) == 1);
        std::vector<float> dv(static_cast<std::size_t>(kN) * kN);
        std::memcpy(dv.data(), d.ptr, kBytes);
        std::size_t bad = 0;
        for (std::size_t i = 0; i < dv.size(); ++i)
            bad += dv[i] != 2.0F * bv[i] ? 1 : 0;
        CHECK(bad == 0);
        std::memset(d.ptr, 0xff, kBytes);
        const drm_hpu_info_telemetry t1 = telemetry_of(c.fd());
        INFO("busy ns before " << t0.engine_busy_ns[index] << " after " << t1.engine_busy_ns[index]);
        CHECK(t1.engine_busy_ns[index] > t0.engine_busy_ns[index]);
        CHECK(fdinfo_engine_ns(c.fd(), name) > fd0);
        CHECK(c.queue_destroy(q) == 0);
    }
    // The TPC engine has its fdinfo key too (nothing ran there).
    CHECK(fdinfo_engine_ns(c.fd(), "tpc") == 0);

    // A bad descriptor (a reserved flags bit, rule 2) fails -ENOEXEC; D untouched.
    std::uint32_t q = 0;
    REQUIRE(c.queue_create(0, q, DRM_HPU_ENGINE_MME) == 0);
    const std::uint32_t bad_flags = 1U << 7;
    std::memcpy(desc.ptr + HPU_MME_D_FLAGS, &bad_flags, 4); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    Cb cb;
    CHECK(c.run(q, desc_packet(cb, HPU_PKT_MME_GEMM, desc.va)) == -ENOEXEC);
    std::uint32_t w = 0;
    std::memcpy(&w, d.ptr, 4);
    CHECK(w == 0xffffffffU);
}

TEST_CASE("MME GEMM with a descriptor the device refuses (D overlaps A, rule 16): BAD_LAUNCH to the guilty "
          "context only, while another context's GEMMs on the same MME stay exact",
          "[compute]")
{
    const std::string path = node(0);
    const auto e0 = errors_now(path);
    constexpr std::uint32_t kM = 64;
    constexpr std::uint64_t kMat = std::uint64_t{kM} * kM * 4;
    Ctx a(path);
    Ctx b(path);
    REQUIRE(enable_events(a.fd(), DRM_HPU_EVENTS_ENABLE | DRM_HPU_EVENTS_ERROR_INFO) == 0);
    REQUIRE(enable_events(b.fd(), DRM_HPU_EVENTS_ENABLE | DRM_HPU_EVENTS_ERROR_INFO) == 0);

    // The bystander (context b, MME0): D = A x B with A = (r + 1) I and B
    // integers, so D = (r + 1) B exactly, round after round. Everything
    // that asserts is made here; the thread only submits, waits and counts.
    std::uint32_t qb = 0;
    REQUIRE(b.queue_create(0, qb, DRM_HPU_ENGINE_MME) == 0);
    const auto ba = b.host_buf(kMat);
    const auto bb = b.host_buf(kMat);
    const auto bd = b.host_buf(kMat);
    const auto bdesc = b.host_buf(4 * KiB);
    put_gemm_desc(bdesc.ptr, kM, kM, kM, ba.va, bb.va, bd.va);
    Cb bcb;
    const std::uint64_t bcb_va = b.put_cb(desc_packet(bcb, HPU_PKT_MME_GEMM, bdesc.va));
    std::uint32_t bso = 0;
    REQUIRE(syncobj_create(b.fd(), bso) == 0);
    std::atomic<bool> stop{false};
    std::atomic<int> good{0};
    std::atomic<int> bad{0};
    auto mat = [](const Ctx::HostBuf &m) { return reinterpret_cast<float *>(m.ptr); }; // NOLINT
    std::thread by([&] {
        for (int round = 0; !stop || round < 3; ++round) {
            for (std::uint32_t i = 0; i < kM * kM; ++i) {
                mat(ba)[i] = i % (kM + 1) == 0 ? static_cast<float>(round + 1) : 0.0F;
                mat(bb)[i] = static_cast<float>(static_cast<int>(i % 97) - 48);
                mat(bd)[i] = -1.0F;
            }
            if (b.submit(qb, bcb_va, bcb.bytes(), bso) != 0 || syncobj_wait(b.fd(), bso, 60000000000ULL) != 0 ||
                syncobj_status(b.fd(), bso) != 1) {
                ++bad;
                continue;
            }
            bool ok = true;
            for (std::uint32_t i = 0; i < kM * kM; ++i)
                ok = ok && mat(bd)[i] == static_cast<float>(round + 1) * mat(bb)[i];
            ok ? ++good : ++bad;
        }
    });
    auto rounds = [&] { return good + bad; };
    auto wait_rounds = [&](int n) {
        const std::uint64_t t0 = now_ns();
        while (rounds() < n && ms_since(t0) < 60000)
            ::usleep(5000);
    };
    wait_rounds(1); // the bystander runs when the fault comes

    // The guilty context: the same kind of GEMM on MME0, D placed on A.
    // libhpu refuses this itself (mme.md rule 16); the device must too.
    std::uint32_t qa = 0;
    REQUIRE(a.queue_create(0, qa, DRM_HPU_ENGINE_MME) == 0);
    const auto aa = a.host_buf(kMat);
    const auto ab = a.host_buf(kMat);
    const auto desc = a.host_buf(4 * KiB);
    const auto out = a.host_buf(4 * KiB);
    std::memset(aa.ptr, 0x5a, kMat);
    put_gemm_desc(desc.ptr, kM, kM, kM, aa.va, ab.va, aa.va + 4ULL * kM); // D overlaps A
    Cb cb;
    desc_packet(cb, HPU_PKT_MME_GEMM, desc.va).write_value(out.va, 1); // not run after the failure
    CHECK(a.run(qa, cb) == -ENOEXEC);
    std::uint32_t after = 0;
    std::memcpy(&after, out.ptr, 4);
    CHECK(after == 0);
    std::size_t changed = 0;
    for (std::uint64_t i = 0; i < kMat; ++i)
        changed += aa.ptr[i] != 0x5a ? 1U : 0U; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    CHECK(changed == 0); // nothing of D was written

    // The job's event and the device's (descriptor, rule), naming the job.
    std::vector<Event> ev;
    bool job_ev = false;
    bool dev_ev = false;
    read_events_until(a.fd(), ev, 3000, [&](const Event &e) {
        job_ev = job_ev || (is_error(e, DRM_HPU_ERROR_BAD_LAUNCH) && e.err.queue_id == qa);
        dev_ev = dev_ev || (is_error(e, DRM_HPU_ERROR_BAD_LAUNCH) && e.err.queue_id == 0);
        return job_ev && dev_ev;
    });
    INFO("events: " << describe(ev));
    CHECK(job_ev);
    CHECK(dev_ev);
    for (const auto &e : ev) {
        if (!is_error(e, DRM_HPU_ERROR_BAD_LAUNCH))
            continue;
        CHECK(e.err.engine == DRM_HPU_ENGINE_INDEX_MME(0));
        CHECK(e.err.errno_value == ENOEXEC);
        if (e.err.queue_id == 0) {
            CHECK(e.err.address == desc.va);
            CHECK(e.err.info == 16);
            CHECK(e.err.job_queue_id == qa);
        }
    }

    // The bystander ran on, exact, and heard nothing; the guilty queue
    // runs its next job.
    const int seen = rounds();
    wait_rounds(seen + 2);
    stop = true;
    by.join();
    CHECK(rounds() >= seen + 2);
    CHECK(good >= 3);
    CHECK(bad == 0);
    syncobj_destroy(b.fd(), bso);
    std::vector<Event> bev;
    CHECK_FALSE(read_events_until(b.fd(), bev, 500, [](const Event &) { return true; }));
    INFO("bystander's events: " << describe(bev));
    CHECK(bev.empty());
    CHECK(a.run(qa, Cb().write_value(out.va + 8, 3)) == 1);
    const auto e1 = errors_now(path);
    CHECK(e1.soft_resets == e0.soft_resets);
}

TEST_CASE("a hung TPC stream is disabled and restarted: no reset, other contexts unaffected", "[compute]")
{
    const std::string path = node(0);
    const auto e0 = errors_now(path);
    Ctx a(path);
    Ctx b(path);
    REQUIRE(enable_events(a.fd()) == 0);
    REQUIRE(enable_events(b.fd()) == 0);
    const auto buf = a.host_buf(4 * KiB);
    const auto bbuf = b.host_buf(4 * KiB);
    std::uint32_t qa = 0;
    std::uint32_t qb = 0;
    REQUIRE(a.queue_create(0, qa, DRM_HPU_ENGINE_TPC) == 0);
    REQUIRE(b.queue_create(0, qb, DRM_HPU_ENGINE_MME) == 0);
    // Another process keeps the DMA engines busy throughout.
    const auto dev = device_now(path);
    Bystander by(path, dev.num_dma - 1U, false);
    REQUIRE(by.ready());

    // B's TPC queue is on another stream of the engine (the one with the fewest queues).
    std::uint32_t qb2 = 0;
    REQUIRE(b.queue_create(0, qb2, DRM_HPU_ENGINE_TPC) == 0);

    inject(path, "inject_hang", std::to_string(1U << kTpcIndex)); // the TPC engine stops making progress
    const std::uint64_t t0 = now_ns();
    const std::uint64_t cb_a = a.put_cb(Cb().nop().write_value(buf.va, 1));
    std::uint32_t so_a = 0;
    REQUIRE(syncobj_create(a.fd(), so_a) == 0);
    REQUIRE(a.submit(qa, cb_a, 24, so_a) == 0);
    // Once A's job holds the engine, the injection is cleared (the engine
    // stays hung until A's stream is disabled, compute.md) and B submits to
    // the TPC engine too: its job waits for the engine and must not be
    // failed with A's.
    ::usleep(300000);
    inject(path, "inject_hang", "0");
    const std::uint64_t cb_b = b.put_cb(Cb().write_value(bbuf.va + 8, 5));
    std::uint32_t so_b = 0;
    REQUIRE(syncobj_create(b.fd(), so_b) == 0);
    REQUIRE(b.submit(qb2, cb_b, 16, so_b) == 0);
    REQUIRE(syncobj_wait(a.fd(), so_a) == 0);
    const int st = syncobj_status(a.fd(), so_a);
    const double fail_ms = ms_since(t0);
    INFO("hung job status " << st << " after " << fail_ms << " ms");
    CHECK(st == -ETIMEDOUT);
    std::vector<Event> ev;
    CHECK(read_events_until(a.fd(), ev, 3000, [&](const Event &e) {
        return is_error(e, DRM_HPU_ERROR_ENGINE_HANG) && e.err.queue_id == qa;
    }));
    INFO("events: " << describe(ev));
    for (const auto &e : ev) {
        CHECK(e.type != DRM_HPU_EVENT_RESET);
        if (is_error(e, DRM_HPU_ERROR_ENGINE_HANG)) {
            CHECK(e.err.engine == kTpcIndex);
            CHECK(e.err.errno_value == ETIMEDOUT);
        }
    }

    // B's job ran once the engine let go.
    CHECK(syncobj_wait(b.fd(), so_b) == 0);
    CHECK(syncobj_status(b.fd(), so_b) == 1);
    std::uint32_t v = 0;
    std::memcpy(&v, bbuf.ptr + 8, 4); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    CHECK(v == 5);
    syncobj_destroy(a.fd(), so_a);
    syncobj_destroy(b.fd(), so_b);

    // The TPC stream runs again, for this context and the other.
    CHECK(a.run(qa, Cb().write_value(buf.va + 4, 2)) == 1);
    std::memcpy(&v, buf.ptr + 4, 4); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    CHECK(v == 2);
    CHECK(b.run(qb2, Cb().write_value(bbuf.va, 3)) == 1);
    CHECK(b.run(qb, Cb().write_value(bbuf.va + 4, 4)) == 1);
    std::vector<Event> bev;
    CHECK_FALSE(read_events_until(b.fd(), bev, 300, [](const Event &) { return true; }));
    INFO("other context's events: " << describe(bev));
    CHECK(bev.empty());

    const ByStats s = by.finish();
    INFO(describe(s));
    CHECK(s.setup == 0);
    CHECK(s.good > 0);
    CHECK(s.bad_data == 0);
    CHECK(s.failed == 0);
    CHECK(s.lost == 0);
    const auto e1 = errors_now(path);
    CHECK(e1.engine_hangs == e0.engine_hangs + 1);
    CHECK(e1.soft_resets == e0.soft_resets);
    CHECK(e1.hard_resets == e0.hard_resets);
    CHECK(e1.job_timeouts == e0.job_timeouts);
    report_recovery("TPC stream hang (watchdog -> stream disabled, no reset)", fail_ms,
                    "hung fence errno " + std::to_string(-st));
}

TEST_CASE("EVENTS: error events are 48 bytes unless the file asks for ERROR_INFO; unknown flags are refused",
          "[compute]")
{
    const std::string path = node(0);
    Ctx c(path);
    std::uint32_t qt = 0;
    REQUIRE(c.queue_create(0, qt, DRM_HPU_ENGINE_TPC) == 0);
    const auto buf = c.host_buf(4 * KiB);

    SECTION("every rejected input: EINVAL")
    {
        CHECK(enable_events(c.fd(), DRM_HPU_EVENTS_ERROR_INFO) == EINVAL); // without ENABLE
        CHECK(enable_events(c.fd(), 1U << 2) == EINVAL);
        CHECK(enable_events(c.fd(), DRM_HPU_EVENTS_ENABLE | (1U << 31)) == EINVAL);
        CHECK(enable_events(c.fd(), DRM_HPU_EVENTS_ENABLE | DRM_HPU_EVENTS_ERROR_INFO | (1U << 2)) == EINVAL);
        drm_hpu_events ev{};
        ev.flags = DRM_HPU_EVENTS_ENABLE;
        ev.pad = 1;
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_EVENTS, &ev) == EINVAL);
        // Nothing was enabled by the refused calls.
        CHECK(c.run(qt, Cb().lin_dma(buf.va, buf.va + 64, 64)) == -EINVAL);
        std::vector<Event> none;
        CHECK_FALSE(read_events_until(c.fd(), none, 300, [](const Event &) { return true; }));
    }
    SECTION("the size follows the last EVENTS call")
    {
        struct Step {
            std::uint32_t flags;
            std::uint32_t length;
        };
        constexpr std::uint32_t kShort = offsetof(drm_hpu_event_error, info);
        for (const Step k : {Step{DRM_HPU_EVENTS_ENABLE, kShort},
                             Step{DRM_HPU_EVENTS_ENABLE | DRM_HPU_EVENTS_ERROR_INFO, sizeof(drm_hpu_event_error)},
                             Step{DRM_HPU_EVENTS_ENABLE, kShort}}) {
            INFO("flags 0x" << std::hex << k.flags);
            REQUIRE(enable_events(c.fd(), k.flags) == 0);
            // LIN_DMA is not a compute engine's packet: BAD_PACKET.
            CHECK(c.run(qt, Cb().lin_dma(buf.va, buf.va + 64, 64)) == -EINVAL);
            std::vector<Event> ev;
            CHECK(read_events_until(c.fd(), ev, 3000, [&](const Event &e) {
                return is_error(e, DRM_HPU_ERROR_BAD_PACKET) && e.err.queue_id == qt;
            }));
            INFO("events: " << describe(ev));
            REQUIRE(ev.size() == 1);
            CHECK(ev[0].length == k.length);
            CHECK(ev[0].err.engine == kTpcIndex);
            CHECK(ev[0].err.errno_value == EINVAL);
        }
    }
}

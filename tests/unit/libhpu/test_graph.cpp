// SPDX-License-Identifier: MIT
// libhpu 1.5 graphs against the mocked kernel: the per-slot command lists
// a graph compiles into (SOB_UPDATE and WAIT packets for the dependencies
// across engines, the join), the sync objects of the two parities used by
// alternate launches, the syncobj chain between launches, scalars changed
// between launches, and the argument rules.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <ios>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "device.h"
#include "drm/hpu_accel.h"
#include "fixture.h"
#include "hpu/hpu.h"
#include "mock_os.h"
#include "spec_bytes.h"
#include "tpc_binary.h"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::Equals;
using hpu::test::BinSpec;
using hpu::test::Bytes;
using hpu::test::Fixture;
using hpu::test::get_le;
using hpu::test::MockOs;
using hpu::test::tpc_binary;
using Lines = std::vector<std::string>;

namespace {

constexpr std::uint64_t kHost = 0x100000000ULL;
constexpr std::uint64_t kHbm = 0x200000000ULL;

std::string hex(std::uint64_t v)
{
    std::ostringstream o;
    o << "0x" << std::hex << v;
    return o.str();
}

// A command buffer as one line per packet (memory-and-queues.md, "Packets"):
// "SOB_UPDATE 30 SET 0", "WAIT 29 GE 1", "LIN_DMA 0x... <- 0x...",
// "MEMSET 0x...", "TPC_LAUNCH", "MME_GEMM", "NOP".
Lines packets(const Bytes &cb)
{
    Lines out;
    std::size_t off = 0;
    while (off < cb.size()) {
        const auto op = static_cast<std::uint32_t>(get_le(cb, off, 4));
        const auto w1 = static_cast<std::uint32_t>(get_le(cb, off + 4, 4));
        switch (op) {
        case 0x00:
            out.emplace_back("NOP");
            off += 8;
            continue;
        case 0x01:
            out.push_back((w1 & 1U) != 0 ? "MEMSET " + hex(get_le(cb, off + 16, 8))
                                         : "LIN_DMA " + hex(get_le(cb, off + 16, 8)) + " <- " +
                                               hex(get_le(cb, off + 8, 8)));
            off += 32;
            continue;
        case 0x03:
            out.push_back("SOB_UPDATE " + std::to_string(w1) + (get_le(cb, off + 12, 4) == 1 ? " ADD " : " SET ") +
                          std::to_string(get_le(cb, off + 8, 4)));
            break;
        case 0x04:
            out.push_back("WAIT " + std::to_string(w1) + (get_le(cb, off + 12, 4) == 1 ? " EQ " : " GE ") +
                          std::to_string(get_le(cb, off + 8, 4)));
            break;
        case 0x06:
            out.emplace_back("TPC_LAUNCH");
            break;
        case 0x07:
            out.emplace_back("MME_GEMM");
            break;
        default:
            out.push_back("opcode " + std::to_string(op));
            break;
        }
        off += 16;
    }
    return out;
}

// A kernel with one tensor and one scalar.
Bytes scale_binary()
{
    BinSpec s;
    s.num_tensors = 1;
    s.num_scalars = 1;
    s.index_dims = 1;
    s.name = "scale";
    return tpc_binary(s);
}

struct GraphFixture : Fixture {
    hpu_kernel_t *k = nullptr;
    hpu_graph_t *g = nullptr;
    hpu_tensor t{};
    std::array<std::uint32_t, 1> scalar{1};
    hpu_launch l{};
    hpu_gemm gemm{};
    GraphFixture()
    {
        const Bytes bin = scale_binary();
        REQUIRE(hpu_kernel_load(dev, bin.data(), bin.size(), &k) == 0);
        REQUIRE(hpu_graph_create(dev, &g) == 0);
        const std::array<std::uint32_t, 1> n{1024};
        REQUIRE(hpu_tensor_init(&t, kHbm, HPU_DTYPE_FP32, 1, n.data()) == 0);
        l.size = sizeof(l);
        l.num_tensors = 1;
        l.tensors = &t;
        l.num_scalars = 1;
        l.scalars = scalar.data();
        l.index_size[0] = 4;
        gemm.size = sizeof(gemm);
        gemm.in_dtype = gemm.out_dtype = HPU_DTYPE_FP32;
        gemm.m = gemm.n = gemm.k = 16;
        gemm.a = kHbm;
        gemm.b = kHbm + 0x1000;
        gemm.d = kHbm + 0x2000;
        gemm.alpha = 1.0F;
    }
    GraphFixture(const GraphFixture &) = delete;
    GraphFixture &operator=(const GraphFixture &) = delete;
    GraphFixture(GraphFixture &&) = delete;
    GraphFixture &operator=(GraphFixture &&) = delete;
    ~GraphFixture()
    {
        (void)hpu_graph_destroy(g);
        (void)hpu_kernel_destroy(k);
    }

    // Launches the graph; every job it submitted.
    std::vector<MockOs::Job> launch_all()
    {
        const std::size_t before = m.jobs.size();
        hpu_fence_t *f = nullptr;
        REQUIRE(hpu_graph_launch(g, nullptr, 0, &f) == 0);
        REQUIRE(f != nullptr);
        CHECK(hpu_fence_destroy(f) == 0);
        return {m.jobs.begin() + static_cast<std::ptrdiff_t>(before), m.jobs.end()};
    }
    // Launches the graph; the jobs it submitted but the release jobs and
    // the finish job (checked on their own below).
    std::vector<MockOs::Job> launch()
    {
        std::vector<MockOs::Job> out;
        finish.reset();
        for (MockOs::Job &j : launch_all()) {
            if (is_finish(j)) {
                finish = j;
            } else if (!is_release(j)) {
                out.push_back(std::move(j));
            }
        }
        return out;
    }
    std::optional<MockOs::Job> finish; // launch()'s finish job, if any
    // The finish job: a NOP that waits for other slots' last jobs.
    static bool is_finish(const MockOs::Job &j) { return packets(j.cb) == Lines{"NOP"} && !j.in.empty(); }
    // A release job: SOB_UPDATE SET to 0 of the other parity's object,
    // then SET to a count above 0.
    static bool is_release(const MockOs::Job &j)
    {
        const Lines p = packets(j.cb);
        const auto set = [](const std::string &l) {
            return l.rfind("SOB_UPDATE ", 0) == 0 && l.find(" SET ") != std::string::npos;
        };
        return p.size() == 2 && set(p[0]) && set(p[1]) && p[0].substr(p[0].size() - 2) == " 0" &&
               p[1].substr(p[1].size() - 2) != " 0";
    }
    // A launch whose nth submission (from 1) is refused with -EBUSY (the
    // per-file job limit); the number of jobs before it.
    std::size_t launch_refused_at(int nth)
    {
        const std::size_t before = m.jobs.size();
        m.fail_errno = -EBUSY;
        m.submit_fail_at = m.submit_calls + nth;
        CHECK(hpu_graph_launch(g, nullptr, 0, nullptr) == -EBUSY);
        m.submit_fail_at = 0;
        return before;
    }
    // Nodes copy in (DMA) -> launch (TPC) -> copy out (DMA, the join).
    void add_copy_launch_copy()
    {
        REQUIRE(hpu_graph_add_copy(g, kHbm, kHost, 4096, nullptr, 0) == 0);
        const std::array<std::uint32_t, 1> d0{0};
        REQUIRE(hpu_graph_add_launch(g, k, &l, d0.data(), 1) == 1);
        const std::array<std::uint32_t, 1> d1{1};
        REQUIRE(hpu_graph_add_copy(g, kHost, kHbm, 4096, d1.data(), 1) == 2);
    }
    // r is the release job of job j: on j's queue, a release.
    static bool is_release_of(const MockOs::Job &r, const MockOs::Job &j)
    {
        return r.req.queue_id == j.req.queue_id && is_release(r);
    }
    // (engine class, engine) of a job's queue.
    [[nodiscard]] std::pair<std::uint32_t, std::uint32_t> engine(const MockOs::Job &j) const
    {
        return m.queue_engines.at(j.req.queue_id);
    }
    // Destroys the graph and kernel and closes the device, then checks that
    // every kernel object went (the graphs' queues with the device).
    void close_clean()
    {
        CHECK(hpu_graph_destroy(g) == 0);
        g = nullptr;
        CHECK(hpu_kernel_destroy(k) == 0);
        k = nullptr;
        CHECK(hpu_close(dev) == 0);
        dev = nullptr;
        check_clean();
    }
};

bool waits_for(const MockOs::Job &j, std::uint32_t syncobj)
{
    for (const drm_hpu_sync &s : j.in) {
        if (s.handle == syncobj)
            return true;
    }
    return false;
}

constexpr std::pair<std::uint32_t, std::uint32_t> kDma{DRM_HPU_ENGINE_DMA, 0};
constexpr std::pair<std::uint32_t, std::uint32_t> kTpc{DRM_HPU_ENGINE_TPC, 0};
constexpr std::pair<std::uint32_t, std::uint32_t> kMme0{DRM_HPU_ENGINE_MME, 0};
constexpr std::pair<std::uint32_t, std::uint32_t> kMme1{DRM_HPU_ENGINE_MME, 1};

} // namespace

TEST_CASE("a graph across DMA, MME and TPC compiles into per-slot lists with SOB_UPDATE and WAIT; "
          "launches alternate between two parities",
          "[libhpu][graph]")
{
    GraphFixture fx;
    // copy in -> GEMM -> launch -> copy out, each depending on the one before.
    const int n0 = hpu_graph_add_copy(fx.g, kHbm, kHost, 4096, nullptr, 0);
    const std::array<std::uint32_t, 1> d0{static_cast<std::uint32_t>(n0)};
    const int n1 = hpu_graph_add_gemm(fx.g, &fx.gemm, d0.data(), 1);
    const std::array<std::uint32_t, 1> d1{static_cast<std::uint32_t>(n1)};
    const int n2 = hpu_graph_add_launch(fx.g, fx.k, &fx.l, d1.data(), 1);
    const std::array<std::uint32_t, 1> d2{static_cast<std::uint32_t>(n2)};
    const int n3 = hpu_graph_add_copy(fx.g, kHost, kHbm, 4096, d2.data(), 1);
    CHECK(std::vector<int>{n0, n1, n2, n3} == std::vector<int>{0, 1, 2, 3});
    CHECK(hpu_graph_size(fx.g) == 4);

    // Three slots: 2 sync objects each, from the top (DMA 31/30, TPC
    // 29/28, MME0 27/26 for parity 0/1).
    const auto l0 = fx.launch();
    REQUIRE(l0.size() == 4); // the sync objects' reset, then TPC, MME0, and the join on DMA
    CHECK(fx.engine(l0[0]) == kDma);
    CHECK(packets(l0[0].cb) == Lines{"SOB_UPDATE 31 SET 0", "SOB_UPDATE 30 SET 0", "SOB_UPDATE 29 SET 0",
                                     "SOB_UPDATE 28 SET 0", "SOB_UPDATE 27 SET 0", "SOB_UPDATE 26 SET 0"});
    CHECK(fx.engine(l0[1]) == kTpc);
    CHECK(packets(l0[1].cb) == Lines{"SOB_UPDATE 28 SET 0", "WAIT 27 GE 1", "TPC_LAUNCH", "SOB_UPDATE 29 ADD 1",
                                     "SOB_UPDATE 29 ADD 1"});
    CHECK(fx.engine(l0[2]) == kMme0);
    CHECK(packets(l0[2].cb) == Lines{"SOB_UPDATE 26 SET 0", "WAIT 31 GE 1", "MME_GEMM", "SOB_UPDATE 27 ADD 1",
                                     "SOB_UPDATE 27 ADD 1"});
    CHECK(fx.engine(l0[3]) == kDma);
    CHECK(packets(l0[3].cb) == Lines{"SOB_UPDATE 30 SET 0", "LIN_DMA 0x200000000 <- 0x100000000",
                                     "SOB_UPDATE 31 ADD 1", "WAIT 29 GE 1", "LIN_DMA 0x100000000 <- 0x200000000",
                                     "WAIT 29 GE 2", "WAIT 27 GE 2"});
    // Every job of launch 0 waits for the reset job's syncobj; the finish
    // job, after the join on its queue, waits for the last jobs of TPC and
    // MME0 (their release jobs) and signals the launch's own.
    const std::uint32_t after_reset = l0[0].out.back().handle;
    REQUIRE(fx.finish);
    CHECK(fx.engine(*fx.finish) == kDma);
    CHECK(fx.finish->in.size() == 2);
    const std::uint32_t done0 = fx.finish->out.back().handle;
    CHECK(after_reset != done0);
    CHECK(l0[3].out.back().handle != done0); // not the join
    for (std::size_t i = 1; i < l0.size(); ++i)
        CHECK(waits_for(l0[i], after_reset));

    // Launch 1: parity 1, no reset; every job waits for launch 0's join.
    const auto l1 = fx.launch();
    REQUIRE(l1.size() == 3);
    CHECK(fx.engine(l1[0]) == kTpc);
    CHECK(packets(l1[0].cb) == Lines{"SOB_UPDATE 29 SET 0", "WAIT 26 GE 1", "TPC_LAUNCH", "SOB_UPDATE 28 ADD 1",
                                     "SOB_UPDATE 28 ADD 1"});
    CHECK(fx.engine(l1[1]) == kMme0);
    CHECK(packets(l1[1].cb) == Lines{"SOB_UPDATE 27 SET 0", "WAIT 30 GE 1", "MME_GEMM", "SOB_UPDATE 26 ADD 1",
                                     "SOB_UPDATE 26 ADD 1"});
    CHECK(fx.engine(l1[2]) == kDma);
    CHECK(packets(l1[2].cb) == Lines{"SOB_UPDATE 31 SET 0", "LIN_DMA 0x200000000 <- 0x100000000",
                                     "SOB_UPDATE 30 ADD 1", "WAIT 28 GE 1", "LIN_DMA 0x100000000 <- 0x200000000",
                                     "WAIT 28 GE 2", "WAIT 26 GE 2"});
    for (const auto &j : l1)
        CHECK(waits_for(j, done0));
    // Launch 1's finish job signals the syncobj the reset job did: launch 2 waits for it.
    REQUIRE(fx.finish);
    CHECK(fx.finish->out.back().handle == after_reset);

    // Launch 2: parity 0 again, the very same command buffers as launch 0's.
    const auto l2 = fx.launch();
    REQUIRE(l2.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(l2[i].cb == l0[i + 1].cb);
        CHECK(l2[i].req.cb_va == l0[i + 1].req.cb_va);
        CHECK(waits_for(l2[i], after_reset));
    }
    REQUIRE(fx.finish);
    CHECK(fx.finish->out.back().handle == done0);

    // Launch 3 (parity 1) in full: behind each job whose slot's object
    // another waits for, a release job on the same queue SETs it to the
    // job's final count (graph.cpp: a no-op after a job that ran to its end,
    // the release of the waiters after one that failed).
    const auto l3 = fx.launch_all();
    REQUIRE(l3.size() == 7);
    CHECK(fx.engine(l3[0]) == kTpc);
    CHECK(l3[0].cb == l1[0].cb);
    CHECK(fx.engine(l3[1]) == kTpc);
    CHECK(packets(l3[1].cb) == Lines{"SOB_UPDATE 29 SET 0", "SOB_UPDATE 28 SET 2"});
    CHECK(l3[1].in.empty());
    CHECK(fx.engine(l3[2]) == kMme0);
    CHECK(fx.engine(l3[3]) == kMme0);
    CHECK(packets(l3[3].cb) == Lines{"SOB_UPDATE 27 SET 0", "SOB_UPDATE 26 SET 2"});
    CHECK(fx.engine(l3[4]) == kDma);
    CHECK(l3[4].cb == l1[2].cb);
    CHECK(fx.engine(l3[5]) == kDma); // the join's: its copy-in is waited for
    CHECK(packets(l3[5].cb) == Lines{"SOB_UPDATE 31 SET 0", "SOB_UPDATE 30 SET 1"});
    // The finish job, after the join's release on its queue, waits for the
    // TPC and MME0 releases (the last out-sync of each: the slot's tail)
    // and signals the launch's syncobj: the next launch waits for it
    // (graph.cpp's head).
    CHECK(fx.engine(l3[6]) == kDma);
    CHECK(packets(l3[6].cb) == Lines{"NOP"});
    CHECK(waits_for(l3[6], l3[1].out.back().handle));
    CHECK(waits_for(l3[6], l3[3].out.back().handle));
    CHECK(l3[1].out.back().handle == l3[0].out.back().handle); // the TPC slot's tail, job then release
    CHECK(l3[6].out.back().handle == after_reset);
    CHECK(l3[4].out.back().handle != after_reset);
    CHECK(l3[5].out.back().handle != after_reset);
    const auto l4 = fx.launch();
    for (const auto &j : l4)
        CHECK(waits_for(j, after_reset));
    fx.close_clean();
}

TEST_CASE("a graph launch whose node fails on another queue than the join's fails at once with that node's error",
          "[libhpu][graph]")
{
    GraphFixture fx;
    fx.add_copy_launch_copy();
    fx.m.auto_complete = false;
    const std::size_t before = fx.m.jobs.size();
    hpu_fence_t *f = nullptr;
    fx.m.on_wait = [&fx]() { fx.m.complete_jobs(); }; // the reset, waited for before the other jobs go in
    REQUIRE(hpu_graph_launch(fx.g, nullptr, 0, &f) == 0);
    fx.m.on_wait = nullptr;
    REQUIRE(f != nullptr);
    // The reset, TPC and its release, the join on DMA and its release, the finish job.
    REQUIRE(fx.m.jobs.size() - before == 6);
    auto &tpc = fx.m.jobs[before + 1];
    const auto &join = fx.m.jobs[before + 3];
    REQUIRE(fx.engine(tpc) == kTpc);
    REQUIRE(fx.engine(join) == kDma);
    CHECK(packets(fx.m.jobs[before + 2].cb) == Lines{"SOB_UPDATE 28 SET 0", "SOB_UPDATE 29 SET 2"});
    CHECK(fx.engine(fx.m.jobs[before + 2]) == kTpc);
    CHECK(packets(fx.m.jobs[before + 4].cb) == Lines{"SOB_UPDATE 30 SET 0", "SOB_UPDATE 31 SET 1"});
    CHECK(hpu_fence_status(f) == 1);

    SECTION("the TPC job fails: the launch fails with its error once the join has ended too")
    {
        tpc.fence->signalled = true;
        tpc.fence->error = -EDOM;
        // Pending while the join runs: a waiter must not reuse what the
        // launch's other jobs still touch.
        CHECK(hpu_fence_status(f) == 1);
        CHECK(hpu_fence_wait(f, 1000) == -ETIME);
        hpu_error_info i{};
        i.size = sizeof(i);
        CHECK(hpu_fence_error_info(f, &i) == -EBUSY);
        join.fence->signalled = true; // released, it ran on
        CHECK(hpu_fence_status(f) == -EDOM);
        CHECK(hpu_fence_wait(f, 1000000000ULL) == -EDOM);
        REQUIRE(hpu_fence_error_info(f, &i) == 0);
        CHECK(i.error == -EDOM);
        CHECK(i.queue_id == tpc.req.queue_id); // the failed node's job, not the join's
        CHECK(i.queue_id != join.req.queue_id);
    }
    SECTION("the TPC job fails while a wait is under way: the wait returns its error when the join has ended")
    {
        int calls = 0;
        fx.m.on_wait = [&]() {
            if (++calls == 1) { // the wait for the TPC job
                tpc.fence->signalled = true;
                tpc.fence->error = -EFAULT;
            } else {
                CHECK_FALSE(hpu_fence_status(f) == -EFAULT); // not settled while the join runs
                join.fence->signalled = true;
            }
        };
        CHECK(hpu_fence_wait(f, 1000000000ULL) == -EFAULT);
        fx.m.on_wait = nullptr;
        CHECK(calls == 2); // the join was waited for too
        CHECK(hpu_fence_status(f) == -EFAULT);
    }
    SECTION("every job ends well: success once the join has too")
    {
        tpc.fence->signalled = true;
        CHECK(hpu_fence_status(f) == 1);
        CHECK(hpu_fence_wait(f, 1000) == -ETIME); // the join is pending
        fx.m.complete_jobs();
        CHECK(hpu_fence_status(f) == 0);
        CHECK(hpu_fence_wait(f, 1000) == 0);
    }
    SECTION("the join fails: its error")
    {
        tpc.fence->signalled = true;
        join.fence->signalled = true;
        join.fence->error = -EIO;
        CHECK(hpu_fence_wait(f, 1000) == -EIO);
    }
    SECTION("both fail, the join first: the join's error, not the member's that failed later")
    {
        join.fence->signalled = true;
        join.fence->error = -EIO;
        join.fence->timestamp_ns = 1000;
        CHECK(hpu_fence_status(f) == 1); // the TPC job runs
        tpc.fence->signalled = true;
        tpc.fence->error = -EDOM;
        tpc.fence->timestamp_ns = 2000;
        CHECK(hpu_fence_wait(f, 1000) == -EIO);
        hpu_error_info i{};
        i.size = sizeof(i);
        REQUIRE(hpu_fence_error_info(f, &i) == 0);
        CHECK(i.error == -EIO);
        CHECK(i.queue_id == join.req.queue_id); // the job that failed first
        int fd = -1;
        REQUIRE(hpu_fence_export_fd(f, &fd) == 0);
        CHECK(fx.m.aux_fds.at(fd).fence == join.fence); // the same job, exported
        CHECK(fx.m.close(fd) == 0);
    }
    SECTION("both fail, the member first: the member's error")
    {
        tpc.fence->signalled = true;
        tpc.fence->error = -EDOM;
        tpc.fence->timestamp_ns = 1000;
        join.fence->signalled = true;
        join.fence->error = -EIO;
        join.fence->timestamp_ns = 2000;
        CHECK(hpu_fence_wait(f, 1000) == -EDOM);
        hpu_error_info i{};
        i.size = sizeof(i);
        REQUIRE(hpu_fence_error_info(f, &i) == 0);
        CHECK(i.queue_id == tpc.req.queue_id);
        int fd = -1;
        REQUIRE(hpu_fence_export_fd(f, &fd) == 0);
        CHECK(fx.m.aux_fds.at(fd).fence == tpc.fence);
        CHECK(fx.m.close(fd) == 0);
    }
    SECTION("signal time: the latest job's, once every job ended")
    {
        std::uint64_t ns = 1;
        tpc.fence->signalled = true;
        tpc.fence->error = -EDOM;
        tpc.fence->timestamp_ns = 9000;
        CHECK(hpu_fence_signal_time(f, &ns) == -EBUSY); // the join runs
        CHECK(ns == 0);
        join.fence->signalled = true;
        join.fence->timestamp_ns = 4000;
        CHECK(hpu_fence_signal_time(f, &ns) == 0);
        CHECK(ns == 9000); // the failed member ended last
        CHECK(hpu_fence_status(f) == -EDOM);
    }
    SECTION("both fail at the same time: graph order, the join's job holding node 0")
    {
        join.fence->signalled = true;
        join.fence->error = -EIO;
        tpc.fence->signalled = true;
        tpc.fence->error = -EDOM;
        join.fence->timestamp_ns = tpc.fence->timestamp_ns = 5000;
        CHECK(hpu_fence_wait(f, 1000) == -EIO);
    }
    SECTION("exported while every job runs: the join's and the member's fences merged, in error if the TPC job fails")
    {
        int fd = -1;
        REQUIRE(hpu_fence_export_fd(f, &fd) == 0);
        CHECK(fx.m.merges == 1);
        const auto &exported = *fx.m.aux_fds.at(fd).fence;
        CHECK_FALSE(MockOs::state(exported).first);
        tpc.fence->signalled = true;
        tpc.fence->error = -EDOM;
        CHECK_FALSE(MockOs::state(exported).first); // the join runs on
        join.fence->signalled = true;
        CHECK(MockOs::state(exported) == std::pair<bool, int>{true, -EDOM});
        CHECK(fx.m.close(fd) == 0);
    }
    SECTION("exported after the TPC job failed: once the launch ended, the failed job's fence")
    {
        tpc.fence->signalled = true;
        tpc.fence->error = -EDOM;
        fx.m.on_wait = [&]() { join.fence->signalled = true; };
        int fd = -1;
        REQUIRE(hpu_fence_export_fd(f, &fd) == 0);
        fx.m.on_wait = nullptr;
        CHECK(join.fence->signalled); // it waited for the join
        CHECK(fx.m.aux_fds.at(fd).fence == tpc.fence);
        CHECK(MockOs::state(*fx.m.aux_fds.at(fd).fence) == std::pair<bool, int>{true, -EDOM});
        CHECK(fx.m.close(fd) == 0);
    }
    SECTION("exported, all end well: a fence signalled without error once all did")
    {
        int fd = -1;
        REQUIRE(hpu_fence_export_fd(f, &fd) == 0);
        const auto &exported = *fx.m.aux_fds.at(fd).fence;
        tpc.fence->signalled = true;
        CHECK_FALSE(MockOs::state(exported).first);
        join.fence->signalled = true;
        CHECK(MockOs::state(exported) == std::pair<bool, int>{true, 0});
        CHECK(fx.m.close(fd) == 0);
    }
    SECTION("used as a wait: the submission waits for every job of the launch")
    {
        hpu_queue_t *q = nullptr;
        REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_CLASS_MME, 0, &q) == 0);
        const std::array<const hpu_fence_t *, 1> w{f};
        REQUIRE(hpu_queue_gemm(q, &fx.gemm, w.data(), 1, nullptr) == 0);
        const auto &after = fx.m.jobs.back();
        CHECK(waits_for(after, join.out.at(1).handle)); // the fence's (then done[p])
        CHECK(waits_for(after, tpc.out.at(1).handle)); // the member's (then its slot's tail)
        fx.m.complete_jobs();
        CHECK(hpu_queue_destroy(q) == 0);
    }
    fx.m.complete_jobs();
    CHECK(hpu_fence_destroy(f) == 0); // its member syncobjs with it (check_clean)
    fx.m.auto_complete = true;
    // The next launch works (parity 1).
    hpu_fence_t *f2 = nullptr;
    REQUIRE(hpu_graph_launch(fx.g, nullptr, 0, &f2) == 0);
    CHECK(hpu_fence_wait(f2, 1000) == 0);
    CHECK(hpu_fence_destroy(f2) == 0);
    fx.close_clean();
}

namespace {

// The device's sync objects as the jobs' SOB_UPDATE and WAIT packets use
// them (nothing else is run): enough to replay launches in one order the
// device may choose and see which WAITs pass.
struct SobDevice {
    std::array<std::uint32_t, 32> sob{};
    struct Run {
        Lines p;
        std::size_t pc = 0;
        bool failed = false; // failed before its first packet: runs nothing
    };
    // Runs r from its packet pc on, up to a WAIT not met; true when done.
    bool step(Run &r)
    {
        if (r.failed)
            return true;
        for (; r.pc < r.p.size(); ++r.pc) {
            std::istringstream in(r.p[r.pc]);
            std::string op;
            std::string mode;
            std::uint32_t id = 0;
            std::uint32_t v = 0;
            in >> op >> id >> mode >> v;
            if (op == "WAIT" && sob.at(id) < v)
                return false;
            if (op == "SOB_UPDATE")
                sob.at(id) = mode == "ADD" ? sob.at(id) + v : v;
        }
        return true;
    }
    // Runs jobs, each queue's in the order given, as far as they go: the
    // jobs not done (blocked at a WAIT, or behind one on its queue).
    std::vector<std::size_t> run(std::vector<Run> &jobs, const std::vector<std::uint32_t> &queue)
    {
        std::vector<bool> done(jobs.size(), false);
        for (bool progress = true; progress;) {
            progress = false;
            for (std::size_t i = 0; i < jobs.size(); ++i) {
                bool head = !done[i];
                for (std::size_t k = 0; k < i && head; ++k)
                    head = done[k] || queue[k] != queue[i];
                if (head && step(jobs[i])) {
                    done[i] = true;
                    progress = true;
                }
            }
        }
        std::vector<std::size_t> left;
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            if (!done[i])
                left.push_back(i);
        }
        return left;
    }
};

} // namespace

TEST_CASE("a graph job that fails before its first packet leaves no stale count for the next launch of its parity",
          "[libhpu][graph]")
{
    GraphFixture fx;
    fx.add_copy_launch_copy();
    SobDevice dev;
    const auto runs = [](const std::vector<MockOs::Job> &jobs, std::vector<std::uint32_t> &queue) {
        std::vector<SobDevice::Run> out;
        for (const auto &j : jobs) {
            out.push_back({packets(j.cb), 0, false});
            queue.push_back(j.req.queue_id);
        }
        return out;
    };
    // Launch 0 (the reset, TPC and its release, DMA and its release, the
    // finish job) runs to its end: parity 0's objects keep its final counts.
    const auto l0 = fx.launch_all();
    REQUIRE(l0.size() == 6);
    std::vector<std::uint32_t> q0;
    auto r0 = runs(l0, q0);
    REQUIRE(dev.run(r0, q0).empty());
    REQUIRE(fx.engine(l0[1]) == kTpc);
    REQUIRE(fx.engine(l0[3]) == kDma);

    SECTION("a job on another slot than the join's")
    {
        // Launch 1: its TPC job fails before its first packet (the reset of
        // TPC's parity-0 object); its release lets the join finish.
        const auto l1 = fx.launch_all();
        REQUIRE(l1.size() == 5);
        REQUIRE(fx.engine(l1[0]) == kTpc);
        std::vector<std::uint32_t> q1;
        auto r1 = runs(l1, q1);
        r1[0].failed = true;
        REQUIRE(dev.run(r1, q1).empty());
        // Launch 2 (parity 0) starts after launch 1's join: its DMA job may
        // run before its TPC job (another queue). Its copy out must wait
        // for this launch's TPC node, not pass on launch 0's count.
        const auto l2 = fx.launch_all();
        REQUIRE(l2.size() == 5);
        REQUIRE(fx.engine(l2[2]) == kDma);
        std::vector<SobDevice::Run> dma{{packets(l2[2].cb), 0, false}};
        CHECK(dev.run(dma, {l2[2].req.queue_id}) == std::vector<std::size_t>{0});
        CHECK(dma[0].p.at(dma[0].pc) == "WAIT 29 GE 1");
        // Then the rest runs through.
        std::vector<std::uint32_t> q2;
        auto r2 = runs(l2, q2);
        CHECK(dev.run(r2, q2).empty());
    }
    SECTION("the join's job")
    {
        // Launch 1: the join (DMA) fails before its first packet (the reset
        // of DMA's parity-0 object); its release runs after it, then the
        // finish job signals the launch's syncobj, which launch 2 waits for.
        const auto l1 = fx.launch_all();
        REQUIRE(l1.size() == 5);
        REQUIRE(fx.engine(l1[2]) == kDma);
        REQUIRE(GraphFixture::is_release_of(l1[3], l1[2]));
        std::vector<std::uint32_t> q1;
        auto r1 = runs(l1, q1);
        r1[2].failed = true;
        REQUIRE(dev.run(r1, q1).empty());
        REQUIRE(GraphFixture::is_finish(l1[4]));
        const std::uint32_t done1 = l1[4].out.back().handle;
        CHECK(waits_for(l1[4], l1[1].out.back().handle)); // the TPC slot's tail
        // Launch 2's TPC job may run before its DMA job: its WAIT for the
        // copy in must not pass on launch 0's count.
        const auto l2 = fx.launch_all();
        REQUIRE(l2.size() == 5);
        for (const auto &j : l2)
            CHECK((GraphFixture::is_release(j) || GraphFixture::is_finish(j) || waits_for(j, done1)));
        REQUIRE(fx.engine(l2[0]) == kTpc);
        std::vector<SobDevice::Run> tpc{{packets(l2[0].cb), 0, false}};
        CHECK(dev.run(tpc, {l2[0].req.queue_id}) == std::vector<std::size_t>{0});
        CHECK(tpc[0].p.at(tpc[0].pc) == "WAIT 31 GE 1");
    }
    fx.close_clean();
}

TEST_CASE("a launch whose submissions fail half way makes the next one reset every sync object after its jobs",
          "[libhpu][graph]")
{
    GraphFixture fx;
    fx.add_copy_launch_copy();
    (void)fx.launch_all(); // launch 0 ends
    // Launch 1: the TPC job and its release go in, the join's submission
    // fails (-EBUSY, the per-file job limit).
    const std::size_t before = fx.launch_refused_at(3);
    REQUIRE(fx.m.jobs.size() - before == 2);
    const MockOs::Job tpc = fx.m.jobs[before];
    const MockOs::Job rel = fx.m.jobs[before + 1];
    REQUIRE(fx.engine(tpc) == kTpc);
    REQUIRE(GraphFixture::is_release_of(rel, tpc));
    const std::uint32_t tail = rel.out.back().handle;
    CHECK(tpc.out.back().handle == tail);
    // The retry (parity 1 again) starts with a reset of every sync object,
    // on the join's queue, after the abandoned jobs (their slot's tail):
    // their counts cannot reach the retry's consumers.
    const auto l = fx.launch_all();
    REQUIRE(!l.empty());
    CHECK(fx.engine(l[0]) == kDma);
    CHECK(waits_for(l[0], tail));
    const Lines reset = packets(l[0].cb);
    REQUIRE(reset.size() == 4); // two slots, two parities
    for (const std::string &p : reset)
        CHECK(p.substr(p.size() - 6) == " SET 0");
    for (std::size_t i = 1; i < l.size(); ++i) {
        CHECK((GraphFixture::is_release(l[i]) || GraphFixture::is_finish(l[i]) ||
               waits_for(l[i], l[0].out.back().handle)));
    }
    fx.close_clean();
}

namespace {

// Scalar 0 of the descriptor of the first TPC_LAUNCH in a command buffer,
// as the device would read it now.
std::uint32_t scalar0_of(const MockOs &m, const Bytes &cb)
{
    for (std::size_t off = 0; off < cb.size(); off += 16) {
        if (get_le(cb, off, 4) == 0x06)
            return static_cast<std::uint32_t>(get_le(m.read_va(get_le(cb, off + 8, 8), 192), 64, 4));
    }
    FAIL("no TPC_LAUNCH");
    return 0U;
}

// Whether graph_mu is held (by the thread in the library, during a mock wait).
bool graph_mu_held(hpu_device_t *dev)
{
    if (!dev->graph_mu.try_lock())
        return true;
    dev->graph_mu.unlock();
    return false;
}

} // namespace

TEST_CASE("a retry after a launch that failed half way rewrites changed scalars only once the abandoned jobs ended",
          "[libhpu][graph]")
{
    GraphFixture fx;
    fx.add_copy_launch_copy();
    (void)fx.launch_all(); // launch 0 ends
    // Launch 1: the TPC job and its release go in and run on (pending), the
    // join's submission is refused.
    fx.m.auto_complete = false;
    const std::size_t before = fx.launch_refused_at(3);
    REQUIRE(fx.m.jobs.size() - before == 2);
    REQUIRE(fx.engine(fx.m.jobs[before]) == kTpc);
    const std::shared_ptr<MockOs::Fence> abandoned = fx.m.jobs[before].fence;
    const Bytes tpc_cb = fx.m.jobs[before].cb;
    REQUIRE(scalar0_of(fx.m, tpc_cb) == 1);
    REQUIRE(hpu_graph_set_scalar(fx.g, 1, 0, 5) == 0);
    // The retry (parity 1 again) rewrites the descriptor the abandoned TPC
    // job reads: only after waiting for that job's list, on the host, and
    // without the device's graph lock.
    unsigned long first_wait = 0;
    bool pending_then = false;
    std::uint32_t value_then = 0;
    bool locked = false;
    fx.m.on_wait = [&]() {
        if (first_wait == 0) {
            first_wait = fx.m.last_request;
            pending_then = !abandoned->signalled;
            value_then = scalar0_of(fx.m, tpc_cb);
        }
        locked = locked || graph_mu_held(fx.dev);
        fx.m.complete_jobs(); // the abandoned jobs end
    };
    fx.m.auto_complete = true;
    const auto l = fx.launch_all();
    fx.m.on_wait = nullptr;
    CHECK(first_wait == DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT);
    CHECK(pending_then);
    CHECK(value_then == 1);
    CHECK_FALSE(locked);
    std::size_t tpc_jobs = 0;
    for (const MockOs::Job &j : l) {
        if (fx.engine(j) == kTpc && !GraphFixture::is_release(j)) {
            ++tpc_jobs;
            CHECK(j.cb == tpc_cb);
        }
    }
    CHECK(tpc_jobs == 1);
    CHECK(scalar0_of(fx.m, tpc_cb) == 5);
    fx.close_clean();
}

TEST_CASE("a launch whose finish job is refused waits for its jobs without the graph lock; nothing waits forever after",
          "[libhpu][graph]")
{
    GraphFixture fx;
    fx.add_copy_launch_copy();
    // Launch 0: the reset, TPC and its release, DMA (the join) and its
    // release go in; the finish job (the 6th submission) is refused.
    fx.m.auto_complete = false;
    bool locked = false;
    fx.m.on_wait = [&]() {
        locked = locked || graph_mu_held(fx.dev);
        fx.m.complete_jobs();
    };
    fx.m.fail_errno = -EBUSY;
    fx.m.submit_fail_at = fx.m.submit_calls + 6;
    const std::size_t before = fx.m.jobs.size();
    REQUIRE(hpu_graph_launch(fx.g, nullptr, 0, nullptr) == 0);
    fx.m.submit_fail_at = 0;
    fx.m.on_wait = nullptr;
    fx.m.auto_complete = true;
    REQUIRE(fx.m.jobs.size() - before == 5);
    // Every job of the launch ended before it returned (the waits for them
    // ran after the reset's, which was the only one before they went in).
    for (std::size_t i = before; i < fx.m.jobs.size(); ++i)
        CHECK(fx.m.jobs[i].fence->signalled);
    CHECK_FALSE(locked);
    const std::uint32_t tpc_tail = fx.m.jobs[before + 2].out.back().handle;
    REQUIRE(fx.engine(fx.m.jobs[before + 2]) == kTpc);

    SECTION("adding a node and destroying the graph return (they wait for launch 0's done syncobj)")
    {
        CHECK(hpu_graph_add_copy(fx.g, kHost, kHbm, 64, nullptr, 0) == 3);
    }
    SECTION("the next launch first resets every sync object after launch 0's jobs")
    {
        const auto l = fx.launch_all();
        REQUIRE(l.size() == 6);
        CHECK(fx.engine(l[0]) == kDma);
        CHECK(waits_for(l[0], tpc_tail));
        for (const std::string &p : packets(l[0].cb))
            CHECK(p.substr(p.size() - 6) == " SET 0");
        for (std::size_t i = 1; i < l.size(); ++i) {
            CHECK((GraphFixture::is_release(l[i]) || GraphFixture::is_finish(l[i]) ||
                   waits_for(l[i], l[0].out.back().handle)));
        }
    }
    fx.close_clean();
}

TEST_CASE("a reset job that fails fails the launch before any of its jobs; the next launch resets again",
          "[libhpu][graph]")
{
    GraphFixture fx;
    fx.add_copy_launch_copy();
    (void)fx.launch_all();
    // A launch that fails half way, so that the next one resets.
    (void)fx.launch_refused_at(3);
    // The reset fails (e.g. by its stream before it ran): the counts may be
    // stale, so no job of the launch may go in.
    std::size_t before = fx.m.jobs.size();
    fx.m.job_error = -EIO;
    CHECK(hpu_graph_launch(fx.g, nullptr, 0, nullptr) == -EIO);
    CHECK_THAT(hpu_last_error(), ContainsSubstring("sync objects to 0 failed"));
    fx.m.job_error = 0;
    REQUIRE(fx.m.jobs.size() - before == 1);
    const Bytes reset = fx.m.jobs[before].cb;
    const std::uint64_t reset_va = fx.m.jobs[before].req.cb_va;
    // The retry resets again, with the same list (kept by the graph), then
    // launches.
    before = fx.m.jobs.size();
    const auto l = fx.launch_all();
    REQUIRE(l.size() == 6);
    CHECK(l[0].cb == reset);
    CHECK(l[0].req.cb_va == reset_va);
    CHECK(packets(reset).size() == 4);
    fx.close_clean();
}

TEST_CASE("a driver with SUBMIT_ARRAY gets a launch's jobs in one call; an older one a SUBMIT per job",
          "[libhpu][graph]")
{
    GraphFixture fx;
    fx.add_copy_launch_copy();
    drm_hpu_info_device &id = fx.m.nodes.at("/dev/accel/accel0");
    id.driver_major = 1;

    SECTION("driver 1.0: one SUBMIT per job, no SUBMIT_ARRAY") {
        id.driver_minor = 0;
        const int calls0 = fx.m.submit_calls;
        const auto l = fx.launch_all();
        CHECK(fx.m.submit_array_calls == 0);
        CHECK(static_cast<std::size_t>(fx.m.submit_calls - calls0) == l.size());
    }
    SECTION("driver 1.1: one SUBMIT_ARRAY per launch with all its jobs but the finish job, in order") {
        id.driver_minor = 1;
        const auto l0 = fx.launch_all();
        // The first launch's sync object reset goes first, on its own (it
        // is waited for before the launch's jobs are made); the finish
        // job last, on its own: it waits for what the array's jobs signal.
        REQUIRE(l0.size() > 3);
        CHECK(fx.m.submit_array_calls == 1);
        CHECK(fx.m.submit_array_sizes == std::vector<std::uint32_t>{static_cast<std::uint32_t>(l0.size() - 2)});
        CHECK(GraphFixture::is_finish(l0.back()));
        const int calls1 = fx.m.submit_calls;
        const auto l1 = fx.launch_all();
        CHECK(fx.m.submit_array_calls == 2);
        CHECK(fx.m.submit_array_sizes.back() == l1.size() - 1);
        CHECK(static_cast<std::size_t>(fx.m.submit_calls - calls1) == l1.size()); // entries + the finish job
        CHECK(GraphFixture::is_finish(l1.back()));
        fx.close_clean();
    }
    SECTION("driver 1.1, the array refused: nothing of the launch is queued, and the next launch runs whole") {
        id.driver_minor = 1;
        (void)fx.launch_all();
        const std::size_t before = fx.m.jobs.size();
        fx.m.request_fail[DRM_IOCTL_HPU_SUBMIT_ARRAY] = -EBUSY;
        hpu_fence_t *f = nullptr;
        CHECK(hpu_graph_launch(fx.g, nullptr, 0, &f) == -EBUSY);
        CHECK(f == nullptr);
        CHECK(fx.m.jobs.size() == before);
        fx.m.request_fail.erase(DRM_IOCTL_HPU_SUBMIT_ARRAY);
        const auto l = fx.launch_all();
        // No reset needed: nothing of the refused launch ran.
        REQUIRE(l.size() > 1);
        CHECK(fx.m.submit_array_sizes.back() == l.size() - 1);
        CHECK(GraphFixture::is_finish(l.back()));
        // Its jobs signal the timeline points the next waits expect.
        (void)fx.launch_all();
        (void)fx.launch_all();
        fx.close_clean();
    }
}

TEST_CASE("hpu_graph_create unwinds every syncobj when one cannot be made", "[libhpu][graph]")
{
    Fixture fx;
    const int start = fx.m.acquire_calls;
    const int creates = fx.m.request_calls[DRM_IOCTL_SYNCOBJ_CREATE];
    fx.m.fail_at = 1000000; // counts the acquiring calls, fails none
    hpu_graph_t *g = nullptr;
    REQUIRE(hpu_graph_create(fx.dev, &g) == 0);
    const int calls = fx.m.acquire_calls - start;
    // done[2] and tail[4], the last acquiring calls (after the engine query).
    REQUIRE(fx.m.request_calls[DRM_IOCTL_SYNCOBJ_CREATE] - creates == 6);
    REQUIRE(calls >= 6);
    REQUIRE(hpu_graph_destroy(g) == 0);
    const std::size_t syncobjs = fx.m.syncobjs.size();
    for (int k = calls - 5; k <= calls; ++k) {
        fx.m.acquire_calls = 0;
        fx.m.fail_at = k;
        g = nullptr;
        CHECK(hpu_graph_create(fx.dev, &g) == -ENOMEM);
        CHECK(g == nullptr);
        CHECK(fx.m.syncobjs.size() == syncobjs);
        if (g != nullptr)
            (void)hpu_graph_destroy(g);
    }
    fx.m.fail_at = 0;
    CHECK(fx.m.misuse == 0);
}

TEST_CASE("two graphs launched alternately: each finish job waits only for earlier jobs of its own launch",
          "[libhpu][graph]")
{
    GraphFixture fx; // graph A: copy -> launch -> copy, the join on DMA
    fx.add_copy_launch_copy();
    hpu_graph_t *b = nullptr; // graph B: copy -> launch, the join on TPC
    REQUIRE(hpu_graph_create(fx.dev, &b) == 0);
    REQUIRE(hpu_graph_add_copy(b, kHbm + 0x8000, kHost, 64, nullptr, 0) == 0);
    const std::array<std::uint32_t, 1> d0{0};
    REQUIRE(hpu_graph_add_launch(b, fx.k, &fx.l, d0.data(), 1) == 1);
    const auto launch_b = [&]() {
        const std::size_t before = fx.m.jobs.size();
        REQUIRE(hpu_graph_launch(b, nullptr, 0, nullptr) == 0);
        return std::vector<MockOs::Job>(fx.m.jobs.begin() + static_cast<std::ptrdiff_t>(before), fx.m.jobs.end());
    };
    // The finish job of one launch: its in-syncs are out-syncs of jobs of
    // that launch submitted before it, on other queues than its own.
    const auto check_finish = [&fx](const std::vector<MockOs::Job> &jobs, std::pair<std::uint32_t, std::uint32_t> join) {
        std::size_t finishes = 0;
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            if (!GraphFixture::is_finish(jobs[i]))
                continue;
            ++finishes;
            CHECK(fx.engine(jobs[i]) == join);
            for (const drm_hpu_sync &in : jobs[i].in) {
                bool own = false;
                for (std::size_t k = 0; k < i; ++k) {
                    for (const drm_hpu_sync &o : jobs[k].out)
                        own = own || (o.handle == in.handle && fx.engine(jobs[k]) != join);
                }
                CHECK(own);
            }
        }
        CHECK(finishes == 1);
    };
    std::vector<std::uint32_t> a_tails;
    std::vector<std::uint32_t> b_tails;
    for (int round = 0; round < 3; ++round) {
        const auto la = fx.launch_all();
        check_finish(la, kDma);
        const auto lb = launch_b();
        check_finish(lb, kTpc);
        for (const auto &j : la) {
            if (GraphFixture::is_finish(j)) {
                for (const drm_hpu_sync &in : j.in)
                    a_tails.push_back(in.handle);
            }
        }
        for (const auto &j : lb) {
            if (GraphFixture::is_finish(j)) {
                for (const drm_hpu_sync &in : j.in)
                    b_tails.push_back(in.handle);
            }
        }
    }
    // Neither graph's finish job waits for the other's jobs.
    for (const std::uint32_t h : a_tails)
        CHECK(std::find(b_tails.begin(), b_tails.end(), h) == b_tails.end());
    CHECK(hpu_graph_destroy(b) == 0);
    fx.close_clean();
}

TEST_CASE("set_scalar rewrites each parity's descriptor before its next launch, recompiling nothing",
          "[libhpu][graph]")
{
    GraphFixture fx;
    const int c = hpu_graph_add_copy(fx.g, kHbm, kHost, 64, nullptr, 0);
    const std::array<std::uint32_t, 1> dep{static_cast<std::uint32_t>(c)};
    const int node = hpu_graph_add_launch(fx.g, fx.k, &fx.l, dep.data(), 1);
    REQUIRE(node == 1);
    fx.scalar[0] = 99; // the graph copied the scalars when the node was added
    // Scalar 0 of the descriptor of the TPC_LAUNCH in a job's list.
    const auto scalar0 = [&fx](const MockOs::Job &j) {
        const Bytes &cb = j.cb;
        for (std::size_t off = 0; off < cb.size(); off += 16) {
            if (get_le(cb, off, 4) == 0x06)
                return static_cast<std::uint32_t>(get_le(fx.m.read_va(get_le(cb, off + 8, 8), 192), 64, 4));
        }
        FAIL("no TPC_LAUNCH");
        return 0U;
    };
    const auto l0 = fx.launch(); // the reset, DMA, then TPC (the last node's slot joins)
    REQUIRE(l0.size() == 3);
    CHECK(fx.engine(l0[2]) == kTpc);
    const auto l1 = fx.launch();
    CHECK(scalar0(l0[2]) == 1);
    CHECK(scalar0(l1[1]) == 1);

    const int waits = fx.m.request_calls[DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT];
    REQUIRE(hpu_graph_set_scalar(fx.g, 1, 0, 1) == 0); // the same value: nothing to do
    (void)fx.launch();
    (void)fx.launch();
    CHECK(fx.m.request_calls[DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT] == waits);

    REQUIRE(hpu_graph_set_scalar(fx.g, 1, 0, 5) == 0);
    const auto l4 = fx.launch(); // parity 0
    // It waited for launch 2 (parity 0) before rewriting, not for launch 3.
    CHECK(fx.m.request_calls[DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT] == waits + 2); // its DMA and TPC lists
    CHECK(scalar0(l4[1]) == 5);
    CHECK(scalar0(l1[1]) == 1); // parity 1's descriptor: launch 3 may still read it
    CHECK(l4[1].cb == l0[2].cb); // the same list: nothing was recompiled
    const auto l5 = fx.launch(); // parity 1
    CHECK(scalar0(l5[1]) == 5);
    CHECK(l5[1].cb == l1[1].cb);
    fx.close_clean();
}

TEST_CASE("set_seed rewrites a launch's key in each parity's descriptor, recompiling nothing", "[libhpu][graph]")
{
    GraphFixture fx;
    fx.l.seed = 0x1122334455667788ULL;
    REQUIRE(hpu_graph_add_launch(fx.g, fx.k, &fx.l, nullptr, 0) == 0);
    const int c = hpu_graph_add_copy(fx.g, kHbm + 0x4000, kHost, 64, nullptr, 0);
    REQUIRE(c == 1);
    // The seed of the TPC_LAUNCH descriptor in a job's list (offset 48).
    const auto seed = [&fx](const MockOs::Job &j) {
        const Bytes &cb = j.cb;
        for (std::size_t off = 0; off < cb.size(); off += 16) {
            if (get_le(cb, off, 4) == 0x06)
                return get_le(fx.m.read_va(get_le(cb, off + 8, 8), 64), 48, 8);
        }
        FAIL("no TPC_LAUNCH");
        return std::uint64_t{0};
    };
    // The reset job, then TPC; the copy's slot (DMA) joins.
    const auto l0 = fx.launch();
    REQUIRE(l0.size() == 3);
    REQUIRE(fx.engine(l0[1]) == kTpc);
    CHECK(seed(l0[1]) == 0x1122334455667788ULL);
    const auto l1 = fx.launch();
    REQUIRE(fx.engine(l1[0]) == kTpc);

    const int waits = fx.m.request_calls[DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT];
    REQUIRE(hpu_graph_set_seed(fx.g, 0, 0x1122334455667788ULL) == 0); // unchanged: nothing to do
    (void)fx.launch();
    (void)fx.launch();
    CHECK(fx.m.request_calls[DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT] == waits);

    REQUIRE(hpu_graph_set_seed(fx.g, 0, 0xdeadbeef00000001ULL) == 0);
    const auto l4 = fx.launch(); // parity 0, after launch 2 ended
    CHECK(fx.m.request_calls[DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT] == waits + 2); // its TPC and DMA lists
    CHECK(seed(l4[0]) == 0xdeadbeef00000001ULL);
    CHECK(seed(l1[0]) == 0x1122334455667788ULL); // parity 1 not yet: launch 3 may read it
    CHECK(l4[0].cb == l0[1].cb);                 // the same list
    const auto l5 = fx.launch();
    CHECK(seed(l5[0]) == 0xdeadbeef00000001ULL);

    CHECK(hpu_graph_set_seed(fx.g, 1, 5) == -EINVAL);
    CHECK_THAT(hpu_last_error(), Equals("graph: node 1 is not a launch"));
    CHECK(hpu_graph_set_seed(fx.g, 2, 5) == -EINVAL);
    CHECK_THAT(hpu_last_error(), Equals("graph: node 2 is not a launch"));
    CHECK(hpu_graph_set_seed(nullptr, 0, 5) == -EINVAL);
    fx.close_clean();
}

TEST_CASE("a graph on one engine needs no sync objects; GEMMs alternate between the MMEs", "[libhpu][graph]")
{
    GraphFixture fx;
    SECTION("DMA only")
    {
        (void)hpu_graph_add_copy(fx.g, kHbm, kHost, 4096, nullptr, 0);
        const std::array<std::uint32_t, 1> dep{0};
        (void)hpu_graph_add_memset(fx.g, kHost, 0xabcdULL, 64, dep.data(), 1);
        const auto l0 = fx.launch();
        REQUIRE(l0.size() == 2);
        CHECK(packets(l0[0].cb) == Lines{"NOP"}); // the first launch's start
        CHECK(packets(l0[1].cb) == Lines{"LIN_DMA 0x200000000 <- 0x100000000", "MEMSET 0x100000000"});
        const auto l1 = fx.launch();
        REQUIRE(l1.size() == 1);
        CHECK(l1[0].cb == l0[1].cb);
        std::uint32_t s = 0;
        REQUIRE(hpu_sob_alloc(fx.dev, &s) == 0);
        CHECK(s == 31); // the graph reserved none
        CHECK(hpu_sob_free(fx.dev, s) == 0);
    }
    SECTION("three independent GEMMs: MME0, MME1, MME0; the last one's slot joins")
    {
        for (int i = 0; i < 3; ++i)
            CHECK(hpu_graph_add_gemm(fx.g, &fx.gemm, nullptr, 0) == i);
        const auto l0 = fx.launch();
        REQUIRE(l0.size() == 3);
        CHECK(fx.engine(l0[0]) == kMme0); // the reset job runs on the join's queue
        CHECK(fx.engine(l0[1]) == kMme1);
        CHECK(packets(l0[1].cb) == Lines{"SOB_UPDATE 28 SET 0", "MME_GEMM", "SOB_UPDATE 29 ADD 1"});
        CHECK(fx.engine(l0[2]) == kMme0);
        CHECK(packets(l0[2].cb) == Lines{"SOB_UPDATE 30 SET 0", "MME_GEMM", "MME_GEMM", "WAIT 29 GE 1"});
    }
    fx.close_clean();
}

TEST_CASE("a node added after a launch makes the next launch compile again", "[libhpu][graph]")
{
    GraphFixture fx;
    (void)hpu_graph_add_copy(fx.g, kHbm, kHost, 64, nullptr, 0);
    const auto l0 = fx.launch();
    REQUIRE(l0.size() == 2);
    const std::array<std::uint32_t, 1> dep{0};
    REQUIRE(hpu_graph_add_launch(fx.g, fx.k, &fx.l, dep.data(), 1) == 1);
    const auto l1 = fx.launch(); // a reset of the new sync objects first
    REQUIRE(l1.size() == 3);
    CHECK(packets(l1[0].cb) ==
          Lines{"SOB_UPDATE 31 SET 0", "SOB_UPDATE 30 SET 0", "SOB_UPDATE 29 SET 0", "SOB_UPDATE 28 SET 0"});
    // Launch 1 is of parity 1 (DMA 30, TPC 28).
    CHECK(packets(l1[1].cb) == Lines{"SOB_UPDATE 31 SET 0", "LIN_DMA 0x200000000 <- 0x100000000",
                                     "SOB_UPDATE 30 ADD 1", "SOB_UPDATE 30 ADD 1"});
    CHECK(packets(l1[2].cb) == Lines{"SOB_UPDATE 29 SET 0", "WAIT 30 GE 1", "TPC_LAUNCH", "WAIT 30 GE 2"});
    fx.close_clean();
}

TEST_CASE("a graph needing more sync objects than are free fails -EBUSY; destroying it returns its own",
          "[libhpu][graph]")
{
    GraphFixture fx;
    std::vector<std::uint32_t> mine;
    for (int i = 0; i < 27; ++i) { // 5 left; the graph below needs 6
        std::uint32_t s = 0;
        REQUIRE(hpu_sob_alloc(fx.dev, &s) == 0);
        mine.push_back(s);
    }
    (void)hpu_graph_add_copy(fx.g, kHbm, kHost, 64, nullptr, 0);
    const std::array<std::uint32_t, 1> dep{0};
    (void)hpu_graph_add_gemm(fx.g, &fx.gemm, dep.data(), 1);
    (void)hpu_graph_add_launch(fx.g, fx.k, &fx.l, dep.data(), 1);
    hpu_fence_t *f = nullptr;
    CHECK(hpu_graph_launch(fx.g, nullptr, 0, &f) == -EBUSY);
    CHECK(f == nullptr);
    CHECK_THAT(hpu_last_error(), ContainsSubstring("no free sync object"));
    CHECK_THAT(hpu_last_error(), ContainsSubstring("(it needs 6)"));
    CHECK(fx.m.jobs.empty());

    CHECK(hpu_sob_free(fx.dev, mine.back()) == 0);
    mine.pop_back();
    REQUIRE(hpu_graph_launch(fx.g, nullptr, 0, &f) == 0);
    CHECK(hpu_fence_destroy(f) == 0);
    std::uint32_t s = 0;
    CHECK(hpu_sob_alloc(fx.dev, &s) == -EBUSY); // all 32 taken
    CHECK(hpu_graph_destroy(fx.g) == 0);
    fx.g = nullptr;
    int freed = 0;
    while (hpu_sob_alloc(fx.dev, &s) == 0)
        ++freed;
    CHECK(freed == 6);
    fx.close_clean();
}

TEST_CASE("graph argument rules: -EINVAL with a message", "[libhpu][graph]")
{
    GraphFixture fx;
    CHECK(hpu_graph_launch(fx.g, nullptr, 0, nullptr) == -EINVAL);
    CHECK_THAT(hpu_last_error(), Equals("graph: no nodes to launch"));
    CHECK(hpu_graph_add_copy(fx.g, kHbm, kHost, 0, nullptr, 0) == -EINVAL);
    CHECK_THAT(hpu_last_error(), ContainsSubstring("graph copy: size 0 or a range beyond the 48-bit address space"));
    CHECK(hpu_graph_add_copy(fx.g, (1ULL << 48) - 8, kHost, 16, nullptr, 0) == -EINVAL);
    CHECK(hpu_graph_add_memset(fx.g, (1ULL << 48) - 8, 0, 16, nullptr, 0) == -EINVAL);
    CHECK_THAT(hpu_last_error(), ContainsSubstring("graph memset: size 0 or a range beyond"));
    REQUIRE(hpu_graph_add_copy(fx.g, kHbm, kHost, 64, nullptr, 0) == 0);
    CHECK(hpu_graph_add_copy(fx.g, kHbm, kHost, 64, nullptr, 1) == -EINVAL);
    CHECK_THAT(hpu_last_error(), Equals("graph: deps is NULL"));
    const std::array<std::uint32_t, 2> ahead{0, 1}; // 1 is not added yet
    CHECK(hpu_graph_add_gemm(fx.g, &fx.gemm, ahead.data(), 2) == -EINVAL);
    CHECK_THAT(hpu_last_error(), Equals("graph: dependency 1 is not a node added before (the graph has 1)"));
    CHECK(hpu_graph_add_launch(fx.g, nullptr, &fx.l, nullptr, 0) == -EINVAL);
    CHECK_THAT(hpu_last_error(), Equals("graph launch: graph or kernel is NULL"));
    CHECK(hpu_graph_size(fx.g) == 1);

    REQUIRE(hpu_graph_add_launch(fx.g, fx.k, &fx.l, ahead.data(), 1) == 1);
    CHECK(hpu_graph_set_scalar(fx.g, 0, 0, 1) == -EINVAL);
    CHECK_THAT(hpu_last_error(), Equals("graph: node 0 is not a launch"));
    CHECK(hpu_graph_set_scalar(fx.g, 2, 0, 1) == -EINVAL);
    CHECK_THAT(hpu_last_error(), Equals("graph: node 2 is not a launch"));
    CHECK(hpu_graph_set_scalar(fx.g, 1, 1, 1) == -EINVAL);
    CHECK_THAT(hpu_last_error(), Equals("graph: launch node 1 has 1 scalars, not 2"));
    CHECK(hpu_graph_launch(fx.g, nullptr, 1, nullptr) == -EINVAL);

    CHECK(hpu_graph_add_copy(nullptr, kHbm, kHost, 64, nullptr, 0) == -EINVAL);
    CHECK(hpu_graph_add_gemm(nullptr, &fx.gemm, nullptr, 0) == -EINVAL);
    CHECK(hpu_graph_set_scalar(nullptr, 1, 0, 0) == -EINVAL);
    CHECK(hpu_graph_launch(nullptr, nullptr, 0, nullptr) == -EINVAL);
    CHECK(hpu_graph_size(nullptr) == 0);
    CHECK(hpu_graph_destroy(nullptr) == 0);
    hpu_graph_t *none = nullptr;
    CHECK(hpu_graph_create(nullptr, &none) == -EINVAL);
    CHECK(hpu_graph_create(fx.dev, nullptr) == -EINVAL);
    CHECK(fx.m.jobs.empty());
    fx.close_clean();
}

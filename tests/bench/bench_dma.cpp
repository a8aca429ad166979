// SPDX-License-Identifier: MIT
// hpu-bench-dma: runs in a guest with hpu.ko loaded, through libhpu only.
//   - DMA bandwidth for 64 MiB transfers host -> HBM, HBM -> host and
//     HBM -> HBM (one engine, submit to fence signalled, median of runs);
//   - submit-to-completion latency of a NOP job (median and p99);
//   - NOP jobs per second with 64 jobs in flight on one queue.
//   hpu-bench-dma [device index]
// Prints "BENCH name=value" lines; exits non-zero only when something fails
// to run.
//
// Copyright (c) 2026 The hpu authors
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <vector>

#include "bench_common.h"
#include "hpu/hpu.hpp"

namespace {

constexpr std::uint64_t kMiB = 1ULL << 20U;
constexpr std::uint64_t kSize = 64 * kMiB;
constexpr std::chrono::seconds kWait{120};

// Waits for a job; a job that does not end in time is a failure to run.
void finish(const hpu::Fence &f)
{
    if (!f.wait(kWait))
        throw hpu::Error(-ETIME, "waiting for a benchmark job");
}

// One copy of kSize bytes, submitted and waited for, `runs` times: GB/s median.
double copy_bw(const hpu::Device &d, hpu::Queue &q, std::uint64_t dst, std::uint64_t src, int runs)
{
    auto cl = hpu::CommandList::create(d);
    cl.copy(dst, src, kSize);
    std::vector<double> gbps;
    for (int i = 0; i < runs + 1; ++i) {
        const double t0 = bench::now_s();
        finish(q.submit(cl));
        const double dt = bench::now_s() - t0;
        if (i > 0) // the first run warms up page tables and backing store
            gbps.push_back(static_cast<double>(kSize) / dt / 1e9);
    }
    return bench::quantile(gbps, 0.5);
}

void run(unsigned int index)
{
    const auto d = hpu::Device::open(index);
    auto q = hpu::Queue::create(d, 0);
    const auto host = hpu::Buffer::create(d, kSize, HPU_MEM_HOST);
    const auto hbm1 = hpu::Buffer::create(d, kSize, HPU_MEM_DEVICE);
    const auto hbm2 = hpu::Buffer::create(d, kSize, HPU_MEM_DEVICE);
    std::memset(host.host_ptr(), 0x3c, kSize); // populate the host pages

    bench::report("dma_h2d_gbps", copy_bw(d, q, hbm1.va(), host.va(), 7));
    bench::report("dma_d2h_gbps", copy_bw(d, q, host.va(), hbm1.va(), 7));
    bench::report("dma_d2d_gbps", copy_bw(d, q, hbm2.va(), hbm1.va(), 7));

    // NOP latency: submit one NOP job, wait for its fence.
    auto nop = hpu::CommandList::create(d);
    nop.nop();
    std::vector<double> lat;
    for (int i = 0; i < 1050; ++i) {
        const double t0 = bench::now_s();
        finish(q.submit(nop));
        const double dt = bench::now_s() - t0;
        if (i >= 50)
            lat.push_back(dt * 1e6);
    }
    bench::report("nop_lat_p50_us", bench::quantile(lat, 0.5));
    bench::report("nop_lat_p99_us", bench::quantile(lat, 0.99));

    // Throughput at queue depth 64: a new job whenever the oldest ends.
    constexpr std::size_t kDepth = 64;
    constexpr int kJobs = 4000;
    std::deque<hpu::Fence> inflight;
    const double t0 = bench::now_s();
    for (int i = 0; i < kJobs; ++i) {
        if (inflight.size() == kDepth) {
            finish(inflight.front());
            inflight.pop_front();
        }
        inflight.push_back(q.submit(nop));
    }
    for (; !inflight.empty(); inflight.pop_front())
        finish(inflight.front());
    bench::report("nop_qd64_jobs_per_s", kJobs / (bench::now_s() - t0));
}

} // namespace

int main(int argc, char **argv)
{
    const unsigned int index = argc > 1 ? static_cast<unsigned int>(std::strtoul(argv[1], nullptr, 10)) : 0; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    try {
        run(index);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "hpu-bench-dma: %s\n", e.what());
        return 1;
    }
    return 0;
}

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
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <vector>

#include "bench_common.h"
#include "hpu/hpu.h"

namespace {

constexpr std::uint64_t kMiB = 1ULL << 20U;
constexpr std::uint64_t kSize = 64 * kMiB;
constexpr std::uint64_t kWait = 120ULL * 1000000000ULL;

int fail(const char *what, int err)
{
    std::fprintf(stderr, "hpu-bench-dma: %s: %s\n", what, hpu_strerror(err));
    return 1;
}

#define TRY(call)                          \
    do {                                   \
        const int e_ = (call);             \
        if (e_ < 0)                        \
            return fail(#call, e_);        \
    } while (0)

// One copy of kSize bytes, submitted and waited for, `runs` times: GB/s median.
int copy_bw(hpu_device_t *d, hpu_queue_t *q, std::uint64_t dst, std::uint64_t src, int runs, double &out)
{
    hpu_cmdlist_t *cl = nullptr;
    TRY(hpu_cmdlist_create(d, &cl));
    TRY(hpu_cmd_copy(cl, dst, src, kSize));
    std::vector<double> gbps;
    for (int i = 0; i < runs + 1; ++i) {
        hpu_fence_t *f = nullptr;
        const double t0 = bench::now_s();
        TRY(hpu_queue_submit(q, cl, nullptr, 0, &f));
        const int e = hpu_fence_wait(f, kWait);
        const double dt = bench::now_s() - t0;
        hpu_fence_destroy(f);
        TRY(e);
        if (i > 0) // the first run warms up page tables and backing store
            gbps.push_back(static_cast<double>(kSize) / dt / 1e9);
    }
    hpu_cmdlist_destroy(cl);
    out = bench::quantile(gbps, 0.5);
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    const unsigned int index = argc > 1 ? static_cast<unsigned int>(std::strtoul(argv[1], nullptr, 10)) : 0; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    hpu_device_t *d = nullptr;
    TRY(hpu_open_by_index(index, &d));
    hpu_queue_t *q = nullptr;
    TRY(hpu_queue_create(d, HPU_ENGINE_DMA, 0, &q));
    hpu_buffer_t *host = nullptr;
    hpu_buffer_t *hbm1 = nullptr;
    hpu_buffer_t *hbm2 = nullptr;
    TRY(hpu_buffer_create(d, kSize, HPU_MEM_HOST, &host));
    TRY(hpu_buffer_create(d, kSize, HPU_MEM_DEVICE, &hbm1));
    TRY(hpu_buffer_create(d, kSize, HPU_MEM_DEVICE, &hbm2));
    std::memset(hpu_buffer_host_ptr(host), 0x3c, kSize); // populate the host pages

    double bw = 0;
    TRY(copy_bw(d, q, hpu_buffer_va(hbm1), hpu_buffer_va(host), 7, bw));
    bench::report("dma_h2d_gbps", bw);
    TRY(copy_bw(d, q, hpu_buffer_va(host), hpu_buffer_va(hbm1), 7, bw));
    bench::report("dma_d2h_gbps", bw);
    TRY(copy_bw(d, q, hpu_buffer_va(hbm2), hpu_buffer_va(hbm1), 7, bw));
    bench::report("dma_d2d_gbps", bw);

    // NOP latency: submit one NOP job, wait for its fence.
    hpu_cmdlist_t *nop = nullptr;
    TRY(hpu_cmdlist_create(d, &nop));
    TRY(hpu_cmd_nop(nop));
    std::vector<double> lat;
    for (int i = 0; i < 1050; ++i) {
        hpu_fence_t *f = nullptr;
        const double t0 = bench::now_s();
        TRY(hpu_queue_submit(q, nop, nullptr, 0, &f));
        const int e = hpu_fence_wait(f, kWait);
        const double dt = bench::now_s() - t0;
        hpu_fence_destroy(f);
        TRY(e);
        if (i >= 50)
            lat.push_back(dt * 1e6);
    }
    bench::report("nop_lat_p50_us", bench::quantile(lat, 0.5));
    bench::report("nop_lat_p99_us", bench::quantile(lat, 0.99));

    // Throughput at queue depth 64: a new job whenever the oldest ends.
    constexpr std::size_t kDepth = 64;
    constexpr int kJobs = 4000;
    std::deque<hpu_fence_t *> inflight;
    const double t0 = bench::now_s();
    for (int i = 0; i < kJobs; ++i) {
        if (inflight.size() == kDepth) {
            const int e = hpu_fence_wait(inflight.front(), kWait);
            hpu_fence_destroy(inflight.front());
            inflight.pop_front();
            TRY(e);
        }
        hpu_fence_t *f = nullptr;
        TRY(hpu_queue_submit(q, nop, nullptr, 0, &f));
        inflight.push_back(f);
    }
    while (!inflight.empty()) {
        const int e = hpu_fence_wait(inflight.front(), kWait);
        hpu_fence_destroy(inflight.front());
        inflight.pop_front();
        TRY(e);
    }
    bench::report("nop_qd64_jobs_per_s", kJobs / (bench::now_s() - t0));

    hpu_cmdlist_destroy(nop);
    hpu_buffer_destroy(hbm2);
    hpu_buffer_destroy(hbm1);
    hpu_buffer_destroy(host);
    hpu_queue_destroy(q);
    hpu_close(d);
    return 0;
}

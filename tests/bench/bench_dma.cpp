// SPDX-License-Identifier: MIT
// hpu-bench-dma: runs in a guest with hpu.ko loaded, through libhpu only.
//   - DMA bandwidth for 64 MiB transfers host -> HBM, HBM -> host and
//     HBM -> HBM (one engine, submit to fence signalled, median of runs);
//   - submit-to-completion latency of a NOP job (median and p99);
//   - NOP jobs per second with 64 jobs in flight on one queue, and the
//     aggregate of four processes doing that at once, each with its queue;
//   - submit-to-completion latency of a 4 KiB host -> HBM copy.
//   hpu-bench-dma [device index] [--jobs-only] [--prefix P]
// --jobs-only skips the 64 MiB copies; --prefix P puts P before every
// figure's name (the kernel-path run: HPU_USER_QUEUES=0 --prefix kpath_).
// Prints "BENCH name=value" lines; exits non-zero only when something fails
// to run.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <string>
#include <vector>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

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

// The same copy shared among `engines` DMA engines (hpu_queue_copy_split()).
double copy_split_bw(hpu::Queue &q, std::uint64_t dst, std::uint64_t src, std::uint32_t engines, int runs)
{
    std::vector<double> gbps;
    for (int i = 0; i < runs + 1; ++i) {
        const double t0 = bench::now_s();
        finish(q.copy_split(dst, src, kSize, engines));
        const double dt = bench::now_s() - t0;
        if (i > 0)
            gbps.push_back(static_cast<double>(kSize) / dt / 1e9);
    }
    return bench::quantile(gbps, 0.5);
}

std::string g_prefix; // NOLINT(cppcoreguidelines-avoid-non-const-global-variables): set once by main()

void report(const char *name, double v)
{
    bench::report((g_prefix + name).c_str(), v);
}

// Submit-to-signalled latency of cl's job on q, 1000 runs after 50 warm-up
// ones, in microseconds: p50 and p99 reported as name_p50_us, name_p99_us.
void latency(hpu::Queue &q, hpu::CommandList &cl, const char *name)
{
    std::vector<double> lat;
    for (int i = 0; i < 1050; ++i) {
        const double t0 = bench::now_s();
        finish(q.submit(cl));
        const double dt = bench::now_s() - t0;
        if (i >= 50)
            lat.push_back(dt * 1e6);
    }
    report((std::string(name) + "_p50_us").c_str(), bench::quantile(lat, 0.5));
    report((std::string(name) + "_p99_us").c_str(), bench::quantile(lat, 0.99));
}

// NOP jobs per second with kDepth in flight on q: a new job whenever the
// oldest ends.
double nop_rate(const hpu::Device &d, hpu::Queue &q, int jobs)
{
    constexpr std::size_t kDepth = 64;
    auto nop = hpu::CommandList::create(d);
    nop.nop();
    std::deque<hpu::Fence> inflight;
    const double t0 = bench::now_s();
    for (int i = 0; i < jobs; ++i) {
        if (inflight.size() == kDepth) {
            finish(inflight.front());
            inflight.pop_front();
        }
        inflight.push_back(q.submit(nop));
    }
    for (; !inflight.empty(); inflight.pop_front())
        finish(inflight.front());
    return jobs / (bench::now_s() - t0);
}

// Four processes, each opening the device (its own context) and queue,
// run nop_rate() at once: the jobs of all of them per second, from the
// first start to the last end. Each child says "ready" once its queue is
// made and starts when the parent has heard all of them; pipes carry the
// times back. 0 when a child or a system call fails.
double nop_rate_procs(unsigned int index, int procs, int jobs)
{
    struct Kid {
        pid_t pid = -1;
        int times = -1; // read end: the child's start and end times
    };
    std::vector<Kid> kids;
    int go[2] = {-1, -1};    // NOLINT(modernize-avoid-c-arrays)
    int ready[2] = {-1, -1}; // NOLINT(modernize-avoid-c-arrays)
    bool ok = pipe(static_cast<int *>(go)) == 0 && pipe(static_cast<int *>(ready)) == 0;
    for (int p = 0; ok && p < procs; ++p) {
        int fds[2];          // NOLINT(modernize-avoid-c-arrays)
        if (pipe(static_cast<int *>(fds)) != 0) {
            ok = false;
            break;
        }
        const pid_t pid = fork();
        if (pid == 0) {
            (void)close(go[1]);
            (void)close(ready[0]);
            (void)close(fds[0]);
            double times[2] = {0, 0}; // NOLINT(modernize-avoid-c-arrays)
            try {
                const auto d = hpu::Device::open(index);
                auto q = hpu::Queue::create(d, 0);
                char c = 0;
                if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
                    _exit(2);
                times[0] = bench::now_s();
                (void)nop_rate(d, q, jobs);
                times[1] = bench::now_s();
            } catch (const std::exception &e) {
                std::fprintf(stderr, "hpu-bench-dma: process %d: %s\n", p, e.what());
                _exit(1);
            }
            _exit(write(fds[1], static_cast<void *>(times), sizeof(times)) == sizeof(times) ? 0 : 1);
        }
        (void)close(fds[1]);
        if (pid < 0) {
            (void)close(fds[0]);
            ok = false;
            break;
        }
        kids.push_back({pid, fds[0]});
    }
    if (ready[1] >= 0)
        (void)close(ready[1]);
    if (go[0] >= 0)
        (void)close(go[0]);
    // Every child has made its queue (or died: end of file) before any starts.
    char c = 0;
    for (std::size_t k = 0; ok && k < kids.size(); ++k)
        ok = read(ready[0], &c, 1) == 1;
    // Writes to a pipe whose readers died must not kill the parent.
    const auto old_pipe = signal(SIGPIPE, SIG_IGN);
    for (std::size_t k = 0; ok && k < kids.size(); ++k)
        ok = write(go[1], "g", 1) == 1;
    if (go[1] >= 0)
        (void)close(go[1]); // children still waiting read end of file and exit
    if (ready[0] >= 0)
        (void)close(ready[0]);
    double first = 1e300;
    double last = 0;
    for (const Kid &k : kids) {
        double times[2] = {0, 0}; // NOLINT(modernize-avoid-c-arrays)
        ok = read(k.times, static_cast<void *>(times), sizeof(times)) == sizeof(times) && ok;
        (void)close(k.times);
        int status = 0;
        ok = waitpid(k.pid, &status, 0) == k.pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 && ok;
        first = std::min(first, times[0]);
        last = std::max(last, times[1]);
    }
    (void)signal(SIGPIPE, old_pipe);
    if (!ok || last <= first) {
        std::printf("ERROR hpu-bench-dma: the %d-process NOP run failed\n", procs);
        return 0;
    }
    return procs * static_cast<double>(jobs) / (last - first);
}

void run(unsigned int index, bool jobs_only)
{
    // Before this process opens the device: the children open their own.
    report("nop_qd64_4proc_jobs_per_s", nop_rate_procs(index, 4, 2000));

    const auto d = hpu::Device::open(index);
    auto q = hpu::Queue::create(d, 0);
    if (!jobs_only) {
        const auto host = hpu::Buffer::create(d, kSize, HPU_MEM_HOST);
        const auto hbm1 = hpu::Buffer::create(d, kSize, HPU_MEM_DEVICE);
        const auto hbm2 = hpu::Buffer::create(d, kSize, HPU_MEM_DEVICE);
        std::memset(host.host_ptr(), 0x3c, kSize); // populate the host pages

        report("dma_h2d_gbps", copy_bw(d, q, hbm1.va(), host.va(), 7));
        report("dma_d2h_gbps", copy_bw(d, q, host.va(), hbm1.va(), 7));
        report("dma_d2d_gbps", copy_bw(d, q, hbm2.va(), hbm1.va(), 7));
        report("dma_d2d_split4_gbps", copy_split_bw(q, hbm2.va(), hbm1.va(), 4, 7));
    }

    // NOP latency: submit one NOP job, wait for its fence.
    auto nop = hpu::CommandList::create(d);
    nop.nop();
    latency(q, nop, "nop_lat");

    // A 4 KiB copy host -> HBM, the size of the NVMe read it is set against.
    const auto small_host = hpu::Buffer::create(d, 4096, HPU_MEM_HOST);
    const auto small_hbm = hpu::Buffer::create(d, 4096, HPU_MEM_DEVICE);
    std::memset(small_host.host_ptr(), 0x5a, 4096);
    auto copy = hpu::CommandList::create(d);
    copy.copy(small_hbm.va(), small_host.va(), 4096);
    latency(q, copy, "copy4k_lat");

    report("nop_qd64_jobs_per_s", nop_rate(d, q, 4000));
}

} // namespace

int main(int argc, char **argv)
{
    unsigned int index = 0;
    bool jobs_only = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i]; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        if (a == "--jobs-only") {
            jobs_only = true;
        } else if (a == "--prefix") {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "hpu-bench-dma: --prefix needs a value\n");
                return 2;
            }
            g_prefix = argv[++i]; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        } else {
            index = static_cast<unsigned int>(std::strtoul(a.c_str(), nullptr, 10));
        }
    }
    try {
        run(index, jobs_only);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "hpu-bench-dma: %s\n", e.what());
        return 1;
    }
    return 0;
}

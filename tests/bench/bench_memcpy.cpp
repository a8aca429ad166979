// SPDX-License-Identifier: MIT
// hpu-bench-memcpy: the host's copy bandwidth between two 64 MiB buffers
// (the transfer size of the DMA benchmark), the median of several runs
// after a warm-up. Run on the host it is the physical limit of the device
// model, whose DMA engines copy with native code inside QEMU:
//   memcpy_gbps      glibc memcpy, one thread
//   stream_gbps      a copy that writes with non-temporal stores (x86 SSE2
//                    _mm_stream_si128), one thread: no destination line is
//                    read into the cache first, so on a host where memory
//                    bandwidth is the limit it beats a memcpy() that glibc
//                    does with cached stores (it streams only above a
//                    threshold set by the last-level cache's size); on
//                    hosts without SSE2, memcpy again
//   memcpy_all_gbps  glibc memcpy on every logical CPU of the host at once
//                    (up to 64), each thread with buffers of its own: the sum
//                    (host_cores: how many threads)
// The buffers are 2 MiB aligned and advised for transparent huge pages, as
// QEMU's guest RAM and the model's HBM are.
//   hpu-bench-memcpy [MiB] [runs]
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <barrier>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <sys/mman.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "bench_common.h"

namespace {

constexpr std::size_t kHuge = 2U << 20U;

// n bytes, 2 MiB aligned, advised for huge pages and filled with `fill`.
class Region {
public:
    Region(std::size_t n, int fill) : len_(n + kHuge)
    {
        void *m = mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            std::perror("mmap");
            std::exit(1); // NOLINT(concurrency-mt-unsafe): before any thread
        }
        map_ = static_cast<unsigned char *>(m);
        const auto a = reinterpret_cast<std::uintptr_t>(map_); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        p_ = map_ + ((kHuge - a % kHuge) % kHuge); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        (void)madvise(p_, n, MADV_HUGEPAGE);
        std::memset(p_, fill, n);
    }
    Region(const Region &) = delete;
    Region &operator=(const Region &) = delete;
    Region(Region &&) = delete;
    Region &operator=(Region &&) = delete;
    ~Region() { (void)munmap(map_, len_); }
    [[nodiscard]] unsigned char *data() const { return p_; }

private:
    std::size_t len_;
    unsigned char *map_ = nullptr;
    unsigned char *p_ = nullptr;
};

// Non-temporal copy; n a multiple of 64, dst 16-byte aligned.
void stream_copy(unsigned char *dst, const unsigned char *src, std::size_t n)
{
#if defined(__SSE2__)
    // NOLINTBEGIN(cppcoreguidelines-pro-type-reinterpret-cast,cppcoreguidelines-pro-bounds-pointer-arithmetic)
    auto *d = reinterpret_cast<__m128i *>(dst);
    const auto *s = reinterpret_cast<const __m128i *>(src);
    for (std::size_t i = 0; i < n / 16; i += 4) {
        const __m128i v0 = _mm_loadu_si128(s + i);
        const __m128i v1 = _mm_loadu_si128(s + i + 1);
        const __m128i v2 = _mm_loadu_si128(s + i + 2);
        const __m128i v3 = _mm_loadu_si128(s + i + 3);
        _mm_stream_si128(d + i, v0);
        _mm_stream_si128(d + i + 1, v1);
        _mm_stream_si128(d + i + 2, v2);
        _mm_stream_si128(d + i + 3, v3);
    }
    _mm_sfence();
    // NOLINTEND(cppcoreguidelines-pro-type-reinterpret-cast,cppcoreguidelines-pro-bounds-pointer-arithmetic)
#else
    std::memcpy(dst, src, n);
#endif
}

// GB/s of copy(dst, src, n): the median of `runs` after two warm-up runs.
template <typename F>
double bandwidth(std::size_t n, int runs, F &&copy)
{
    const Region a(n, 1);
    const Region b(n, 2);
    std::vector<double> gbps;
    for (int i = 0; i < runs + 2; ++i) {
        const double t0 = bench::now_s();
        copy(b.data(), a.data(), n);
        const double dt = bench::now_s() - t0;
        // keep the copy observable
        a.data()[static_cast<std::size_t>(i) % n] = b.data()[(static_cast<std::size_t>(i) * 4099) % n]; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        if (i >= 2)
            gbps.push_back(static_cast<double>(n) / dt / 1e9);
    }
    return bench::quantile(gbps, 0.5);
}

// memcpy on `threads` threads at once, each between buffers it allocated
// and filled itself (on its own NUMA node), all released together from a
// barrier for each round: the summed GB/s, the median of `runs` rounds
// after a warm-up round (each round timed from its release to the last
// thread's end).
double all_cores(std::size_t n, int runs, unsigned int threads)
{
    const int rounds = runs + 1;
    std::barrier sync(static_cast<std::ptrdiff_t>(threads) + 1);
    std::vector<std::thread> pool;
    pool.reserve(threads);
    const auto worker = [&] {
        const Region src(n, 1);
        const Region dst(n, 2);
        sync.arrive_and_wait(); // all allocated
        for (int i = 0; i < rounds; ++i) {
            sync.arrive_and_wait(); // released
            std::memcpy(dst.data(), src.data(), n);
            sync.arrive_and_wait(); // done
        }
    };
    for (unsigned int t = 0; t < threads; ++t) {
        pool.emplace_back(worker);
    }
    sync.arrive_and_wait();
    std::vector<double> gbps;
    for (int i = 0; i < rounds; ++i) {
        sync.arrive_and_wait();
        const double t0 = bench::now_s();
        sync.arrive_and_wait();
        const double dt = bench::now_s() - t0;
        if (i >= 1)
            gbps.push_back(static_cast<double>(n) * threads / dt / 1e9);
    }
    for (auto &th : pool)
        th.join();
    return bench::quantile(gbps, 0.5);
}

} // namespace

int main(int argc, char **argv)
{
    const std::size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    const int runs = argc > 2 ? std::atoi(argv[2]) : 15; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic,cert-err34-c)
    const std::size_t n = mib << 20U;
    if (n == 0 || runs <= 0) {
        std::fprintf(stderr, "usage: hpu-bench-memcpy [MiB] [runs]\n");
        return 2;
    }
    bench::report("memcpy_gbps", bandwidth(n, runs, [](unsigned char *d, const unsigned char *s, std::size_t k) {
                      std::memcpy(d, s, k);
                  }));
    bench::report("stream_gbps", bandwidth(n, runs, stream_copy));
    // Every logical CPU, up to 64 (2 x 64 MiB each).
    const unsigned int cores = std::clamp(std::thread::hardware_concurrency(), 1U, 64U);
    bench::report("memcpy_all_gbps", all_cores(n, runs, cores));
    bench::report("host_cores", cores);
    return 0;
}

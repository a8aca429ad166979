// SPDX-License-Identifier: MIT
// hpu-bench-memcpy: the host's copy bandwidth between two 64 MiB buffers
// (the transfer size of the DMA benchmark), the median of several runs
// after a warm-up. Run on the host it is the physical limit of the device
// model, whose DMA engines copy with native code inside QEMU:
//   memcpy_gbps      glibc memcpy, one thread
//   stream_gbps      a copy that writes with non-temporal stores (SSE2
//                    _mm_stream_si128), one thread: no destination line is
//                    read into the cache first, so on a host where memory
//                    bandwidth is the limit it beats a memcpy() that glibc
//                    does with cached stores (it streams only above a
//                    threshold set by the last-level cache's size)
//   memcpy_all_gbps  glibc memcpy on every host core at once, each thread
//                    with buffers of its own: the sum
// The buffers are 2 MiB aligned and advised for transparent huge pages, as
// QEMU's guest RAM and the model's HBM are.
//   hpu-bench-memcpy [MiB] [runs]
//
// Copyright (c) 2026 The hpu authors
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
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

// memcpy on `threads` threads at once, each between buffers of its own:
// the summed GB/s, the median of `runs` rounds after a warm-up round.
double all_cores(std::size_t n, int runs, unsigned int threads)
{
    std::vector<std::unique_ptr<Region>> src;
    std::vector<std::unique_ptr<Region>> dst;
    for (unsigned int t = 0; t < threads; ++t) {
        src.push_back(std::make_unique<Region>(n, 1));
        dst.push_back(std::make_unique<Region>(n, 2));
    }
    std::vector<double> gbps;
    for (int i = 0; i < runs + 1; ++i) {
        std::vector<std::thread> pool;
        const double t0 = bench::now_s();
        for (unsigned int t = 0; t < threads; ++t)
            pool.emplace_back([&, t] { std::memcpy(dst[t]->data(), src[t]->data(), n); });
        for (auto &th : pool)
            th.join();
        const double dt = bench::now_s() - t0;
        if (i >= 1)
            gbps.push_back(static_cast<double>(n) * threads / dt / 1e9);
    }
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
    const unsigned int cores = std::max(1U, std::thread::hardware_concurrency());
    bench::report("memcpy_all_gbps", all_cores(n, runs, cores));
    bench::report("host_cores", cores);
    return 0;
}

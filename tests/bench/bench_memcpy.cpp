// SPDX-License-Identifier: MIT
// hpu-bench-memcpy: native memcpy bandwidth between two 64 MiB buffers (the
// transfer size of the DMA benchmark), single thread, the median of several
// runs after a warm-up. Run on the host it is the physical limit of the
// device model, whose DMA engines copy with native code inside QEMU.
//   hpu-bench-memcpy [MiB] [runs]
//
// Copyright (c) 2026 The hpu authors
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench_common.h"

int main(int argc, char **argv)
{
    const std::size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    const int runs = argc > 2 ? std::atoi(argv[2]) : 15; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic,cert-err34-c)
    const std::size_t n = mib << 20U;
    std::vector<unsigned char> a(n, 1);
    std::vector<unsigned char> b(n, 2);
    std::vector<double> gbps;
    for (int i = 0; i < runs + 2; ++i) {
        const double t0 = bench::now_s();
        std::memcpy(b.data(), a.data(), n);
        const double dt = bench::now_s() - t0;
        a[static_cast<std::size_t>(i) % n] = b[(static_cast<std::size_t>(i) * 4099) % n]; // keep the copy observable
        if (i >= 2)
            gbps.push_back(static_cast<double>(n) / dt / 1e9);
    }
    bench::report("memcpy_gbps", bench::quantile(gbps, 0.5));
    bench::report("memcpy_best_gbps", bench::quantile(gbps, 1.0));
    return 0;
}

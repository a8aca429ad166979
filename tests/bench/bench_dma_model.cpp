// SPDX-License-Identifier: MIT
//
// hpu-bench-dma-model: LIN_DMA of 8 MiB from host memory to HBM on the
// device model's core directly, without QEMU or a guest, in a context
// whose host pages are mapped with 4 KiB leaves and again with 2 MiB
// leaves (HUGE | HOST, as hpu.ko maps huge pages), beside a memcpy of the
// same bytes: what address translation costs the one-copy DMA path
// (emu/hpu_mem.c hpum_dma_runs(): one walk per leaf). Built as
// hpu-bench-tpc-model is (CMakeLists.txt beside this file); not run by
// make bench. The copies are checked.
//
//   HPU_BENCH_RUNS (15)  timed copies after a warm-up; the median is printed
//
// Copyright (c) 2026 The hpu authors

#include "bench_common.h"
#include "hpu_rig.hpp"

#include <catch2/catch_test_macros.hpp>

#include <cstdio>
#include <cstring>
#include <vector>

using namespace hpu_test;

TEST_CASE("LIN_DMA host -> HBM through 4 KiB and 2 MiB host leaves, against memcpy", "[bench]")
{
    constexpr unsigned kAsid = 1;
    constexpr uint64_t kBytes = 8 * MiB;
    constexpr uint64_t kHbm = 64 * MiB;
    const int runs = static_cast<int>(bench::env_u64("HPU_BENCH_RUNS", 15));
    Rig r(256 * MiB);
    const uint64_t src = r.halloc(kBytes, HUGE_PG);
    for (uint64_t i = 0; i < kBytes; i += 8) {
        const uint64_t v = i * 0x9e3779b97f4a7c15ULL;
        std::memcpy(r.hp(src + i), &v, 8);
    }
    const uint64_t va_small = r.map_host(kAsid, src, kBytes, false);
    r.va_next = (r.va_next + HUGE_PG - 1) & ~(HUGE_PG - 1);
    const uint64_t va_huge = r.va_next;
    for (uint64_t off = 0; off < kBytes; off += HUGE_PG) {
        r.map(kAsid, va_huge + off, src + off, HPU_PTE_HOST, true);
    }
    r.va_next += kBytes + HUGE_PG;
    const uint64_t dst = r.map_hbm(kAsid, kHbm, kBytes);

    double gbps[2] = {};
    for (int huge = 0; huge < 2; huge++) {
        Cb cb;
        cb.lin_dma(huge ? va_huge : va_small, dst, kBytes);
        const double s = bench::median_s(
            runs, [&] { REQUIRE(r.run_cb(cb, kAsid).status == HPU_CQ_OK); },
            [&] { REQUIRE((r.bread(kHbm, kBytes) == std::vector<uint8_t>(r.hp(src), r.hp(src) + kBytes))); });
        gbps[huge] = static_cast<double>(kBytes) / s / 1e9;
    }
    std::vector<uint8_t> buf(kBytes);
    const double s = bench::median_s(runs, [&] {
        std::memcpy(buf.data(), r.hp(src), kBytes);
        asm volatile("" : : "r"(buf.data()) : "memory");
    });
    const double memcpy_gbps = static_cast<double>(kBytes) / s / 1e9;
    std::printf("LIN_DMA 8 MiB host->HBM, 4 KiB host leaves: %.2f GB/s (%.3f of memcpy)\n", gbps[0],
                gbps[0] / memcpy_gbps);
    std::printf("LIN_DMA 8 MiB host->HBM, 2 MiB host leaves: %.2f GB/s (%.3f of memcpy)\n", gbps[1],
                gbps[1] / memcpy_gbps);
    std::printf("memcpy 8 MiB: %.2f GB/s\n", memcpy_gbps);
    bench::report("dma_model_h2d_4k_gbps", gbps[0]);
    bench::report("dma_model_h2d_2m_gbps", gbps[1]);
    bench::report("memcpy_gbps", memcpy_gbps);
}

// SPDX-License-Identifier: MIT
//
// hpu-bench-mme-model: hpu-bench-compute's GEMMs (1024 x 1024 x 1024, FP32
// and BF16 in, FP32 out, operands in HBM mapped with 2 MiB pages in a
// context, as the driver maps them) run on the device model's core
// directly, without QEMU or a guest, beside one host cblas_sgemm of the
// same size with the same thread count (1, as the MME's default
// mme-threads): for profiling emu/hpu_mme.c and quick before/after
// comparisons. Built as hpu-bench-tpc-model is (CMakeLists.txt beside this
// file). Results are checked exactly (bench_compute.h's operands).
//
// Times are the calling thread's CPU time (the rig steps the engine in
// it): the median of the runs.
//
//   HPU_BENCH_RUNS (9)   timed runs after a warm-up; the median is printed
//   HPU_BENCH_WHAT       "sgemm", "bf16" or both (default)
//
// Copyright (c) 2026 The hpu authors

#include "bench_common.h"
#include "bench_compute.h"
#include "hpu_mme_rig.hpp"
#include "hpu_thread_env.hpp"

#include <catch2/catch_test_macros.hpp>

#include <cblas.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

using namespace hpu_test;
namespace bc = bench::compute;
namespace ref = hpu::kernels::ref;

namespace {

constexpr unsigned kAsid = 1;
constexpr uint32_t kN = bc::kGemmDim;

struct Model {
    Rig r{thread_dev(1ULL << 30)};
    uint64_t next = 32 * MiB;

    // @bytes of HBM (2 MiB aligned) from @img: its VA in kAsid.
    uint64_t tensor(const void *img, uint64_t bytes, uint64_t *off = nullptr)
    {
        const uint64_t span = (bytes + HUGE_PG - 1) & ~(HUGE_PG - 1);
        r.bwrite(next, img, bytes);
        const uint64_t va = r.map_hbm(kAsid, next, span);
        if (off) {
            *off = next;
        }
        next += span;
        return va;
    }
};

double gemm_model(Model &m, unsigned in_t, const void *a, const void *b, unsigned sz, int runs,
                  const std::vector<float> &want)
{
    uint64_t doff = 0;
    const std::vector<float> zero(bc::kGemmElems);
    Gemm g;
    g.m = g.n = g.k = kN;
    g.lda = g.ldb = g.ldd = kN;
    g.flags = in_t;
    g.a = m.tensor(a, bc::kGemmElems * sz);
    g.b = m.tensor(b, bc::kGemmElems * sz);
    g.d = m.tensor(zero.data(), bc::kGemmElems * 4, &doff);
    const auto db = g.bytes();
    const uint64_t desc = m.tensor(db.data(), db.size());
    return bench::median_by(
        bench::thread_cpu_s, runs, [&] { REQUIRE(m.r.run_cb(gemm_cb(desc), kAsid, HPU_ENGINE_MME0, 0).status == HPU_CQ_OK); },
        [&] {
            const auto raw = m.r.bread(doff, bc::kGemmElems * 4);
            REQUIRE(std::memcmp(raw.data(), want.data(), raw.size()) == 0);
        });
}

double gemm_host(const float *a, const float *b, int runs, std::vector<float> &d)
{
    return bench::median_by(
        bench::thread_cpu_s, runs,
        [&] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kN, kN, kN, 1.0F, a, kN, b, kN,
                        0.0F, d.data(), kN);
        },
        [] {});
}

} // namespace

TEST_CASE("MME model bench", "[bench]")
{
    const int runs = static_cast<int>(bench::env_u64("HPU_BENCH_RUNS", 9));
    Model m;
    std::vector<float> a(bc::kGemmElems), b(bc::kGemmElems), d(bc::kGemmElems);
    for (uint64_t i = 0; i < bc::kGemmElems; i++) {
        a[i] = bc::gemm_a_f32(i);
        b[i] = bc::gemm_b(i);
    }
    openblas_set_num_threads(1);
    const double th = gemm_host(a.data(), b.data(), runs, d);
    bench::report("host_sgemm_1t_gflops", bc::kGemmFlop / th / 1e9);
    if (bench::want("sgemm")) {
        const double t = gemm_model(m, HPU_MME_TYPE_FP32, a.data(), b.data(), 4, runs, d);
        bench::report("model_mme_sgemm_gflops", bc::kGemmFlop / t / 1e9);
        bench::report("model_mme_sgemm_ratio", th / t);
    }
    if (bench::want("bf16")) {
        std::vector<uint16_t> a16(bc::kGemmElems), b16(bc::kGemmElems);
        for (uint64_t i = 0; i < bc::kGemmElems; i++) {
            a16[i] = bc::gemm_a_bf16(i);
            b16[i] = bc::gemm_b_bf16(i);
            a[i] = ref::bf16_to_f32(a16[i]);
            b[i] = ref::bf16_to_f32(b16[i]);
        }
        gemm_host(a.data(), b.data(), 1, d);
        const double t = gemm_model(m, HPU_MME_TYPE_BF16, a16.data(), b16.data(), 2, runs, d);
        bench::report("model_mme_bf16gemm_gflops", bc::kGemmFlop / t / 1e9);
        bench::report("model_mme_bf16gemm_ratio", th / t);
    }
}

// SPDX-License-Identifier: MIT
// hpu-bench-host-compute: the host baselines of the compute benchmarks
// (hpu-bench-compute runs the same work on the HPU in the guest):
//   - OpenBLAS cblas_sgemm 1024 x 1024 x 1024, FP32, with 1 thread and with
//     all of OpenBLAS's threads (GFLOP/s);
//   - the BF16 GEMM of that shape, FP32 out: Debian's OpenBLAS 0.3.21
//     declares cblas_sbgemm but does not export it, so the baseline widens
//     both BF16 operands to FP32 (timed) and calls cblas_sgemm;
//   - AdamW over 10 million FP32 parameters, one step, a plain C++ loop on
//     1 thread with the update of libhpu/kernels/ref (ms per step).
// Each figure is the median of `runs` runs after a warm-up (default 5; three
// times as many of the GEMMs, as hpu-bench-compute does).
//   hpu-bench-host-compute [runs]
//
// Copyright (c) 2026 The hpu authors
#include <cblas.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "bench_common.h"
#include "bench_compute.h"

namespace {

namespace bc = bench::compute;
namespace ref = hpu::kernels::ref;

constexpr auto kN = static_cast<int>(bc::kGemmDim);

void sgemm(const float *a, const float *b, float *d)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kN, kN, kN, 1.0F, a, kN, b, kN, 0.0F, d, kN);
}

// GFLOP/s of the FP32 and the BF16 GEMM with `threads` OpenBLAS threads.
void gemms(int runs, int threads, const char *fp32_key, const char *bf16_key)
{
    openblas_set_num_threads(threads);
    std::vector<float> a(bc::kGemmElems);
    std::vector<float> b(bc::kGemmElems);
    std::vector<float> d(bc::kGemmElems);
    std::vector<std::uint16_t> a16(bc::kGemmElems);
    std::vector<std::uint16_t> b16(bc::kGemmElems);
    for (std::uint64_t i = 0; i < bc::kGemmElems; ++i) {
        a[i] = bc::gemm_a_f32(i);
        b[i] = bc::gemm_b(i);
        a16[i] = bc::gemm_a_bf16(i);
        b16[i] = bc::gemm_b_bf16(i);
    }
    const double t32 = bench::median_s(runs, [&] { sgemm(a.data(), b.data(), d.data()); });
    bench::report(fp32_key, bc::kGemmFlop / t32 / 1e9);
    const double t16 = bench::median_s(runs, [&] {
        for (std::uint64_t i = 0; i < bc::kGemmElems; ++i) {
            a[i] = ref::bf16_to_f32(a16[i]);
            b[i] = ref::bf16_to_f32(b16[i]);
        }
        sgemm(a.data(), b.data(), d.data());
    });
    bench::report(bf16_key, bc::kGemmFlop / t16 / 1e9);
}

// ms of one AdamW step over kAdamParams parameters, 1 thread.
double adamw_ms(int runs)
{
    std::vector<float> w(bc::kAdamParams);
    std::vector<float> g(bc::kAdamParams);
    std::vector<float> m(bc::kAdamParams);
    std::vector<float> v(bc::kAdamParams);
    for (std::uint32_t i = 0; i < bc::kAdamParams; ++i) {
        w[i] = bc::adam_w(i);
        g[i] = bc::adam_g(i);
        m[i] = bc::adam_m(i);
        v[i] = bc::adam_v(i);
    }
    const ref::AdamW p = bc::adamw_params();
    return 1e3 * bench::median_s(runs, [&] {
        for (std::uint32_t i = 0; i < bc::kAdamParams; ++i)
            ref::adamw(w[i], g[i], m[i], v[i], p);
    });
}

} // namespace

int main(int argc, char **argv)
{
    const int runs = argc > 1 ? std::atoi(argv[1]) : 5; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic,cert-err34-c)
    const int all = openblas_get_num_procs();
    bench::report("host_blas_threads", all);
    gemms(3 * runs, 1, "host_sgemm_1t_gflops", "host_bf16gemm_1t_gflops");
    gemms(3 * runs, all, "host_sgemm_mt_gflops", "host_bf16gemm_mt_gflops");
    bench::report("host_adamw_step_ms", adamw_ms(runs));
    return 0;
}

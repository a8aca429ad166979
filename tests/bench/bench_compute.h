// SPDX-License-Identifier: MIT
// What the compute benchmarks (hpu-bench-compute in the guest,
// hpu-bench-host-compute on the host) share: the shapes, the operands'
// values and AdamW's hyperparameters, so both sides run the same work.
//
// The GEMM operands are chosen so that every partial sum is exact in FP32
// whatever the summation order (FP32: A = j / 256 with |j| < 2048, B an
// integer with |B| <= 7, so |A B| < 56 and sums over K = 1024 stay below
// 2^16 in steps of 2^-8, within FP32's 24 bits; BF16: A = j / 16 with
// |j| < 256, exact in BF16, sums below 2^17 in steps of 2^-4). A is not
// representable in BF16 in the FP32 case, so a result computed at lower
// precision does not pass. The checks are then exact.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TESTS_BENCH_COMPUTE_H
#define HPU_TESTS_BENCH_COMPUTE_H

#include <cstdint>

#include "ref/tpc_ref.hpp"

namespace bench::compute {

constexpr std::uint32_t kGemmDim = 1024;                       // M = N = K
constexpr std::uint64_t kGemmElems = std::uint64_t{kGemmDim} * kGemmDim;
constexpr double kGemmFlop = 2.0 * kGemmDim * kGemmDim * kGemmDim;
constexpr std::uint64_t kAddBytes = 64ULL << 20U;              // one tensor of add_f32
constexpr std::uint32_t kAddElems = kAddBytes / 4;
constexpr std::uint32_t kAdamParams = 10000000;

// Independent operand streams.
enum Stream : std::uint32_t { kGemmA = 1, kGemmB, kAddA, kAddB, kAdamW, kAdamG, kAdamM, kAdamV, kCheck };

// A well-mixed 32-bit word for element i of stream s (splitmix64's finaliser).
inline std::uint32_t word(std::uint32_t s, std::uint64_t i)
{
    std::uint64_t x = i + (std::uint64_t{s} << 40U) + 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30U)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27U)) * 0x94d049bb133111ebULL;
    return static_cast<std::uint32_t>((x ^ (x >> 31U)) >> 32U);
}

// An integer in [-r, r] from the word.
inline std::int32_t small_int(std::uint32_t s, std::uint64_t i, std::uint32_t r)
{
    return static_cast<std::int32_t>(word(s, i) % (2 * r + 1)) - static_cast<std::int32_t>(r);
}

// A value in [-1, 1) with 24 bits of randomness.
inline float unit(std::uint32_t s, std::uint64_t i)
{
    return static_cast<float>(static_cast<std::int32_t>(word(s, i) >> 8U) - (1 << 23)) * 0x1p-23F;
}

// The operands of the FP32 GEMM (see the header comment).
inline float gemm_a_f32(std::uint64_t i) { return static_cast<float>(small_int(kGemmA, i, 2047)) * 0x1p-8F; }
inline float gemm_b(std::uint64_t i) { return static_cast<float>(small_int(kGemmB, i, 7)); }
// The BF16 GEMM's A, as BF16 bits (exact: at most 8 significant bits).
inline std::uint16_t gemm_a_bf16(std::uint64_t i)
{
    return hpu::kernels::ref::f32_to_bf16(static_cast<float>(small_int(kGemmA, i, 255)) * 0x1p-4F);
}
inline std::uint16_t gemm_b_bf16(std::uint64_t i) { return hpu::kernels::ref::f32_to_bf16(gemm_b(i)); }

// AdamW at step 1 (lr 1e-3, betas 0.9 and 0.999, eps 1e-8, weight decay 0.01).
inline hpu::kernels::ref::AdamW adamw_params()
{
    return {1e-3F, 0.9F, 0.999F, 1e-8F, 0.01F, 1.0F / (1.0F - 0.9F), 1.0F / (1.0F - 0.999F)};
}
// The state before the step: w, g and m in [-1, 1), v in [0, 1).
inline float adam_w(std::uint64_t i) { return unit(kAdamW, i); }
inline float adam_g(std::uint64_t i) { return unit(kAdamG, i); }
inline float adam_m(std::uint64_t i) { return 0.1F * unit(kAdamM, i); }
inline float adam_v(std::uint64_t i) { return 0.01F * (unit(kAdamV, i) + 1.0F); }

} // namespace bench::compute

#endif // HPU_TESTS_BENCH_COMPUTE_H

// SPDX-License-Identifier: MIT
//
// Random kernels of the TPC library on the device model: uniform_* and
// normal_* reproduced bit for bit by the references from the RNG's words
// (hpu_tpc_rand_word), on dense and strided outputs; the same seed gives the
// same tensor; the moments of large draws; the Box-Muller arithmetic of the
// reference against its value in double.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>

#include "tpclib_rig.hpp"

using namespace hpu_test;

namespace {

const uint32_t kSizes[] = {1, 3, 63, 64, 65, 1000};
constexpr uint64_t kSeed = 0x0123456789abcdefULL;

// The FP32 value element @i of row @r gets from the kernel @normal or
// uniform (scalars @a, @b), @s0 members along dimension 0.
float want(bool normal, uint64_t seed, uint32_t s0, uint32_t i, uint32_t r, float a, float b)
{
    const uint64_t member = i / 256 + uint64_t{s0} * r;
    const uint32_t slice = (i % 256) / 64, lane = i % 64;
    if (!normal) {
        return kref::uniform(hpu_tpc_rand_word(seed, member, slice, lane), a, b);
    }
    return kref::normal(hpu_tpc_rand_word(seed, member, 2 * slice, lane),
                        hpu_tpc_rand_word(seed, member, 2 * slice + 1, lane), a, b);
}

struct Moments {
    double mean = 0, var = 0, skew = 0, kurt = 0;
};

Moments moments(const std::vector<double> &v)
{
    Moments m;
    const auto n = static_cast<double>(v.size());
    for (double x : v) {
        m.mean += x / n;
    }
    double m2 = 0, m3 = 0, m4 = 0;
    for (double x : v) {
        const double d = x - m.mean;
        m2 += d * d / n;
        m3 += d * d * d / n;
        m4 += d * d * d * d / n;
    }
    m.var = m2;
    m.skew = m3 / std::pow(m2, 1.5);
    m.kurt = m4 / (m2 * m2);
    return m;
}

} // namespace

TEST_CASE("tpclib uniform and normal, FP32 and BF16: bit-exact to the references from the "
          "RNG's words, dense and strided",
          "[tpclib][rand]")
{
    Lib L;
    for (bool normal : {false, true}) {
        for (bool bf16 : {false, true}) {
            const std::string k = std::string(normal ? "normal" : "uniform") + (bf16 ? "_bf16" : "_f32");
            const uint8_t dt = bf16 ? HPU_TPC_DT_BF16 : HPU_TPC_DT_F32;
            const float a = normal ? 0.5f : -2.0f, b = normal ? 2.0f : 3.0f;
            for (uint32_t n : kSizes) {
                for (bool strided : {false, true}) {
                    CAPTURE(k, n, strided);
                    Tensor y = strided ? L.tensor(dt, {n, 3}, {}, {2, 2 * n + 5}) : L.tensor(dt, {n, 3});
                    const auto idx = ew_index(y);
                    REQUIRE(L.launch(k, {y}, {kref::f32_bits(a), kref::f32_bits(b)}, idx, kSeed) ==
                            HPU_CQ_OK);
                    auto got = L.read(y);
                    size_t bad = 0;
                    for (uint32_t r = 0; r < 3; r++) {
                        for (uint32_t i = 0; i < n; i++) {
                            const float f = want(normal, kSeed, idx[0], i, r, a, b);
                            bad += got[y.at(i, r)] != (bf16 ? kref::f32_to_bf16(f) : kref::f32_bits(f));
                        }
                    }
                    CHECK(bad == 0);
                    CHECK(gaps_untouched(y, got));
                }
            }
        }
    }
}

TEST_CASE("tpclib uniform and normal: the same seed and shape give the same tensor, another "
          "seed another; moments of 2^18 values",
          "[tpclib][rand]")
{
    constexpr uint32_t N = 1u << 16, R = 4;
    Lib L;
    for (bool normal : {false, true}) {
        for (bool bf16 : {false, true}) {
            const std::string k = std::string(normal ? "normal" : "uniform") + (bf16 ? "_bf16" : "_f32");
            CAPTURE(k);
            const uint8_t dt = bf16 ? HPU_TPC_DT_BF16 : HPU_TPC_DT_F32;
            const float a = 0.0f, b = 1.0f; // U[0, 1), N(0, 1)
            Tensor y1 = L.tensor(dt, {N, R}), y2 = L.tensor(dt, {N, R}), y3 = L.tensor(dt, {N, R});
            const std::vector<uint32_t> sc = {kref::f32_bits(a), kref::f32_bits(b)};
            REQUIRE(L.launch(k, {y1}, sc, ew_index(y1), kSeed) == HPU_CQ_OK);
            REQUIRE(L.launch(k, {y2}, sc, ew_index(y2), kSeed) == HPU_CQ_OK);
            REQUIRE(L.launch(k, {y3}, sc, ew_index(y3), kSeed + 1) == HPU_CQ_OK);
            const auto g1 = L.read(y1), g3 = L.read(y3);
            CHECK(g1 == L.read(y2));
            size_t same = 0;
            for (size_t i = 0; i < g1.size(); i++) {
                same += g1[i] == g3[i];
            }
            CHECK(same < g1.size() / 100);
            std::vector<double> v(g1.size());
            double lo = HUGE_VAL, hi = -HUGE_VAL;
            for (size_t i = 0; i < v.size(); i++) {
                v[i] = elem_f32(g1[i], bf16);
                lo = std::min(lo, v[i]);
                hi = std::max(hi, v[i]);
            }
            const Moments m = moments(v);
            const double n = static_cast<double>(v.size()), se = 1 / std::sqrt(n);
            CAPTURE(m.mean, m.var, m.skew, m.kurt, lo, hi);
            if (normal) { // N(0, 1): skewness 0, kurtosis 3
                CHECK(std::fabs(m.mean) < 5 * se);
                CHECK(std::fabs(m.var - 1) < 5 * std::sqrt(2.0) * se);
                CHECK(std::fabs(m.skew) < 5 * std::sqrt(6.0) * se);
                CHECK(std::fabs(m.kurt - 3) < 5 * std::sqrt(24.0) * se);
                CHECK(hi < 5.8); // sqrt(-2 ln 2^-24) = 5.77 bounds |z|
                CHECK(lo > -5.8);
                CHECK(hi > 4); // the tails are there
                CHECK(lo < -4);
            } else { // U[0, 1): mean 1/2, variance 1/12 (sd of the variance's estimate 0.075/sqrt(n))
                CHECK(std::fabs(m.mean - 0.5) < 5 * std::sqrt(1.0 / 12) * se);
                CHECK(std::fabs(m.var - 1.0 / 12) < 5 * 0.075 * se);
                CHECK(std::fabs(m.skew) < 5 * 1.1 * se);
                CHECK(lo >= 0);
                CHECK(hi <= 1); // BF16 rounding may reach 1
                if (!bf16) {
                    CHECK(hi < 1);
                }
            }
        }
    }
}

TEST_CASE("tpclib normal's Box-Muller arithmetic: the reference within 2e-6 of its value in "
          "double",
          "[tpclib][rand]")
{
    std::mt19937 g(3);
    double worst = 0, worst_ln = 0, worst_cos = 0;
    auto check = [&](uint32_t w1, uint32_t w2) {
        const double u1 = 1.0 - (w1 >> 8) * 0x1p-24, u2 = (w2 >> 8) * 0x1p-24;
        const double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
        worst = std::max(worst, std::fabs(kref::normal_z(w1, w2) - z));
        worst_ln = std::max(worst_ln, err_ulps(kref::normal_ln(static_cast<float>(u1)), std::log(u1), 0, false));
        worst_cos = std::max(worst_cos, std::fabs(kref::normal_cos(static_cast<float>(u2)) - std::cos(2 * M_PI * u2)));
    };
    for (int i = 0; i < 1 << 20; i++) {
        check(g(), g());
    }
    for (uint32_t k : {0u, 1u, 2u, 0x7fffffu, 0x800000u, 0xffffffu}) { // the ends of u1 and u2
        check(k << 8, k << 8);
        check(k << 8, ~k << 8);
    }
    report("normal_z vs double", worst, "absolute");
    report("normal ln", worst_ln, "ulp");
    report("normal cos", worst_cos, "absolute");
    CHECK(worst < 2e-6);
    CHECK(worst_ln <= 2);
    CHECK(worst_cos < 5e-7);
}

// SPDX-License-Identifier: MIT
//
// Math kernels of the TPC library on the device model: neg, abs, sign,
// clamp bit-exact; exp, log, sqrt, rsqrt, reciprocal within the README's
// ulp bounds; over random values and special ones (zeros, infinities, NaN,
// subnormals, overflow and underflow edges), FP32 and BF16, dense and
// strided; addcmul and addcdiv bit-exact with every input broadcast.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>

#include "tpclib_rig.hpp"

#include <functional>

using namespace hpu_test;

namespace {

const uint32_t kSizes[] = {1, 3, 63, 64, 65, 1000};

// Random values of both signs over many binades, then special values.
std::vector<uint32_t> math_inputs(size_t n, uint32_t seed, bool bf16)
{
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> mag(-30, 30), unit(-1, 1);
    std::vector<uint32_t> v(n);
    for (auto &x : v) {
        const float f = (g() % 2 ? std::exp2(mag(g)) : 4 * unit(g)) * (g() % 2 ? 1.0f : -1.0f);
        x = bf16 ? kref::f32_to_bf16(f) : kref::f32_bits(f);
    }
    static const uint32_t special[] = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000,
                                       0xffc00001, 0x3f800000, 0xbf800000, 0x00800000, 0x00000001,
                                       0x7f7fffff, 0x42b17218, 0xc2ce0000, 0x0d800000, 0x40800000,
                                       0x3e800000, 0x80400000, 0x42b20000};
    for (size_t i = 0; i < std::size(special) && i < n; i++) {
        v[(i * 7) % n] = bf16 ? special[i] >> 16 : special[i];
    }
    return v;
}

struct Unary {
    const char *name;
    // exact kernels: the result's bits from the input's (FP32 or BF16)
    std::function<uint32_t(uint32_t, bool)> exact;
    // the others: the value in double, and the ulp bounds
    std::function<double(double)> f;
    double bound_f32, bound_bf16;
};

uint32_t bits_of(float f, bool bf16) { return bf16 ? kref::f32_to_bf16(f) : kref::f32_bits(f); }

// NaN results match any NaN; the rest bit for bit.
// The exact value @r as the result type holds it: +-inf beyond the overflow
// threshold (the largest finite value plus half an ulp).
double overflowed(double r, bool bf16)
{
    const double lim = bf16 ? 0x1.ffp127 : 0x1.ffffffp127;
    return std::fabs(r) >= lim ? std::copysign(HUGE_VAL, r) : r;
}

bool same(uint32_t got, uint32_t want, bool bf16)
{
    const float g = elem_f32(got, bf16), w = elem_f32(want, bf16);
    return std::isnan(w) ? std::isnan(g) : got == want;
}

const Unary kUnary[] = {
    {"neg", [](uint32_t x, bool h) { return x ^ (h ? 0x8000u : 0x80000000u); }, {}, 0, 0},
    {"abs", [](uint32_t x, bool h) { return x & (h ? 0x7fffu : 0x7fffffffu); }, {}, 0, 0},
    {"sign", [](uint32_t x, bool h) { return bits_of(kref::sign_f32(elem_f32(x, h)), h); }, {}, 0, 0},
    {"exp", {}, [](double x) { return std::exp(x); }, 1, 1},
    {"log", {}, [](double x) { return std::log(x); }, 1, 1},
    {"sqrt", {}, [](double x) { return std::sqrt(x); }, 0.5, 1},
    {"rsqrt", {}, [](double x) { return 1 / std::sqrt(x); }, 2, 1},
    {"reciprocal", {}, [](double x) { return 1 / x; }, 0.5, 1},
};

} // namespace

TEST_CASE("tpclib unary math on FP32 and BF16: neg, abs, sign exact; exp, log, sqrt, rsqrt, "
          "reciprocal within bounds; special values; strided",
          "[tpclib][math]")
{
    for (const Unary &u : kUnary) {
        for (bool bf16 : {false, true}) {
            const std::string k = std::string(u.name) + (bf16 ? "_bf16" : "_f32");
            const uint8_t dt = bf16 ? HPU_TPC_DT_BF16 : HPU_TPC_DT_F32;
            Lib L;
            Worst w{bf16 ? u.bound_bf16 : u.bound_f32};
            size_t bad = 0;
            for (uint32_t n : kSizes) {
                for (bool strided : {false, true}) {
                    CAPTURE(k, n, strided);
                    auto xv = math_inputs(size_t{n} * 2 * (strided ? 2 : 1) + 4, n * 11 + 1, bf16);
                    Tensor x = strided ? L.tensor(dt, {n, 2}, xv, {2, 2 * n + 1}) : L.tensor(dt, {n, 2}, xv);
                    Tensor y = strided ? L.tensor(dt, {n, 2}, {}, {1, n + 3}) : L.tensor(dt, {n, 2});
                    REQUIRE(L.launch(k, {x, y}, {}, ew_index(y)) == HPU_CQ_OK);
                    auto got = L.read(y);
                    for (uint32_t r = 0; r < 2; r++) {
                        for (uint32_t i = 0; i < n; i++) {
                            const uint32_t xb = xv[x.at(i, r)], gb = got[y.at(i, r)];
                            if (u.exact) {
                                bad += !same(gb, u.exact(xb, bf16), bf16);
                            } else {
                                const double xi = elem_f32(xb, bf16);
                                w.add(err_ulps(elem_f32(gb, bf16), overflowed(u.f(xi), bf16), 0, bf16),
                                      "x = " + std::to_string(xi));
                            }
                        }
                    }
                    CHECK(gaps_untouched(y, got));
                }
            }
            if (!u.exact) {
                report(k, w.worst, "ulp");
            }
            INFO(k << " worst " << w.worst << ", first beyond the bound at " << w.first);
            CHECK(bad == 0);
            CHECK(w.bad == 0);
        }
    }
}

TEST_CASE("tpclib clamp_f32/_bf16: bit-exact, NaN stays, hi wins when lo > hi", "[tpclib][math]")
{
    const std::pair<float, float> bounds[] = {
        {-1.5f, 2.25f}, {-0.3f, 0.7f}, {3.0f, 1.0f}, {-INFINITY, 0.0f}, {0.0f, 0.0f}};
    Lib L;
    for (bool bf16 : {false, true}) {
        const std::string k = bf16 ? "clamp_bf16" : "clamp_f32";
        const uint8_t dt = bf16 ? HPU_TPC_DT_BF16 : HPU_TPC_DT_F32;
        for (uint32_t n : kSizes) {
            for (auto [lo, hi] : bounds) {
                CAPTURE(k, n, lo, hi);
                auto xv = math_inputs(size_t{n} * 2, n + 5, bf16);
                Tensor x = L.tensor(dt, {n, 2}, xv), y = L.tensor(dt, {n, 2});
                REQUIRE(L.launch(k, {x, y}, {kref::f32_bits(lo), kref::f32_bits(hi)}, ew_index(y)) ==
                        HPU_CQ_OK);
                auto got = L.read(y);
                size_t bad = 0;
                for (size_t i = 0; i < got.size(); i++) {
                    bad += !same(got[i], bits_of(kref::clamp_f32(elem_f32(xv[i], bf16), lo, hi), bf16), bf16);
                }
                CHECK(bad == 0);
            }
        }
    }
}

namespace {

// Shapes of self, a, b and out (sizes, strides; empty: dense).
struct Case3 {
    const char *name;
    std::vector<std::vector<uint32_t>> sz, st;
};

std::vector<Case3> cases3(uint32_t n)
{
    return {
        {"same shape", {{n, 3}, {n, 3}, {n, 3}, {n, 3}}, {{}, {}, {}, {}}},
        {"b size 1 in dim 1, self scalar", {{1}, {n, 3}, {n, 1}, {n, 3}}, {{}, {}, {}, {}}},
        {"a stride 0 in dim 1, strided out", {{n, 3}, {n, 3}, {n, 3}, {n, 3}}, {{}, {1, 0}, {}, {1, n + 2}}},
        {"self stride 0 in dim 0, b strided", {{n, 2}, {n, 2}, {n, 2}, {n, 2}}, {{0, 1}, {}, {2, 2 * n}, {}}},
        {"4-D, a [1, 2, 1, 2]", {{n, 2, 2, 2}, {1, 2, 1, 2}, {n, 2, 2, 2}, {n, 2, 2, 2}}, {{}, {}, {}, {}}},
    };
}

} // namespace

TEST_CASE("tpclib addcmul and addcdiv, FP32 and BF16: PyTorch's order, bit-exact, every input "
          "broadcast",
          "[tpclib][math]")
{
    const float value = -0.7f;
    Lib L;
    uint32_t seed = 1;
    for (bool div : {false, true}) {
        for (bool bf16 : {false, true}) {
            const std::string k = std::string(div ? "addcdiv" : "addcmul") + (bf16 ? "_bf16" : "_f32");
            const uint8_t dt = bf16 ? HPU_TPC_DT_BF16 : HPU_TPC_DT_F32;
            for (uint32_t n : kSizes) {
                for (const Case3 &c : cases3(n)) {
                    CAPTURE(k, n, c.name);
                    std::vector<std::vector<uint32_t>> vals;
                    std::vector<Tensor> ts;
                    for (size_t t = 0; t < 3; t++) {
                        vals.push_back(rand_f32(elems_of(c.sz[t], c.st[t]), seed++, -3, 3, bf16));
                        ts.push_back(L.tensor(dt, c.sz[t], vals[t], c.st[t]));
                    }
                    vals[2][0] = 0; // a division by zero, and a NaN
                    vals[1][vals[1].size() - 1] = bf16 ? 0x7fc0u : 0x7fc00000u;
                    ts[1] = L.tensor(dt, c.sz[1], vals[1], c.st[1]);
                    ts[2] = L.tensor(dt, c.sz[2], vals[2], c.st[2]);
                    ts.push_back(L.tensor(dt, c.sz[3], {}, c.st[3]));
                    const Tensor &o = ts[3];
                    REQUIRE(L.launch(k, ts, {kref::f32_bits(value)}, ew_index(o)) == HPU_CQ_OK);
                    auto got = L.read(o);
                    size_t bad = 0;
                    each5(o, [&](const Coord &x) {
                        const float s = elem_f32(vals[0][bcast_at5(ts[0], x)], bf16);
                        const float a = elem_f32(vals[1][bcast_at5(ts[1], x)], bf16);
                        const float b = elem_f32(vals[2][bcast_at5(ts[2], x)], bf16);
                        const float want = div ? kref::addcdiv_f32(s, a, b, value) : kref::addcmul_f32(s, a, b, value);
                        bad += !same(got[at5(o, x)], bits_of(want, bf16), bf16);
                    });
                    CHECK(bad == 0);
                    CHECK(gaps_untouched(o, got));
                }
            }
        }
    }
}

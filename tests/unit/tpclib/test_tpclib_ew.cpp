// SPDX-License-Identifier: MIT
//
// Elementwise kernels of the TPC library on the device model: binary ops
// with broadcasting (size-1 dimensions, missing dimensions, stride 0) and
// strided outputs, bit-exact against the IEEE references; scale and axpy;
// casts between FP32, BF16 and INT32 with special values, exact;
// activations and their gradients within the README's bounds; dropout on
// the device RNG, exact.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "tpclib_rig.hpp"

#include <functional>
#include <sstream>

using namespace hpu_test;

namespace {

const uint32_t kSizes[] = {1, 3, 63, 64, 65, 1000};

std::string where(uint32_t x, uint32_t y, uint32_t z, uint32_t w)
{
    std::ostringstream o;
    o << "(" << x << "," << y << "," << z << "," << w << ")";
    return o.str();
}

// Visit every coordinate of @t.
void each(const Tensor &t, const std::function<void(uint32_t, uint32_t, uint32_t, uint32_t)> &f)
{
    for (uint32_t w = 0; w < t.size(3); w++) {
        for (uint32_t z = 0; z < t.size(2); z++) {
            for (uint32_t y = 0; y < t.size(1); y++) {
                for (uint32_t x = 0; x < t.size(0); x++) {
                    f(x, y, z, w);
                }
            }
        }
    }
}

// The coordinate of an input broadcast to the output's (size-1 dims read 0).
size_t bat(const Tensor &t, uint32_t x, uint32_t y, uint32_t z, uint32_t w)
{
    return t.at(t.size(0) == 1 ? 0 : x, t.size(1) == 1 ? 0 : y, t.size(2) == 1 ? 0 : z,
                t.size(3) == 1 ? 0 : w);
}

// Shapes for a binary op: a, b and out (sizes, strides), n0 along dim 0.
struct Case {
    const char *name;
    std::vector<uint32_t> a, as, b, bs, o, os;
};

std::vector<Case> cases(uint32_t n)
{
    return {
        {"same shape", {n, 3}, {}, {n, 3}, {}, {n, 3}, {}},
        {"b size 1 in dim 1", {n, 3}, {}, {n, 1}, {}, {n, 3}, {}},
        {"b one dimension", {n, 2, 3}, {}, {n}, {}, {n, 2, 3}, {}},
        {"b stride 0 in dim 1", {n, 3}, {}, {n, 3}, {1, 0}, {n, 3}, {}},
        {"b size 1 in dim 0, a in dim 1", {n, 1}, {}, {1, 3}, {}, {n, 3}, {}},
        {"a stride 0 in dim 0", {n, 2}, {0, 1}, {n, 2}, {}, {n, 2}, {}},
        {"strided a and out", {n, 3}, {2, 2 * n + 5}, {n, 3}, {}, {n, 3}, {1, n + 7}},
        {"4-D, b [1, 2, 1, 2]", {n, 2, 2, 2}, {}, {1, 2, 1, 2}, {}, {n, 2, 2, 2}, {}},
    };
}

} // namespace

TEST_CASE("tpclib binary ops: FP32 and BF16 with broadcasting and strides, bit-exact",
          "[tpclib][ew]")
{
    using kref::BinOp;
    const auto op = GENERATE(BinOp::add, BinOp::sub, BinOp::mul, BinOp::div, BinOp::max,
                             BinOp::min);
    const bool bf16 = GENERATE(false, true);
    static const char *const names[] = {"add", "sub", "mul", "div", "max", "min"};
    const std::string kname =
        std::string(names[static_cast<int>(op)]) + (bf16 ? "_bf16" : "_f32");
    const uint8_t dt = bf16 ? HPU_TPC_DT_BF16 : HPU_TPC_DT_F32;
    CAPTURE(kname);
    Lib L;
    uint32_t seed = 1;
    for (uint32_t n : kSizes) {
        for (const Case &c : cases(n)) {
            CAPTURE(n, c.name);
            auto av = rand_f32(elems_of(c.a, c.as), seed++, -4, 4, bf16);
            auto bv = rand_f32(elems_of(c.b, c.bs), seed++, 0.25f, 4, bf16);
            for (size_t i = 0; i < bv.size(); i += 2) {
                bv[i] ^= bf16 ? 0x8000u : 0x80000000u; // both signs, never 0
            }
            if (op == BinOp::max || op == BinOp::min) {
                av[0] = bv[0]; // an equal pair
            }
            Tensor a = L.tensor(dt, c.a, av, c.as);
            Tensor b = L.tensor(dt, c.b, bv, c.bs);
            Tensor o = L.tensor(dt, c.o, {}, c.os);
            REQUIRE(L.launch(kname, {a, b, o}, {}, ew_index(o)) == HPU_CQ_OK);
            auto got = L.read(o);
            size_t bad = 0;
            std::string first;
            each(o, [&](uint32_t x, uint32_t y, uint32_t z, uint32_t w) {
                float fa = elem_f32(av[bat(a, x, y, z, w)], bf16);
                float fb = elem_f32(bv[bat(b, x, y, z, w)], bf16);
                float want = bf16 ? kref::binop_bf16(op, fa, fb) : kref::binop_f32(op, fa, fb);
                uint32_t wb = bf16 ? kref::f32_to_bf16(want) : kref::f32_bits(want);
                if (got[o.at(x, y, z, w)] != wb && !bad++) {
                    first = where(x, y, z, w);
                }
            });
            INFO("first wrong element " << first);
            CHECK(bad == 0);
            CHECK(gaps_untouched(o, got));
        }
    }
}

TEST_CASE("tpclib binary ops on INT32: wrapping add, sub, mul, signed max, min; broadcasting, "
          "exact",
          "[tpclib][ew]")
{
    static const char *const names[] = {"add_i32", "sub_i32", "mul_i32", "max_i32", "min_i32"};
    auto ref = [](int k, uint32_t a, uint32_t b) -> uint32_t {
        auto sa = static_cast<int32_t>(a), sb = static_cast<int32_t>(b);
        switch (k) {
        case 0: return a + b;
        case 1: return a - b;
        case 2: return a * b;
        case 3: return static_cast<uint32_t>(std::max(sa, sb));
        default: return static_cast<uint32_t>(std::min(sa, sb));
        }
    };
    Lib L;
    std::mt19937 g(99);
    for (int k = 0; k < 5; k++) {
        CAPTURE(names[k]);
        for (uint32_t n : kSizes) {
            for (const Case &c : cases(n)) {
                CAPTURE(n, c.name);
                std::vector<uint32_t> av(elems_of(c.a, c.as)), bv(elems_of(c.b, c.bs));
                for (auto &x : av) {
                    x = g();
                }
                for (auto &x : bv) {
                    x = g();
                }
                av[0] = 0x80000000u; // INT_MIN and INT_MAX meet
                bv[0] = 0x7fffffffu;
                Tensor a = L.tensor(HPU_TPC_DT_I32, c.a, av, c.as);
                Tensor b = L.tensor(HPU_TPC_DT_I32, c.b, bv, c.bs);
                Tensor o = L.tensor(HPU_TPC_DT_I32, c.o, {}, c.os);
                REQUIRE(L.launch(names[k], {a, b, o}, {}, ew_index(o)) == HPU_CQ_OK);
                auto got = L.read(o);
                size_t bad = 0;
                each(o, [&](uint32_t x, uint32_t y, uint32_t z, uint32_t w) {
                    bad += got[o.at(x, y, z, w)] !=
                           ref(k, av[bat(a, x, y, z, w)], bv[bat(b, x, y, z, w)]);
                });
                CHECK(bad == 0);
                CHECK(gaps_untouched(o, got));
            }
        }
    }
}

TEST_CASE("tpclib bias_add_f32: x [C, R] + b [C], bit-exact", "[tpclib][ew]")
{
    Lib L;
    for (uint32_t c : kSizes) {
        CAPTURE(c);
        auto xv = rand_f32(size_t{c} * 5, c, -2, 2), bv = rand_f32(c, c + 1, -2, 2);
        Tensor x = L.tensor(HPU_TPC_DT_F32, {c, 5}, xv), b = L.tensor(HPU_TPC_DT_F32, {c}, bv);
        Tensor o = L.tensor(HPU_TPC_DT_F32, {c, 5});
        REQUIRE(L.launch("bias_add_f32", {x, b, o}, {}, ew_index(o)) == HPU_CQ_OK);
        auto got = L.read(o);
        size_t bad = 0;
        for (uint32_t r = 0; r < 5; r++) {
            for (uint32_t i = 0; i < c; i++) {
                float want = kref::bits_f32(xv[i + c * r]) + kref::bits_f32(bv[i]);
                bad += got[i + c * r] != kref::f32_bits(want);
            }
        }
        CHECK(bad == 0);
    }
}

TEST_CASE("tpclib scale and axpy: FP32 and BF16, bit-exact", "[tpclib][ew]")
{
    const bool bf16 = GENERATE(false, true);
    const uint8_t dt = bf16 ? HPU_TPC_DT_BF16 : HPU_TPC_DT_F32;
    const float alpha = -0.3f; // not a BF16 value: BF16 kernels use it unrounded
    Lib L;
    for (uint32_t n : kSizes) {
        CAPTURE(bf16, n);
        auto xv = rand_f32(size_t{n} * 3, n, -3, 3, bf16), yv = rand_f32(size_t{n} * 3, n + 9, -3, 3, bf16);
        Tensor x = L.tensor(dt, {n, 3}, xv), y = L.tensor(dt, {n, 3}, yv);
        Tensor o = L.tensor(dt, {n, 3});
        REQUIRE(L.launch(bf16 ? "scale_bf16" : "scale_f32", {x, o}, {kref::f32_bits(alpha)},
                         ew_index(o)) == HPU_CQ_OK);
        auto got = L.read(o);
        size_t bad = 0;
        for (size_t i = 0; i < got.size(); i++) {
            float want = kref::scale_f32(alpha, elem_f32(xv[i], bf16));
            bad += got[i] != (bf16 ? kref::f32_to_bf16(want) : kref::f32_bits(want));
        }
        CHECK(bad == 0);
        // axpy in place: out is y
        REQUIRE(L.launch(bf16 ? "axpy_bf16" : "axpy_f32", {x, y, y}, {kref::f32_bits(alpha)},
                         ew_index(y)) == HPU_CQ_OK);
        got = L.read(y);
        bad = 0;
        for (size_t i = 0; i < got.size(); i++) {
            float want = kref::axpy_f32(alpha, elem_f32(xv[i], bf16), elem_f32(yv[i], bf16));
            bad += got[i] != (bf16 ? kref::f32_to_bf16(want) : kref::f32_bits(want));
        }
        CHECK(bad == 0);
    }
}

namespace {

// Inputs for the casts: ordinary values, halfway and rounding cases, zeros,
// infinities, NaNs, huge values and integer extremes.
std::vector<uint32_t> cast_inputs_f32(size_t n)
{
    std::vector<uint32_t> v = rand_f32(n, 77, -3e9f, 3e9f);
    const uint32_t special[] = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000,
                                0xffc00001, 0x7f7fffff, 0x3f808000, 0x3f818000, 0x3f808001,
                                0x3fc00000, 0xbfc00000, 0x4effffff, 0x4f000000, 0xcf000000,
                                0xcf000001, 0x3f7fffff, 0x00000001, 0x7f7f8000, 0x40490fdb};
    for (size_t i = 0; i < std::size(special) && i < n; i++) {
        v[i * 7 % n] = special[i];
    }
    for (size_t i = 1; i < n; i += 3) { // small magnitudes too
        v[i] = kref::f32_bits(kref::bits_f32(v[i]) * 1e-8f);
    }
    return v;
}

} // namespace

TEST_CASE("tpclib casts FP32 <-> BF16 <-> INT32: exact, with special values", "[tpclib][ew]")
{
    Lib L;
    for (uint32_t n : kSizes) {
        CAPTURE(n);
        auto fv = cast_inputs_f32(size_t{n} * 2);
        std::vector<uint32_t> iv(size_t{n} * 2), hv(size_t{n} * 2);
        std::mt19937 g(n);
        for (size_t i = 0; i < iv.size(); i++) {
            iv[i] = g();
            if (i % 4 == 1) {
                iv[i] = static_cast<uint32_t>(static_cast<int32_t>(iv[i]) >> 12);
            }
            hv[i] = kref::f32_to_bf16(kref::bits_f32(fv[i]));
        }
        iv[0] = 0x80000000u;
        if (n > 1) {
            iv[1] = 0x7fffffffu;
        }
        struct C {
            const char *k;
            uint8_t ts, td;
            const std::vector<uint32_t> *in;
            std::function<uint32_t(uint32_t)> ref;
        };
        const C cs[] = {
            {"cast_f32_bf16", HPU_TPC_DT_F32, HPU_TPC_DT_BF16, &fv,
             [](uint32_t x) { return uint32_t{kref::f32_to_bf16(kref::bits_f32(x))}; }},
            {"cast_bf16_f32", HPU_TPC_DT_BF16, HPU_TPC_DT_F32, &hv,
             [](uint32_t x) { return x << 16; }},
            {"cast_f32_i32", HPU_TPC_DT_F32, HPU_TPC_DT_I32, &fv,
             [](uint32_t x) { return static_cast<uint32_t>(kref::f32_to_i32_rz(kref::bits_f32(x))); }},
            {"cast_i32_f32", HPU_TPC_DT_I32, HPU_TPC_DT_F32, &iv,
             [](uint32_t x) { return kref::f32_bits(static_cast<float>(static_cast<int32_t>(x))); }},
            {"cast_bf16_i32", HPU_TPC_DT_BF16, HPU_TPC_DT_I32, &hv,
             [](uint32_t x) {
                 return static_cast<uint32_t>(kref::f32_to_i32_rz(kref::bf16_to_f32(static_cast<uint16_t>(x))));
             }},
            {"cast_i32_bf16", HPU_TPC_DT_I32, HPU_TPC_DT_BF16, &iv,
             [](uint32_t x) { return uint32_t{kref::i32_to_bf16(static_cast<int32_t>(x))}; }},
        };
        for (const C &c : cs) {
            CAPTURE(c.k);
            Tensor x = L.tensor(c.ts, {n, 2}, *c.in), y = L.tensor(c.td, {n, 2});
            REQUIRE(L.launch(c.k, {x, y}, {}, ew_index(y)) == HPU_CQ_OK);
            auto got = L.read(y);
            size_t bad = 0;
            std::string first;
            for (size_t i = 0; i < got.size(); i++) {
                if (got[i] != c.ref((*c.in)[i]) && !bad++) {
                    std::ostringstream o;
                    o << std::hex << "in 0x" << (*c.in)[i] << " got 0x" << got[i] << " want 0x"
                      << c.ref((*c.in)[i]);
                    first = o.str();
                }
            }
            INFO(first);
            CHECK(bad == 0);
        }
    }
}

namespace {

struct Act {
    const char *name;
    std::function<double(double)> f;
    bool scaled; // the bound is in ulps of max(|y|, |x|)
    double bound_f32, bound_bf16;
};

struct Grad {
    const char *name;
    bool from_output; // t0 is y = f(x), not x
    std::function<double(double)> f;
    std::function<double(double, double)> g;
    double bound_f32, bound_bf16;
};

} // namespace

TEST_CASE("tpclib activations: relu, tanh, sigmoid, gelu on FP32 and BF16 within bounds",
          "[tpclib][ew][act]")
{
    const Act acts[] = {
        {"relu", kref::relu, false, 0, 0},
        {"tanh", [](double x) { return std::tanh(x); }, false, 2, 1},
        {"sigmoid", kref::sigmoid, false, 4, 1},
        {"gelu", kref::gelu, true, 4, 1},
    };
    for (const Act &a : acts) {
        for (bool bf16 : {false, true}) {
            const std::string k = std::string(a.name) + (bf16 ? "_bf16" : "_f32");
            const uint8_t dt = bf16 ? HPU_TPC_DT_BF16 : HPU_TPC_DT_F32;
            CAPTURE(k);
            Lib L;
            Worst w{bf16 ? a.bound_bf16 : a.bound_f32};
            for (uint32_t n : kSizes) {
                auto xv = rand_f32(size_t{n} * 2, n * 3 + 1, -8, 8, bf16);
                xv[0] = bf16 ? 0x8000 : 0x80000000; // -0
                if (n == 1000) { // and large negative inputs: sigmoid's subnormal results
                    auto far = rand_f32(1000, 7, -110, -80, bf16);
                    std::copy(far.begin(), far.end(), xv.begin() + 1000);
                }
                Tensor x = L.tensor(dt, {n, 2}, xv), y = L.tensor(dt, {n, 2});
                REQUIRE(L.launch(k, {x, y}, {}, ew_index(y)) == HPU_CQ_OK);
                auto got = L.read(y);
                for (size_t i = 0; i < got.size(); i++) {
                    double xi = elem_f32(xv[i], bf16);
                    w.add(err_ulps(elem_f32(got[i], bf16), a.f(xi), a.scaled ? std::fabs(xi) : 0,
                                   bf16),
                          "x = " + std::to_string(xi));
                }
            }
            report(k, w.worst, a.scaled ? "ulp of max(|y|,|x|)" : "ulp");
            INFO("worst " << w.worst << ", first beyond the bound at " << w.first);
            CHECK(w.bad == 0);
        }
    }
}

TEST_CASE("tpclib activation gradients on FP32 and BF16 within bounds", "[tpclib][ew][act]")
{
    const Grad grads[] = {
        {"relu_grad", false, kref::relu, kref::relu_grad, 0, 0},
        {"tanh_grad", true, [](double x) { return std::tanh(x); }, kref::tanh_grad, 4, 1},
        {"sigmoid_grad", true, kref::sigmoid, kref::sigmoid_grad, 4, 1},
        {"gelu_grad", false, kref::gelu, kref::gelu_grad, 8, 1},
    };
    for (const Grad &g : grads) {
        for (bool bf16 : {false, true}) {
            const std::string k = std::string(g.name) + (bf16 ? "_bf16" : "_f32");
            const uint8_t dt = bf16 ? HPU_TPC_DT_BF16 : HPU_TPC_DT_F32;
            CAPTURE(k);
            Lib L;
            Worst w{bf16 ? g.bound_bf16 : g.bound_f32};
            for (uint32_t n : kSizes) {
                auto xv = rand_f32(size_t{n} * 2, n * 5 + 2, -6, 6, bf16);
                if (g.from_output) { // t0 holds y = f(x), as the forward stored it
                    for (auto &v : xv) {
                        auto y = static_cast<float>(g.f(elem_f32(v, bf16)));
                        v = bf16 ? kref::f32_to_bf16(y) : kref::f32_bits(y);
                    }
                }
                auto dv = rand_f32(size_t{n} * 2, n * 5 + 3, -2, 2, bf16);
                Tensor x = L.tensor(dt, {n, 2}, xv), d = L.tensor(dt, {n, 2}, dv);
                Tensor o = L.tensor(dt, {n, 2});
                REQUIRE(L.launch(k, {x, d, o}, {}, ew_index(o)) == HPU_CQ_OK);
                auto got = L.read(o);
                for (size_t i = 0; i < got.size(); i++) {
                    double xi = elem_f32(xv[i], bf16), di = elem_f32(dv[i], bf16);
                    w.add(err_ulps(elem_f32(got[i], bf16), g.g(xi, di), std::fabs(di), bf16),
                          "t0 = " + std::to_string(xi) + " dy = " + std::to_string(di));
                }
            }
            report(k, w.worst, "ulp of max(|dx|,|dy|)");
            INFO("worst " << w.worst << ", first beyond the bound at " << w.first);
            CHECK(w.bad == 0);
        }
    }
}

TEST_CASE("tpclib dropout_f32: the device RNG's mask and scale, bit-exact", "[tpclib][ew]")
{
    const float p = 0.3f, scale = 1.0f / (1.0f - p);
    const uint64_t seed = 0x5eed0123456789ULL;
    Lib L;
    for (uint32_t n : kSizes) {
        CAPTURE(n);
        auto xv = rand_f32(size_t{n} * 3, n, -2, 2);
        Tensor x = L.tensor(HPU_TPC_DT_F32, {n, 3}, xv), y = L.tensor(HPU_TPC_DT_F32, {n, 3});
        auto idx = ew_index(y);
        REQUIRE(L.launch("dropout_f32", {x, y}, {kref::f32_bits(p), kref::f32_bits(scale)}, idx,
                         seed) == HPU_CQ_OK);
        auto got = L.read(y);
        size_t bad = 0, kept = 0;
        for (uint32_t r = 0; r < 3; r++) {
            for (uint32_t i = 0; i < n; i++) {
                uint64_t member = i / 256 + uint64_t{idx[0]} * r;
                uint32_t word = hpu_tpc_rand_word(seed, member, (i % 256) / 64, i % 64);
                float want = kref::dropout(kref::bits_f32(xv[i + n * r]), word, p, scale);
                bad += got[i + n * r] != kref::f32_bits(want);
                kept += want != 0;
            }
        }
        CHECK(bad == 0);
        if (n == 1000) { // about 70 % kept
            CHECK(kept > 1900);
            CHECK(kept < 2300);
        }
    }
}

// SPDX-License-Identifier: MIT
//
// TPC instructions in the device model against plain C++ references
// (Documentation/hw/tpc.md "Arithmetic rules", "Conversions", "Special
// functions"): one vector of inputs with special values (NaN, infinities,
// signed zeros, subnormals, the integer limits) per instruction and type.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "hpu_tpc_rig.hpp"

#include <cmath>
#include <functional>
#include <limits>

using namespace hpu_test;

namespace {

// Run "ld v0, t0 ; ld v1, t1 ; ld v2, t2 ; BODY ; st t3, v3" over one
// vector (256 bytes) per tensor; tensors of dtype @dt (t3 of @dt_out).
std::vector<uint8_t> run_vec(const std::string &body, unsigned dt, unsigned dt_out,
                             const std::vector<uint8_t> &a, const std::vector<uint8_t> &b,
                             const std::vector<uint8_t> &c, uint64_t seed = 0,
                             bool host_simd = true)
{
    std::string tn(hpu::tpc::dtype_name(dt)), to(hpu::tpc::dtype_name(dt_out));
    std::string src = ".kernel isa\n.tensors 4\n.index_dims 1\n"
                      "        ld.t." + tn + " v0, t0, i0\n"
                      "        ld.t." + tn + " v1, t1, i0\n"
                      "        ld.t." + tn + " v2, t2, i0\n" + body + "\n"
                      "        st.t." + to + " t3, i0, v3\n"
                      "        halt\n";
    Rig r;
    r.core.tpc_host_simd = host_simd;
    Space s(r, 0, false);
    unsigned es = hpu_tpc_dtype_size(dt), eo = hpu_tpc_dtype_size(dt_out);
    uint64_t ta = s.alloc(256), tb = s.alloc(256), tc = s.alloc(256), td = s.alloc(256);
    s.write(ta, a.data(), 256);
    s.write(tb, b.data(), 256);
    s.write(tc, c.data(), 256);
    LaunchDesc ld;
    ld.seed = seed;
    auto dd = [&](unsigned t, uint64_t base, unsigned e) {
        return TDesc::dense(static_cast<uint8_t>(t), base, {256 / e});
    };
    ld.tensors = {dd(dt, ta, es), dd(dt, tb, es), dd(dt, tc, es), dd(dt_out, td, eo)};
    Cqe q = r.run_cb(tpc_cb(place_launch(s, tpc_asm(src), ld)), 0, TPC_E, 0);
    REQUIRE(q.status == HPU_CQ_OK);
    return s.read(td, 256);
}

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T> &v)
{
    std::vector<uint8_t> b(256);
    std::memcpy(b.data(), v.data(), std::min<size_t>(256, v.size() * sizeof(T)));
    return b;
}

template <typename T>
std::vector<T> of_bytes(const std::vector<uint8_t> &b)
{
    std::vector<T> v(256 / sizeof(T));
    std::memcpy(v.data(), b.data(), 256);
    return v;
}

std::vector<float> special_f32(uint32_t seed)
{
    std::vector<float> v = values(64, seed, false);
    const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -1e-40f, 3.4e38f,
                        -3.4e38f, 1.0f, -1.0f, 0.5f, 88.0f, -104.0f, 1e-30f, 65504.0f};
    for (size_t i = 0; i < 16; i++) {
        v[(i * 5 + seed) % 64] = sp[i];
    }
    return v;
}

template <typename T>
std::vector<T> special_int(uint32_t seed)
{
    const size_t n = 256 / sizeof(T);
    std::vector<T> v(n);
    uint32_t x = seed * 2654435761u + 3;
    for (auto &e : v) {
        x = x * 1103515245u + 12345u;
        e = static_cast<T>(x >> 5);
    }
    v[seed % n] = std::numeric_limits<T>::min();
    v[(seed + 1) % n] = std::numeric_limits<T>::max();
    v[(seed + 2) % n] = 0;
    v[(seed + 3) % n] = static_cast<T>(-1);
    v[(seed + 4) % n] = 1;
    return v;
}

bool same_f32(float a, float b)
{
    return (std::isnan(a) && std::isnan(b)) || f32_bits(a) == f32_bits(b);
}

float fmin19(float a, float b)
{
    if (std::isnan(a) || std::isnan(b)) {
        return NAN;
    }
    if (a == b) {
        return std::signbit(a) ? a : b;
    }
    return a < b ? a : b;
}

float fmax19(float a, float b)
{
    if (std::isnan(a) || std::isnan(b)) {
        return NAN;
    }
    if (a == b) {
        return std::signbit(a) ? b : a;
    }
    return a > b ? a : b;
}

// Round to nearest even (the reference of mme rig's f32_bf16 plus its NaN rule).
uint16_t ref_bf16(float f) { return f32_bf16(f); }

} // namespace

TEST_CASE("TPC f32 arithmetic: IEEE results, fused vmac/vfma, 2019 min/max", "[emu][tpc][isa]")
{
    struct Op {
        const char *body;
        std::function<float(float, float, float)> ref;
    };
    const std::vector<Op> ops = {
        {"vadd.f32 v3, v0, v1", [](float a, float b, float) { return a + b; }},
        {"vsub.f32 v3, v0, v1", [](float a, float b, float) { return a - b; }},
        {"vmul.f32 v3, v0, v1", [](float a, float b, float) { return a * b; }},
        {"vdiv.f32 v3, v0, v1", [](float a, float b, float) { return a / b; }},
        {"vmin.f32 v3, v0, v1", [](float a, float b, float) { return fmin19(a, b); }},
        {"vmax.f32 v3, v0, v1", [](float a, float b, float) { return fmax19(a, b); }},
        {"vfma.f32 v3, v0, v1, v2", [](float a, float b, float c) { return std::fma(a, b, c); }},
        {"vmov.f32 v3, v2\n vmac.f32 v3, v0, v1",
         [](float a, float b, float c) { return std::fma(a, b, c); }},
        {"vadd.f32 v3, v0, 0.25", [](float a, float, float) { return a + 0.25f; }},
        {"vabs.f32 v3, v0", [](float a, float, float) { return std::fabs(a); }},
        {"vneg.f32 v3, v0", [](float a, float, float) { return -a; }},
        {"vsqrt.f32 v3, v0", [](float a, float, float) { return std::sqrt(a); }},
        {"vrcp.f32 v3, v0", [](float a, float, float) { return 1.0f / a; }},
    };
    auto a = special_f32(1), b = special_f32(2), c = special_f32(3);
    for (const auto &op : ops) {
        CAPTURE(op.body);
        auto out = of_bytes<float>(run_vec(op.body, HPU_TPC_DT_F32, HPU_TPC_DT_F32, bytes_of(a),
                                           bytes_of(b), bytes_of(c)));
        for (size_t l = 0; l < 64; l++) {
            float want = op.ref(a[l], b[l], c[l]);
            if (!same_f32(out[l], want)) {
                FAIL("lane " << l << ": " << a[l] << ", " << b[l] << ", " << c[l] << " -> "
                             << out[l] << " want " << want);
            }
        }
    }
}

TEST_CASE("TPC special functions within their ULP bounds", "[emu][tpc][isa]")
{
    struct Fn {
        const char *body;
        double (*ref)(double);
        double ulps;
    };
    const std::vector<Fn> fns = {
        {"vexp.f32 v3, v0", [](double x) { return std::exp(x); }, 1},
        {"vlog.f32 v3, v0", [](double x) { return std::log(x); }, 1},
        {"vtanh.f32 v3, v0", [](double x) { return std::tanh(x); }, 2},
        {"vsigmoid.f32 v3, v0", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 4},
        {"verf.f32 v3, v0", [](double x) { return std::erf(x); }, 1},
        {"vrsqrt.f32 v3, v0", [](double x) { return 1.0 / std::sqrt(x); }, 2},
    };
    std::vector<float> a = special_f32(4);
    for (size_t l = 0; l < 64; l += 3) {
        a[l] = std::fabs(a[l]) * 5;
    }
    for (const auto &fn : fns) {
        CAPTURE(fn.body);
        auto out = of_bytes<float>(run_vec(fn.body, HPU_TPC_DT_F32, HPU_TPC_DT_F32, bytes_of(a),
                                           bytes_of(a), bytes_of(a)));
        for (size_t l = 0; l < 64; l++) {
            double want = fn.ref(static_cast<double>(a[l]));
            float w = static_cast<float>(want);
            if (std::isnan(want) || std::isinf(w) || w == 0.0f) {
                if (!same_f32(out[l], w) && !(w == 0.0f && out[l] == 0.0f)) {
                    FAIL("lane " << l << ": f(" << a[l] << ") = " << out[l] << " want " << w);
                }
                continue;
            }
            double ulp = std::ldexp(1.0, std::max(std::ilogb(w), -126) - 23);
            if (std::fabs(static_cast<double>(out[l]) - want) > fn.ulps * ulp) {
                FAIL("lane " << l << ": f(" << a[l] << ") = " << out[l] << " want " << want);
            }
        }
    }
}

TEST_CASE("vsigmoid within its 4 ulp over its whole range, subnormal results included",
          "[emu][tpc][isa]")
{
    // Where exp(-x) overflows FP32 (x <= -88.72) the result is still a
    // subnormal down to x = -103.97 (FP32) or -92 (BF16): not +0.
    auto exact = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
    std::vector<float> xs;
    for (int i = 0; i < 16 * 64; i++) {          // (-104, -88) by 1/64
        xs.push_back(-104.0f + static_cast<float>(i + 1) / 64.0f);
    }
    for (int i = 0; i < 36 * 64; i++) {          // [-112, 32) by 1/16
        xs.push_back(-112.0f + static_cast<float>(i) / 16.0f);
    }
    xs.insert(xs.end(), {-88.8f, -95.0f, -100.0f, -103.9f, -103.98f, -88.72f, -88.73f,
                         -745.0f, 1e-40f, -1e-40f, 0.0f, -0.0f});
    xs.resize((xs.size() + 63) / 64 * 64, -1.0f);
    for (bool simd : {false, true}) {
        CAPTURE(simd);
        for (size_t v = 0; v < xs.size(); v += 64) {
            std::vector<float> a(xs.begin() + static_cast<ptrdiff_t>(v),
                                 xs.begin() + static_cast<ptrdiff_t>(v + 64));
            auto out = of_bytes<float>(run_vec("vsigmoid.f32 v3, v0", HPU_TPC_DT_F32,
                                               HPU_TPC_DT_F32, bytes_of(a), bytes_of(a),
                                               bytes_of(a), 0, simd));
            for (size_t l = 0; l < 64; l++) {
                double want = exact(static_cast<double>(a[l]));
                // ulps of the result; of the smallest normal for subnormal results
                double ulp = std::ldexp(1.0, std::max(std::ilogb(want), -126) - 23);
                if (!(std::fabs(static_cast<double>(out[l]) - want) <= 4 * ulp)) {
                    FAIL("sigmoid(" << a[l] << ") = " << out[l] << " want " << want);
                }
            }
        }
    }
    // BF16: within 1 ulp of bfloat16 (subnormals down to 2^-133 kept)
    std::vector<uint16_t> hs;
    for (uint32_t h = 0xc2b0; h <= 0xc2d0; h++) {  // -88 to -104, every BF16 value
        hs.push_back(static_cast<uint16_t>(h));
    }
    for (int i = 0; i < 7 * 128; i++) {            // [-112, 28) by 5/32, rounded to BF16
        hs.push_back(ref_bf16(-112.0f + static_cast<float>(i) * 5.0f / 32.0f));
    }
    hs.resize((hs.size() + 127) / 128 * 128, ref_bf16(-1.0f));
    for (size_t v = 0; v < hs.size(); v += 128) {
        std::vector<uint16_t> a(hs.begin() + static_cast<ptrdiff_t>(v),
                                hs.begin() + static_cast<ptrdiff_t>(v + 128));
        auto out = of_bytes<uint16_t>(run_vec("vsigmoid.bf16 v3, v0", HPU_TPC_DT_BF16,
                                              HPU_TPC_DT_BF16, bytes_of(a), bytes_of(a),
                                              bytes_of(a)));
        for (size_t l = 0; l < 128; l++) {
            double x = bf16_f32(a[l]), want = exact(x);
            double ulp = std::ldexp(1.0, std::max(std::ilogb(want), -126) - 7);
            if (!(std::fabs(static_cast<double>(bf16_f32(out[l])) - want) <= ulp)) {
                FAIL("bf16 sigmoid(" << x << ") = " << bf16_f32(out[l]) << " want " << want);
            }
        }
    }
}

TEST_CASE("TPC bf16: widened, computed as f32, rounded to nearest even", "[emu][tpc][isa]")
{
    auto af = special_f32(5), bf = special_f32(6);
    std::vector<uint16_t> a(128), b(128);
    for (size_t l = 0; l < 128; l++) {
        a[l] = ref_bf16(af[l % 64] * (l < 64 ? 1.0f : 3.0f));
        b[l] = ref_bf16(bf[l % 64]);
    }
    struct Op {
        const char *body;
        std::function<float(float, float)> ref;
    };
    const std::vector<Op> ops = {
        {"vadd.bf16 v3, v0, v1", [](float x, float y) { return x + y; }},
        {"vmul.bf16 v3, v0, v1", [](float x, float y) { return x * y; }},
        {"vmax.bf16 v3, v0, v1", [](float x, float y) { return fmax19(x, y); }},
        {"vexp.bf16 v3, v0", [](float x, float) { return std::exp(x); }},
    };
    for (const auto &op : ops) {
        CAPTURE(op.body);
        auto out = of_bytes<uint16_t>(run_vec(op.body, HPU_TPC_DT_BF16, HPU_TPC_DT_BF16,
                                              bytes_of(a), bytes_of(b), bytes_of(b)));
        for (size_t l = 0; l < 128; l++) {
            float want = op.ref(bf16_f32(a[l]), bf16_f32(b[l]));
            uint16_t w = ref_bf16(want);
            bool nan = std::isnan(want) && std::isnan(bf16_f32(out[l]));
            if (!nan && out[l] != w &&
                !(std::string(op.body).find("vexp") != std::string::npos &&
                  std::abs(static_cast<int>(out[l]) - static_cast<int>(w)) <= 1)) {
                FAIL("lane " << l << ": " << std::hex << out[l] << " want " << w);
            }
        }
    }
}

TEST_CASE("TPC integer arithmetic: wrap, saturation, shifts, min/max by signedness",
          "[emu][tpc][isa]")
{
    auto check = [](auto tag, unsigned dt) {
        using T = decltype(tag);
        using W = int64_t;
        const W lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
        const unsigned w = 8 * sizeof(T);
        auto a = special_int<T>(7), b = special_int<T>(9), c = special_int<T>(11);
        for (size_t i = 0; i < b.size(); i += 7) {
            b[i] = static_cast<T>(i % (w + 3));     // shift counts, also >= width
        }
        std::string t(hpu::tpc::dtype_name(dt));
        struct Op {
            std::string body;
            std::function<W(W, W, W)> ref;
        };
        const std::vector<Op> ops = {
            {"vadd." + t + " v3, v0, v1", [](W x, W y, W) { return x + y; }},
            {"vadd." + t + ".sat v3, v0, v1",
             [&](W x, W y, W) { return std::clamp<W>(x + y, lo, hi); }},
            {"vsub." + t + ".sat v3, v0, v1",
             [&](W x, W y, W) { return std::clamp<W>(x - y, lo, hi); }},
            {"vmul." + t + " v3, v0, v1",
             [](W x, W y, W) { return static_cast<W>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y)); }},
            {"vmin." + t + " v3, v0, v1", [](W x, W y, W) { return std::min(x, y); }},
            {"vmax." + t + " v3, v0, v1", [](W x, W y, W) { return std::max(x, y); }},
            {"vfma." + t + " v3, v0, v1, v2",
             [](W x, W y, W z) { return static_cast<W>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y) + static_cast<uint64_t>(z)); }},
            {"vxor." + t + " v3, v0, v1", [](W x, W y, W) { return x ^ y; }},
            {"vnot." + t + " v3, v0", [](W x, W, W) { return ~x; }},
            {"vshl." + t + " v3, v0, v1",
             [&](W x, W y, W) {
                 uint64_t n = static_cast<uint64_t>(y) & ((1ull << w) - 1);
                 return n >= w ? 0 : static_cast<W>(static_cast<uint64_t>(x) << n);
             }},
            {"vshr." + t + " v3, v0, v1",
             [&](W x, W y, W) {
                 uint64_t n = static_cast<uint64_t>(y) & ((1ull << w) - 1);
                 return n >= w ? (x < 0 ? -1 : 0) : x >> n;
             }},
        };
        for (const auto &op : ops) {
            CAPTURE(op.body);
            auto out = of_bytes<T>(run_vec(op.body, dt, dt, bytes_of(a), bytes_of(b), bytes_of(c)));
            for (size_t l = 0; l < out.size(); l++) {
                T want = static_cast<T>(op.ref(a[l], b[l], c[l]));
                if (out[l] != want) {
                    FAIL("lane " << l << ": " << W(a[l]) << ", " << W(b[l]) << " -> " << W(out[l])
                                 << " want " << W(want));
                }
            }
        }
    };
    check(int32_t{}, HPU_TPC_DT_I32);
    check(uint32_t{}, HPU_TPC_DT_U32);
    check(int16_t{}, HPU_TPC_DT_I16);
    check(uint16_t{}, HPU_TPC_DT_U16);
    check(int8_t{}, HPU_TPC_DT_I8);
    check(uint8_t{}, HPU_TPC_DT_U8);
}

TEST_CASE("TPC vcvt f32 -> bf16: every rounding mode, saturation, NaN, stochastic", "[emu][tpc][isa]")
{
    auto a = special_f32(8);
    a[3] = 3.3961e38f;                                // rounds up past the largest bf16
    a[4] = -3.3961e38f;
    a[5] = bits_f32(0x3f808000);                      // a tie, even below
    a[6] = bits_f32(0x3f818000);                      // a tie, even above
    a[7] = bits_f32(0x7fc12345);
    struct Mode {
        const char *sfx;
        unsigned rm;
        bool sat;
    };
    for (Mode m : {Mode{"", 0, false}, Mode{".rz", 1, false}, Mode{".ru", 2, false},
                   Mode{".rd", 3, false}, Mode{".sat", 0, true}, Mode{".sr", 4, false}}) {
        CAPTURE(m.sfx);
        std::string body = std::string("vcvt.bf16.f32") + m.sfx + " v3, v0, 1";
        auto out = of_bytes<uint16_t>(run_vec(body, HPU_TPC_DT_F32, HPU_TPC_DT_BF16, bytes_of(a),
                                              bytes_of(a), bytes_of(a), 42));
        for (size_t l = 0; l < 128; l++) {
            if (l < 64) {
                CHECK(out[l] == 0);                   // part 1: lanes 64..127 only
                continue;
            }
            uint32_t u = f32_bits(a[l - 64]);
            uint32_t r;
            bool nan = (u & 0x7fffffff) > 0x7f800000, inf = (u & 0x7fffffff) == 0x7f800000;
            bool neg = u >> 31, inexact = (u & 0xffff) != 0;
            switch (m.rm) {
            case 1: r = u >> 16; break;
            case 2: r = (u >> 16) + (!neg && inexact); break;
            case 3: r = (u >> 16) + (neg && inexact); break;
            case 4: r = (u + (hpu_tpc_rand_word(42, 0, 0, static_cast<uint32_t>(l)) & 0xffff)) >> 16; break;
            default: r = (u + 0x7fff + ((u >> 16) & 1)) >> 16; break;
            }
            if (nan) {
                r = (u >> 16) | 0x40;
            } else if (inf) {
                r = u >> 16;
            } else if (m.sat && (r & 0x7fff) == 0x7f80) {
                r = (r & 0x8000) | 0x7f7f;
            }
            if (out[l] != static_cast<uint16_t>(r)) {
                FAIL("lane " << l << " of 0x" << std::hex << u << ": 0x" << out[l] << " want 0x" << r);
            }
        }
    }
}

TEST_CASE("TPC vcvt: fp to integer clamps and NaN is 0; integer narrowing wraps or saturates",
          "[emu][tpc][isa]")
{
    auto a = special_f32(9);
    auto out = of_bytes<int32_t>(run_vec("vcvt.i32.f32.rz v3, v0, 0", HPU_TPC_DT_F32,
                                         HPU_TPC_DT_I32, bytes_of(a), bytes_of(a), bytes_of(a)));
    for (size_t l = 0; l < 64; l++) {
        double t = std::trunc(static_cast<double>(a[l]));
        int32_t want = std::isnan(a[l]) ? 0
                       : t < INT32_MIN  ? INT32_MIN
                       : t > INT32_MAX  ? INT32_MAX
                                        : static_cast<int32_t>(t);
        CHECK(out[l] == want);
    }
    auto ia = special_int<int32_t>(3);
    for (bool sat : {false, true}) {
        std::string body = std::string("vcvt.i8.i32") + (sat ? ".sat" : "") + " v3, v0, 2";
        auto o8 = of_bytes<int8_t>(run_vec(body, HPU_TPC_DT_I32, HPU_TPC_DT_I8, bytes_of(ia),
                                           bytes_of(ia), bytes_of(ia)));
        for (size_t l = 0; l < 64; l++) {
            int32_t v = ia[l];
            int8_t want = sat ? static_cast<int8_t>(std::clamp(v, -128, 127)) : static_cast<int8_t>(v);
            CHECK(o8[128 + l] == want);
            CHECK(o8[l] == 0);
        }
    }
}

TEST_CASE("TPC reductions combine lanes in the fixed tree", "[emu][tpc][isa]")
{
    auto a = values(64, 17, false);
    auto out = of_bytes<float>(run_vec("vredsum.f32 v3, v0", HPU_TPC_DT_F32, HPU_TPC_DT_F32,
                                       bytes_of(a), bytes_of(a), bytes_of(a)));
    std::vector<float> t = a;
    for (size_t s = 32; s; s /= 2) {
        for (size_t l = 0; l < s; l++) {
            t[l] = t[l] + t[l + s];
        }
    }
    for (size_t l = 0; l < 64; l++) {
        CHECK(f32_bits(out[l]) == f32_bits(t[0]));
    }
    auto ia = special_int<uint8_t>(5);
    auto o = of_bytes<uint8_t>(run_vec("vredmax.u8 v3, v0", HPU_TPC_DT_U8, HPU_TPC_DT_U8,
                                       bytes_of(ia), bytes_of(ia), bytes_of(ia)));
    CHECK(o[17] == 255);
}

TEST_CASE("TPC scalar slot: arithmetic, division rules, shifts, compares, select, cvt",
          "[emu][tpc][isa]")
{
    Rig r;
    Space s(r, 0, false);
    uint64_t out = s.alloc(64);
    auto run = [&](const std::string &body, uint32_t x, uint32_t y) {
        std::string src = ".kernel sc\n.tensors 1\n.scalars 2\n.index_dims 1\n"
                          "        ldarg s1, 0\n        ldarg s2, 1\n" + body +
                          "\n        st.ts.u32 t0, i0, s3\n        halt\n";
        LaunchDesc ld;
        ld.scalars = {x, y};
        ld.tensors = {TDesc::dense(HPU_TPC_DT_U32, out, {1})};
        REQUIRE(r.run_cb(tpc_cb(place_launch(s, tpc_asm(src), ld)), 0, TPC_E, 0).status ==
                HPU_CQ_OK);
        return get_elems<uint32_t>(s, out, 1)[0];
    };
    const uint32_t IMIN = 0x80000000u;
    struct Case {
        const char *body;
        uint32_t x, y, want;
    };
    const std::vector<Case> cases = {
        {"add.i32 s3, s1, s2", 0x7fffffffu, 1, IMIN},
        {"sub.u32 s3, s1, s2", 0, 1, 0xffffffffu},
        {"mul.i32 s3, s1, s2", 0x10000u, 0x10000u, 0},
        {"div.i32 s3, s1, s2", static_cast<uint32_t>(-7), 2, static_cast<uint32_t>(-3)},
        {"div.i32 s3, s1, s2", 5, 0, 0xffffffffu},
        {"div.u32 s3, s1, s2", 5, 0, 0xffffffffu},
        {"div.i32 s3, s1, s2", IMIN, 0xffffffffu, IMIN},
        {"rem.i32 s3, s1, s2", static_cast<uint32_t>(-7), 2, static_cast<uint32_t>(-1)},
        {"rem.i32 s3, s1, s2", 9, 0, 9},
        {"rem.i32 s3, s1, s2", IMIN, 0xffffffffu, 0},
        {"rem.u32 s3, s1, s2", 9, 4, 1},
        {"min.i32 s3, s1, s2", static_cast<uint32_t>(-1), 1, static_cast<uint32_t>(-1)},
        {"min.u32 s3, s1, s2", static_cast<uint32_t>(-1), 1, 1},
        {"max.f32 s3, s1, s2", f32_bits(-0.0f), f32_bits(0.0f), f32_bits(0.0f)},
        {"min.f32 s3, s1, s2", f32_bits(-0.0f), f32_bits(0.0f), f32_bits(-0.0f)},
        {"add.f32 s3, s1, s2", f32_bits(1.5f), f32_bits(2.25f), f32_bits(3.75f)},
        {"div.f32 s3, s1, s2", f32_bits(1.0f), f32_bits(0.0f), f32_bits(INFINITY)},
        {"shl s3, s1, s2", 1, 31, IMIN},
        {"shl s3, s1, s2", 1, 32, 0},
        {"shr.i32 s3, s1, s2", IMIN, 40, 0xffffffffu},
        {"shr.u32 s3, s1, s2", IMIN, 31, 1},
        {"and s3, s1, s2", 0xf0f0u, 0xff00u, 0xf000u},
        {"or s3, s1, s2", 0xf0f0u, 0xff00u, 0xfff0u},
        {"xor s3, s1, s2", 0xf0f0u, 0xff00u, 0x0ff0u},
        {"not s3, s1", 0, 0, 0xffffffffu},
        {"mov s3, -5", 0, 0, static_cast<uint32_t>(-5)},
        {"cmp.lt.i32 sp1, s1, s2\n sel s3, sp1, s1, s2", static_cast<uint32_t>(-1), 1,
         static_cast<uint32_t>(-1)},
        {"cmp.lt.u32 sp1, s1, s2\n sel s3, sp1, s1, s2", static_cast<uint32_t>(-1), 1, 1},
        {"cmp.ne.f32 sp1, s1, s2\n sel s3, sp1, s1, 7", f32_bits(NAN), f32_bits(NAN),
         f32_bits(NAN)},
        {"cmp.eq.f32 sp1, s1, s2\n mov s6, 1\n sel s3, sp1, s6, 2", f32_bits(-0.0f), f32_bits(0.0f), 1},
        {"cvt.i32.f32.rd s3, s1", f32_bits(-1.5f), 0, static_cast<uint32_t>(-2)},
        {"cvt.i32.f32 s3, s1", f32_bits(2.5f), 0, 2},
        {"cvt.u32.f32 s3, s1", f32_bits(-3.0f), 0, 0},
        {"cvt.i32.f32 s3, s1", f32_bits(NAN), 0, 0},
        {"cvt.f32.u32.rz s3, s1", 0xffffffffu, 0, f32_bits(4294967040.0f)},
        {"cvt.f32.u32 s3, s1", 0xffffffffu, 0, f32_bits(4294967296.0f)},
        {"cvt.f32.i32.ru s3, s1", 16777217u, 0, f32_bits(16777218.0f)},
        {"pset sp2, 1\n pnot sp3, sp2\n mov s6, 1\n sel s3, sp3, s6, 2", 0, 0, 2},
        {"iid i1\n iset i1, i1, 3, s1\n iadd i1, i1, 3, s2\n iget s3, i1, 3", 40, 2, 42},
        {"imov i2, i0\n imul i2, i2, 0, 3\n iget s3, i2, 0", 0, 0, 0},
        {"mov s3, 3\n loop s3, 5\n halt", 0, 0, 2},
    };
    for (const auto &c : cases) {
        CAPTURE(c.body, c.x, c.y);
        CHECK(run(c.body, c.x, c.y) == c.want);
    }
}

TEST_CASE("TPC lane moves and predicates: vsel vbcast vshuf vrot vext vins viota vp*",
          "[emu][tpc][isa]")
{
    std::vector<uint32_t> a(64), b(64);
    for (uint32_t l = 0; l < 64; l++) {
        a[l] = 1000 + l;
        b[l] = (l * 7) % 64 + 64 * (l & 1);           // shuffle indexes, mod lanes
    }
    auto run = [&](const std::string &body) {
        return of_bytes<uint32_t>(run_vec(body, HPU_TPC_DT_U32, HPU_TPC_DT_U32, bytes_of(a),
                                          bytes_of(b), bytes_of(a)));
    };
    auto o = run("vbcast.u32 v3, v0, 5");
    CHECK(std::all_of(o.begin(), o.end(), [](uint32_t x) { return x == 1005; }));
    o = run("vshuf.u32 v3, v0, v1");
    for (uint32_t l = 0; l < 64; l++) {
        CHECK(o[l] == a[b[l] % 64]);
    }
    o = run("vrot.u32 v3, v0, 3");
    for (uint32_t l = 0; l < 64; l++) {
        CHECK(o[l] == a[(l + 3) % 64]);
    }
    o = run("viota.u32 v4\n vcmp.ge.u32 vp1, v4, 60\n vsel.u32 v3, vp1, v0, 7");
    for (uint32_t l = 0; l < 64; l++) {
        CHECK(o[l] == (l >= 60 ? a[l] : 7u));
    }
    o = run("vext.u32 s5, v0, 9\n vmov.u32 v3, 0\n vins.u32 v3, s5, 2");
    for (uint32_t l = 0; l < 64; l++) {
        CHECK(o[l] == (l == 2 ? 1009u : 0u));
    }
    o = run("viota.u32 v4\n vcmp.lt.u32 vp1, v4, 10\n vpnot vp2, vp1\n vpcount s4, vp1\n"
            " vpfirst s5, vp2\n vmov.u32 v3, s4\n vins.u32 v3, s5, 1");
    CHECK(o[0] == 10u);
    CHECK(o[1] == 10u);
    CHECK(o[2] == 10u);
    o = run("pset sp1, 1\n vpset vp3, sp1\n vpcount s4, vp3\n vmov.u32 v3, s4");
    CHECK(o[0] == 256u);
    o = run("viota.u32 v4\n vcmp.lt.u32 vp1, v4, 4\n vcmp.lt.u32 vp2, v4, 6\n vpxor vp3, vp1, vp2\n"
            " (vp3) vmov.u32 v3, 1");
    for (uint32_t l = 0; l < 64; l++) {
        CHECK(o[l] == (l >= 4 && l < 6 ? 1u : 0u));
    }
}

TEST_CASE("TPC local memory, arguments and tensor sizes; LOCAL beyond the declared size",
          "[emu][tpc][isa]")
{
    const char *src = R"(
.kernel lm
.tensors 2
.scalars 1
.index_dims 1
.slm 64
.vlm 512
.tensor 0, i8
.tensor 1, i32
        ldarg s1, 0 ; viota.i8 v1
        tsize s2, t0, 0
        mov s6, 256
        st.l [s1 + 4], s2
        st.lv [s6], v1
        ld.l s3, [8]
        ld.lv v2, [256]
        vext.i8 s4, v2, 200
        ld.ts.i8 s5, t0, i0
        st.ts.i32 t1, i0, s3
        iadd i0, i0, 0, 1
        st.ts.i32 t1, i0, s4
        iadd i0, i0, 0, 1
        st.ts.i32 t1, i0, s5
        halt
)";
    Rig r;
    Space s(r, 0, false);
    uint64_t t0 = s.alloc(64), t1 = s.alloc(64);
    std::vector<int8_t> in = {-3, 1, 2};
    put_elems(s, t0, in);
    LaunchDesc ld;
    ld.scalars = {4};
    ld.tensors = {TDesc::dense(HPU_TPC_DT_I8, t0, {3}), TDesc::dense(HPU_TPC_DT_I32, t1, {3})};
    REQUIRE(r.run_cb(tpc_cb(place_launch(s, tpc_asm(src), ld)), 0, TPC_E, 0).status == HPU_CQ_OK);
    auto o = get_elems<int32_t>(s, t1, 3);
    CHECK(o[0] == 3);          // tsize, stored at [4 + 4], read at [8]
    CHECK(o[1] == 200 - 256);  // viota i8 lane 200 sign-extended
    CHECK(o[2] == -3);         // ld.ts sign-extends
    // beyond .slm: LOCAL
    r.setup_eq();
    ld.scalars = {60};
    Cqe c = r.run_cb(tpc_cb(place_launch(s, tpc_asm(src), ld)), 0, TPC_E, 0);
    CHECK(c.status == HPU_CQ_TPC_ILLEGAL);
    CHECK(r.eqe(0).info >> 8 == HPU_TPC_ILL_LOCAL);
    CHECK(r.eqe(0).addr == 3u * 64);
}

TEST_CASE("TPC conversions between all types: integer to float rounding, bf16 widening",
          "[emu][tpc][isa]")
{
    std::vector<int32_t> ia(64);
    for (int l = 0; l < 64; l++) {
        ia[static_cast<size_t>(l)] = (l % 2 ? -1 : 1) * (16777217 + 3 * l * 1000003);
    }
    for (auto [m, rm] : {std::pair{"", 0}, {".rz", 1}, {".ru", 2}, {".rd", 3}}) {
        CAPTURE(m);
        auto o = of_bytes<float>(run_vec(std::string("vcvt.f32.i32") + m + " v3, v0, 0",
                                         HPU_TPC_DT_I32, HPU_TPC_DT_F32, bytes_of(ia),
                                         bytes_of(ia), bytes_of(ia)));
        for (size_t l = 0; l < 64; l++) {
            double v = ia[l];
            float f = static_cast<float>(v);
            if (rm == 1 && std::fabs(static_cast<double>(f)) > std::fabs(v)) {
                f = std::nextafter(f, 0.0f);
            } else if (rm == 2 && static_cast<double>(f) < v) {
                f = std::nextafter(f, INFINITY);
            } else if (rm == 3 && static_cast<double>(f) > v) {
                f = std::nextafter(f, -INFINITY);
            }
            CHECK(f32_bits(o[l]) == f32_bits(f));
        }
    }
    // bf16 -> f32 exact, widening part 1 takes source lanes 64..127
    std::vector<uint16_t> h(128);
    for (size_t l = 0; l < 128; l++) {
        h[l] = static_cast<uint16_t>(0x3f80 + l * 3);
    }
    auto o = of_bytes<float>(run_vec("vcvt.f32.bf16 v3, v0, 1", HPU_TPC_DT_BF16, HPU_TPC_DT_F32,
                                     bytes_of(h), bytes_of(h), bytes_of(h)));
    for (size_t l = 0; l < 64; l++) {
        CHECK(f32_bits(o[l]) == static_cast<uint32_t>(h[64 + l]) << 16);
    }
    // u8 -> i16 (values fit), i16 -> u8 saturating
    std::vector<uint8_t> u(256);
    for (size_t l = 0; l < 256; l++) {
        u[l] = static_cast<uint8_t>(255 - l);
    }
    auto w = of_bytes<int16_t>(run_vec("vcvt.i16.u8 v3, v0, 1", HPU_TPC_DT_U8, HPU_TPC_DT_I16,
                                       bytes_of(u), bytes_of(u), bytes_of(u)));
    for (size_t l = 0; l < 128; l++) {
        CHECK(w[l] == static_cast<int16_t>(u[128 + l]));
    }
    std::vector<int16_t> sv(128);
    for (size_t l = 0; l < 128; l++) {
        sv[l] = static_cast<int16_t>((static_cast<int>(l) - 64) * 9);
    }
    auto n = of_bytes<uint8_t>(run_vec("vcvt.u8.i16.sat v3, v0, 0", HPU_TPC_DT_I16, HPU_TPC_DT_U8,
                                       bytes_of(sv), bytes_of(sv), bytes_of(sv)));
    for (size_t l = 0; l < 128; l++) {
        CHECK(n[l] == static_cast<uint8_t>(std::clamp<int>(sv[l], 0, 255)));
    }
}

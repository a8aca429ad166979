// SPDX-License-Identifier: MIT
//
// Running the TPC kernel library's kernels on the device model's core: a
// Rig with one Space (HBM, ASID 0), typed tensors placed there with any
// strides and padding, launches by name from the embedded table, and the
// error measures of the README's accuracy bounds.
//
// Copyright (c) 2026 The hpu authors
#pragma once

#include "hpu_tpc_rig.hpp"
#include "tpc_kernels.h"
#include "tpc_ref.hpp"

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace hpu_test {

namespace kref = hpu::kernels::ref;

inline unsigned esize(uint8_t dt)
{
    switch (dt) {
    case HPU_TPC_DT_BF16:
    case HPU_TPC_DT_I16:
    case HPU_TPC_DT_U16:
        return 2;
    case HPU_TPC_DT_I8:
    case HPU_TPC_DT_U8:
        return 1;
    default:
        return 4;
    }
}

// A tensor in the rig's HBM: its descriptor and its backing elements (as
// raw element bits, up to 32 bits, in memory order).
struct Tensor {
    TDesc d;
    size_t n = 0; // backing elements

    // index of coordinate @c in the backing store
    [[nodiscard]] size_t at(uint32_t c0, uint32_t c1 = 0, uint32_t c2 = 0, uint32_t c3 = 0) const
    {
        return size_t{c0} * d.stride[0] + size_t{c1} * d.stride[1] + size_t{c2} * d.stride[2] +
               size_t{c3} * d.stride[3];
    }
    [[nodiscard]] uint32_t size(unsigned k) const { return k < d.ndims ? d.size[k] : 1; }
};

struct Lib {
    Rig r;
    Space s{r, 0, false};

    // A tensor of @sizes with @strides (empty: dense), its backing store
    // filled with @bits (raw element values; zero-filled when shorter).
    Tensor tensor(uint8_t dt, std::vector<uint32_t> sizes, const std::vector<uint32_t> &bits = {},
                  std::vector<uint32_t> strides = {}, uint32_t pad = 0)
    {
        Tensor t;
        t.d.dtype = dt;
        t.d.pad = pad;
        t.d.ndims = static_cast<uint8_t>(sizes.size());
        uint32_t st = 1;
        for (size_t k = 0; k < sizes.size(); k++) {
            t.d.size[k] = sizes[k];
            t.d.stride[k] = strides.empty() ? st : strides[k];
            st *= sizes[k];
        }
        t.n = t.d.elems();
        const unsigned es = esize(dt);
        t.d.base = s.alloc(t.n * es);
        std::vector<uint8_t> raw(t.n * es);
        for (size_t i = 0; i < bits.size() && i < t.n; i++) {
            std::memcpy(&raw[i * es], &bits[i], es);
        }
        s.write(t.d.base, raw.data(), raw.size());
        return t;
    }
    std::vector<uint32_t> read(const Tensor &t)
    {
        const unsigned es = esize(t.d.dtype);
        auto raw = s.read(t.d.base, t.n * es);
        std::vector<uint32_t> v(t.n);
        for (size_t i = 0; i < t.n; i++) {
            std::memcpy(&v[i], &raw[i * es], es);
        }
        return v;
    }
    // Launch kernel @name over @index; the completion status.
    uint32_t launch(const std::string &name, const std::vector<Tensor> &ts,
                    const std::vector<uint32_t> &scalars, std::array<uint32_t, 5> index,
                    uint64_t seed = 0)
    {
        const hpu::kernels::TpcKernel *k = hpu::kernels::find_tpc_kernel(name);
        INFO("kernel " << name);
        REQUIRE(k != nullptr);
        std::vector<uint8_t> bin(k->data, k->data + k->size);
        LaunchDesc ld;
        for (unsigned d = 0; d < 5; d++) {
            ld.index[d] = index[d];
        }
        ld.seed = seed;
        ld.scalars = scalars;
        for (const Tensor &t : ts) {
            ld.tensors.push_back(t.d);
        }
        uint64_t desc = place_launch(s, bin, ld);
        return r.run_cb(tpc_cb(desc), 0, TPC_E, 0).status;
    }
};

// The elementwise index space over @out (README).
inline std::array<uint32_t, 5> ew_index(const Tensor &out)
{
    return {(out.size(0) + 255) / 256, out.size(1), out.size(2), out.size(3), 1};
}

// Values uniform in [lo, hi), FP32 bits, rounded to BF16 when @bf16.
inline std::vector<uint32_t> rand_f32(size_t n, uint32_t seed, float lo, float hi,
                                      bool bf16 = false)
{
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> u(lo, hi);
    std::vector<uint32_t> v(n);
    for (auto &x : v) {
        float f = u(g);
        x = bf16 ? kref::f32_to_bf16(f) : kref::f32_bits(f);
    }
    return v;
}

inline float elem_f32(uint32_t bits, bool bf16)
{
    return bf16 ? kref::bf16_to_f32(static_cast<uint16_t>(bits)) : kref::bits_f32(bits);
}

// FP32 values from their bits.
inline std::vector<float> floats(const std::vector<uint32_t> &v)
{
    std::vector<float> f(v.size());
    for (size_t i = 0; i < v.size(); i++) {
        f[i] = kref::bits_f32(v[i]);
    }
    return f;
}

// Distance in units in the last place between FP32 values (ordered bits;
// +0 and -0 are one apart, NaNs equal only to NaNs).
inline double ulp_dist_f32(float a, float b)
{
    if (std::isnan(a) || std::isnan(b)) {
        return (std::isnan(a) && std::isnan(b)) ? 0 : INFINITY;
    }
    auto ord = [](float f) {
        int64_t u = kref::f32_bits(f);
        return (u & 0x80000000) ? -(u & 0x7fffffff) : u;
    };
    return static_cast<double>(std::llabs(ord(a) - ord(b)));
}

// The error of @got against the exact @ref in ulps of the result type:
// FP32, or BF16 (ulps of bfloat16: 2^16 FP32 ulps).
inline double ulp_err(float got, double ref, bool bf16)
{
    auto r = static_cast<float>(ref);
    if (bf16) {
        // against the exact value rounded to BF16, in BF16 ulps
        return ulp_dist_f32(got, kref::round_bf16(r)) / 65536.0;
    }
    return ulp_dist_f32(got, r);
}

// Measured errors, printed when TPCLIB_REPORT is set (the README's
// "measured" column comes from this).
inline void report(const std::string &what, double worst, const char *unit)
{
    if (std::getenv("TPCLIB_REPORT")) {
        std::printf("measured %-28s %.3g %s\n", what.c_str(), worst, unit);
    }
}

} // namespace hpu_test

namespace hpu_test {

// ulp of FP32 (or BF16, 16 fewer bits) at magnitude @m (the smallest
// normal's for tiny or zero @m).
inline double ulp_at(double m, bool bf16)
{
    m = std::max(std::fabs(m), static_cast<double>(std::numeric_limits<float>::min()));
    return std::ldexp(1.0, std::ilogb(m) - (bf16 ? 7 : 23));
}

// |got - ref| in ulps of max(|ref|, scale): the README's error measure
// ("ulp" when scale is 0, "ulp of max(|result|, scale)" otherwise).
inline double err_ulps(float got, double ref, double scale, bool bf16)
{
    if (std::isnan(ref) || std::isnan(got)) {
        return std::isnan(ref) && std::isnan(got) ? 0 : INFINITY;
    }
    if (std::isinf(ref) || std::isinf(got)) {
        return got == ref ? 0 : INFINITY;
    }
    return std::fabs(static_cast<double>(got) - ref) / ulp_at(std::max(std::fabs(ref), scale), bf16);
}

// Worst error of a run and the first element beyond the bound.
struct Worst {
    explicit Worst(double b) : bound(b) {}
    double bound;
    double worst = 0;
    size_t bad = 0;
    std::string first;
    void add(double e, const std::string &where)
    {
        worst = std::max(worst, e);
        if (!(e <= bound)) {
            if (!bad++) {
                first = where;
            }
        }
    }
};

} // namespace hpu_test

namespace hpu_test {

// The magnitudes layer norm's dx is made of, per element of a row (the
// scale of its error bound): rstd (|g| + mean|g| + |xhat| mean|g xhat|),
// g = dy gamma, xhat = (x - mean) rstd.
inline std::vector<double> layernorm_grad_scales(const std::vector<float> &x,
                                                 const std::vector<float> &gamma,
                                                 const std::vector<float> &dy, double mean,
                                                 double rstd)
{
    const auto n = static_cast<double>(x.size());
    double ag = 0, agx = 0;
    for (size_t i = 0; i < x.size(); i++) {
        ag += std::fabs(double{dy[i]} * gamma[i]) / n;
        agx += std::fabs(double{dy[i]} * gamma[i] * (x[i] - mean) * rstd) / n;
    }
    std::vector<double> sc(x.size());
    for (size_t i = 0; i < x.size(); i++) {
        sc[i] = rstd * (std::fabs(double{dy[i]} * gamma[i]) + ag +
                        std::fabs((x[i] - mean) * rstd) * agx);
    }
    return sc;
}

} // namespace hpu_test

namespace hpu_test {

// A coordinate of up to five dimensions (dimension 0 first).
using Coord = std::array<uint32_t, 5>;

// Index of coordinate @c of @t in its backing store.
inline size_t at5(const Tensor &t, const Coord &c)
{
    size_t o = 0;
    for (unsigned k = 0; k < 5; k++) {
        o += size_t{c[k]} * t.d.stride[k];
    }
    return o;
}

// The element of input @t that output coordinate @c reads when @t
// broadcasts (a size-1 dimension is read at 0; stride 0 needs nothing).
inline size_t bcast_at5(const Tensor &t, Coord c)
{
    for (unsigned k = 0; k < 5; k++) {
        if (t.size(k) == 1) {
            c[k] = 0;
        }
    }
    return at5(t, c);
}

// Visit every coordinate of @t, dimension 0 fastest.
template <typename F> void each5(const Tensor &t, F &&f)
{
    Coord c{};
    const uint64_t total = uint64_t{t.size(0)} * t.size(1) * t.size(2) * t.size(3) * t.size(4);
    for (uint64_t i = 0; i < total; i++) {
        f(static_cast<const Coord &>(c));
        for (unsigned k = 0; k < 5 && ++c[k] == t.size(k); k++) {
            c[k] = 0;
        }
    }
}

// Every backing element of @out not covered by a coordinate still holds 0.
inline bool gaps_untouched(const Tensor &out, const std::vector<uint32_t> &got)
{
    std::vector<bool> used(out.n);
    each5(out, [&](const Coord &c) { used[at5(out, c)] = true; });
    for (size_t i = 0; i < out.n; i++) {
        if (!used[i] && got[i]) {
            return false;
        }
    }
    return true;
}

// Backing elements of a view of @sz with strides @st (empty: dense).
inline uint32_t elems_of(const std::vector<uint32_t> &sz, const std::vector<uint32_t> &st)
{
    uint64_t e = 0;
    uint32_t dense = 1;
    for (size_t k = 0; k < sz.size(); k++) {
        e += uint64_t{sz[k] - 1} * (st.empty() ? dense : st[k]);
        dense *= sz[k];
    }
    return static_cast<uint32_t>(e + 1);
}

// The data kernels' index space over @out: elementwise in five dimensions.
inline std::array<uint32_t, 5> ew5_index(const Tensor &out)
{
    return {(out.size(0) + 255) / 256, out.size(1), out.size(2), out.size(3), out.size(4)};
}

} // namespace hpu_test

// SPDX-License-Identifier: MIT
//
// Shared by the window and channel kernels' tests (test_cnn*.cpp): NCHW
// tensors placed with gaps that hold a sentinel, read back with the gaps
// checked, exact comparisons, the window geometries and batch-norm shapes.
//
// Copyright (c) 2026 The hpu authors
#pragma once

#include "tpclib_rig.hpp"

#include <functional>

namespace hpu_test {

using kref::Nchw;
using kref::Window2d;

inline constexpr uint32_t kSentinel = 0x7fa5a5a5u; // a NaN no kernel here produces
inline constexpr uint32_t kSentinel16 = 0x7fa5u;     // the same for 2-byte elements
inline constexpr uint32_t kNegInf = 0xff800000u;
inline constexpr uint8_t F32 = HPU_TPC_DT_F32, I32 = HPU_TPC_DT_I32, BF16 = HPU_TPC_DT_BF16;

// The sentinel of an element type's size.
inline uint32_t sentinel(uint8_t dt) { return esize(dt) == 2 ? kSentinel16 : kSentinel; }
inline constexpr double kU = 0x1p-24;

// Element bits of FP32 values: FP32 as they are, BF16 rounded to nearest even.
inline std::vector<uint32_t> to_elems(uint8_t dt, const std::vector<float> &f)
{
    std::vector<uint32_t> v(f.size());
    for (size_t i = 0; i < f.size(); i++) {
        v[i] = dt == BF16 ? kref::f32_to_bf16(f[i]) : kref::f32_bits(f[i]);
    }
    return v;
}

// FP32 values of element bits (BF16 widened exactly).
inline std::vector<float> from_elems(uint8_t dt, const std::vector<uint32_t> &v)
{
    std::vector<float> f(v.size());
    for (size_t i = 0; i < v.size(); i++) {
        f[i] = elem_f32(v[i], dt == BF16);
    }
    return f;
}

// A tensor in the rig and where each of its elements (dimension 0 fastest)
// lies in its backing store; everything else there holds the sentinel.
struct Placed {
    Tensor t;
    std::vector<size_t> pos;
};

inline Placed put_tensor(Lib &L, uint8_t dt, const std::vector<uint32_t> &sizes,
                  const std::vector<uint32_t> &strides, const std::vector<uint32_t> &vals,
                  uint32_t pad = 0)
{
    Placed p{L.tensor(dt, sizes, {}, strides, pad), {}};
    const Tensor &t = p.t;
    for (uint32_t d3 = 0; d3 < t.size(3); d3++) {
        for (uint32_t d2 = 0; d2 < t.size(2); d2++) {
            for (uint32_t d1 = 0; d1 < t.size(1); d1++) {
                for (uint32_t d0 = 0; d0 < t.size(0); d0++) {
                    p.pos.push_back(t.at(d0, d1, d2, d3));
                }
            }
        }
    }
    const unsigned es = esize(dt);
    const uint32_t sent = sentinel(dt);
    std::vector<uint8_t> img(t.n * es);
    for (size_t i = 0; i < t.n; i++) {
        std::memcpy(&img[i * es], &sent, es);
    }
    for (size_t i = 0; i < vals.size(); i++) {
        std::memcpy(&img[p.pos[i] * es], &vals[i], es);
    }
    L.s.write(t.d.base, img.data(), img.size());
    return p;
}

// [W, H, C, N] of @s: rows @rgap elements longer than W, planes (H rows)
// @pgap longer than their rows.
inline Placed nchw(Lib &L, uint8_t dt, const Nchw &s, const std::vector<uint32_t> &vals,
            uint32_t rgap = 0, uint32_t pgap = 0, uint32_t pad = 0)
{
    const uint32_t s1 = s.w + rgap, s2 = s1 * s.h + pgap;
    return put_tensor(L, dt, {s.w, s.h, s.c, s.n}, {1, s1, s2, s2 * s.c}, vals, pad);
}

// A per-channel [C] tensor, every other element.
inline Placed chan(Lib &L, const std::vector<uint32_t> &vals, uint32_t c)
{
    return put_tensor(L, F32, {c}, {2}, vals);
}

// The elements of @p; adds to @stray the backing elements outside them
// that lost their sentinel.
inline std::vector<uint32_t> read_back(Lib &L, const Placed &p, size_t &stray)
{
    auto img = L.read(p.t);
    std::vector<uint32_t> v(p.pos.size());
    std::vector<bool> used(img.size());
    for (size_t i = 0; i < v.size(); i++) {
        v[i] = img[p.pos[i]];
        used[p.pos[i]] = true;
    }
    for (size_t i = 0; i < img.size(); i++) {
        stray += !used[i] && img[i] != sentinel(p.t.d.dtype);
    }
    return v;
}

// @got holds @want's bits, element by element.
template <typename T>
inline void check_exact(const std::vector<uint32_t> &got, const std::vector<T> &want)
{
    size_t bad = 0;
    std::string first;
    for (size_t i = 0; i < got.size(); i++) {
        uint32_t w = 0;
        std::memcpy(&w, &want[i], 4);
        if (got[i] != w && !bad++) {
            first = std::to_string(i) + ": got " + std::to_string(got[i]) + " want " +
                    std::to_string(w);
        }
    }
    INFO("first difference at " << first);
    CHECK(bad == 0);
}

inline std::vector<uint32_t> scalars(const Window2d &g)
{
    auto a = g.scalars();
    return {a.begin(), a.end()};
}

// A member per 64 elements of a row of @s.
inline std::array<uint32_t, 5> vec_index(const Nchw &s) { return {(s.w + 63) / 64, s.h, s.c, s.n, 1}; }

struct Geo {
    const char *name = "";
    Nchw x;
    Window2d g;
    uint32_t k = 1; // output channels of the convolution
};

// {n, c, h, w}, {kh, kw, sh, sw, ph, pw, dh, dw}
inline const Geo kConv[] = {
    {"1x1 of 1x1", {1, 1, 1, 1}, {}, 1},
    {"3x3, pad 1", {2, 3, 7, 9}, {3, 3, 1, 1, 1, 1}, 4},
    {"3x2, stride 2x3, pad 1x2, dilation 1x2", {2, 2, 11, 13}, {3, 2, 2, 3, 1, 2, 1, 2}, 5},
    {"5x4, stride 2x1, pad 2x0, dilation 2x1, OW 67", {3, 1, 5, 70}, {5, 4, 2, 1, 2, 0, 2, 1}, 2},
    {"3x3, stride 2, pad 1, OW 65", {1, 2, 3, 130}, {3, 3, 2, 2, 1, 1}, 3},
    {"1x1, stride 5", {2, 1, 9, 23}, {1, 1, 5, 5}, 3},
    {"2x2, pad 3: rows and columns of padding only", {1, 2, 3, 4}, {2, 2, 1, 1, 3, 3}, 2},
    {"2x3, stride 70 over W 200", {1, 1, 2, 200}, {2, 3, 1, 70, 0, 1}, 2},
    {"a small CNN's: 3x3, pad 1 over 28x28", {4, 6, 28, 28}, {3, 3, 1, 1, 1, 1}, 8},
};

inline const Geo kPool[] = {
    {"2x2, stride 2", {2, 3, 8, 10}, {2, 2, 2, 2}, 0},
    {"3x3, stride 2, pad 1, odd", {1, 2, 7, 9}, {3, 3, 2, 2, 1, 1}, 0},
    {"3x3, stride 1, pad 1: overlapping windows, W 65", {2, 1, 5, 65}, {3, 3, 1, 1, 1, 1}, 0},
    {"2x3, stride 1x3, pad 0x1, dilation 2x1", {1, 2, 6, 11}, {2, 3, 1, 3, 0, 1, 2, 1}, 0},
    {"2x2, pad 2: windows wholly in the padding", {1, 1, 3, 3}, {2, 2, 1, 1, 2, 2}, 0},
    {"3x3, stride 2, OW 65", {1, 1, 3, 131}, {3, 3, 2, 2}, 0},
    {"1x1 of 1x1", {1, 1, 1, 1}, {}, 0},
    {"a small CNN's: 2x2, stride 2 over 28x28", {4, 8, 28, 28}, {2, 2, 2, 2}, 0},
};

inline const Nchw kBn[] = {{2, 3, 5, 7}, {1, 1, 1, 3}, {3, 2, 4, 65}, {2, 5, 3, 130}, {4, 1, 2, 1},
                    {1, 2, 1, 200}, {4, 8, 28, 28}};

// The depth of the kernels' three-level sums: ceil(W / 64) + H + N.
inline double depth(const Nchw &s)
{
    const uint32_t vectors = (s.w + 63) / 64;
    return vectors + s.h + s.n;
}

// Per channel c: the mean over n, h, w of f(element index).
inline double chan_mean(const Nchw &s, uint32_t c, const std::function<double(size_t)> &f)
{
    double sum = 0;
    for (uint32_t n = 0; n < s.n; n++) {
        for (size_t i = s.at(n, c, 0, 0); i < s.at(n, c + 1, 0, 0); i++) {
            sum += f(i);
        }
    }
    return sum / (static_cast<double>(s.size()) / s.c);
}

// Visit every element index of channel c.
inline void each_in_chan(const Nchw &s, uint32_t c, const std::function<void(size_t)> &f)
{
    for (uint32_t n = 0; n < s.n; n++) {
        for (size_t i = s.at(n, c, 0, 0); i < s.at(n, c + 1, 0, 0); i++) {
            f(i);
        }
    }
}

} // namespace hpu_test

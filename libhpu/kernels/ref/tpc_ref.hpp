// SPDX-License-Identifier: MIT
//
// Host references of the TPC kernel library (libhpu/kernels/README.md),
// element by element or row by row, in plain C++. Pointwise functions come
// in two kinds: the mathematical value in double (the kernels are checked
// against it within the README's bounds), and, for kernels made of IEEE
// operations only (binary ops, casts, scale/axpy, optimizers), the exact
// FP32/BF16 result of the kernel's operation order (fused where the kernel
// fuses), which the kernels must match bit for bit. Usable by libhpu's CPU
// paths and by the tests; header only.
//
// Copyright (c) 2026 The hpu authors
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>

namespace hpu::kernels::ref {

inline uint32_t f32_bits(float f)
{
    uint32_t u = 0;
    std::memcpy(&u, &f, 4);
    return u;
}

inline float bits_f32(uint32_t u)
{
    float f = 0;
    std::memcpy(&f, &u, 4);
    return f;
}

// BF16 <-> FP32: widening is exact; narrowing rounds to nearest even, a
// NaN stays a quiet NaN (tpc.md, "Conversions").
inline float bf16_to_f32(uint16_t h) { return bits_f32(static_cast<uint32_t>(h) << 16); }

inline uint16_t f32_to_bf16(float f)
{
    uint32_t x = f32_bits(f), mag = x & 0x7fffffffu;
    if (mag > 0x7f800000u) {
        return static_cast<uint16_t>((x >> 16) | 0x40u);
    }
    if (mag == 0x7f800000u) {
        return static_cast<uint16_t>(x >> 16);
    }
    uint32_t r = (mag + 0x7fffu + ((mag >> 16) & 1u)) >> 16;
    return static_cast<uint16_t>(((x & 0x80000000u) >> 16) | r);
}

// An FP32 value rounded through BF16 (what a BF16 kernel stores, widened).
inline float round_bf16(float f) { return bf16_to_f32(f32_to_bf16(f)); }

// INT32 -> BF16 with one rounding to nearest even (the exact integer, not
// through FP32).
inline uint16_t i32_to_bf16(int32_t i)
{
    if (i == 0) {
        return 0;
    }
    double d = i;
    int e = std::ilogb(d);
    double q = std::ldexp(std::nearbyint(std::ldexp(d, 7 - e)), e - 7); // 8 significant bits
    return static_cast<uint16_t>(f32_bits(static_cast<float>(q)) >> 16);
}

// FP -> INT32 toward zero, saturating, NaN -> 0.
inline int32_t f32_to_i32_rz(float f)
{
    if (std::isnan(f)) {
        return 0;
    }
    double t = std::trunc(static_cast<double>(f));
    if (t >= 2147483647.0) {
        return std::numeric_limits<int32_t>::max();
    }
    if (t <= -2147483648.0) {
        return std::numeric_limits<int32_t>::min();
    }
    return static_cast<int32_t>(t);
}

// ---- elementwise binary ops (IEEE: FP32 correctly rounded, BF16 the FP32
// result rounded to nearest even) --------------------------------------------
enum class BinOp { add, sub, mul, div, max, min };

inline float binop_f32(BinOp op, float a, float b)
{
    switch (op) {
    case BinOp::add: return a + b;
    case BinOp::sub: return a - b;
    case BinOp::mul: return a * b;
    case BinOp::div: return a / b;
    case BinOp::max:
        if (std::isnan(a) || std::isnan(b)) {
            return std::numeric_limits<float>::quiet_NaN();
        }
        return (a == b) ? (std::signbit(a) ? b : a) : std::max(a, b);
    case BinOp::min:
        if (std::isnan(a) || std::isnan(b)) {
            return std::numeric_limits<float>::quiet_NaN();
        }
        return (a == b) ? (std::signbit(a) ? a : b) : std::min(a, b);
    }
    return 0;
}

inline float binop_bf16(BinOp op, float a, float b) { return round_bf16(binop_f32(op, a, b)); }

// ---- scale and axpy: y = alpha * x; out = fma(alpha, x, y) ----------------
inline float scale_f32(float alpha, float x) { return alpha * x; }
inline float axpy_f32(float alpha, float x, float y) { return std::fma(alpha, x, y); }

// ---- math kernels (exact ones; exp, log, sqrt, rsqrt, reciprocal are
// checked against std:: in double) ------------------------------------------
// (x > 0) - (x < 0): +0 for +-0 and NaN, as PyTorch's sign.
inline float sign_f32(float x) { return x > 0 ? 1.0f : (x < 0 ? -1.0f : 0.0f); }

// min(max(x, lo), hi) with NaN propagating (the ISA's min and max).
inline float clamp_f32(float x, float lo, float hi)
{
    return binop_f32(BinOp::min, binop_f32(BinOp::max, x, lo), hi);
}

// self + (value a) b and self + (value a) / b, PyTorch's CPU order, each
// operation rounded (no fusion).
inline float addcmul_f32(float self, float a, float b, float value)
{
    const float va = value * a;
    const float p = va * b;
    return self + p;
}
inline float addcdiv_f32(float self, float a, float b, float value)
{
    const float va = value * a;
    const float q = va / b;
    return self + q;
}

// ---- activations and their gradients, mathematical values ----------------
inline double relu(double x) { return x > 0 ? x : 0.0; }
inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x * M_SQRT1_2)); }
inline double relu_grad(double x, double dy) { return x > 0 ? dy : 0.0; }
inline double tanh_grad(double y, double dy) { return dy * (1.0 - y * y); }
inline double sigmoid_grad(double y, double dy) { return dy * y * (1.0 - y); }
inline double gelu_grad(double x, double dy)
{
    double cdf = 0.5 * (1.0 + std::erf(x * M_SQRT1_2));
    double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
    return dy * (cdf + x * pdf);
}

// ---- rows (dimension 0 of each row), in double -----------------------------
inline void softmax(std::span<const float> x, std::span<double> y)
{
    double m = -HUGE_VAL, s = 0;
    for (float v : x) {
        m = std::max<double>(m, v);
    }
    for (float v : x) {
        s += std::exp(v - m);
    }
    for (size_t i = 0; i < x.size(); i++) {
        y[i] = std::exp(x[i] - m) / s;
    }
}

inline void log_softmax(std::span<const float> x, std::span<double> y)
{
    double m = -HUGE_VAL, s = 0;
    for (float v : x) {
        m = std::max<double>(m, v);
    }
    for (float v : x) {
        s += std::exp(v - m);
    }
    double c = m + std::log(s);
    for (size_t i = 0; i < x.size(); i++) {
        y[i] = x[i] - c;
    }
}

inline void softmax_grad(std::span<const float> y, std::span<const float> dy,
                         std::span<double> dx)
{
    double d = 0;
    for (size_t i = 0; i < y.size(); i++) {
        d += static_cast<double>(y[i]) * dy[i];
    }
    for (size_t i = 0; i < y.size(); i++) {
        dx[i] = y[i] * (dy[i] - d);
    }
}

inline void log_softmax_grad(std::span<const float> y, std::span<const float> dy,
                             std::span<double> dx)
{
    double s = 0;
    for (float v : dy) {
        s += v;
    }
    for (size_t i = 0; i < y.size(); i++) {
        dx[i] = dy[i] - std::exp(static_cast<double>(y[i])) * s;
    }
}

// Cross-entropy of one row from logits: the loss; dx = (softmax - onehot) * scale.
inline double cross_entropy(std::span<const float> x, int32_t label, double scale,
                            std::span<double> dx)
{
    softmax(x, dx);
    double m = -HUGE_VAL, s = 0;
    for (float v : x) {
        m = std::max<double>(m, v);
    }
    for (float v : x) {
        s += std::exp(v - m);
    }
    for (size_t i = 0; i < x.size(); i++) {
        dx[i] = (dx[i] - (static_cast<int32_t>(i) == label ? 1.0 : 0.0)) * scale;
    }
    return m + std::log(s) - x[static_cast<size_t>(label)];
}

// Negative log-likelihood of one row of log-probabilities: -x[label], or
// 0 for a row whose label is @ignore_index (whose weight is then 0, else 1).
inline float nll_loss(std::span<const float> x, int32_t label, int32_t ignore_index)
{
    return label == ignore_index ? 0.0f : -x[static_cast<size_t>(label)];
}

// Its gradient's one nonzero element of a row: -(dy scale), FP32.
inline float nll_loss_grad(float dy, float scale) { return -(dy * scale); }

// First index of the maximum, or of the first NaN.
inline int32_t argmax(std::span<const float> x)
{
    size_t best = 0;
    for (size_t i = 0; i < x.size(); i++) {
        if (std::isnan(x[i])) {
            return static_cast<int32_t>(i);
        }
        if (x[i] > x[best]) {
            best = i;
        }
    }
    return static_cast<int32_t>(best);
}

// ---- optimizers: the kernels' FP32 operation order, fused where marked ----
inline void sgd(float &w, float g, float lr, float wd)
{
    float g2 = std::fma(w, wd, g);
    w = std::fma(g2, -lr, w);
}

inline void sgd_momentum(float &w, float g, float &buf, float lr, float mu, float wd,
                         bool nesterov)
{
    float g2 = std::fma(w, wd, g);
    buf = std::fma(buf, mu, g2);
    float d = nesterov ? std::fma(buf, mu, g2) : buf;
    w = std::fma(d, -lr, w);
}

struct AdamW {
    float lr, b1, b2, eps, wd, c1, c2; // c1 = 1 / (1 - b1^t), c2 = 1 / (1 - b2^t)
};

inline void adamw(float &w, float g, float &m, float &v, const AdamW &p)
{
    const float decay = 1.0f - p.lr * p.wd;
    m = std::fma(m, p.b1, g * (1.0f - p.b1));
    v = std::fma(v, p.b2, (g * g) * (1.0f - p.b2));
    float den = std::sqrt(v * p.c2) + p.eps;
    float upd = (m * p.c1) / den;
    w = std::fma(upd, -p.lr, w * decay);
}

inline void adagrad(float &w, float g, float &sum, float lr, float eps, float wd)
{
    float g2 = std::fma(w, wd, g);
    sum = std::fma(g2, g2, sum);
    w = std::fma(g2 / (std::sqrt(sum) + eps), -lr, w);
}

// Dropout of one element from its random word: u = (word >> 8) * 2^-24.
inline float dropout(float x, uint32_t word, float p, float scale)
{
    float u = static_cast<float>(word >> 8) * 0x1p-24f;
    return u >= p ? x * scale : 0.0f;
}

// ---- random tensors (uniform_*, normal_*) from the RNG's words ------------
// u = (word >> 8) 2^-24 in [0, 1): what vrandu.f32 gives.
inline float rand_u01(uint32_t word) { return static_cast<float>(word >> 8) * 0x1p-24f; }

inline float uniform(uint32_t word, float from, float to)
{
    return std::fma(rand_u01(word), to - from, from);
}

// The natural log of u in (0, 1] as normal_* computes it: u = m 2^e with m
// in (sqrt(1/2), sqrt(2)], ln m = 2 atanh(s) = 2s + s^3 Q(s^2), s = (m-1)/(m+1).
inline float normal_ln(float u)
{
    const uint32_t b = f32_bits(u);
    auto e = static_cast<int32_t>(b >> 23) - 127;
    float m = bits_f32((b & 0x7fffffu) | 0x3f800000u);
    if (m > bits_f32(0x3fb504f3u)) { // sqrt(2) rounded
        m *= 0.5f;
        e += 1;
    }
    const float s = (m - 1.0f) / (m + 1.0f);
    const float z = s * s;
    static constexpr uint32_t q[] = {0x3f2aaaab, 0x3ecccccd, 0x3e924925,
                                     0x3e638e39, 0x3e3a2e8c, 0x3e1d89d9}; // 2 / (2k + 3)
    float p = std::fma(bits_f32(q[5]), z, bits_f32(q[4]));
    for (int k = 3; k >= 0; k--) {
        p = std::fma(p, z, bits_f32(q[k]));
    }
    const float lnm = std::fma(s * z, p, s + s);
    return std::fma(static_cast<float>(e), bits_f32(0x3f317218u), lnm); // + e ln2
}

// cos(2 pi u) for u in [0, 1) as normal_* computes it: with t = u - 1/2,
// -cos(2 pi t) by its Taylor series in t^2 to t^20 (FP32 coefficients).
inline float normal_cos(float u)
{
    static constexpr uint32_t d[] = {0xbf800000, 0x419de9e6, 0xc281e0f8, 0x42aae9e4,
                                     0xc270fa83, 0x41d368f9, 0xc0fce9c5, 0x3fdb7128,
                                     0xbe906316, 0x3d15062d, 0xbb77b718};
    const float t = u - 0.5f;
    const float w = t * t;
    float p = std::fma(bits_f32(d[10]), w, bits_f32(d[9]));
    for (int k = 8; k >= 0; k--) {
        p = std::fma(p, w, bits_f32(d[k]));
    }
    return p;
}

// A standard normal value from two words (draws 2n and 2n + 1, one lane):
// Box-Muller, sqrt(-2 ln u1) cos(2 pi u2) with u1 = 1 - u (in (0, 1]).
inline float normal_z(uint32_t w1, uint32_t w2)
{
    const float r = std::sqrt(normal_ln(1.0f - rand_u01(w1)) * -2.0f);
    return r * normal_cos(rand_u01(w2));
}

inline float normal(uint32_t w1, uint32_t w2, float mean, float std)
{
    return std::fma(normal_z(w1, w2), std, mean);
}

// ---- layer norm over one row ------------------------------------------------
struct LayerNormStats {
    double mean, rstd;
};

inline LayerNormStats layernorm(std::span<const float> x, std::span<const float> gamma,
                                std::span<const float> beta, double eps, std::span<double> y)
{
    const auto n = static_cast<double>(x.size());
    double mean = 0, var = 0;
    for (float v : x) {
        mean += v;
    }
    mean /= n;
    for (float v : x) {
        var += (v - mean) * (v - mean);
    }
    const double rstd = 1.0 / std::sqrt(var / n + eps);
    for (size_t i = 0; i < x.size(); i++) {
        y[i] = (x[i] - mean) * rstd * gamma[i] + beta[i];
    }
    return {mean, rstd};
}

// dx of one row from the forward's (stored) mean and rstd.
inline void layernorm_grad(std::span<const float> x, std::span<const float> gamma,
                           std::span<const float> dy, double mean, double rstd,
                           std::span<double> dx)
{
    const auto n = static_cast<double>(x.size());
    double a = 0, b = 0;
    for (size_t i = 0; i < x.size(); i++) {
        double g = static_cast<double>(dy[i]) * gamma[i];
        a += g;
        b += g * (x[i] - mean) * rstd;
    }
    a /= n;
    b /= n;
    for (size_t i = 0; i < x.size(); i++) {
        double xhat = (x[i] - mean) * rstd;
        dx[i] = rstd * (static_cast<double>(dy[i]) * gamma[i] - a - xhat * b);
    }
}

// ---- LAMB (lamb_update_f32, then the norms, then lamb_apply_f32) -------------
struct Lamb {
    float b1, b2, eps, wd, c1, c2; // c1 = 1 / (1 - b1^t), c2 = 1 / (1 - b2^t)
};

// Launch 1 for one element: the moments and the update direction u.
inline float lamb_update(float w, float g, float &m, float &v, const Lamb &p)
{
    m = std::fma(m, p.b1, g * (1.0f - p.b1));
    v = std::fma(v, p.b2, (g * g) * (1.0f - p.b2));
    return std::fma(w, p.wd, (m * p.c1) / (std::sqrt(v * p.c2) + p.eps));
}

// Launch 3: the trust ratio from the squared norms (1 if either is 0).
inline double lamb_ratio(double wsq, double usq)
{
    return wsq > 0 && usq > 0 ? std::sqrt(wsq) / std::sqrt(usq) : 1.0;
}

// Launch 2 over segments (lamb_norms_f32): partials part[first] ..
// part[end - 1] summed in order in FP32 from +0.
inline float lamb_seg_sum(const float *part, uint32_t first, uint32_t end)
{
    float s = 0.0f;
    for (uint32_t k = first; k < end; k++) {
        s += part[k];
    }
    return s;
}

// Launch 3 for one element in lamb_apply_*'s FP32 operations: the ratio
// from the FP32 squared norms, w + u * -(lr r) rounded once.
inline float lamb_apply(float w, float u, float wsq, float usq, float lr)
{
    const float r = wsq > 0 && usq > 0 ? std::sqrt(wsq) / std::sqrt(usq) : 1.0f;
    return std::fma(u, -(r * lr), w);
}

// ---- NCHW tensors, 2-D windows: conv2d by im2col, max-pool, batch norm ----
// Dense row-major [N, C, H, W] arrays (the kernels' [W, H, C, N] in
// descriptor order).
struct Nchw {
    uint32_t n = 1, c = 1, h = 1, w = 1;
    [[nodiscard]] size_t size() const { return size_t{n} * c * h * w; }
    [[nodiscard]] size_t at(uint32_t in, uint32_t ic, uint32_t ih, uint32_t iw) const
    {
        return ((size_t{in} * c + ic) * h + ih) * w + iw;
    }
};

// A window (kernel size, stride, padding, dilation per axis). Tap (r, s) of
// output (oh, ow) reads ih = oh sh - ph + r dh, iw = ow sw - pw + s dw.
struct Window2d {
    uint32_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;

    // Output size along an axis of @in elements (0 if none fits).
    static uint32_t out_len(uint32_t in, uint32_t k, uint32_t st, uint32_t pad, uint32_t dil)
    {
        const int64_t span = int64_t{in} + 2 * int64_t{pad} - int64_t{dil} * (k - 1) - 1;
        return span < 0 ? 0 : static_cast<uint32_t>(span / st + 1);
    }
    // The output of @x with @channels channels.
    [[nodiscard]] Nchw out(const Nchw &x, uint32_t channels) const
    {
        return {x.n, channels, out_len(x.h, kh, sh, ph, dh), out_len(x.w, kw, sw, pw, dw)};
    }
    // The columns of im2col: [N, C kh kw, OH, OW].
    [[nodiscard]] Nchw cols(const Nchw &x) const { return out(x, x.c * kh * kw); }
    // The kernels' scalars 0-7.
    [[nodiscard]] std::array<uint32_t, 8> scalars() const { return {kh, kw, sh, sw, ph, pw, dh, dw}; }
    // The input coordinate of tap @t at output coordinate @o along an axis.
    static int64_t tap(uint32_t o, uint32_t t, uint32_t st, uint32_t pad, uint32_t dil)
    {
        return int64_t{o} * st - pad + int64_t{t} * dil;
    }
    // The output coordinate whose tap @t reads input @i, or -1.
    static int64_t fed_by(uint32_t i, uint32_t t, uint32_t st, uint32_t pad, uint32_t dil,
                          uint32_t len)
    {
        const int64_t num = int64_t{i} + pad - int64_t{t} * dil;
        if (num < 0 || num % st != 0 || num / st >= len) {
            return -1;
        }
        return num / st;
    }
};

// col[n, (c kh + r) kw + s, oh, ow] = x[n, c, ih, iw], 0 in the padding.
inline void im2col(const Nchw &xs, const Window2d &g, std::span<const float> x,
                   std::span<float> col)
{
    const Nchw cs = g.cols(xs);
    for (uint32_t n = 0; n < cs.n; n++) {
        for (uint32_t row = 0; row < cs.c; row++) {
            const uint32_t c = row / (g.kh * g.kw), r = row / g.kw % g.kh, s = row % g.kw;
            for (uint32_t oh = 0; oh < cs.h; oh++) {
                for (uint32_t ow = 0; ow < cs.w; ow++) {
                    const int64_t ih = Window2d::tap(oh, r, g.sh, g.ph, g.dh);
                    const int64_t iw = Window2d::tap(ow, s, g.sw, g.pw, g.dw);
                    const bool in = ih >= 0 && ih < xs.h && iw >= 0 && iw < xs.w;
                    col[cs.at(n, row, oh, ow)] =
                        in ? x[xs.at(n, c, static_cast<uint32_t>(ih), static_cast<uint32_t>(iw))]
                           : 0.0f;
                }
            }
        }
    }
}

// An input element fed by output (oh, ow) through tap (r, s): the adjoint
// kernels' terms.
struct Fed {
    size_t x; // the input element's dense index
    uint32_t n, c, ih, iw, r, s, oh, ow;
};

// f(Fed) for every input element of @xs and, in tap order (r, then s), each
// output of @ys (its rows and columns) whose window reads it.
template <typename F> void each_fed(const Nchw &xs, const Nchw &ys, const Window2d &g, F &&f)
{
    for (uint32_t n = 0; n < xs.n; n++) {
        for (uint32_t c = 0; c < xs.c; c++) {
            for (uint32_t ih = 0; ih < xs.h; ih++) {
                for (uint32_t iw = 0; iw < xs.w; iw++) {
                    for (uint32_t r = 0; r < g.kh; r++) {
                        const int64_t oh = Window2d::fed_by(ih, r, g.sh, g.ph, g.dh, ys.h);
                        for (uint32_t s = 0; s < g.kw && oh >= 0; s++) {
                            const int64_t ow = Window2d::fed_by(iw, s, g.sw, g.pw, g.dw, ys.w);
                            if (ow >= 0) {
                                f(Fed{xs.at(n, c, ih, iw), n, c, ih, iw, r, s,
                                      static_cast<uint32_t>(oh), static_cast<uint32_t>(ow)});
                            }
                        }
                    }
                }
            }
        }
    }
}

// The adjoint: dx[n, c, ih, iw] = the FP32 sum, from +0 in the order of r
// then s, of dcol at the outputs whose tap (r, s) reads (ih, iw).
inline void col2im(const Nchw &xs, const Window2d &g, std::span<const float> dcol,
                   std::span<float> dx)
{
    const Nchw cs = g.cols(xs);
    std::fill(dx.begin(), dx.end(), 0.0f);
    each_fed(xs, cs, g, [&](const Fed &e) {
        dx[e.x] += dcol[cs.at(e.n, (e.c * g.kh + e.r) * g.kw + e.s, e.oh, e.ow)];
    });
}

// Max-pool: y = the window's maximum, idx = its position ih W + iw; the
// first in tap order wins, a NaN over numbers, never the padding (a window
// wholly in the padding: -inf and -1).
inline void maxpool2d(const Nchw &xs, const Window2d &g, std::span<const float> x,
                      std::span<float> y, std::span<int32_t> idx)
{
    const Nchw ys = g.out(xs, xs.c);
    for (uint32_t n = 0; n < ys.n; n++) {
        for (uint32_t c = 0; c < ys.c; c++) {
            for (uint32_t oh = 0; oh < ys.h; oh++) {
                for (uint32_t ow = 0; ow < ys.w; ow++) {
                    float best = -std::numeric_limits<float>::infinity();
                    int32_t arg = -1;
                    for (uint32_t r = 0; r < g.kh; r++) {
                        const int64_t ih = Window2d::tap(oh, r, g.sh, g.ph, g.dh);
                        for (uint32_t s = 0; s < g.kw && ih >= 0 && ih < xs.h; s++) {
                            const int64_t iw = Window2d::tap(ow, s, g.sw, g.pw, g.dw);
                            if (iw < 0 || iw >= xs.w) {
                                continue;
                            }
                            const auto pos = static_cast<int32_t>(ih * xs.w + iw);
                            const float v = x[xs.at(n, c, 0, 0) + static_cast<size_t>(pos)];
                            if (arg < 0 || v > best || (std::isnan(v) && !std::isnan(best))) {
                                best = v;
                                arg = pos;
                            }
                        }
                    }
                    y[ys.at(n, c, oh, ow)] = best;
                    idx[ys.at(n, c, oh, ow)] = arg;
                }
            }
        }
    }
}

// Max-pool backward: dx at (ih, iw) = the FP32 sum, from +0 in tap order of
// the windows holding it, of dy where idx names (ih, iw).
inline void maxpool2d_grad(const Nchw &xs, const Window2d &g, std::span<const float> dy,
                           std::span<const int32_t> idx, std::span<float> dx)
{
    const Nchw ys = g.out(xs, xs.c);
    std::fill(dx.begin(), dx.end(), 0.0f);
    each_fed(xs, ys, g, [&](const Fed &e) {
        const size_t o = ys.at(e.n, e.c, e.oh, e.ow);
        if (idx[o] == static_cast<int32_t>(e.ih * xs.w + e.iw)) {
            dx[e.x] += dy[o];
        }
    });
}

// Average pooling (PyTorch's avg_pool2d; dilations 1): the divisor of
// output (oh, ow): the window clipped to the padded input
// (count_include_pad) or to the input, or @override when nonzero.
struct AvgPool {
    bool include_pad = true;
    int32_t override = 0;
    // The kernels' scalars 8 and 9.
    [[nodiscard]] std::array<uint32_t, 2> scalars() const
    {
        return {include_pad ? 1u : 0u, static_cast<uint32_t>(override)};
    }
};

inline float avgpool_divisor(const Nchw &xs, const Window2d &g, const AvgPool &a, uint32_t oh,
                             uint32_t ow)
{
    if (a.override != 0) {
        return static_cast<float>(a.override);
    }
    const int64_t hs = Window2d::tap(oh, 0, g.sh, g.ph, 1), ws = Window2d::tap(ow, 0, g.sw, g.pw, 1);
    const int64_t he = std::min<int64_t>(hs + g.kh, int64_t{xs.h} + g.ph);
    const int64_t we = std::min<int64_t>(ws + g.kw, int64_t{xs.w} + g.pw);
    const int64_t n = a.include_pad ? (he - hs) * (we - ws)
                                    : (std::min<int64_t>(he, xs.h) - std::max<int64_t>(hs, 0)) *
                                          (std::min<int64_t>(we, xs.w) - std::max<int64_t>(ws, 0));
    return static_cast<float>(std::max<int64_t>(n, 1));
}

// y (of @ys: g.out's, or one more row or column for ceil_mode) = the FP32
// sum from +0 of the window's input elements in tap order, divided by the
// divisor.
inline void avgpool2d(const Nchw &xs, const Nchw &ys, const Window2d &g, const AvgPool &a,
                      std::span<const float> x, std::span<float> y)
{
    for (uint32_t n = 0; n < ys.n; n++) {
        for (uint32_t c = 0; c < ys.c; c++) {
            for (uint32_t oh = 0; oh < ys.h; oh++) {
                for (uint32_t ow = 0; ow < ys.w; ow++) {
                    float acc = 0.0f;
                    for (uint32_t r = 0; r < g.kh; r++) {
                        const int64_t ih = Window2d::tap(oh, r, g.sh, g.ph, 1);
                        for (uint32_t s = 0; s < g.kw && ih >= 0 && ih < xs.h; s++) {
                            const int64_t iw = Window2d::tap(ow, s, g.sw, g.pw, 1);
                            if (iw >= 0 && iw < xs.w) {
                                acc += x[xs.at(n, c, static_cast<uint32_t>(ih),
                                               static_cast<uint32_t>(iw))];
                            }
                        }
                    }
                    y[ys.at(n, c, oh, ow)] = acc / avgpool_divisor(xs, g, a, oh, ow);
                }
            }
        }
    }
}

// Backward: dx at (ih, iw) = the FP32 sum, from +0 in tap order of the
// windows holding it, of dy / divisor.
inline void avgpool2d_grad(const Nchw &xs, const Nchw &ys, const Window2d &g, const AvgPool &a,
                           std::span<const float> dy, std::span<float> dx)
{
    std::fill(dx.begin(), dx.end(), 0.0f);
    each_fed(xs, ys, g, [&](const Fed &e) {
        dx[e.x] += dy[ys.at(e.n, e.c, e.oh, e.ow)] / avgpool_divisor(xs, g, a, e.oh, e.ow);
    });
}

// Batch norm 2-D statistics of channel @c over N, H, W, in double.
struct BatchNormStats {
    double mean, var, rstd; // var biased; rstd = 1 / sqrt(var + eps)
};

inline BatchNormStats batchnorm_stats(const Nchw &xs, std::span<const float> x, uint32_t c,
                                      double eps)
{
    const double m = static_cast<double>(xs.size()) / xs.c;
    double mean = 0, var = 0;
    for (uint32_t n = 0; n < xs.n; n++) {
        for (size_t i = xs.at(n, c, 0, 0); i < xs.at(n, c + 1, 0, 0); i++) {
            mean += x[i];
        }
    }
    mean /= m;
    for (uint32_t n = 0; n < xs.n; n++) {
        for (size_t i = xs.at(n, c, 0, 0); i < xs.at(n, c + 1, 0, 0); i++) {
            var += (x[i] - mean) * (x[i] - mean);
        }
    }
    var /= m;
    return {mean, var, 1.0 / std::sqrt(var + eps)};
}

// Training forward: y, and the running statistics updated in place as
// PyTorch does (momentum on the unbiased variance); the batch statistics
// per channel in @st.
inline void batchnorm(const Nchw &xs, std::span<const float> x, std::span<const float> gamma,
                      std::span<const float> beta, double eps, double momentum,
                      std::span<double> y, std::span<BatchNormStats> st,
                      std::span<double> running_mean, std::span<double> running_var)
{
    const double m = static_cast<double>(xs.size()) / xs.c;
    for (uint32_t c = 0; c < xs.c; c++) {
        st[c] = batchnorm_stats(xs, x, c, eps);
        for (uint32_t n = 0; n < xs.n; n++) {
            for (size_t i = xs.at(n, c, 0, 0); i < xs.at(n, c + 1, 0, 0); i++) {
                y[i] = (x[i] - st[c].mean) * st[c].rstd * gamma[c] + beta[c];
            }
        }
        running_mean[c] = (1 - momentum) * running_mean[c] + momentum * st[c].mean;
        running_var[c] = (1 - momentum) * running_var[c] + momentum * st[c].var * m / (m - 1);
    }
}

// Backward from the stored mean and rstd: dx, dgamma, dbeta.
inline void batchnorm_grad(const Nchw &xs, std::span<const float> x, std::span<const float> dy,
                           std::span<const float> mean, std::span<const float> rstd,
                           std::span<const float> gamma, std::span<double> dx,
                           std::span<double> dgamma, std::span<double> dbeta)
{
    const double m = static_cast<double>(xs.size()) / xs.c;
    for (uint32_t c = 0; c < xs.c; c++) {
        double sb = 0, sg = 0;
        for (uint32_t n = 0; n < xs.n; n++) {
            for (size_t i = xs.at(n, c, 0, 0); i < xs.at(n, c + 1, 0, 0); i++) {
                sb += dy[i];
                sg += dy[i] * ((x[i] - double{mean[c]}) * rstd[c]);
            }
        }
        dgamma[c] = sg;
        dbeta[c] = sb;
        for (uint32_t n = 0; n < xs.n; n++) {
            for (size_t i = xs.at(n, c, 0, 0); i < xs.at(n, c + 1, 0, 0); i++) {
                const double xhat = (x[i] - double{mean[c]}) * rstd[c];
                dx[i] = double{gamma[c]} * rstd[c] * (dy[i] - sb / m - xhat * sg / m);
            }
        }
    }
}

// Inference: y from the running statistics.
inline void batchnorm_infer(const Nchw &xs, std::span<const float> x,
                            std::span<const float> gamma, std::span<const float> beta,
                            std::span<const float> running_mean,
                            std::span<const float> running_var, double eps, std::span<double> y)
{
    for (uint32_t n = 0; n < xs.n; n++) {
        for (uint32_t c = 0; c < xs.c; c++) {
            const double rstd = 1.0 / std::sqrt(double{running_var[c]} + eps);
            for (size_t i = xs.at(n, c, 0, 0); i < xs.at(n, c + 1, 0, 0); i++) {
                y[i] = (x[i] - double{running_mean[c]}) * rstd * gamma[c] + beta[c];
            }
        }
    }
}

} // namespace hpu::kernels::ref

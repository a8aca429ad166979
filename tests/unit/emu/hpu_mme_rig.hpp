// SPDX-License-Identifier: MIT
//
// GEMM descriptors (include/hw/hpu_mme.h, Documentation/hw/mme.md) for the
// MME tests: a descriptor builder, operand placement in HBM or host memory
// in ASID 0 or a user context, a plain C++ reference GEMM in double
// precision, FP32/BF16 conversions and the FP32 error bound the results
// are checked against.
//
// Copyright (c) 2026 The hpu authors
#pragma once

#include "hpu_rig.hpp"

#include <array>
#include <cmath>

extern "C" {
#include "hpu_mme.h"
}

namespace hpu_test {

inline uint32_t f32_bits(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

inline float bits_f32(uint32_t u)
{
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

inline float bf16_f32(uint16_t h) { return bits_f32(static_cast<uint32_t>(h) << 16); }

// Round to nearest even, as mme.md specifies (NaN: quiet, sign kept).
inline uint16_t f32_bf16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return static_cast<uint16_t>((u >> 16) | 0x40);
    }
    u += 0x7fffu + ((u >> 16) & 1);
    return static_cast<uint16_t>(u >> 16);
}

// The MME_GEMM descriptor, field by field.
struct Gemm {
    uint32_t flags = 0, rsvd0 = 0;
    uint32_t m = 1, n = 1, k = 1, batch = 1;
    uint64_t a = 0, b = 0, c = 0, d = 0, bias = 0;
    uint32_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
    uint64_t sa = 0, sb = 0, sc = 0, sd = 0;
    float alpha = 1.0f, beta = 0.0f;
    uint64_t rsvd1 = 0;

    std::array<uint8_t, HPU_MME_DESC_SIZE> bytes() const
    {
        std::array<uint8_t, HPU_MME_DESC_SIZE> p{};
        auto put32 = [&](unsigned o, uint32_t v) { std::memcpy(&p[o], &v, 4); };
        auto put64 = [&](unsigned o, uint64_t v) { std::memcpy(&p[o], &v, 8); };
        put32(HPU_MME_D_FLAGS, flags);
        put32(HPU_MME_D_RSVD0, rsvd0);
        put32(HPU_MME_D_M, m);
        put32(HPU_MME_D_N, n);
        put32(HPU_MME_D_K, k);
        put32(HPU_MME_D_BATCH, batch);
        put64(HPU_MME_D_A, a);
        put64(HPU_MME_D_B, b);
        put64(HPU_MME_D_C, c);
        put64(HPU_MME_D_D, d);
        put64(HPU_MME_D_BIAS, bias);
        put32(HPU_MME_D_LDA, lda);
        put32(HPU_MME_D_LDB, ldb);
        put32(HPU_MME_D_LDC, ldc);
        put32(HPU_MME_D_LDD, ldd);
        put64(HPU_MME_D_STRIDE_A, sa);
        put64(HPU_MME_D_STRIDE_B, sb);
        put64(HPU_MME_D_STRIDE_C, sc);
        put64(HPU_MME_D_STRIDE_D, sd);
        put32(HPU_MME_D_ALPHA, f32_bits(alpha));
        put32(HPU_MME_D_BETA, f32_bits(beta));
        put64(HPU_MME_D_RSVD1, rsvd1);
        return p;
    }
    unsigned in_sz() const { return (flags & HPU_MME_F_IN_TYPE_MASK) ? 2 : 4; }
    unsigned out_sz() const { return (flags & HPU_MME_F_OUT_TYPE_MASK) ? 2 : 4; }
    bool ta() const { return flags & HPU_MME_F_TRANS_A; }
    bool tb() const { return flags & HPU_MME_F_TRANS_B; }
    // stored shapes
    uint32_t a_rows() const { return ta() ? k : m; }
    uint32_t a_cols() const { return ta() ? m : k; }
    uint32_t b_rows() const { return tb() ? n : k; }
    uint32_t b_cols() const { return tb() ? k : n; }
};

inline Cb gemm_cb(uint64_t desc, uint32_t reserved = 0)
{
    Cb cb;
    cb.raw(HPU_PKT_MME_GEMM, reserved)
      .raw(static_cast<uint32_t>(desc), static_cast<uint32_t>(desc >> 32));
    return cb;
}

// Where a test's operands live: HBM or host memory, seen from @asid.
struct Space {
    Rig &r;
    unsigned int asid;
    bool host;
    uint64_t hbm_next = 128 * MiB;  // ASID 0: HBM offsets
    uint64_t hbm_base = 0;          // user ASID: VA of an HBM window
    uint64_t hbm_off = 0;
    static constexpr uint64_t WINDOW = 96 * MiB;

    Space(Rig &rig, unsigned int a, bool h) : r(rig), asid(a), host(h)
    {
        if (asid && !host) {
            hbm_base = r.map_hbm(asid, 32 * MiB, WINDOW);
        }
    }
    // @n bytes aligned to 64 (plus @skew); returns the address from @asid.
    uint64_t alloc(uint64_t n, uint64_t skew = 0)
    {
        n += skew;
        if (host) {
            uint64_t bus = r.halloc(n ? n : 1, 64);
            std::memset(r.hp(bus), 0, n);
            return (asid ? r.map_host(asid, bus, n ? n : 1) : host_addr(bus)) + skew;
        }
        uint64_t &next = asid ? hbm_off : hbm_next;
        next = (next + 63) & ~63ULL;
        uint64_t at = next;
        next += n;
        REQUIRE((asid ? hbm_off <= WINDOW : hbm_next <= 250 * MiB));
        std::vector<uint8_t> z(n);
        r.bwrite(asid ? 32 * MiB + at : at, z.data(), n);
        return (asid ? hbm_base + at : at) + skew;
    }
    // Physical location of @addr (HBM offset or host bus address).
    bool phys(uint64_t addr, uint64_t *pa) const
    {
        if (asid == 0) {
            *pa = addr & ~HPU_ADDR_HOST;
            return (addr & HPU_ADDR_HOST) != 0;
        }
        if (!host) {
            *pa = 32 * MiB + (addr - hbm_base);
            return false;
        }
        // walk the rig's page tables
        uint64_t pte = r.bread64(r.pte_slot(asid, addr, 3));
        *pa = (pte & HPU_PTE_ADDR_MASK) + (addr & (PG - 1));
        return true;
    }
    void write(uint64_t addr, const void *p, uint64_t n)
    {
        const auto *b = static_cast<const uint8_t *>(p);
        while (n) {
            uint64_t pa, chunk = std::min<uint64_t>(n, PG - (addr & (PG - 1)));
            if (phys(addr, &pa)) {
                r.hwrite(pa, b, chunk);
            } else {
                r.bwrite(pa, b, chunk);
            }
            addr += chunk;
            b += chunk;
            n -= chunk;
        }
    }
    std::vector<uint8_t> read(uint64_t addr, uint64_t n)
    {
        std::vector<uint8_t> v(n);
        uint8_t *b = v.data();
        while (n) {
            uint64_t pa, chunk = std::min<uint64_t>(n, PG - (addr & (PG - 1)));
            if (phys(addr, &pa)) {
                std::memcpy(b, r.hp(pa), chunk);
            } else {
                auto x = r.bread(pa, chunk);
                std::memcpy(b, x.data(), chunk);
            }
            addr += chunk;
            b += chunk;
            n -= chunk;
        }
        return v;
    }
};

// Deterministic values in [-1, 1), exactly representable in BF16 when
// @bf16 (so FP32 and BF16 operands hold the same numbers).
inline std::vector<float> values(size_t n, uint32_t seed, bool bf16)
{
    std::vector<float> v(n);
    uint32_t x = seed * 2654435761u + 7;
    for (auto &f : v) {
        x = x * 1103515245u + 12345u;
        f = static_cast<float>(static_cast<int32_t>(x >> 8) - (1 << 23)) /
            static_cast<float>(1 << 23);
        if (bf16) {
            f = bf16_f32(f32_bf16(f));
        }
    }
    return v;
}

// An operand: @rows x @cols logical elements, each batch member at
// @stride elements, rows @ld apart, stored in its element type.
struct Matrix {
    uint64_t addr = 0;
    uint32_t rows = 0, cols = 0, ld = 0;
    uint64_t stride = 0;
    uint32_t batch = 1;
    unsigned sz = 4;
    std::vector<float> v;   // batch * rows * cols, dense

    float at(uint32_t b, uint32_t i, uint32_t j) const
    {
        return v[(static_cast<size_t>(b) * rows + i) * cols + j];
    }
    uint64_t bytes() const
    {
        return sz * ((batch - 1) * stride + static_cast<uint64_t>(rows - 1) * ld + cols);
    }
};

// Write @m's values at m.addr in @s; 0xee in the gaps.
inline void store(Space &s, const Matrix &m)
{
    uint64_t n = m.bytes();
    std::vector<uint8_t> img(n, 0xee);
    for (uint32_t b = 0; b < m.batch; b++) {
        for (uint32_t i = 0; i < m.rows; i++) {
            for (uint32_t j = 0; j < m.cols; j++) {
                uint64_t o = m.sz * (b * m.stride + static_cast<uint64_t>(i) * m.ld + j);
                float f = m.at(b, i, j);
                if (m.sz == 2) {
                    uint16_t h = f32_bf16(f);
                    std::memcpy(&img[o], &h, 2);
                } else {
                    std::memcpy(&img[o], &f, 4);
                }
            }
        }
    }
    s.write(m.addr, img.data(), n);
}

// Place @m's values (filled in by the caller) in fresh memory of @s.
inline void place(Space &s, Matrix &m, uint64_t skew = 0)
{
    m.addr = s.alloc(m.bytes(), skew);
    store(s, m);
}

// Read the elements of @m back from @s (as floats).
inline std::vector<float> fetch(Space &s, const Matrix &m)
{
    auto img = s.read(m.addr, m.bytes());
    std::vector<float> v(static_cast<size_t>(m.batch) * m.rows * m.cols);
    for (uint32_t b = 0; b < m.batch; b++) {
        for (uint32_t i = 0; i < m.rows; i++) {
            for (uint32_t j = 0; j < m.cols; j++) {
                uint64_t o = m.sz * (b * m.stride + static_cast<uint64_t>(i) * m.ld + j);
                float f;
                if (m.sz == 2) {
                    uint16_t h;
                    std::memcpy(&h, &img[o], 2);
                    f = bf16_f32(h);
                } else {
                    std::memcpy(&f, &img[o], 4);
                }
                v[(static_cast<size_t>(b) * m.rows + i) * m.cols + j] = f;
            }
        }
    }
    return v;
}

// The reference: D = act(alpha * op(A) x op(B) + beta * C + bias), in
// double; @bound gets the FP32 error bound of each element (see
// check_gemm()).
struct Ref {
    std::vector<double> d;
    std::vector<double> bound;
};

// mme.md's GELU with its constants, in long double and without the
// cancellation of 1 + tanh(y) for negative x: x / (1 + exp(-2y)).
inline double gelu_tanh(double x)
{
    if (std::isinf(x)) {
        return x > 0 ? x : 0.0;
    }
    long double t = x, y = 0.7978845608L * (t + 0.044715L * t * t * t);
    return static_cast<double>(t / (1.0L + std::exp(-2.0L * y)));
}

inline Ref reference(const Gemm &g, const Matrix &a, const Matrix &b, const Matrix *c,
                     const std::vector<float> *bias)
{
    Ref r;
    size_t total = static_cast<size_t>(g.batch) * g.m * g.n;
    r.d.resize(total);
    r.bound.resize(total);
    unsigned act = (g.flags & HPU_MME_F_ACT_MASK) >> HPU_MME_F_ACT_SHIFT;
    const double u = std::ldexp(1.0, -24);
    for (uint32_t bt = 0; bt < g.batch; bt++) {
        for (uint32_t i = 0; i < g.m; i++) {
            for (uint32_t j = 0; j < g.n; j++) {
                double acc = 0, mag = 0;
                for (uint32_t kk = 0; kk < g.k; kk++) {
                    double x = g.ta() ? a.at(bt, kk, i) : a.at(bt, i, kk);
                    double y = g.tb() ? b.at(bt, j, kk) : b.at(bt, kk, j);
                    acc += x * y;
                    mag += std::fabs(x * y);
                }
                double t = static_cast<double>(g.alpha) * acc;
                mag *= std::fabs(static_cast<double>(g.alpha));
                if (g.beta != 0.0f) {
                    double cv = static_cast<double>(g.beta) * c->at(bt, i, j);
                    t += cv;
                    mag += std::fabs(cv);
                }
                if (g.flags & HPU_MME_F_BIAS) {
                    t += (*bias)[j];
                    mag += std::fabs((*bias)[j]);
                }
                // FP32: K-term sums (gamma_K), alpha, beta, bias: K + 3
                // roundings of at most u each, relative to the magnitudes.
                double err = (g.k + 3) * u * mag * 1.0001;
                if (act == HPU_MME_ACT_RELU) {
                    t = t > 0 ? t : 0;
                } else if (act == HPU_MME_ACT_GELU_TANH) {
                    // |gelu'| <= 1.13 carries t's error; the model's
                    // GELU is within 1 ulp (2u relative) of the exact
                    // function of its FP32 t (mme.md), or one subnormal.
                    t = gelu_tanh(t);
                    err = 1.13 * err + 2 * u * std::fabs(t) + 0x1p-149;
                }
                size_t o = (static_cast<size_t>(bt) * g.m + i) * g.n + j;
                r.d[o] = t;
                r.bound[o] = err + 1e-37;
            }
        }
    }
    return r;
}

} // namespace hpu_test

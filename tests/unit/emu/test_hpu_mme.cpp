// SPDX-License-Identifier: MIT
//
// Unit tests of the Matrix Math Engines (emu/hpu_mme.c) against
// Documentation/hw/mme.md: GEMMs of odd shapes, transposes, strides,
// batches, FP32 and BF16, alpha/beta, bias and activations with operands
// in HBM and host memory, in ASID 0 and a user context, checked against a
// plain C++ reference loop in double precision; every BAD_LAUNCH rule.
//
// Tolerances.  FP32 results: |D - ref| <= (K + 3) u S with u = 2^-24 and
// S = |alpha| sum_k |a_ik b_kj| + |beta c_ij| + |bias_j|: the classic
// bound for a K-term dot product in FP32 (gamma_K, whatever the order of
// summation OpenBLAS chooses) plus one rounding each for alpha, beta * C
// and the bias; GELU adds |gelu'| <= 1.13 times that and 16 ulp for tanhf.
// BF16 inputs are exactly representable FP32 values (values() rounds
// them), so the same bound holds.  BF16 results are the FP32 result
// rounded to nearest even (8 significant bits, unit roundoff 2^-8):
// |D - ref| <= 2^-8 (|ref| + b) + b for the FP32 bound b, and the
// rounding itself is checked bit-exactly below.
//
// Copyright (c) 2026 The hpu authors

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/generators/catch_generators_range.hpp>

#include "hpu_mme_rig.hpp"

extern "C" {
#include "hpu_internal.h"
}

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

using namespace hpu_test;

namespace {

struct Case {
    uint32_t m = 1, n = 1, k = 1, batch = 1;
    bool ta = false, tb = false;
    unsigned in_t = HPU_MME_TYPE_FP32, out_t = HPU_MME_TYPE_FP32;
    unsigned act = HPU_MME_ACT_NONE;
    bool bias = false;
    float alpha = 1.0f, beta = 0.0f;
    uint32_t pad = 0;           // extra elements per row of every operand
    uint64_t bpad = 0;          // extra elements between batch members
    uint64_t sa0 = 1, sb0 = 1;  // 0: broadcast A / B across the batch
    bool in_place = false;      // C == D
    unsigned engine = HPU_ENGINE_MME0;
    unsigned asid = 0;
    bool host = false;
};

Matrix operand(uint32_t rows, uint32_t cols, const Case &c, unsigned sz, uint32_t seed,
               bool bf16_values, bool broadcast)
{
    Matrix m;
    m.rows = rows;
    m.cols = cols;
    m.ld = cols + c.pad;
    m.batch = c.batch;
    m.sz = sz;
    m.stride = broadcast ? 0 : static_cast<uint64_t>(rows) * m.ld + c.bpad;
    if (broadcast) {
        auto one = values(static_cast<size_t>(rows) * cols, seed, bf16_values);
        for (uint32_t b = 0; b < c.batch; b++) {
            m.v.insert(m.v.end(), one.begin(), one.end());
        }
    } else {
        m.v = values(static_cast<size_t>(c.batch) * rows * cols, seed, bf16_values);
    }
    return m;
}

// Run @c on a fresh rig and check D against the reference.
void run_case(const Case &c)
{
    Rig r;
    Space s(r, c.asid, c.host);
    Gemm g;
    g.m = c.m;
    g.n = c.n;
    g.k = c.k;
    g.batch = c.batch;
    g.flags = c.in_t | c.out_t << HPU_MME_F_OUT_TYPE_SHIFT |
              (c.ta ? HPU_MME_F_TRANS_A : 0) | (c.tb ? HPU_MME_F_TRANS_B : 0) |
              (c.bias ? HPU_MME_F_BIAS : 0) | c.act << HPU_MME_F_ACT_SHIFT;
    g.alpha = c.alpha;
    g.beta = c.beta;
    const unsigned isz = c.in_t == HPU_MME_TYPE_BF16 ? 2 : 4;
    const unsigned osz = c.out_t == HPU_MME_TYPE_BF16 ? 2 : 4;
    Matrix a = operand(g.a_rows(), g.a_cols(), c, isz, 1, isz == 2, c.sa0 == 0);
    Matrix b = operand(g.b_rows(), g.b_cols(), c, isz, 2, isz == 2, c.sb0 == 0);
    Matrix cm = operand(c.m, c.n, c, osz, 3, osz == 2, false);
    Matrix d = operand(c.m, c.n, c, osz, 4, false, false);
    std::fill(d.v.begin(), d.v.end(), 0.0f);
    std::vector<float> bias = values(c.n, 5, false);
    place(s, a);
    place(s, b);
    if (!c.in_place) {
        place(s, cm);
    }
    place(s, d);
    if (c.in_place) {
        cm.addr = d.addr;
        store(s, cm);           // C's values in D's place
    }
    uint64_t bias_va = s.alloc(4ULL * c.n);
    s.write(bias_va, bias.data(), 4ULL * c.n);
    g.a = a.addr;
    g.b = b.addr;
    g.c = cm.addr;
    g.d = d.addr;
    g.bias = bias_va;
    g.lda = a.ld;
    g.ldb = b.ld;
    g.ldc = cm.ld;
    g.ldd = d.ld;
    g.sa = a.stride;
    g.sb = b.stride;
    g.sc = cm.stride;
    g.sd = d.stride;
    auto img_before = s.read(d.addr, d.bytes());
    uint64_t desc = s.alloc(HPU_MME_DESC_SIZE);
    auto db = g.bytes();
    s.write(desc, db.data(), db.size());

    Cqe e = r.run_cb(gemm_cb(desc), c.asid, c.engine, 1);
    REQUIRE(e.status == HPU_CQ_OK);
    CHECK(e.engine == c.engine);
    CHECK(r.env.errors.empty());
    Ref ref = reference(g, a, b, &cm, &bias);
    auto got = fetch(s, d);
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); i++) {
        double want = ref.d[i], tol = ref.bound[i];
        if (osz == 2) {
            tol = std::ldexp(1.0, -8) * (std::fabs(want) + tol) + tol;
        }
        if (!(std::fabs(got[i] - want) <= tol) && bad++ < 5) {
            UNSCOPED_INFO("element " << i << ": got " << got[i] << ", reference " << want
                                     << " (bound " << tol << ")");
        }
    }
    CHECK(bad == 0);
    // the gaps between rows and batch members are not written
    auto img = s.read(d.addr, d.bytes());
    size_t touched = 0;
    for (uint32_t bt = 0; bt < d.batch; bt++) {
        for (uint32_t i = 0; i < d.rows; i++) {
            uint64_t row = osz * (bt * d.stride + static_cast<uint64_t>(i) * d.ld);
            for (uint64_t o = row + osz * d.cols; o < row + osz * d.ld && o < img.size(); o++) {
                touched += img[o] != img_before[o];
            }
        }
        // from the end of the member's last row to the next member
        uint64_t end = osz * (bt * d.stride + static_cast<uint64_t>(d.rows - 1) * d.ld + d.cols);
        for (uint64_t o = end; o < osz * (bt + 1) * d.stride && o < img.size(); o++) {
            touched += img[o] != img_before[o];
        }
    }
    CHECK(touched == 0);
}

} // namespace

TEST_CASE("MME GEMM of odd shapes matches the reference, all transposes",
          "[emu][mme]")
{
    auto shape = GENERATE(std::array<uint32_t, 3>{1, 1, 1}, std::array<uint32_t, 3>{3, 5, 7},
                          std::array<uint32_t, 3>{129, 65, 33},
                          std::array<uint32_t, 3>{2, 1100, 3},
                          std::array<uint32_t, 3>{1030, 3, 5},
                          std::array<uint32_t, 3>{131, 129, 1100});
    Case c;
    c.m = shape[0];
    c.n = shape[1];
    c.k = shape[2];
    c.ta = GENERATE(false, true);
    c.tb = GENERATE(false, true);
    CAPTURE(c.m, c.n, c.k, c.ta, c.tb);
    run_case(c);
}

TEST_CASE("MME GEMM with FP32 and BF16 inputs and outputs", "[emu][mme][bf16]")
{
    Case c;
    c.m = 67;
    c.n = 130;
    c.k = 45;
    c.in_t = GENERATE(HPU_MME_TYPE_FP32, HPU_MME_TYPE_BF16);
    c.out_t = GENERATE(HPU_MME_TYPE_FP32, HPU_MME_TYPE_BF16);
    c.ta = GENERATE(false, true);
    c.beta = 0.5f;
    CAPTURE(c.in_t, c.out_t, c.ta);
    run_case(c);
}

TEST_CASE("MME GEMM with BF16 inputs and K over several 1024-deep slices", "[emu][mme][bf16]")
{
    Case c;
    c.m = 37;
    c.n = 70;
    c.k = GENERATE(257u, 1030u, 2100u);
    c.in_t = HPU_MME_TYPE_BF16;
    c.out_t = GENERATE(HPU_MME_TYPE_FP32, HPU_MME_TYPE_BF16);
    c.tb = GENERATE(false, true);
    c.beta = 0.5f;
    CAPTURE(c.k, c.out_t, c.tb);
    run_case(c);
}

TEST_CASE("MME GEMM operands in HBM and host memory, ASID 0 and a user context",
          "[emu][mme][mmu]")
{
    Case c;
    c.m = 70;
    c.n = 140;
    c.k = 260;
    c.host = GENERATE(false, true);
    c.asid = GENERATE(0u, 7u);
    c.engine = GENERATE(HPU_ENGINE_MME(0), HPU_ENGINE_MME(1));
    c.tb = true;
    c.beta = -1.25f;
    c.bias = true;
    CAPTURE(c.host, c.asid, c.engine);
    run_case(c);
}

TEST_CASE("MME GEMM epilogue: alpha, beta * C, bias, ReLU and GELU", "[emu][mme]")
{
    Case c;
    c.m = 40;
    c.n = 150;
    c.k = 17;
    c.alpha = GENERATE(1.0f, -2.5f, 0.0f);
    c.beta = GENERATE(0.0f, 1.0f, 0.75f);
    c.bias = GENERATE(false, true);
    c.act = GENERATE(HPU_MME_ACT_NONE, HPU_MME_ACT_RELU, HPU_MME_ACT_GELU_TANH);
    CAPTURE(c.alpha, c.beta, c.bias, c.act);
    run_case(c);
}

TEST_CASE("MME GEMM accumulating in place (C == D) with BF16 output", "[emu][mme]")
{
    Case c;
    c.m = 33;
    c.n = 129;
    c.k = 9;
    c.beta = 1.0f;
    c.in_place = true;
    c.out_t = GENERATE(HPU_MME_TYPE_FP32, HPU_MME_TYPE_BF16);
    c.batch = GENERATE(1u, 3u);
    c.pad = 3;
    run_case(c);
}

TEST_CASE("MME GEMM with padded rows, batches and batch strides", "[emu][mme][batch]")
{
    Case c;
    c.m = 31;
    c.n = 19;
    c.k = 23;
    c.batch = GENERATE(2u, 5u);
    c.pad = GENERATE(0u, 7u);
    c.bpad = GENERATE(0ULL, 100ULL);
    c.ta = GENERATE(false, true);
    c.beta = 2.0f;
    c.bias = true;
    c.in_t = HPU_MME_TYPE_BF16;
    CAPTURE(c.batch, c.pad, c.bpad, c.ta);
    run_case(c);
}

TEST_CASE("MME GEMM batches sharing A or B (batch stride 0)", "[emu][mme][batch]")
{
    Case c;
    c.m = 130;
    c.n = 20;
    c.k = 12;
    c.batch = 3;
    c.sa0 = GENERATE(0ULL, 1ULL);
    c.sb0 = c.sa0 ? 0 : 1;
    c.host = true;
    c.asid = 3;
    run_case(c);
}

TEST_CASE("MME BF16 output rounds to nearest even, NaN stays NaN, overflow is Inf",
          "[emu][mme][bf16]")
{
    Rig r;
    const std::vector<uint32_t> in = {
        0x3f808000, // tie, even below: 0x3f80
        0x3f818000, // tie, odd below: 0x3f82
        0x3f808001, // above the tie: 0x3f81
        0x3f807fff, // below the tie: 0x3f80
        0x7f7fffff, // FLT_MAX: rounds up to +Inf
        0xff7fffff, // -FLT_MAX: -Inf
        0x7fc00001, // quiet NaN
        0x7f800001, // signalling NaN: quieted
        0xbfc00000, // -1.5, exact
        0x00018000, // subnormal tie, odd below: 0x0002
        0x3f80ffff, // 0x3f81
        0x7f800000, // +Inf
    };
    const std::vector<uint16_t> want = {0x3f80, 0x3f82, 0x3f81, 0x3f80, 0x7f80, 0xff80,
                                        0x7fc0, 0x7fc0, 0xbfc0, 0x0002, 0x3f81, 0x7f80};
    const uint64_t a = 128 * MiB, b = a + 4096, d = b + 4096, desc = d + 4096;
    float one = 1.0f;
    r.bwrite(a, &one, 4);
    r.bwrite(b, in.data(), 4 * in.size());
    Gemm g;
    g.flags = HPU_MME_TYPE_BF16 << HPU_MME_F_OUT_TYPE_SHIFT;
    g.m = 1;
    g.n = static_cast<uint32_t>(in.size());
    g.k = 1;
    g.a = a;
    g.b = b;
    g.d = d;
    g.lda = 1;
    g.ldb = g.n;
    g.ldd = g.n;
    auto db = g.bytes();
    r.bwrite(desc, db.data(), db.size());
    REQUIRE(r.run_cb(gemm_cb(desc), 0, HPU_ENGINE_MME0, 0).status == HPU_CQ_OK);
    auto out = r.bread(d, 2 * in.size());
    for (size_t i = 0; i < in.size(); i++) {
        uint16_t h = static_cast<uint16_t>(out[2 * i] | out[2 * i + 1] << 8);
        CAPTURE(i, in[i]);
        CHECK(h == want[i]);
    }
}

TEST_CASE("MME GEMM with beta 0 reads no C (C, ldc may be anything)", "[emu][mme]")
{
    Rig r;
    const unsigned A = 4;
    Space s(r, A, false);
    Gemm g;
    g.m = 3;
    g.n = 4;
    g.k = 2;
    std::vector<float> av = {1, 2, 3, 4, 5, 6}, bv = {1, 0, 0, 1, 0, 1, 1, 0};
    g.a = s.alloc(24);
    g.b = s.alloc(32);
    g.d = s.alloc(48);
    s.write(g.a, av.data(), 24);
    s.write(g.b, bv.data(), 32);
    g.lda = 2;
    g.ldb = 4;
    g.ldd = 4;
    g.c = 0x7ff000000000ULL + 2;    // unmapped and misaligned
    g.ldc = 0;
    g.beta = -0.0f;                  // zero too
    uint64_t desc = s.alloc(HPU_MME_DESC_SIZE);
    auto db = g.bytes();
    s.write(desc, db.data(), db.size());
    REQUIRE(r.run_cb(gemm_cb(desc), A, HPU_ENGINE_MME0, 0).status == HPU_CQ_OK);
    auto out = s.read(g.d, 48);
    std::vector<float> dv(12);
    std::memcpy(dv.data(), out.data(), 48);
    CHECK(dv == std::vector<float>{1, 2, 2, 1, 3, 4, 4, 3, 5, 6, 6, 5});
    CHECK(r.rd(HPU_REG_FAULT_COUNT) == 0u);
}

// BAD_LAUNCH: one rule broken at a time on a valid 8x8x8 FP32 GEMM
namespace {

struct Rule {
    const char *what;
    uint32_t code;
    std::function<void(Gemm &)> breaks;
    int64_t desc_skew = 0;
};

std::vector<Rule> rules()
{
    return {
        {"descriptor at 64-byte alignment + 32", HPU_MME_ERR_DESC_ALIGN, [](Gemm &) {}, 32},
        {"descriptor at 64-byte alignment + 4", HPU_MME_ERR_DESC_ALIGN, [](Gemm &) {}, 4},
        {"FLAGS bit 7", HPU_MME_ERR_FLAGS, [](Gemm &g) { g.flags |= 0x80; }},
        {"FLAGS bit 10", HPU_MME_ERR_FLAGS, [](Gemm &g) { g.flags |= 0x400; }},
        {"FLAGS bit 31", HPU_MME_ERR_FLAGS, [](Gemm &g) { g.flags |= 0x80000000u; }},
        {"input type 2", HPU_MME_ERR_IN_TYPE, [](Gemm &g) { g.flags |= 2; }},
        {"input type 3", HPU_MME_ERR_IN_TYPE, [](Gemm &g) { g.flags |= 3; }},
        {"output type 2", HPU_MME_ERR_OUT_TYPE, [](Gemm &g) { g.flags |= 2 << 2; }},
        {"output type 3", HPU_MME_ERR_OUT_TYPE, [](Gemm &g) { g.flags |= 3 << 2; }},
        {"activation 3", HPU_MME_ERR_ACT, [](Gemm &g) { g.flags |= 3 << 8; }},
        {"reserved word at 0x04", HPU_MME_ERR_RESERVED, [](Gemm &g) { g.rsvd0 = 1; }},
        {"reserved word at 0x78", HPU_MME_ERR_RESERVED,
         [](Gemm &g) { g.rsvd1 = 1ULL << 63; }},
        {"M 0", HPU_MME_ERR_DIMS, [](Gemm &g) { g.m = 0; }},
        {"N 0", HPU_MME_ERR_DIMS, [](Gemm &g) { g.n = 0; }},
        {"K 0", HPU_MME_ERR_DIMS, [](Gemm &g) { g.k = 0; }},
        {"M 65537", HPU_MME_ERR_DIMS, [](Gemm &g) { g.m = 65537; }},
        {"K 65537", HPU_MME_ERR_DIMS, [](Gemm &g) { g.k = 65537; g.lda = 65537; }},
        {"batch 0", HPU_MME_ERR_BATCH, [](Gemm &g) { g.batch = 0; }},
        {"batch 65537", HPU_MME_ERR_BATCH, [](Gemm &g) { g.batch = 65537; }},
        {"lda < K", HPU_MME_ERR_LDA, [](Gemm &g) { g.lda = 7; }},
        {"lda < M with A transposed", HPU_MME_ERR_LDA,
         [](Gemm &g) { g.flags |= HPU_MME_F_TRANS_A; g.m = 9; g.lda = 8; g.ldd = 9; g.n = 8; }},
        {"ldb < N", HPU_MME_ERR_LDB, [](Gemm &g) { g.ldb = 7; }},
        {"ldb < K with B transposed", HPU_MME_ERR_LDB,
         [](Gemm &g) { g.flags |= HPU_MME_F_TRANS_B; g.k = 9; g.lda = 9; g.ldb = 8; }},
        {"ldc < N with beta != 0", HPU_MME_ERR_LDC, [](Gemm &g) { g.beta = 1; g.ldc = 7; }},
        {"ldd < N", HPU_MME_ERR_LDD, [](Gemm &g) { g.ldd = 7; }},
        {"A not 4-byte aligned", HPU_MME_ERR_ALIGN, [](Gemm &g) { g.a += 2; }},
        {"B not 2-byte aligned (BF16)", HPU_MME_ERR_ALIGN,
         [](Gemm &g) { g.flags |= HPU_MME_TYPE_BF16; g.b += 1; }},
        {"C not aligned with beta != 0", HPU_MME_ERR_ALIGN,
         [](Gemm &g) { g.beta = 1; g.c += 1; }},
        {"D not aligned", HPU_MME_ERR_ALIGN, [](Gemm &g) { g.d += 2; }},
        {"bias not aligned", HPU_MME_ERR_ALIGN,
         [](Gemm &g) { g.flags |= HPU_MME_F_BIAS; g.bias += 2; }},
        {"A at the top of the address space", HPU_MME_ERR_RANGE,
         [](Gemm &g) { g.a = ~0ULL - 63; }},
        {"batch stride of B overflowing", HPU_MME_ERR_RANGE,
         [](Gemm &g) { g.batch = 5; g.sb = 1ULL << 62; g.sa = 64; g.sd = 64; }},
        {"D batch members overlapping", HPU_MME_ERR_STRIDE_D,
         [](Gemm &g) { g.batch = 2; g.sa = 64; g.sb = 64; g.sd = 63; }},
        {"D overlapping A", HPU_MME_ERR_OVERLAP, [](Gemm &g) { g.d = g.a + 4; }},
        {"D overlapping B", HPU_MME_ERR_OVERLAP, [](Gemm &g) { g.d = g.b - 252; }},
        {"D overlapping the bias", HPU_MME_ERR_OVERLAP,
         [](Gemm &g) { g.flags |= HPU_MME_F_BIAS; g.bias = g.d + 200; }},
        {"D overlapping C, not equal", HPU_MME_ERR_OVERLAP,
         [](Gemm &g) { g.beta = 1; g.c = g.d + 4; }},
        {"C == D with another ldc", HPU_MME_ERR_OVERLAP,
         [](Gemm &g) { g.beta = 1; g.c = g.d; g.ldc = 9; }},
        {"C == D, batch 2, stride_c != stride_d", HPU_MME_ERR_OVERLAP,
         [](Gemm &g) { g.beta = 1; g.c = g.d; g.batch = 2; g.sd = 64; g.sc = 128; }},
        {"A ending exactly at 2^64", HPU_MME_ERR_RANGE,
         [](Gemm &g) { g.a = 0ULL - 4 * (7 * 8 + 8); }},
        // two rules broken: the first in the table's order is reported
        {"FLAGS bit 7 and M 0", HPU_MME_ERR_FLAGS, [](Gemm &g) { g.flags |= 0x80; g.m = 0; }},
        {"lda < K and D overlapping A", HPU_MME_ERR_LDA,
         [](Gemm &g) { g.lda = 7; g.d = g.a + 4; }},
        {"D overlapping A and D batch members overlapping", HPU_MME_ERR_STRIDE_D,
         [](Gemm &g) { g.batch = 2; g.sd = 63; g.d = g.a + 4; }},
        {"descriptor misaligned and batch 0", HPU_MME_ERR_DESC_ALIGN,
         [](Gemm &g) { g.batch = 0; }, 8},
    };
}

} // namespace

TEST_CASE("MME BAD_LAUNCH: each descriptor rule refused with its code", "[emu][mme][bad]")
{
    auto all = rules();
    const size_t i = GENERATE_COPY(Catch::Generators::range<size_t>(0, all.size()));
    const Rule &rule = all[i];
    CAPTURE(rule.what);
    Rig r;
    const unsigned A = 5;
    r.setup_eq();
    Space s(r, A, false);
    Gemm g;
    g.m = g.n = g.k = 8;
    g.lda = g.ldb = g.ldc = g.ldd = 8;
    uint64_t base = s.alloc(64 * 1024);
    g.a = base;
    g.b = base + 4096;
    g.c = base + 8192;
    g.d = base + 12288;
    g.bias = base + 16384;
    rule.breaks(g);
    const uint64_t desc = base + 32768 + rule.desc_skew;
    auto db = g.bytes();
    s.write(desc, db.data(), db.size());
    std::vector<uint8_t> d_before = s.read(base + 12288, 4096);
    Cb cb;
    cb.nop();
    cb.raw(HPU_PKT_MME_GEMM, 0)
      .raw(static_cast<uint32_t>(desc), static_cast<uint32_t>(desc >> 32));
    Cqe e = r.run_cb(cb, A, HPU_ENGINE_MME0, 2);
    CHECK(e.status == HPU_CQ_BAD_LAUNCH);
    CHECK(e.offset == 8u);
    CHECK(e.engine == HPU_ENGINE_MME0);
    CHECK(e.stream == 2);
    REQUIRE(r.rd(HPU_REG_EQ_PI) == 1u);
    Eqe ev = r.eqe(0);
    CHECK(ev.id == HPU_EVENT_BAD_LAUNCH);
    CHECK(ev.severity == HPU_EVENT_SEV_ERROR);
    CHECK(ev.engine == HPU_ENGINE_MME0);
    CHECK(ev.asid == A);
    CHECK(ev.addr == desc);
    CHECK(ev.info == rule.code);
    REQUIRE(r.env.errors.size() == 1);
    CHECK(r.env.errors[0].find("MME0.2: bad launch") != std::string::npos);
    CHECK(r.env.errors[0].find("(rule " + std::to_string(rule.code) + ")") !=
          std::string::npos);
    CHECK(s.read(base + 12288, 4096) == d_before);      // nothing of it ran
    CHECK(r.rd(HPU_REG_FAULT_COUNT) == 0u);
}

TEST_CASE("MME_GEMM packet: reserved word is BAD_PACKET, an unmapped descriptor MMU_FAULT",
          "[emu][mme][bad]")
{
    Rig r;
    const unsigned A = 6;
    r.setup_eq();
    r.map_hbm(A, 64 * MiB, 2 * MiB);
    Cqe e = r.run_cb(gemm_cb(0x200000, 1), A, HPU_ENGINE_MME(1), 0);
    CHECK(e.status == HPU_CQ_BAD_PACKET);
    CHECK(r.eqe(0).id == HPU_EVENT_BAD_PACKET);
    CHECK(r.eqe(0).engine == HPU_ENGINE_MME(1));
    e = r.run_cb(gemm_cb(0x7000000000ULL), A, HPU_ENGINE_MME(1), 0);
    CHECK(e.status == HPU_CQ_MMU_FAULT);
    Eqe ev = r.eqe(1);
    CHECK(ev.id == HPU_EVENT_MMU_FAULT);
    CHECK(ev.engine == HPU_ENGINE_MME(1));
    CHECK(ev.addr == 0x7000000000ULL);
    CHECK((r.rd(HPU_REG_FAULT_INFO) & HPU_FAULT_ENGINE_MASK) == HPU_ENGINE_MME(1) << 8);
}

TEST_CASE("MME GELU is accurate for strongly negative inputs and +-inf", "[emu][mme][gelu]")
{
    Rig r;
    const std::vector<float> t = {-3.0f, -5.0f, -7.5f, -9.0f, -10.0f, -10.4f, -11.0f,
                                  -20.0f, -1e30f, -0.5f, 0.5f, 3.0f, 12.0f,
                                  -INFINITY, INFINITY};
    const uint32_t m = static_cast<uint32_t>(t.size());
    Gemm g;
    g.m = m;
    g.n = 1;
    g.k = 1;
    g.lda = 1;
    g.ldb = 1;
    g.ldd = 1;
    g.flags = HPU_MME_ACT_GELU_TANH << HPU_MME_F_ACT_SHIFT;
    uint64_t a = r.halloc(4 * m), b = r.halloc(4), d = r.halloc(4 * m);
    float one = 1.0f;
    r.hwrite(a, t.data(), 4 * m);
    r.hwrite(b, &one, 4);
    g.a = host_addr(a);
    g.b = host_addr(b);
    g.d = host_addr(d);
    uint64_t desc = r.halloc(HPU_MME_DESC_SIZE, 64);
    auto db = g.bytes();
    r.hwrite(desc, db.data(), db.size());
    REQUIRE(r.run_cb(gemm_cb(host_addr(desc)), 0, HPU_ENGINE_MME0, 0).status == HPU_CQ_OK);
    for (uint32_t i = 0; i < m; i++) {
        float got;
        std::memcpy(&got, r.hp(d + 4ULL * i), 4);
        double want = gelu_tanh(t[i]);
        CAPTURE(t[i], got, want);
        if (std::isinf(want)) {
            CHECK(got == static_cast<float>(want));
            continue;
        }
        // within 1 ulp of the exact value (one subnormal near zero)
        double ulp = std::max(std::ldexp(1.0, std::ilogb(std::max(std::fabs(want), 0x1p-126)) - 23),
                              0x1p-149);
        CHECK(std::fabs(got - want) <= ulp);
    }
}

TEST_CASE("MME GEMM with an MMU fault in the middle of a batch", "[emu][mme][batch][mmu]")
{
    Rig r;
    r.setup_eq();
    const unsigned A = 5;
    Space s(r, A, true);
    Gemm g;
    g.m = 64;
    g.n = 64;
    g.k = 4;
    g.batch = 3;
    g.lda = 4;
    g.ldb = 64;
    g.ldd = 64;
    g.sa = 0;
    g.sb = 0;
    g.sd = 64 * 64 + 1024;          // a gap between the members
    std::vector<float> ones(64 * 64, 1.0f);
    g.a = s.alloc(4 * 64 * 4);
    g.b = s.alloc(4 * 4 * 64);
    const uint64_t dbytes = 4 * (2 * g.sd + 64 * 64);
    g.d = s.alloc(dbytes);
    s.write(g.a, ones.data(), 4 * 64 * 4);
    s.write(g.b, ones.data(), 4 * 4 * 64);
    // unmap the page holding row 40 of member 1
    const uint64_t m1 = g.d + 4 * g.sd;
    const uint64_t hole = (m1 + 4 * 40 * 64) & ~(PG - 1);
    r.bwrite64(r.pte_slot(A, hole, 3), 0);
    uint64_t desc = s.alloc(HPU_MME_DESC_SIZE);
    auto db = g.bytes();
    s.write(desc, db.data(), db.size());
    Cqe c = r.run_cb(gemm_cb(desc), A, HPU_ENGINE_MME0, 0);
    CHECK(c.status == HPU_CQ_MMU_FAULT);
    CHECK(r.eqe(0).id == HPU_EVENT_MMU_FAULT);
    CHECK(r.eqe(0).addr == hole);
    CHECK(r.rd(HPU_REG_FAULT_COUNT) == 1u);
    auto val = [&](uint64_t va) {
        float f;
        auto b = s.read(va, 4);
        std::memcpy(&f, b.data(), 4);
        return f;
    };
    // member 0 stored; member 1 up to the hole's page; member 2 untouched
    for (uint32_t i = 0; i < 64; i++) {
        for (uint32_t j = 0; j < 64; j += 7) {
            CHECK(val(g.d + 4ULL * (i * 64 + j)) == 4.0f);
            uint64_t at1 = m1 + 4ULL * (i * 64 + j);
            if (at1 < hole) {
                CHECK(val(at1) == 4.0f);
            } else if (at1 >= hole + PG) {
                CHECK(val(at1) == 0.0f);
            }
            CHECK(val(g.d + 4ULL * (2 * g.sd + i * 64 + j)) == 0.0f);
        }
    }
}

// ---- In place and copied operands --------------------------------------
//
// The MME multiplies FP32 operands in HBM in place, and computes an FP32
// D in place, when their rows map to HBM that follows their addresses
// (hpum_job_direct()); otherwise it copies them. Both must give the same
// bytes, and every access must still be translated and checked.

namespace {

enum class Layout { Follow, Reverse, Host };

// Operands of context kCtx on 4 KiB pages at fresh VAs: HBM pages that
// follow the addresses (across the 2 MiB chunk boundary at 64 MiB),
// HBM pages in reverse order, or host memory.
struct Pages {
    static constexpr unsigned kCtx = 3;
    Rig &r;
    Layout lay;
    uint64_t va_next = 1ULL << 40;
    uint64_t hbm_next = 64 * MiB - 256 * 1024;

    struct Operand {
        uint64_t va = 0;
        Layout lay = Layout::Follow;
        std::vector<uint64_t> pa;   // per page: HBM offset or host bus address
    };

    // @img at a fresh VA laid out as lay is now; with @write false HBM is
    // left unwritten (@img must be zeros: unbacked HBM reads so)
    Operand put(const std::vector<uint8_t> &img, bool write = true)
    {
        Operand o;
        const uint64_t pages = (img.size() + PG - 1) / PG;
        o.lay = lay;
        o.va = va_next;
        va_next += (pages + 1) * PG;
        for (uint64_t i = 0; i < pages; i++) {
            uint64_t pa;
            if (lay == Layout::Host) {
                pa = r.halloc(PG, PG);
            } else {
                pa = hbm_next + (lay == Layout::Follow ? i : pages - 1 - i) * PG;
            }
            o.pa.push_back(pa);
            r.map(kCtx, o.va + i * PG, pa,
                  HPU_PTE_WRITE | (lay == Layout::Host ? HPU_PTE_HOST : 0));
        }
        if (lay != Layout::Host) {
            hbm_next += pages * PG;
        }
        if (write) {
            std::vector<uint8_t> bytes = img;
            copy(o, 0, bytes.data(), bytes.size(), true);
        }
        return o;
    }
    // Copy @n bytes at byte @at of @o to (@write) or from @p.
    void copy(const Operand &o, uint64_t at, uint8_t *p, uint64_t n, bool write)
    {
        for (uint64_t done = 0; done < n;) {
            const uint64_t x = at + done;
            const uint64_t len = std::min<uint64_t>(n - done, PG - (x & (PG - 1)));
            const uint64_t pa = o.pa[x / PG] + (x & (PG - 1));
            if (o.lay == Layout::Host) {
                std::memcpy(write ? r.hp(pa) : p + done, write ? p + done : r.hp(pa), len);
            } else if (write) {
                r.bwrite(pa, p + done, len);
            } else {
                auto v = r.bread(pa, len);
                std::memcpy(p + done, v.data(), len);
            }
            done += len;
        }
    }
    std::vector<uint8_t> read(const Operand &o, uint64_t n)
    {
        std::vector<uint8_t> v(n);
        copy(o, 0, v.data(), n, false);
        return v;
    }
};

std::vector<uint8_t> image(const Matrix &m)
{
    std::vector<uint8_t> img(m.bytes(), 0xee);
    for (uint32_t i = 0; i < m.rows; i++) {
        for (uint32_t j = 0; j < m.cols; j++) {
            float f = m.at(0, i, j);
            std::memcpy(&img[4 * (static_cast<uint64_t>(i) * m.ld + j)], &f, 4);
        }
    }
    return img;
}

Matrix dense(uint32_t rows, uint32_t cols, uint32_t pad, uint32_t seed)
{
    Matrix m;
    m.rows = rows;
    m.cols = cols;
    m.ld = cols + pad;
    m.v = values(static_cast<size_t>(rows) * cols, seed, false);
    return m;
}

struct LayoutGemm {
    Gemm g;
    Matrix a, b, c;
    std::vector<float> bias;
    // where C and B go (else as the run's layout), C == D, B unwritten
    std::optional<Layout> c_lay, b_lay;
    bool c_is_d = false;
    bool b_unbacked = false;

    // M 200, N 150, K 1100 (two K slices) or @k, padded rows, C, bias and ReLU
    LayoutGemm(bool ta, bool tb, uint32_t k = 1100)
    {
        g.m = 200;
        g.n = 150;
        g.k = k;
        g.flags = (ta ? HPU_MME_F_TRANS_A : 0) | (tb ? HPU_MME_F_TRANS_B : 0) | HPU_MME_F_BIAS |
                  HPU_MME_ACT_RELU << HPU_MME_F_ACT_SHIFT;
        g.alpha = 0.75f;
        g.beta = -1.5f;
        a = dense(g.a_rows(), g.a_cols(), 3, 1);
        b = dense(g.b_rows(), g.b_cols(), 5, 2);
        c = dense(g.m, g.n, 0, 3);
        bias = values(g.n, 4, false);
        g.lda = a.ld;
        g.ldb = b.ld;
        g.ldc = c.ld;
        g.ldd = g.n + 2;
    }
    uint64_t d_bytes() const { return 4 * (static_cast<uint64_t>(g.m - 1) * g.ldd + g.n); }
};

struct LayoutRun {
    bool done = false;          // the GEMM completed
    Cqe cqe{};
    std::vector<uint8_t> d;
    uint64_t direct = 0;
    bool reserved = false;      // HBM is one host reservation (hbm.base)
    uint64_t d_va = 0;
    uint64_t fault_va = 0;
    uint32_t fault_count = 0, fault_info = 0;
};

struct LayoutOps {
    Pages::Operand a, b, c, d;
};

// Run @lg with its operands laid out as @lay; @before(pages, ops) may
// change the mappings first; @after(rig) runs once the engines are idle
// (the GEMM completed or stuck). Nothing may be in flight after it.
template <typename F, typename G>
LayoutRun layout_run(const LayoutGemm &lg, Layout lay, F &&before, G &&after)
{
    Rig r;
    r.setup_eq();
    Pages pg{r, lay};
    Gemm g = lg.g;
    LayoutOps o;
    o.a = pg.put(image(lg.a));
    pg.lay = lg.b_lay.value_or(lay);
    if (lg.b_unbacked) {
        pg.hbm_next = 96 * MiB;         // chunks nothing wrote
    }
    o.b = pg.put(image(lg.b), !lg.b_unbacked);
    if (lg.b_unbacked) {
        pg.hbm_next = 98 * MiB;         // B's chunk is its own
    }
    pg.lay = lg.c_lay.value_or(lay);
    o.c = pg.put(image(lg.c));
    pg.lay = lay;
    std::vector<uint8_t> bias(4 * lg.bias.size());
    std::memcpy(bias.data(), lg.bias.data(), bias.size());
    auto bv = pg.put(bias);
    o.d = lg.c_is_d ? o.c : pg.put(std::vector<uint8_t>(lg.d_bytes(), 0));
    g.a = o.a.va;
    g.b = o.b.va;
    g.c = o.c.va;
    g.bias = bv.va;
    g.d = o.d.va;
    auto db = g.bytes();
    auto desc = pg.put(std::vector<uint8_t>(db.begin(), db.end()));
    before(pg, o);
    LayoutRun out;
    out.reserved = r.core.hbm.base != nullptr;
    const uint64_t direct0 = r.core.hbm.direct;
    r.setup_stream(HPU_ENGINE_MME0, 0);
    r.submit(HPU_ENGINE_MME0, 0, gemm_cb(desc.va), Pages::kCtx);
    r.run();
    r.env.on_dma_read = nullptr;
    out.done = r.cq_pi(HPU_ENGINE_MME0, 0) == 1;
    if (out.done) {
        out.cqe = r.cqe(HPU_ENGINE_MME0, 0, 0);
    }
    after(r);
    // no access in flight, no invalidation waiting for one
    CHECK(r.core.hbm.users == 0);
    CHECK(r.core.inflight == 0);
    CHECK(r.core.inflight_old == 0);
    CHECK(r.core.hbm.dir_stale == 0);
    CHECK(r.rd(HPU_REG_MMU_INV_STATUS) == 0u);
    out.direct = r.core.hbm.direct - direct0;
    out.d = pg.read(o.d, lg.d_bytes());
    out.d_va = o.d.va;
    out.fault_count = r.rd(HPU_REG_FAULT_COUNT);
    out.fault_info = r.rd(HPU_REG_FAULT_INFO);
    if (out.done && out.cqe.status != HPU_CQ_OK) {
        out.fault_va = r.eqe(0).addr;
    }
    return out;
}

template <typename F>
LayoutRun layout_run(const LayoutGemm &lg, Layout lay, F &&before)
{
    return layout_run(lg, lay, before, [](Rig &) {});
}

LayoutRun layout_run(const LayoutGemm &lg, Layout lay)
{
    return layout_run(lg, lay, [](Pages &, LayoutOps &) {});
}

// D of @run against the reference of @lg, and D's gaps unwritten (zero,
// or C's 0xee when C is D)
size_t wrong_d(const LayoutGemm &lg, const LayoutRun &run)
{
    Ref ref = reference(lg.g, lg.a, lg.b, &lg.c, &lg.bias);
    size_t bad = 0;
    for (uint32_t i = 0; i < lg.g.m; i++) {
        for (uint32_t j = 0; j < lg.g.ldd && (i + 1 < lg.g.m || j < lg.g.n); j++) {
            const uint64_t at = 4 * (static_cast<uint64_t>(i) * lg.g.ldd + j);
            if (j >= lg.g.n) {
                for (unsigned x = 0; x < 4; x++) {
                    bad += run.d[at + x] != (lg.c_is_d ? 0xee : 0);
                }
                continue;
            }
            float got;
            std::memcpy(&got, &run.d[at], 4);
            const size_t o = static_cast<size_t>(i) * lg.g.n + j;
            bad += !(std::fabs(got - ref.d[o]) <= ref.bound[o]);
        }
    }
    return bad;
}

} // namespace

TEST_CASE("MME GEMM: operands in place and copied give the same bytes", "[emu][mme][direct]")
{
    const bool ta = GENERATE(false, true);
    const bool tb = GENERATE(false, true);
    CAPTURE(ta, tb);
    LayoutGemm lg(ta, tb);
    LayoutRun follow = layout_run(lg, Layout::Follow);
    LayoutRun reverse = layout_run(lg, Layout::Reverse);
    LayoutRun host = layout_run(lg, Layout::Host);
    REQUIRE(follow.cqe.status == HPU_CQ_OK);
    REQUIRE(reverse.cqe.status == HPU_CQ_OK);
    REQUIRE(host.cqe.status == HPU_CQ_OK);
    // in place: A and B per K slice (2 each), D per output tile (4), when
    // HBM is one reservation (the operands cross a chunk boundary); the
    // reversed pages and host memory are copied
    if (follow.reserved) {
        CHECK(follow.direct == 2 + 2 + 4);
    }
    CHECK(reverse.direct == 0);
    CHECK(host.direct == 0);
    const bool same_reverse = follow.d == reverse.d, same_host = follow.d == host.d;
    CHECK(same_reverse);
    CHECK(same_host);
    // and they are right, the gaps between D's rows not written
    CHECK(wrong_d(lg, follow) == 0);
}

TEST_CASE("MME GEMM: C == D accumulating in place", "[emu][mme][direct]")
{
    const bool ta = GENERATE(false, true);
    CAPTURE(ta);
    LayoutGemm lg(ta, false);
    lg.c = dense(lg.g.m, lg.g.n, lg.g.ldd - lg.g.n, 3);   // C's rows are D's
    lg.g.ldc = lg.g.ldd;
    lg.c_is_d = true;
    LayoutRun follow = layout_run(lg, Layout::Follow);
    LayoutRun host = layout_run(lg, Layout::Host);
    REQUIRE(follow.cqe.status == HPU_CQ_OK);
    REQUIRE(host.cqe.status == HPU_CQ_OK);
    if (follow.reserved) {
        CHECK(follow.direct == 2 + 2 + 4);
    }
    CHECK(host.direct == 0);
    const bool same = follow.d == host.d;
    CHECK(same);
    CHECK(wrong_d(lg, follow) == 0);
}

TEST_CASE("MME GEMM: an operand in unbacked HBM is copied (reads zeros)", "[emu][mme][direct]")
{
    LayoutGemm lg(false, GENERATE(false, true));
    std::fill(lg.b.v.begin(), lg.b.v.end(), 0.0f);
    lg.b_unbacked = true;
    LayoutRun follow = layout_run(lg, Layout::Follow);
    REQUIRE(follow.cqe.status == HPU_CQ_OK);
    if (follow.reserved) {
        // A's first slice begun, ended for B's copy, begun again; B
        // copied first in the second slice; D's tiles
        CHECK(follow.direct == 2 + 1 + 4);
    }
    CHECK(wrong_d(lg, follow) == 0);
}

TEST_CASE("MME GEMM: a leading dimension beyond INT_MAX is copied, not refused by BLAS",
          "[emu][mme][direct]")
{
    // one row of A: in place it would be cblas_sgemm's lda, which is an int
    LayoutGemm lg(false, false);
    lg.g.m = 1;
    lg.a = dense(1, lg.g.k, 0, 1);
    lg.a.ld = 0x80000000u;
    lg.g.lda = lg.a.ld;
    lg.c = dense(1, lg.g.n, 0, 3);
    LayoutRun follow = layout_run(lg, Layout::Follow);
    REQUIRE(follow.cqe.status == HPU_CQ_OK);
    if (follow.reserved) {
        CHECK(follow.direct == 2 + 2);  // B per slice and D's two tiles, not A
    }
    CHECK(wrong_d(lg, follow) == 0);
}

TEST_CASE("MME GEMM: INJ_HANG before a tile stored in place stops the GEMM there",
          "[emu][mme][direct][inj]")
{
    // C in host memory: its gather for the second tile row comes just
    // before that tile's store, in place in D
    LayoutGemm lg(false, false);
    lg.c_lay = Layout::Host;
    bool fired = false;
    Cqe after{};
    LayoutRun run = layout_run(
        lg, Layout::Follow,
        [&](Pages &p, LayoutOps &o) {
            // the bus address of C's row 128 (tile row 1's first run)
            const uint64_t at = 4ULL * 128 * lg.g.n;
            const uint64_t row128 = o.c.pa[at / PG] + at % PG;
            p.r.env.on_dma_read = [&p, &fired, row128](uint64_t addr) {
                if (!fired && addr == row128) {
                    fired = true;
                    p.r.wr(HPU_REG_INJ_HANG, 1u << HPU_ENGINE_MME0);
                }
            };
        },
        [&](Rig &r) {
            CHECK_FALSE(hpum_core_engine_ready(&r.core, HPU_ENGINE_MME0));
            r.wr(r.qreg(HPU_ENGINE_MME0, 0, HPU_QS_CTRL), 0);
            r.run();
            r.wr(HPU_REG_INJ_HANG, 0);
            REQUIRE(r.cq_pi(HPU_ENGINE_MME0, 0) == 1u);
            after = r.cqe(HPU_ENGINE_MME0, 0, 0);
        });
    REQUIRE(fired);
    CHECK_FALSE(run.done);
    CHECK(after.status == HPU_CQ_ABORTED);
    // the first tile row stored, nothing of the second
    const LayoutRun good = layout_run(lg, Layout::Follow);
    REQUIRE(good.cqe.status == HPU_CQ_OK);
    size_t wrong = 0;
    for (uint64_t o = 0; o < run.d.size(); o++) {
        const uint64_t row = o / (4 * lg.g.ldd);
        wrong += run.d[o] != (row < HPU_MME_TILE ? good.d[o] : 0);
    }
    CHECK(wrong == 0);
}

namespace {

// A packet of context Pages::kCtx on MME0 stream 0 (enabled), for
// hpum_job_direct() called by hand
struct DirectPacket {
    HpuJob j{};
    HpuFault f{};
    HpuEvent ev{};
    HpuPacket k{};

    explicit DirectPacket(Rig &r)
    {
        r.setup_stream(HPU_ENGINE_MME0, 0);
        j.gen = r.core.eng[HPU_ENGINE_MME0].st[0].gen;
        j.epoch = r.core.epoch;
        j.asid = Pages::kCtx;
        k.c = &r.core;
        k.e = HPU_ENGINE_MME0;
        k.s = 0;
        k.j = &j;
        k.f = &f;
        k.ev = &ev;
    }
};

} // namespace

TEST_CASE("hpum_job_direct: MMU_INV of the ASID is BUSY until the accesses begun before it end",
          "[emu][mme][direct][mmu]")
{
    Rig r;
    Pages pg{r, Layout::Follow};
    pg.hbm_next = 8 * MiB;          // inside one chunk: no reservation needed
    const auto o = pg.put(std::vector<uint8_t>(4 * PG, 0x5a));
    DirectPacket dp(r);
    HpuDirect d, d2;
    REQUIRE(hpum_job_direct(&dp.k, o.va, PG, 4, 256, false, &d) == HPU_CQ_OK);
    REQUIRE(d.p != nullptr);
    CHECK(d.p[3 * PG] == 0x5a);
    CHECK(r.core.hbm.users == 1);
    CHECK(r.core.inflight == 1);
    auto busy = [&r] { return r.rd(HPU_REG_MMU_INV_STATUS) == HPU_MMU_INV_BUSY; };

    r.wr(HPU_REG_MMU_INV, Pages::kCtx + 1);     // another ASID: done at once
    CHECK_FALSE(busy());
    r.wr(HPU_REG_MMU_INV, Pages::kCtx);
    CHECK(busy());
    // an access begun after the invalidation does not hold it
    REQUIRE(hpum_job_direct(&dp.k, o.va, PG, 4, 256, false, &d2) == HPU_CQ_OK);
    REQUIRE(d2.p != nullptr);
    CHECK(hpum_job_direct_end(&dp.k, &d) == HPU_CQ_OK);
    CHECK_FALSE(busy());
    r.wr(HPU_REG_MMU_INV, HPU_MMU_INV_ALL);
    CHECK(busy());
    CHECK(hpum_job_direct_end(&dp.k, &d2) == HPU_CQ_OK);
    CHECK_FALSE(busy());
    CHECK(r.rd(HPU_REG_MMU_INV_COUNT) == 3u);
    CHECK(r.core.hbm.users == 0);
    CHECK(r.core.inflight == 0);
    CHECK(r.core.hbm.dir_stale == 0);
}

TEST_CASE("hpum_job_direct: a power-on reset during an access completes when the access ends",
          "[emu][mme][direct][reset]")
{
    Rig r;
    Pages pg{r, Layout::Follow};
    pg.hbm_next = 8 * MiB;
    const auto o = pg.put(std::vector<uint8_t>(4 * PG, 0x5a));
    DirectPacket dp(r);
    HpuDirect d;
    REQUIRE(hpum_job_direct(&dp.k, o.va, PG, 4, 256, false, &d) == HPU_CQ_OK);
    REQUIRE(d.p != nullptr);
    r.wr(HPU_REG_MMU_INV, Pages::kCtx);
    CHECK(r.rd(HPU_REG_MMU_INV_STATUS) == HPU_MMU_INV_BUSY);
    const unsigned int drained = r.env.drained;
    hpum_core_reset(&r.core);
    // the reset waits for the access, which keeps its memory and counts
    CHECK(hpum_core_in_reset(&r.core));
    CHECK(r.core.inflight_old == 1);
    CHECK(r.core.hbm.users == 1);
    CHECK(r.core.hbm.dir_stale == 1);
    CHECK(d.p[3 * PG] == 0x5a);
    // its end checks nothing (the job is of an earlier epoch) and drains the reset
    CHECK(hpum_job_direct_end(&dp.k, &d) == HPU_CQ_OK);
    CHECK(dp.f.status == HPU_CQ_OK);
    CHECK(r.env.drained == drained + 1);
    hpum_core_reset_finish(&r.core);
    CHECK_FALSE(hpum_core_in_reset(&r.core));
    CHECK(r.core.hbm.users == 0);
    CHECK(r.core.inflight == 0);
    CHECK(r.core.inflight_old == 0);
    CHECK(r.core.hbm.dir_stale == 0);
    CHECK(r.core.hbm.dir_cur[Pages::kCtx] == 0);
    CHECK(r.rd(HPU_REG_MMU_INV_STATUS) == 0u);
}

TEST_CASE("hpum_job_direct: ECC poison injected during a read is an ECC error at its end",
          "[emu][mme][direct][ecc]")
{
    Rig r;
    Pages pg{r, Layout::Follow};
    pg.hbm_next = 8 * MiB + 3 * PG;
    const auto o = pg.put(std::vector<uint8_t>(4 * PG, 0x5a));
    DirectPacket dp(r);
    const bool write = GENERATE(false, true);
    CAPTURE(write);
    HpuDirect d;
    REQUIRE(hpum_job_direct(&dp.k, o.va, PG, 4, 256, write, &d) == HPU_CQ_OK);
    REQUIRE(d.p != nullptr);
    r.wr(HPU_REG_INJ_ECC_ADDR_LO, static_cast<uint32_t>(o.pa[2] + 8));
    r.wr(HPU_REG_INJ_ECC_ADDR_HI, 0);
    r.wr(HPU_REG_INJ_ECC_CTRL, HPU_INJ_ECC_UE);
    if (write) {
        // the bytes written stay where they landed (device-model.md)
        CHECK(hpum_job_direct_end(&dp.k, &d) == HPU_CQ_OK);
    } else {
        // the whole 2 MiB page is poisoned: the first row's first byte
        CHECK(hpum_job_direct_end(&dp.k, &d) == HPU_CQ_ECC);
        CHECK(dp.f.status == HPU_CQ_ECC);
        CHECK(dp.f.va == o.va);
        CHECK(dp.f.asid == Pages::kCtx);
    }
    CHECK(r.core.hbm.users == 0);
    CHECK(r.core.inflight == 0);
    // and a new access does not begin in place on the poisoned page
    REQUIRE(hpum_job_direct(&dp.k, o.va, PG, 4, 256, write, &d) == HPU_CQ_OK);
    CHECK(d.p == nullptr);
}

namespace {

// hpum_mme_test_hook for the life of one object: @fn runs before each
// product, the BLAS lock held and the operands used in place in flight
struct ProductHook {
    static inline std::function<void()> fn;

    explicit ProductHook(std::function<void()> f)
    {
        fn = std::move(f);
        hpum_mme_test_hook = [](const HpuPacket *) { fn(); };
    }
    ~ProductHook()
    {
        hpum_mme_test_hook = nullptr;
        fn = nullptr;
    }
    ProductHook(const ProductHook &) = delete;
    ProductHook &operator=(const ProductHook &) = delete;
};

} // namespace

TEST_CASE("MME GEMM: MMU_INV during a product in place is BUSY until the product is done",
          "[emu][mme][direct][mmu]")
{
    LayoutGemm lg(GENERATE(false, true), false);
    Rig *rig = nullptr;
    unsigned int products = 0, busy = 0;
    ProductHook hook([&] {
        products++;
        rig->wr(HPU_REG_MMU_INV, Pages::kCtx);
        busy += rig->rd(HPU_REG_MMU_INV_STATUS) == HPU_MMU_INV_BUSY;
    });
    LayoutRun run = layout_run(lg, Layout::Follow, [&](Pages &p, LayoutOps &) { rig = &p.r; });
    REQUIRE(run.cqe.status == HPU_CQ_OK);
    CHECK(products == 2);                       // two K slices
    if (!run.reserved) {
        SKIP("the host refused the HBM reservation: no operand in place");
    }
    // A and B of each product in place and still in flight; once they end,
    // BUSY reads 0 (layout_run() checks it)
    CHECK(busy == 2);
    CHECK(wrong_d(lg, run) == 0);
}

TEST_CASE("MME GEMM: ECC poison injected on A in place during the product is an ECC error",
          "[emu][mme][direct][ecc]")
{
    // one K slice: nothing of D is stored before the product
    LayoutGemm lg(false, false, 1000);
    Rig *rig = nullptr;
    uint64_t a_pa = 0, a_va = 0;
    unsigned int products = 0;
    ProductHook hook([&] {
        if (!products++) {
            rig->wr(HPU_REG_INJ_ECC_ADDR_LO, static_cast<uint32_t>(a_pa));
            rig->wr(HPU_REG_INJ_ECC_ADDR_HI, static_cast<uint32_t>(a_pa >> 32));
            rig->wr(HPU_REG_INJ_ECC_CTRL, HPU_INJ_ECC_UE);
        }
    });
    std::vector<std::string> log;
    LayoutRun run = layout_run(
        lg, Layout::Follow,
        [&](Pages &p, LayoutOps &o) {
            rig = &p.r;
            a_pa = o.a.pa[0];
            a_va = o.a.va;
        },
        [&](Rig &r) { log = r.env.errors; });
    REQUIRE(products == 1);
    if (!run.reserved) {
        SKIP("the host refused the HBM reservation: A is copied before the product");
    }
    REQUIRE(run.done);
    CHECK(run.cqe.status == HPU_CQ_ECC);
    // ECC_UE at the poisoned page; the read reported at A's first row
    CHECK(run.fault_va == (a_pa & ~(2 * MiB - 1)));
    char at[64];
    std::snprintf(at, sizeof(at), "read at 0x%llx: read in place of a page poisoned",
                  static_cast<unsigned long long>(a_va));
    CHECK(std::any_of(log.begin(), log.end(),
                      [&](const std::string &l) { return l.find(at) != std::string::npos; }));
    CHECK(std::all_of(run.d.begin(), run.d.end(), [](uint8_t x) { return x == 0; }));
}

TEST_CASE("hpum_job_direct: more rows than HPU_DIRECT_XLAT_MAX, or rows overlapping, are copied",
          "[emu][mme][direct]")
{
    Rig r;
    Pages pg{r, Layout::Follow};
    pg.hbm_next = 8 * MiB;          // inside one chunk: no reservation needed
    const auto o = pg.put(std::vector<uint8_t>(1 * MiB, 0x5a));
    DirectPacket dp(r);
    HpuDirect d;
    // 256-byte rows back to back: 16 per page, so few translations
    REQUIRE(hpum_job_direct(&dp.k, o.va, 256, HPU_DIRECT_XLAT_MAX, 256, false, &d) ==
            HPU_CQ_OK);
    CHECK(d.p != nullptr);
    CHECK(hpum_job_direct_end(&dp.k, &d) == HPU_CQ_OK);
    REQUIRE(hpum_job_direct(&dp.k, o.va, 256, HPU_DIRECT_XLAT_MAX + 1, 256, false, &d) ==
            HPU_CQ_OK);
    CHECK(d.p == nullptr);
    // a stride below the row length (0 included), and one row whatever the stride
    REQUIRE(hpum_job_direct(&dp.k, o.va, 255, 4, 256, false, &d) == HPU_CQ_OK);
    CHECK(d.p == nullptr);
    REQUIRE(hpum_job_direct(&dp.k, o.va, 0, 4, 256, false, &d) == HPU_CQ_OK);
    CHECK(d.p == nullptr);
    REQUIRE(hpum_job_direct(&dp.k, o.va, 0, 1, 256, false, &d) == HPU_CQ_OK);
    CHECK(d.p != nullptr);
    CHECK(hpum_job_direct_end(&dp.k, &d) == HPU_CQ_OK);
    CHECK(r.core.hbm.users == 0);
    CHECK(r.core.inflight == 0);
}

TEST_CASE("hpum_job_direct: rows spanning more than HPU_DIRECT_SPAN_MAX of HBM are copied",
          "[emu][mme][direct]")
{
    Rig r(1ULL << 30);
    if (!r.core.hbm.base) {
        SKIP("the host refused the HBM reservation: nothing spans chunks in place");
    }
    DirectPacket dp(r);
    // two rows of 256 bytes, @stride apart in VA and HBM alike
    auto rows = [&](uint64_t va, uint64_t stride) {
        for (uint64_t i = 0; i < 2; i++) {
            r.map(Pages::kCtx, va + i * stride, 8 * MiB + i * stride, HPU_PTE_WRITE);
        }
    };
    const uint64_t near = 64 * MiB, far = HPU_DIRECT_SPAN_MAX;
    rows(1ULL << 40, near);
    rows(1ULL << 41, far);
    HpuDirect d;
    REQUIRE(hpum_job_direct(&dp.k, 1ULL << 40, near, 2, 256, true, &d) == HPU_CQ_OK);
    CHECK(d.p != nullptr);
    CHECK(hpum_job_direct_end(&dp.k, &d) == HPU_CQ_OK);
    const uint64_t backed = hpum_core_hbm_backed(&r.core);
    REQUIRE(hpum_job_direct(&dp.k, 1ULL << 41, far, 2, 256, true, &d) == HPU_CQ_OK);
    CHECK(d.p == nullptr);
    CHECK(hpum_core_hbm_backed(&r.core) == backed);     // nothing allocated
}

TEST_CASE("MME GEMM: a fault in the middle of an operand that would be used in place",
          "[emu][mme][direct][mmu]")
{
    LayoutGemm lg(false, false);
    const LayoutRun good = layout_run(lg, Layout::Follow);
    REQUIRE(good.cqe.status == HPU_CQ_OK);
    auto zero = [](const std::vector<uint8_t> &v) {
        return static_cast<size_t>(std::count(v.begin(), v.end(), 0)) == v.size();
    };

    SECTION("a page of A not present: MMU_FAULT there, nothing stored")
    {
        uint64_t hole = 0;
        LayoutRun run = layout_run(lg, Layout::Follow, [&](Pages &p, LayoutOps &o) {
            hole = o.a.va + 40 * PG;    // in row 37 of 200
            p.r.bwrite64(p.r.pte_slot(Pages::kCtx, hole, 3), 0);
        });
        CHECK(run.cqe.status == HPU_CQ_MMU_FAULT);
        CHECK(run.fault_va == hole);
        CHECK(run.fault_count == 1);
        CHECK((run.fault_info & HPU_FAULT_WRITE) == 0);
        CHECK(run.direct == 0);
        CHECK(zero(run.d));
    }
    SECTION("a page of B not present (A in place): MMU_FAULT there, nothing stored")
    {
        uint64_t hole = 0;
        LayoutRun run = layout_run(lg, Layout::Follow, [&](Pages &p, LayoutOps &o) {
            hole = o.b.va + 100 * PG;   // in K row 656 of 1100
            p.r.bwrite64(p.r.pte_slot(Pages::kCtx, hole, 3), 0);
        });
        CHECK(run.cqe.status == HPU_CQ_MMU_FAULT);
        CHECK(run.fault_va == hole);
        CHECK(run.fault_count == 1);
        if (run.reserved) {
            CHECK(run.direct == 1);     // A's first slice
        }
        CHECK(zero(run.d));
    }
    SECTION("a read-only page of D: MMU_FAULT there, the bytes before it stored")
    {
        // D's rows are 608 bytes; the first tile's rows 0..127 are its
        // first 512 bytes each: row 33 runs into page 5, which faults
        const uint64_t at = 5 * PG;
        LayoutRun run = layout_run(lg, Layout::Follow, [&](Pages &p, LayoutOps &o) {
            p.r.map(Pages::kCtx, o.d.va + at, o.d.pa[5], 0);
        });
        CHECK(run.cqe.status == HPU_CQ_MMU_FAULT);
        CHECK(run.fault_va == run.d_va + at);
        CHECK(run.fault_count == 1);
        CHECK((run.fault_info & HPU_FAULT_WRITE) != 0);
        if (run.reserved) {
            CHECK(run.direct == 4);     // A and B, both slices
        }
        size_t wrong = 0;
        for (uint64_t o = 0; o < run.d.size(); o++) {
            const uint64_t row = o / (4 * lg.g.ldd), col = o % (4 * lg.g.ldd);
            const bool stored = o < at && row < HPU_MME_TILE && col < 4 * HPU_MME_TILE;
            wrong += run.d[o] != (stored ? good.d[o] : 0);
        }
        CHECK(wrong == 0);
    }
}

// SPDX-License-Identifier: MIT
//
// Losses of the TPC library on the device model: nll_loss_* (per-row loss
// and weight, ignore_index, int64 labels through a stride-2 view, the
// reductions 'sum' and 'mean' composed with reduce_sum_f32 and div_f32) and
// nll_loss_grad_* (per-row and broadcast dy, strided dx), bit-exact; bad
// labels assert.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>

#include "tpclib_rig.hpp"

using namespace hpu_test;

namespace {

const uint32_t kClasses[] = {1, 3, 64, 65, 129, 1000};
constexpr uint32_t R1 = 5, R2 = 2, R = R1 * R2;
constexpr int32_t kIgnore = -100;
const std::array<uint32_t, 5> kRows = {1, R1, R2, 1, 1};

// Labels of R rows over @c classes, rows 1 and 6 ignored, as int64 words
// (low, high) when @wide.
std::vector<uint32_t> labels(uint32_t c, int32_t ignore, bool wide)
{
    std::vector<uint32_t> v;
    for (uint32_t r = 0; r < R; r++) {
        const int32_t l = (r == 1 || r == 6) ? ignore : static_cast<int32_t>((r * 37 + 3) % c);
        v.push_back(static_cast<uint32_t>(l));
        if (wide) {
            v.push_back(l < 0 ? 0xffffffffu : 0);
        }
    }
    return v;
}

} // namespace

TEST_CASE("tpclib nll_loss_f32/_bf16: per-row loss and weight, ignore_index, int64 labels; "
          "'sum' and 'mean' by reduce_sum_f32; bit-exact",
          "[tpclib][loss]")
{
    Lib L;
    for (bool bf16 : {false, true}) {
        const std::string k = bf16 ? "nll_loss_bf16" : "nll_loss_f32";
        const uint8_t dt = bf16 ? HPU_TPC_DT_BF16 : HPU_TPC_DT_F32;
        for (uint32_t c : kClasses) {
            for (bool wide : {false, true}) {
                for (int32_t ignore : {kIgnore, 0}) { // ignore_index may be a class
                    CAPTURE(k, c, wide, ignore);
                    auto xv = rand_f32(size_t{c} * R, c, -9, 0, bf16);
                    xv[0] = bf16 ? 0x8000u : 0x80000000u; // -0: the loss is +0
                    auto lv = labels(c, ignore, wide);
                    Tensor x = L.tensor(dt, {c, R1, R2}, xv);
                    Tensor t = wide ? L.tensor(HPU_TPC_DT_I32, {1, R1, R2}, lv, {2, 2, 2 * R1})
                                    : L.tensor(HPU_TPC_DT_I32, {1, R1, R2}, lv);
                    Tensor loss = L.tensor(HPU_TPC_DT_F32, {1, R1, R2});
                    Tensor wt = L.tensor(HPU_TPC_DT_F32, {1, R1, R2});
                    REQUIRE(L.launch(k, {x, t, loss, wt}, {static_cast<uint32_t>(ignore)}, kRows) ==
                            HPU_CQ_OK);
                    auto gl = L.read(loss), gw = L.read(wt);
                    float sum = 0, count = 0;
                    size_t bad = 0;
                    for (uint32_t r = 0; r < R; r++) {
                        std::vector<float> row(c);
                        for (uint32_t i = 0; i < c; i++) {
                            row[i] = elem_f32(xv[i + c * r], bf16);
                        }
                        const auto lab = static_cast<int32_t>(lv[wide ? 2 * r : r]);
                        const float want = kref::nll_loss(row, lab, ignore);
                        const float w = lab == ignore ? 0.0f : 1.0f;
                        bad += gl[r] != kref::f32_bits(want);
                        bad += gw[r] != kref::f32_bits(w);
                        sum += want;
                        count += w;
                    }
                    CHECK(bad == 0);
                    // reduction 'sum' and 'mean': the rows' sums (in order: R < 64
                    // lanes, so the tree adds each to zeros), then a division
                    Tensor lv1 = L.tensor(HPU_TPC_DT_F32, {R}), wv1 = L.tensor(HPU_TPC_DT_F32, {R});
                    lv1.d.base = loss.d.base;
                    wv1.d.base = wt.d.base;
                    Tensor s = L.tensor(HPU_TPC_DT_F32, {1}), n = L.tensor(HPU_TPC_DT_F32, {1});
                    Tensor mean = L.tensor(HPU_TPC_DT_F32, {1});
                    REQUIRE(L.launch("reduce_sum_f32", {lv1, s}, {}, {1, 1, 1, 1, 1}) == HPU_CQ_OK);
                    REQUIRE(L.launch("reduce_sum_f32", {wv1, n}, {}, {1, 1, 1, 1, 1}) == HPU_CQ_OK);
                    REQUIRE(L.launch("div_f32", {s, n, mean}, {}, {1, 1, 1, 1, 1}) == HPU_CQ_OK);
                    CHECK(std::fabs(kref::bits_f32(L.read(s)[0]) - sum) <= 1e-5f * std::fabs(sum));
                    CHECK(kref::bits_f32(L.read(n)[0]) == count);
                    const float gm = kref::bits_f32(L.read(mean)[0]);
                    if (count == 0) { // every row ignored: 0 / 0, as PyTorch
                        CHECK(std::isnan(gm));
                    } else {
                        CHECK(std::fabs(gm - sum / count) <= 1e-5f * std::fabs(sum / count));
                    }
                }
            }
        }
    }
}

TEST_CASE("tpclib nll_loss_*: a label below 0 or at least C, other than ignore_index, asserts",
          "[tpclib][loss]")
{
    Lib L;
    for (const char *k : {"nll_loss_f32", "nll_loss_grad_f32", "nll_loss_bf16", "nll_loss_grad_bf16"}) {
        const bool bf16 = std::string(k).find("bf16") != std::string::npos;
        const bool grad = std::string(k).find("grad") != std::string::npos;
        const uint8_t dt = bf16 ? HPU_TPC_DT_BF16 : HPU_TPC_DT_F32;
        for (int32_t badl : {65, -1, kIgnore}) {
            CAPTURE(k, badl);
            auto lv = labels(65, kIgnore, false);
            lv[3] = static_cast<uint32_t>(badl);
            Tensor x = L.tensor(dt, {65, R1, R2}), t = L.tensor(HPU_TPC_DT_I32, {1, R1, R2}, lv);
            Tensor a = L.tensor(HPU_TPC_DT_F32, {1, R1, R2}), b = L.tensor(HPU_TPC_DT_F32, {1, R1, R2});
            const uint32_t st = grad ? L.launch(k, {t, a, x}, {static_cast<uint32_t>(kIgnore), 0}, kRows)
                                     : L.launch(k, {x, t, a, b}, {static_cast<uint32_t>(kIgnore)}, kRows);
            CHECK(st == (badl == kIgnore ? HPU_CQ_OK : HPU_CQ_TPC_ASSERT));
        }
    }
}

TEST_CASE("tpclib nll_loss_grad_f32/_bf16: -(dy scale) at the label, 0 elsewhere and in "
          "ignored rows; per-row and broadcast dy; strided dx; bit-exact",
          "[tpclib][loss]")
{
    Lib L;
    for (bool bf16 : {false, true}) {
        const std::string k = bf16 ? "nll_loss_grad_bf16" : "nll_loss_grad_f32";
        const uint8_t dt = bf16 ? HPU_TPC_DT_BF16 : HPU_TPC_DT_F32;
        for (uint32_t c : kClasses) {
            for (bool reduced : {false, true}) {
                CAPTURE(k, c, reduced);
                auto lv = labels(c, kIgnore, false);
                auto dv = rand_f32(reduced ? 1 : R, c + 7, -3, 3);
                const float scale = reduced ? 1.0f / 8 : 0.3f; // 'mean' of 8 rows, or any
                Tensor t = L.tensor(HPU_TPC_DT_I32, {1, R1, R2}, lv);
                Tensor dy = reduced ? L.tensor(HPU_TPC_DT_F32, {1}, dv) : L.tensor(HPU_TPC_DT_F32, {1, R1, R2}, dv);
                Tensor dx = L.tensor(dt, {c, R1, R2}, {}, {1, c + 3, (c + 3) * R1 + 1});
                // a sentinel everywhere: the kernel writes every element of dx
                std::vector<uint32_t> ones(dx.n, bf16 ? 0x3f80u : 0x3f800000u);
                dx = L.tensor(dt, {c, R1, R2}, ones, {1, c + 3, (c + 3) * R1 + 1});
                REQUIRE(L.launch(k, {t, dy, dx}, {static_cast<uint32_t>(kIgnore), kref::f32_bits(scale)},
                                 kRows) == HPU_CQ_OK);
                auto got = L.read(dx);
                size_t bad = 0;
                for (uint32_t r2 = 0; r2 < R2; r2++) {
                    for (uint32_t r1 = 0; r1 < R1; r1++) {
                        const uint32_t r = r1 + R1 * r2;
                        const auto lab = static_cast<int32_t>(lv[r]);
                        const float v = kref::nll_loss_grad(kref::bits_f32(dv[reduced ? 0 : r]), scale);
                        const uint32_t vb = bf16 ? kref::f32_to_bf16(v) : kref::f32_bits(v);
                        for (uint32_t i = 0; i < c; i++) {
                            const bool hot = lab != kIgnore && static_cast<int32_t>(i) == lab;
                            bad += got[dx.at(i, r1, r2)] != (hot ? vb : 0u);
                        }
                        if (dx.at(c, r1, r2) < dx.n) { // the gaps keep the sentinel
                            bad += got[dx.at(c, r1, r2)] != ones[0];
                        }
                    }
                }
                CHECK(bad == 0);
            }
        }
    }
}
